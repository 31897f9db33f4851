package analysis

import (
	"slices"
	"strings"
	"testing"
	"time"

	sy "informer-lab/compare/internal/synth"
	"informer-lab/record"
)

// An informer whose initial stream is cut by its watch timeout before its end bookmark, and
// that then streams again (kubernetes/kubernetes#134837's shape), is a finding of its lab's
// verdict, not a failed handshake or a mismatch of its steady events.
func TestInitialStreamCutIsAFinding(t *testing.T) {
	rep := analyzeSynth(cutRun("reconnect", func(r *sy.Run) {
		r.Writes(3)
		r.Reconnect()
		r.Writes(3)
	}))
	wantFailure(t, rep, "")
	l := rep.Labs[1]
	want := []string{
		"A: initial stream cut by its watch timeout before its end bookmark, then streamed again",
		"B: initial stream cut by its watch timeout before its end bookmark, then streamed again",
	}
	if !slices.Equal(l.Verdict.Findings, want) {
		t.Errorf("want findings %q, got %q", want, l.Verdict.Findings)
	}
	if h := l.Sync["A"]; h.Label != "STREAM→STREAM (2 req)" || h.Cut != 1 || !l.Verdict.Agrees() {
		t.Errorf("want A's two streams, one cut, agreeing with the gates; got %q, cut %d, agrees %t", h.Label, h.Cut, l.Verdict.Agrees())
	}
	if len(rep.Labs[0].Verdict.Findings) != 0 {
		t.Errorf("want no finding for the LIST→WATCH lab, got %q", rep.Labs[0].Verdict.Findings)
	}
	v := rep.Verdict()
	for _, f := range want {
		if !slices.ContainsFunc(v.Notes, func(n Note) bool { return n.Text == f && slices.Equal(n.Labs, []string{l.Name}) }) {
			t.Errorf("want the footnote %q for %s, got %+v", f, l.Name, v.Notes)
		}
	}
	rows := rep.Table()
	if i := slices.IndexFunc(rows, func(row []string) bool { return row[0] == "findings" }); i < 0 || !strings.Contains(rows[i][2], want[0]) {
		t.Errorf("want the findings in compare.txt's table, got %q", rows)
	}
}

// The same where the informer reported synced before its second stream came: its end bookmark
// is in the lab's steady phase, where its initial state ends. Outside a scenario that ends
// watches on purpose the stream is said to have ended, not to have been cut by its timeout.
func TestInitialStreamCutAfterTheSyncRecord(t *testing.T) {
	r := cutRun("steady", func(r *sy.Run) { r.Writes(4) })
	r.Logs[v032on.Name] = restreamAfterSync(r.Logs[v032on.Name], "A")
	rep := analyzeSynth(r)
	wantFailure(t, rep, "")
	want := "A: initial stream ended before its end bookmark, then streamed again"
	if f := rep.Labs[1].Verdict.Findings; len(f) == 0 || f[0] != want {
		t.Errorf("want the finding %q, got %q", want, f)
	}
	if w := rep.Labs[1].Watchers["A"]; w.Expected != 4 || w.Mismatch != "" {
		t.Errorf("want A's steady events the 4 writes after its end bookmark, got %d expected, mismatch %q", w.Expected, w.Mismatch)
	}
}

// cutRun is a stopped run of scenario whose client-v032-on's informers each have their initial
// stream cut once; then plays the scenario.
func cutRun(scenario string, then func(r *sy.Run)) *sy.Run {
	cut := v032on
	cut.Cut = 1
	r := sy.New(scenario, "v1.32.13", "", v031off, cut)
	then(r)
	r.Stop()
	return r
}

// restreamAfterSync moves an informer's second stream (its request, events and end bookmark) to
// after the lab's last SETUP synced record: the informer reported synced on its cut stream.
func restreamAfterSync(recs []record.Record, tag string) []record.Record {
	var moved, kept []record.Record
	streams := 0
	for _, r := range recs {
		if r.Tag == tag && r.Kind == record.HTTP {
			streams++
		}
		if r.Tag == tag && streams == 2 && (r.Kind == record.HTTP || r.Kind == record.WatchEvent) && len(moved) < 5 {
			moved = append(moved, r)
			continue
		}
		kept = append(kept, r)
	}
	last := slices.IndexFunc(kept, func(r record.Record) bool {
		return r.Kind == record.Setup && r.Step == record.StepSynced && r.Tag == "B"
	})
	for i := range moved {
		moved[i].Time = kept[last].Time.Add(time.Duration(i+1) * time.Microsecond)
	}
	return slices.Concat(kept[:last+1], moved, kept[last+1:])
}
