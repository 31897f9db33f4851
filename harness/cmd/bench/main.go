// Command bench is make bench: kube-apiserver memory and sync time when K informers start at
// once, LIST→WATCH against streaming lists (see docs/bench.md).
package main

import (
	"context"
	"os"

	"informer-lab/harness/internal/bench"
	"informer-lab/lab/lifecycle"
)

func main() {
	lifecycle.Main(func(ctx context.Context) int { return bench.Run(ctx, os.Args[1:], os.Stdout, os.Stderr) })
}
