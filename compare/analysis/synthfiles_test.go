package analysis

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"testing"

	"informer-lab/record"
)

var update = flag.Bool("update", false, "rewrite testdata/runs/synthetic from the generator")

// TestSyntheticRunFiles keeps testdata/runs/synthetic equal to what the generator writes, so the
// golden test's input can be read as files and regenerated with -update.
func TestSyntheticRunFiles(t *testing.T) {
	dir := filepath.Join("..", "testdata", "runs", "synthetic")
	for source, recs := range synthRun("v1.32.13", "", synthLabs, 3, 6) {
		buf, err := record.MarshalLines(recs)
		if err != nil {
			t.Fatal(err)
		}
		path := filepath.Join(dir, source+".jsonl")
		if *update {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, buf, 0o644); err != nil {
				t.Fatal(err)
			}
			continue
		}
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatalf("%v (run go test ./analysis -run TestSyntheticRunFiles -update)", err)
		}
		if !bytes.Equal(got, buf) {
			t.Errorf("%s differs from the generator's output (run with -update and read the git diff)", path)
		}
	}
}

// TestSyntheticRunLoads reads the files back through LoadRun: the generator writes what the
// loader accepts.
func TestSyntheticRunLoads(t *testing.T) {
	run, err := LoadRun(filepath.Join("..", "testdata", "runs", "synthetic"))
	if err != nil {
		t.Fatalf("want the synthetic run to load, got %v", err)
	}
	if len(run.Labs) != 2 || run.Labs[0].Name != "client-v031" || run.Server != "v1.32.13" {
		t.Errorf("want labs client-v031, client-v032 on v1.32.13; got %d labs, first %q, server %q", len(run.Labs), run.Labs[0].Name, run.Server)
	}
	if rep := Analyze(run); rep.ExitCode() != 0 {
		t.Errorf("want the synthetic run's verdict to hold, got failures %q", rep.Failures)
	}
}
