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

// The fast part of the reliability suite, under make check: every fault, bad input and security
// scenario, and the long run shortened to 30 seconds (make reliability runs 30 minutes): six
// health samples a lab, enough to see memory, goroutines or files grow. Two tests, so that make
// check can run them at once in two processes (each its own children's reaper, so each scenario's
// check that nothing outlived it sees its own processes only): the faults, and the rest.
func TestSuiteFaults(t *testing.T) {
	suite(t, func(s Scenario) bool { return s.Group == groupFault })
}

func TestSuiteChecks(t *testing.T) {
	suite(t, func(s Scenario) bool { return s.Group != groupFault })
}

func suite(t *testing.T, keep func(Scenario) bool) {
	root, _ := filepath.Abs("../../..")
	e, err := Prepare(context.Background(), root, t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	e.Soak = 30 * time.Second
	var scenarios []Scenario
	for _, s := range Scenarios() {
		if keep(s) {
			scenarios = append(scenarios, s)
		}
	}
	for _, r := range RunAll(context.Background(), e, scenarios, testWriter{t}) {
		if !r.Pass {
			t.Errorf("%s / %s: expected %s; observed %s", r.Group, r.Name, r.Expected, r.Observed)
		}
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) { w.t.Logf("%s", p); return len(p), nil }
