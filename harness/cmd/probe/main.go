// Command probe is make probe: every resource a cluster (envtest, or -kubeconfig's) serves that
// the user may list and watch, asked for the streaming list client-go v0.35+ informers sync with,
// and graded: streams, refuses (client-go falls back), or misbehaves like a fault of the grid.
//
//	go run ./cmd/probe -kubeconfig ~/.kube/config
package main

import (
	"context"
	"os"

	"informer-lab/harness/internal/probe"
	"informer-lab/lab/lifecycle"
)

func main() {
	lifecycle.Main(func(ctx context.Context) int { return probe.Run(ctx, os.Args[1:], os.Stdout, os.Stderr) })
}
