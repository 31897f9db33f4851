// Command matrix is make matrix: every client cell (a lab module and its WatchListClient gate)
// against every server version, in every scenario, observed on the wire, as one grid.
package main

import (
	"context"
	"os"

	"informer-lab/harness/internal/matrixrun"
	"informer-lab/lab/lifecycle"
)

func main() {
	lifecycle.Main(func(ctx context.Context) int { return matrixrun.Run(ctx, os.Args[1:], os.Stdout, os.Stderr) })
}
