package reliability

import (
	"context"
	"informer-lab/lab/labtest"
	"path/filepath"
	"testing"
	"time"
)

// Orphans of anything these tests start are re-parented to this process, so a test can see
// an etcd, kube-apiserver or lab that outlived its run; the reaper stops them if it is killed.
func TestMain(m *testing.M) { labtest.Main(m) }

// The fast part of the reliability suite, under make test: every fault, bad input and security
// scenario, and the long run shortened to 30 seconds (make reliability runs 30 minutes): six
// health samples a lab, enough to see memory, goroutines or files grow, and the longest
// package of make test the shorter.
func TestSuiteFast(t *testing.T) {
	root, _ := filepath.Abs("../../..")
	e, err := Prepare(context.Background(), root, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	e.Soak = 30 * time.Second
	for _, r := range RunAll(context.Background(), e, Scenarios(), testWriter{t}) {
		if !r.Pass {
			t.Errorf("%s / %s: expected %s; observed %s", r.Group, r.Name, r.Expected, r.Observed)
		}
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) { w.t.Logf("%s", p); return len(p), nil }
