package analysis

import (
	"slices"
	"strings"
	"testing"
	"time"

	sy "informer-lab/compare/internal/synth"
	"informer-lab/record"
)

var (
	v031off = sy.Lab{Name: "client-v031-off", ClientGo: "v0.31.14", Gate: "off", GateHow: "client-go default", Shape: sy.ListWatch}
	v032on  = sy.Lab{Name: "client-v032-on", ClientGo: "v0.32.13", Gate: "on", GateHow: "set by this lab (-watch-list=on; client-go default off)", Shape: sy.Stream}
)

func analyzeSynth(r *sy.Run) *Report {
	var server, gates string
	for _, h := range r.Logs["harness"] {
		if h.Step == record.StepServer {
			server, gates = h.Value, h.Detail
		}
	}
	return Analyze(runFrom(r.Logs, server, gates))
}

func wantFailure(t *testing.T, rep *Report, substr string) {
	t.Helper()
	if substr == "" {
		if len(rep.Failures) > 0 {
			t.Errorf("want no failures, got %q", rep.Failures)
		}
		return
	}
	if !slices.ContainsFunc(rep.Failures, func(f string) bool { return strings.Contains(f, substr) }) {
		t.Errorf("want a failure containing %q, got %q", substr, rep.Failures)
	}
}

// TestScenarioVerdicts: healthy runs of each scenario hold; a lost write, a cache that differs
// from the server, a watch never re-established or never back in sync fail.
func TestScenarioVerdicts(t *testing.T) {
	restreaming := v032on
	restreaming.Restream = true
	tests := []struct {
		name        string
		build       func() *sy.Run
		wantFailure string // "" = the verdict holds
	}{
		{"steady", func() *sy.Run {
			r := sy.New("steady", "v1.32.13", "", v031off, v032on)
			r.Writes(6)
			return r
		}, ""},
		{"reconnect, watches from the last rv", func() *sy.Run {
			r := sy.New("reconnect", "v1.32.13", "", v031off, v032on)
			r.Writes(3)
			r.Reconnect()
			r.Writes(3)
			r.Reconnect()
			return r
		}, ""},
		{"reconnect, streams again", func() *sy.Run {
			r := sy.New("reconnect", "v1.32.13", "", v031off, restreaming)
			r.Writes(3)
			r.Reconnect()
			r.Writes(3)
			return r
		}, ""},
		{"reconnect, a write lost across a re-established watch", func() *sy.Run {
			r := sy.New("reconnect", "v1.32.13", "", v031off, v032on)
			r.Writes(2)
			r.Reconnect()
			r.Miss("client-v031-off", "B", 1)
			r.Writes(3)
			return r
		}, "client-v031-off: B: #3 want ADDED default/lab-cm-2 rv=106, got MODIFIED"},
		{"reconnect, cache differs from the server", func() *sy.Run {
			r := sy.New("reconnect", "v1.32.13", "", v031off, restreaming)
			r.Writes(3)
			r.Reconnect()
			r.Forget("client-v032-on", "A", "seed-cm-2")
			return r
		}, "client-v032-on: A: cache at stop differs from a fresh LIST: missing default/seed-cm-2"},
		{"reconnect, no watch re-established", func() *sy.Run {
			r := sy.New("reconnect", "v1.32.13", "", v031off)
			r.Writes(3)
			return r
		}, "client-v031-off: A: no watch re-established in the reconnect scenario"},
		{"restart", func() *sy.Run {
			r := sy.New("restart", "v1.32.13", "", v031off, v032on)
			r.Writes(3)
			r.Kill(2)
			r.Restarted(time.Second, false)
			r.Writes(3)
			return r
		}, ""},
		{"restart, 410 and relist", func() *sy.Run {
			r := sy.New("restart", "v1.32.13", "", v031off, restreaming)
			r.Writes(3)
			r.Kill(1)
			r.Restarted(time.Second, true)
			r.Writes(3)
			return r
		}, ""},
		{"restart without the injected record", func() *sy.Run {
			r := sy.New("restart", "v1.32.13", "", v031off)
			r.Writes(3)
			return r
		}, "scenario restart, but the harness recorded no injected fault"},
		{"restart, never back", func() *sy.Run {
			r := sy.New("restart", "v1.32.13", "", v031off)
			r.Writes(2)
			r.Kill(3)
			return r
		}, "client-v031-off: A: not back in sync after the injected fault"},
		{"expired, 410 in the stream", func() *sy.Run {
			r := sy.New("expired", "v1.32.13", "", v031off, restreaming)
			r.Writes(2)
			r.Expire()
			r.Writes(3)
			r.Resume(500*time.Millisecond, false)
			return r
		}, ""},
		{"expired, HTTP 410", func() *sy.Run {
			r := sy.New("expired", "v1.32.13", "", v031off, v032on)
			r.Writes(2)
			r.Expire()
			r.Writes(3)
			r.Resume(500*time.Millisecond, true)
			return r
		}, ""},
		{"expired, cache lost an object", func() *sy.Run {
			r := sy.New("expired", "v1.32.13", "", v031off)
			r.Expire()
			r.Writes(3)
			r.Resume(500*time.Millisecond, false)
			r.Forget("client-v031-off", "B", "seed-cm-0")
			return r
		}, "client-v031-off: B: cache at stop differs from a fresh LIST: missing default/seed-cm-0"},
		{"unknown scenario", func() *sy.Run {
			return sy.New("sideways", "v1.32.13", "", v031off)
		}, `unknown scenario "sideways"`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := tt.build()
			r.Stop()
			rep := analyzeSynth(r)
			wantFailure(t, rep, tt.wantFailure)
			var b strings.Builder
			rep.WriteText(&b) // must not panic, and must name the scenario
			if !strings.Contains(b.String(), "scenario: ") {
				t.Errorf("want the report to name the scenario, got:\n%s", b.String())
			}
		})
	}
}

