// Command reliability runs the reliability suite (faults, bad input, security, a long run) as
// real processes and writes docs/reliability.md: make reliability.
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"informer-lab/harness/internal/reliability"
	"informer-lab/lab/lifecycle"
	"informer-lab/lab/procs"
)

func main() {
	soak := flag.Duration("soak", 30*time.Minute, "how long each lab runs alone in the long-run scenario")
	doc := flag.String("doc", "../docs/reliability.md", "where to write the results (empty: do not write)")
	flag.Parse()
	lifecycle.Main(func(ctx context.Context) int { return run(ctx, *soak, *doc) })
}

func run(ctx context.Context, soak time.Duration, doc string) int {
	if err := procs.BecomeSubreaper(); err != nil {
		fmt.Fprintln(os.Stderr, "warning:", err)
	}
	tmp, err := os.MkdirTemp("", "informer-lab-reliability-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		return 1
	}
	defer os.RemoveAll(tmp)
	root, _ := filepath.Abs("..")
	start := time.Now()
	e, err := reliability.Prepare(ctx, root, tmp)
	if err != nil {
		fmt.Fprintln(os.Stderr, "error:", err)
		return 1
	}
	e.Soak = soak
	fmt.Fprintf(os.Stderr, "reliability suite (long run %s per lab)\n", soak)
	results := reliability.RunAll(ctx, e, reliability.Scenarios(), os.Stderr)
	var md bytes.Buffer
	reliability.WriteMarkdown(&md, results, soak, time.Since(start))
	os.Stdout.Write(md.Bytes())
	if doc != "" {
		if err := os.WriteFile(doc, md.Bytes(), 0o644); err != nil {
			fmt.Fprintln(os.Stderr, "error:", err)
			return 1
		}
		fmt.Fprintf(os.Stderr, "wrote %s\n", doc)
	}
	for _, r := range results {
		if !r.Pass {
			return 1
		}
	}
	return 0
}
