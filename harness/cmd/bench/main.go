// Command bench is make bench: kube-apiserver memory and sync time when K informers start at
// once, LIST→WATCH against streaming lists (see docs/bench.md).
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"informer-lab/harness/internal/bench"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := bench.Run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