func TestReconnectCountsRewatches(t *testing.T) {
	r := sy.New("reconnect", "v1.32.13", "", v031off)
	r.Writes(2)
	r.Reconnect()
	r.Reconnect()
	r.Stop()
	rep := analyzeSynth(r)
	if got := rep.Labs[0].Rewatch; got["A"] != 2 || got["B"] != 2 {
		t.Errorf("want 2 re-established watches per informer, got %v", got)
	}
	if rep.Proxy != "watch timeout 4s" || rep.Scenario != record.ScenarioReconnect {
		t.Errorf("want scenario reconnect through the proxy, got %q / %q", rep.Scenario, rep.Proxy)
	}
}

func TestBlueprintFallback(t *testing.T) {
	lab := v032on
	lab.Shape = sy.Blueprint
	r := sy.New("startup", "v1.34.4", "", lab)
	r.Stop()
	rep := analyzeSynth(r)
	h := rep.Labs[0].Sync["A"]
	if h.Fallback != "blueprint annotation missing" || h.Label != "STREAM→fallback: blueprint annotation missing (3 req)" {
		t.Errorf("want the blueprint fallback named, got fallback %q label %q", h.Fallback, h.Label)
	}
	wantFailure(t, rep, "A: expected STREAM, saw STREAM→fallback: blueprint annotation missing (3 req)")
}

// TestHandshakeEndsAtItsOwnSync: an informer that watches again before the other has synced
// (a proxy's short watch timeout) keeps its two-request handshake.
func TestHandshakeEndsAtItsOwnSync(t *testing.T) {
	r := sy.New("reconnect", "v1.32.13", "", v031off)
	r.Reconnect()
	r.Stop()
	logs := r.Logs["client-v031-off"]
	// move A's re-established watch to right after A's sync, before B's handshake
	var rewatch record.Record
	var kept []record.Record
	afterSync := map[string]bool{}
	for _, rec := range logs {
		if rec.Kind == record.Setup && rec.Step == record.StepSynced {
			afterSync[rec.Tag] = true
		}
		if rec.Kind == record.HTTP && rec.Tag == "A" && afterSync["B"] && rewatch.Kind == "" {
			rewatch = rec
			continue
		}
		kept = append(kept, rec)
	}
	var out []record.Record
	for _, rec := range kept {
		out = append(out, rec)
		if rec.Kind == record.Setup && rec.Step == record.StepSynced && rec.Tag == "A" {
			rewatch.Time = rec.Time.Add(time.Microsecond)
			out = append(out, rewatch)
		}
	}
	r.Logs["client-v031-off"] = out
	rep := analyzeSynth(r)
	wantFailure(t, rep, "")
	if got := rep.Labs[0].Sync["A"].Label; got != "LIST→WATCH (2 req)" {
		t.Errorf("want A's handshake LIST→WATCH (2 req), got %q", got)
	}
	if got := rep.Labs[0].Rewatch["A"]; got != 1 {
		t.Errorf("want A's early re-established watch counted, got %d", got)
	}
}

func TestSteps(t *testing.T) {
	at := func(s int) time.Time { return time.Date(2026, 1, 1, 0, 0, s, 0, time.UTC) }
	http := func(s int, query string, status int, err string) record.Record {
		return record.Record{Kind: record.HTTP, Time: at(s), Tag: "A", Query: query, Status: status, Error: err}
	}
	const watch = "resourceVersion=150&watch=true"
	const stream = "sendInitialEvents=true&watch=true"
	recs := []record.Record{
		http(1, watch, 0, "connection refused"),
		http(2, watch, 200, ""),
		{Kind: record.WatchEvent, Time: at(2), Tag: "A", Event: "ERROR", Detail: "code=410 reason=Expired"},
		http(3, listQuery, 200, ""),
		http(4, "resourceVersion=170&watch=true", 200, ""),
		{Kind: record.WatchEvent, Time: at(5), Tag: "A", Event: "MODIFIED", RV: "171"},
		http(6, stream, 200, ""),
		{Kind: record.WatchEvent, Time: at(6), Tag: "A", Event: "ADDED", RV: "150"},
		{Kind: record.WatchEvent, Time: at(7), Tag: "A", Event: "BOOKMARK", RV: "172", Annotations: map[string]string{record.AnnotationInitialEventsEnd: "true"}},
	}
	steps := Steps(recs, time.Time{})
	var toks []string
	for _, s := range steps {
		toks = append(toks, s.Token)
	}
	if got := strings.Join(toks, " "); got != "WATCH(error) WATCH 410 LIST WATCH STREAM" {
		t.Fatalf("want tokens WATCH(error) WATCH 410 LIST WATCH STREAM, got %s", got)
	}
	if i := FirstResync(steps); i != 4 || !steps[4].Resync.Equal(at(4)) || !steps[4].FromRV {
		t.Errorf("want the WATCH after the LIST as the re-sync at 4s, got step %d %+v", i, steps[max(i, 0)])
	}
	if !steps[5].Resync.Equal(at(7)) {
		t.Errorf("want the STREAM back in sync at its end bookmark (7s), got %v", steps[5].Resync)
	}
	if got := Steps(recs, at(3)); len(got) != 3 || got[0].Token != "LIST" {
		t.Errorf("want 3 steps from 3s on, starting with LIST, got %+v", got)
	}
}
