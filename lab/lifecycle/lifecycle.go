// Package lifecycle is how every command of the project starts and stops, so that none leaves
// a process behind: the binary serves as its own reaper (lab/reaper), the first SIGINT or
// SIGTERM cancels the command's context so that it stops what it started in order, and a
// second one exits at once, leaving the rest to the reaper.
package lifecycle

import (
	"context"
	"fmt"
	"os"
	"os/signal"
	"syscall"
	"testing"

	"informer-lab/lab/reaper"
)

// ExitInterrupted is the exit code after a second signal: 128 + SIGINT, as a shell reports it.
const ExitInterrupted = 130

// Main runs a command and exits with the code run returns. run gets a context that the first
// signal cancels.
func Main(run func(ctx context.Context) int) {
	reaper.Serve()
	ctx, stop := signalContext()
	code := run(ctx)
	stop()
	reaper.Done() // run has stopped everything it started
	os.Exit(code)
}

// TestMain is Main for a test binary whose tests start etcd, kube-apiserver or labs; after, if
// given, run once every test has ended (stopping what the tests shared).
func TestMain(m *testing.M, after ...func()) {
	reaper.Serve()
	code := m.Run()
	for _, f := range after {
		f()
	}
	reaper.Done()
	os.Exit(code)
}

// signalContext is cancelled by the first SIGINT or SIGTERM; a second one exits the process
// at once (the reaper sees its parent gone and kills what it was handed).
func signalContext() (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	sig := make(chan os.Signal, 2)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case s := <-sig:
			fmt.Fprintf(os.Stderr, "%s: stopping; send it again to exit at once\n", s)
			cancel()
		case <-done:
			return
		}
		select {
		case s := <-sig:
			fmt.Fprintf(os.Stderr, "%s again: exiting now; the reaper stops what is left\n", s)
			os.Exit(ExitInterrupted)
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(sig)
		close(done)
		cancel()
	}
}
