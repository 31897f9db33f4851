package matrix

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"informer-lab/compare/analysis"
)

var update = flag.Bool("update", false, "rewrite testdata/runs/real-matrix-*/cells.txt")

// Real runs of make matrix (one server, one scenario, twelve client cells), kept as they were
// recorded: the verdicts read from them must not change unless the reading changes on purpose.
func TestRealRunGoldens(t *testing.T) {
	dirs, _ := filepath.Glob("../testdata/runs/real-matrix-*")
	if len(dirs) == 0 {
		t.Fatal("no real matrix runs under ../testdata/runs")
	}
	for _, dir := range dirs {
		t.Run(filepath.Base(dir), func(t *testing.T) {
			run, err := analysis.LoadRun(dir)
			if err != nil {
				t.Fatal(err)
			}
			rep := analysis.Analyze(run)
			if len(rep.Failures) > 0 {
				t.Errorf("a healthy recorded run fails: %v", rep.Failures)
			}
			var b strings.Builder
			for _, c := range Cells(rep.Scenario, rep) {
				fmt.Fprintf(&b, "%s | %s | expected %q agrees %v | lost %q | problems %v\n", c.Client, c.Verdict, c.Expected, c.Agrees, c.Lost, c.Problems)
			}
			want := filepath.Join(dir, "cells.txt")
			if *update {
				if err := os.WriteFile(want, []byte(b.String()), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			w, err := os.ReadFile(want)
			if err != nil {
				t.Fatalf("%v (run go test -run TestRealRunGoldens -update)", err)
			}
			if got := b.String(); got != string(w) {
				t.Errorf("cells differ from %s (run with -update and read the git diff):\ngot:\n%s", want, got)
			}
		})
	}
}
