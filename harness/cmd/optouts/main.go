// Command optouts is make opt-outs: every lab module attached to one envtest kube-apiserver,
// run once per way a user turns client-go's streaming lists off, and the page of what each
// switch did on the wire (docs/opt-outs.md with -docs).
//
//	go run ./cmd/optouts -docs
package main

import (
	"context"
	"os"

	"informer-lab/harness/internal/optouts"
	"informer-lab/lab/lifecycle"
)

func main() {
	lifecycle.Main(func(ctx context.Context) int { return optouts.Run(ctx, os.Args[1:], os.Stdout, os.Stderr) })
}
