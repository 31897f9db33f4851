// Command harness runs make compare: one envtest control plane, every lab module attached to
// it as its own process, one writer, and compare's verdict over the wire logs.
package main

import (
	"context"
	"os"

	"informer-lab/harness/internal/app"
	"informer-lab/lab/lifecycle"
)

func main() {
	lifecycle.Main(func(ctx context.Context) int { return app.Run(ctx, os.Args[1:], os.Stdout, os.Stderr) })
}
