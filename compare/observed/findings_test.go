package observed

import (
	"strings"
	"testing"
	"time"

	"informer-lab/compare/matrix"
	"informer-lab/record"
)

// What an observed client shows, read with the grid's symptoms: a stream that never ends its
// initial events, the same stream opened again and again, a stream refused then LIST→WATCH, and
// a plain LIST→WATCH (no finding).
func TestObservedFindings(t *testing.T) {
	hang := newLog().client("ctl", "ctl/v0.35").get("ctl", cms, stream, 200).
		event("ctl", "configmaps", record.EventAdded, "100").wait(30*time.Second).event("ctl", "configmaps", record.EventAdded, "100")
	loop := newLog().client("ctl", "ctl/v0.35")
	for range 120 { // 120 streams cut before their end bookmark, 11 a second
		loop.get("ctl", cms, stream, 200).event("ctl", "configmaps", record.EventAdded, "100").wait(89 * time.Millisecond)
	}
	short := newLog().client("ctl", "ctl/v0.35").get("ctl", cms, stream, 200).wait(2*time.Second).
		event("ctl", "configmaps", record.EventAdded, "100")
	fallback := newLog().client("ctl", "ctl/v0.35").get("ctl", cms, stream, 400).
		get("ctl", cms, listOpts, 200).list("ctl", "configmaps", "100", 1, nil).get("ctl", cms, watchFrom("100"), 200)
	listWatch := newLog().client("ctl", "ctl/v0.34").get("ctl", cms, listOpts, 200).list("ctl", "configmaps", "100", 1, nil).
		get("ctl", cms, watchFrom("100"), 200)
	for _, tc := range []struct {
		name string
		log  *wireLog
		want []matrix.Symptom
	}{
		{"no end bookmark", hang, []matrix.Symptom{matrix.NeverSyncs}},
		{"re-streamed", loop, []matrix.Symptom{matrix.NeverSyncs, matrix.HotLoop}},
		{"observed too briefly to tell", short, nil},
		{"refused, then LIST→WATCH", fallback, []matrix.Symptom{matrix.ExtraRequests}},
		{"LIST→WATCH", listWatch, nil},
	} {
		fs := tc.log.analyze(t).Findings()
		var got []matrix.Symptom
		for _, f := range fs {
			got = append(got, f.Symptom)
			if f.Client != "ctl" || f.Resource != "configmaps" || !strings.Contains(f.String(), "docs/findings.md#"+f.Symptom.Anchor()) {
				t.Errorf("%s: %q", tc.name, f)
			}
		}
		if strings.Join(symptomNames(got), ",") != strings.Join(symptomNames(tc.want), ",") {
			t.Errorf("%s: findings %v, want %v", tc.name, fs, tc.want)
		}
	}
}

func symptomNames(ss []matrix.Symptom) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = string(s)
	}
	return out
}
