// Command observe is make observe: any client command (kubectl, a controller binary, a lab)
// run against envtest or -kubeconfig's cluster through a recording proxy, and what it did on the
// wire, analyzed like a lab's own log.
//
//	go run ./cmd/observe -- kubectl get configmaps -w
package main

import (
	"context"
	"os"

	"informer-lab/harness/internal/observe"
	"informer-lab/lab/lifecycle"
)

func main() {
	lifecycle.Main(func(ctx context.Context) int { return observe.Run(ctx, os.Args[1:], os.Stdout, os.Stderr) })
}
