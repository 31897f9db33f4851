package labtest

import (
	"slices"
	"strings"
	"testing"
	"time"

	"informer-lab/record"
)

// startFakes starts the lab's -fakes run: every stand-in of lab/fakes, gate off and on, with no
// server. Suite starts it first and checks it last: most of its 21 s is the wait on stand-ins
// that never sync, spent while the envtest subtests run.
func startFakes(t *testing.T, bin string) *labProcess {
	return startLab(t, bin, "-fakes", "-records", "-")
}

// checkFakes checks what a unit-test author would: with the gate off every stand-in syncs; with
// it on, those the reflector is told cannot stream (the client-go fakes' factories from v0.35)
// sync and say why in klog, the rest never sync, and klog names the bookmark they wait for. How
// fast a stand-in syncs is docs/fakes.md's to show, not a test's to assert: under make test's
// load, building controller-runtime's fake client alone has taken 4 s.
func checkFakes(t *testing.T, p *labProcess, pinned string) {
	recs, _, stderr, code := p.end(t, 2*time.Minute)
	if code != 0 {
		t.Errorf("lab -fakes exited %d, want 0 (a stall is a result)\nstderr:\n%s", code, stderr)
	}
	cr := setupOf(recs, record.StepControllerRuntime)
	if cr == nil {
		t.Fatalf("lab -fakes wrote no SETUP %s record", record.StepControllerRuntime)
	}
	v := record.FakeVersions{ClientGo: record.Minor(pinned), ControllerRuntime: record.Minor(cr.Value)}
	for _, s := range record.FakeStandIns {
		for _, gate := range []string{"off", "on"} {
			tag := record.FakeTag(s.Name, gate)
			var klog []string
			var res *record.Record
			for i, r := range recs {
				switch {
				case r.Tag == tag && r.Step == record.StepKlog:
					klog = append(klog, r.Value)
				case r.Tag == tag && r.Step == record.StepFake:
					res = &recs[i]
				}
			}
			logged := func(s string) bool {
				return slices.ContainsFunc(klog, func(l string) bool { return strings.Contains(l, s) })
			}
			if res == nil {
				t.Errorf("%s: no %s record", tag, record.StepFake)
				continue
			}
			t.Logf("%s: %s (%s), %d klog lines", tag, res.Value, res.Detail, len(klog))
			want := s.Syncs(v, gate == "on")
			if synced := res.Value == record.FakeSynced; synced != want {
				t.Errorf("%s on client-go %s, controller-runtime v0.%d: %s (%s), want synced=%v; klog:\n  %s", tag, pinned, v.ControllerRuntime, res.Value, res.Detail, want, strings.Join(klog, "\n  "))
				continue
			}
			switch {
			case !want && s.Reflector:
				// The reflector waits for the end of a streaming list that no fake sends, and says
				// so after 10 s (tools/cache/reflector.go, produceWarningIfExpired).
				if !logged("required bookmark event") {
					t.Errorf("%s: not synced, and no klog line names the bookmark it waits for; klog:\n  %s", tag, strings.Join(klog, "\n  "))
				}
			case want && s.Reflector && gate == "on" && !logged("support WatchList semantics"):
				t.Errorf("%s: synced with the gate on, but klog does not say the reflector turned streaming off; klog:\n  %s", tag, strings.Join(klog, "\n  "))
			}
			if want && s.Reflector { // its cache holds what the fake was seeded with
				var names []string
				for _, it := range res.Items {
					names = append(names, it.Name)
				}
				if !slices.Equal(names, record.FakeSeeds) {
					t.Errorf("%s: synced holding %v, want %v", tag, names, record.FakeSeeds)
				}
			}
		}
	}
}
