// Command harness runs make compare: one envtest control plane, every lab module attached to
// it as its own process, one writer, and compare's verdict over the wire logs.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"informer-lab/harness/internal/app"
	"informer-lab/lab/reaper"
)

func main() {
	if reaper.IsReaper() { // the harness's own child that cleans up if the harness is killed
		os.Exit(reaper.Run())
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := app.Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
