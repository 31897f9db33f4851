// Command gobuild compiles modules into the project's cache of binaries (lab/gobuild), one
// after another, and says how long each took. make test builds the labs, and the harness and
// compare that its tests run, with it before its tests start, which then find them built: on a
// cold machine, seven labs compiled at once inside the tests' own time limits (and beside their
// apiservers) made the tests time out.
package main

import (
	"context"
	"fmt"
	"os"
	"time"

	"informer-lab/lab/gobuild"
	"informer-lab/lab/lifecycle"
)

func main() {
	lifecycle.Main(func(ctx context.Context) int {
		if len(os.Args) < 2 {
			fmt.Fprintln(os.Stderr, "error: name the module directories to build, e.g. ../client-v031")
			return 2
		}
		for _, dir := range os.Args[1:] {
			start := time.Now()
			stop := gobuild.Progress(15*time.Second, func(d time.Duration) { fmt.Printf("  building %s: %s so far\n", dir, d) })
			bin, err := gobuild.Cached(ctx, dir)
			stop()
			if err != nil {
				fmt.Fprintln(os.Stderr, "error:", err)
				return 1
			}
			fmt.Printf("built %s in %s: %s\n", dir, time.Since(start).Round(100*time.Millisecond), bin)
		}
		return 0
	})
}
