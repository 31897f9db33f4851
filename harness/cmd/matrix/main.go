// Command matrix is make matrix: every client cell (a lab module and its WatchListClient gate)
// against every server version, in every scenario, observed on the wire, as one grid.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"informer-lab/harness/internal/matrixrun"
	"informer-lab/lab/reaper"
)

func main() {
	if reaper.IsReaper() { // each run's own child that cleans up if this process is killed
		os.Exit(reaper.Run())
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := matrixrun.Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
