package matrix

import (
	"testing"
	"time"

	"informer-lab/compare/analysis"
	"informer-lab/compare/internal/synth"
)

// A reconnect cell whose informers' initial streams were cut by the watch timeout before their
// end bookmark names that in its verdict, and agrees: no failure, no problem.
func TestReconnectCellNamesACutInitialStream(t *testing.T) {
	twice := synth.Lab{Name: "client-v033-on", ClientGo: "v0.33.13", Gate: "on", GateHow: "set by this lab", Shape: synth.Stream, Cut: 2}
	r := synth.New("reconnect", "v1.32.13", "", v031off, twice)
	r.Writes(2)
	r.Reconnect()
	c := cellOf(t, Cells("reconnect", analyze(t, r)), twice.Name)
	check(t, c, want{verdict: "WATCH from rv; A: initial stream cut by its watch timeout before its end bookmark (2 times), then streamed again; " +
		"B: initial stream cut by its watch timeout before its end bookmark (2 times), then streamed again", agrees: true, recover: -1})
}

// Every step sequence is spelled alike: a repeated unit that has arrows of its own in
// parentheses, one that is words after a space, a token right before its count.
func TestOneSpellingOfSteps(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	steps := []analysis.Step{
		{Token: "WATCH", Request: true}, {Token: "410"}, {Token: "WATCH", Request: true}, {Token: "410"},
		{Token: "LIST", Request: true}, {Token: "WATCH", Request: true, FromRV: true, Resync: at}, {Token: "WATCH", Request: true, FromRV: true},
	}
	if got, want := compress(steps, analysis.Token).Spell(true), "(WATCH→410)×2→LIST→WATCH×2 (5 req)"; got != want {
		t.Errorf("tokens: want %q, got %q", want, got)
	}
	named := func(s analysis.Step) string {
		if s.FromRV {
			return "WATCH from rv"
		}
		return s.Token
	}
	if got, want := compress(steps, named).Spell(false), "(WATCH→410)×2→LIST→WATCH from rv ×2"; got != want {
		t.Errorf("names: want %q, got %q", want, got)
	}
}
