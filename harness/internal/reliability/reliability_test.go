package reliability

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"informer-lab/lab/procs"
	"informer-lab/lab/reaper"
)

func TestMain(m *testing.M) {
	if reaper.IsReaper() {
		os.Exit(reaper.Run())
	}
	procs.BecomeSubreaper()
	os.Exit(m.Run())
}

// The fast part of the reliability suite, under make test: every fault, bad input and security
// scenario, and the long run shortened to one minute per lab (make reliability runs 30).
func TestSuiteFast(t *testing.T) {
	root, _ := filepath.Abs("../../..")
	e, err := Prepare(context.Background(), root, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	e.Soak = time.Minute
	for _, r := range RunAll(context.Background(), e, Scenarios(), testWriter{t}) {
		if !r.Pass {
			t.Errorf("%s / %s: expected %s; observed %s", r.Group, r.Name, r.Expected, r.Observed)
		}
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) { w.t.Logf("%s", p); return len(p), nil }
