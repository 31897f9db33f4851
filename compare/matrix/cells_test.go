package matrix

import (
	"slices"
	"strings"
	"testing"
	"time"

	"informer-lab/compare/analysis"
	"informer-lab/compare/internal/synth"
)

var (
	v031off = synth.Lab{Name: "client-v031-off", ClientGo: "v0.31.14", Gate: "off", GateHow: "client-go default", Shape: synth.ListWatch}
	v031on  = synth.Lab{Name: "client-v031-on", ClientGo: "v0.31.14", Gate: "on", GateHow: "set by this lab (-watch-list=on; client-go default off)", Shape: synth.Stream}
	v032on  = synth.Lab{Name: "client-v032-on", ClientGo: "v0.32.13", Gate: "on", GateHow: "set by this lab (-watch-list=on; client-go default off)", Shape: synth.Stream}
	v035on  = synth.Lab{Name: "client-v035-on", ClientGo: "v0.35.0", Gate: "on", GateHow: "client-go default", Shape: synth.Stream, Restream: true}
)

// analyze writes the synthetic run to a directory and reads it back as compare does.
func analyze(t *testing.T, r *synth.Run) *analysis.Report {
	t.Helper()
	r.Stop()
	dir := t.TempDir()
	if err := r.WriteDir(dir); err != nil {
		t.Fatal(err)
	}
	run, err := analysis.LoadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	return analysis.Analyze(run)
}

func cellOf(t *testing.T, cells []Cell, client string) Cell {
	t.Helper()
	for _, c := range cells {
		if c.Client == client {
			return c
		}
	}
	t.Fatalf("no cell for %s in %+v", client, cells)
	return Cell{}
}

type want struct {
	verdict  string
	expected string
	agrees   bool
	lost     string // substring; "" = no loss
	problem  string // substring of one problem; "" = no problems
	recover  int64  // RecoverMillis; -1 = nil
}

func check(t *testing.T, c Cell, w want) {
	t.Helper()
	if c.Verdict != w.verdict {
		t.Errorf("%s: want verdict %q, got %q", c.Client, w.verdict, c.Verdict)
	}
	if c.Expected != w.expected || c.Agrees != w.agrees {
		t.Errorf("%s: want expected %q agrees %t, got %q %t", c.Client, w.expected, w.agrees, c.Expected, c.Agrees)
	}
	if (w.lost == "") != (c.Lost == "") || !strings.Contains(c.Lost, w.lost) {
		t.Errorf("%s: want lost %q, got %q", c.Client, w.lost, c.Lost)
	}
	switch {
	case w.problem == "" && len(c.Problems) > 0:
		t.Errorf("%s: want no problems, got %q", c.Client, c.Problems)
	case w.problem != "" && !slices.ContainsFunc(c.Problems, func(p string) bool { return strings.Contains(p, w.problem) }):
		t.Errorf("%s: want a problem containing %q, got %q", c.Client, w.problem, c.Problems)
	}
	switch {
	case w.recover < 0 && c.RecoverMillis != nil:
		t.Errorf("%s: want no recovery time, got %d ms", c.Client, *c.RecoverMillis)
	case w.recover >= 0 && c.RecoverMillis == nil:
		t.Errorf("%s: want recovery %d ms, got none", c.Client, w.recover)
	case w.recover >= 0 && (*c.RecoverMillis < w.recover || *c.RecoverMillis > w.recover+5):
		// the synthetic clock adds 100 µs per record: a few ms for every informer's requests
		t.Errorf("%s: want recovery %d ms, got %d", c.Client, w.recover, *c.RecoverMillis)
	}
}

func TestCellsStartup(t *testing.T) {
	t.Run("gates as expected", func(t *testing.T) {
		cells := Cells("startup", analyze(t, synth.New("startup", "v1.32.13", "", v031off, v032on)))
		check(t, cellOf(t, cells, "client-v031-off"), want{verdict: "LIST→WATCH (2 req)", expected: "LIST→WATCH", agrees: true, recover: -1})
		check(t, cellOf(t, cells, "client-v032-on"), want{verdict: "STREAM (1 req)", expected: "STREAM", agrees: true, recover: -1})
		if c := cells[0]; c.Server != "1.32.13" || c.Scenario != "startup" {
			t.Errorf("want server 1.32.13, scenario startup, got %q %q", c.Server, c.Scenario)
		}
	})
	t.Run("server refuses to stream", func(t *testing.T) {
		lab := v032on
		lab.Shape = synth.Fallback
		cells := Cells("startup", analyze(t, synth.New("startup", "v1.32.13", "WatchList=false", lab)))
		check(t, cells[0], want{verdict: "STREAM→422→LIST→WATCH (4 req)", expected: "STREAM→422→LIST→WATCH", agrees: true, recover: -1})
		if cells[0].Server != "1.32.13 WatchList=false" {
			t.Errorf("want the server named with its gates, got %q", cells[0].Server)
		}
	})
	t.Run("blueprint annotation missing", func(t *testing.T) {
		lab := v032on
		lab.Shape = synth.Blueprint
		cells := Cells("startup", analyze(t, synth.New("startup", "v1.34.4", "", lab)))
		check(t, cells[0], want{verdict: "STREAM→fallback: blueprint annotation missing (3 req)", expected: "STREAM", agrees: false,
			problem: "A: expected STREAM, saw STREAM→fallback: blueprint annotation missing (3 req)", recover: -1})
	})
	t.Run("informers differ", func(t *testing.T) {
		lab := v031on
		lab.ShapeB = synth.ListWatch
		cells := Cells("startup", analyze(t, synth.New("startup", "v1.32.13", "", lab)))
		check(t, cells[0], want{verdict: "A: STREAM (1 req); B: LIST→WATCH (2 req)", expected: "STREAM", agrees: false,
			problem: "B: expected STREAM, saw LIST→WATCH (2 req)", recover: -1})
	})
}

func TestCellsSteady(t *testing.T) {
	r := synth.New("steady", "v1.32.13", "", v031off, v032on)
	r.Writes(2)
	r.Miss("client-v032-on", "B", 1)
	r.Writes(4)
	cells := Cells("steady", analyze(t, r))
	check(t, cellOf(t, cells, "client-v031-off"), want{verdict: "6/6 writes, same rvs", agrees: true, recover: -1})
	odd := cellOf(t, cells, "client-v032-on")
	check(t, odd, want{
		verdict: "A: 6/6 writes, same rvs; B: #3 want ADDED default/lab-cm-2 rv=106, got MODIFIED default/seed-cm-1 rv=107; " +
			"B's sequence differs from the other cells' at #3: MODIFIED default/seed-cm-1 rv=107, others ADDED default/lab-cm-2 rv=106",
		agrees: true, problem: "B: #3 want ADDED default/lab-cm-2 rv=106", recover: -1})
	if !odd.SeqDiffers || cellOf(t, cells, "client-v031-off").SeqDiffers {
		t.Errorf("want only client-v032-on's sequence flagged, got %t / %t", odd.SeqDiffers, cellOf(t, cells, "client-v031-off").SeqDiffers)
	}
}

func TestCellsReconnect(t *testing.T) {
	r := synth.New("reconnect", "v1.32.13", "", v031off, v035on)
	r.Writes(3)
	r.Reconnect()
	r.Writes(3)
	r.Reconnect()
	r.Forget("client-v031-off", "A", "seed-cm-2")
	cells := Cells("reconnect", analyze(t, r))
	check(t, cellOf(t, cells, "client-v031-off"), want{verdict: "WATCH from rv ×2", agrees: true,
		lost: "A: missing default/seed-cm-2", problem: "A: cache at stop differs from a fresh LIST", recover: -1})
	check(t, cellOf(t, cells, "client-v035-on"), want{verdict: "STREAM again ×2", agrees: true, recover: -1})

	none := Cells("reconnect", analyze(t, synth.New("reconnect", "v1.32.13", "", v031off)))
	check(t, none[0], want{verdict: "no watch re-established", agrees: true, problem: "A: no watch re-established", recover: -1})
}

func TestCellsRestart(t *testing.T) {
	r := synth.New("restart", "v1.32.13", "", v031off, v035on)
	r.Writes(2)
	r.Kill(2)
	r.Restarted(1200*time.Millisecond, false)
	r.Writes(2)
	cells := Cells("restart", analyze(t, r))
	check(t, cellOf(t, cells, "client-v031-off"), want{verdict: "WATCH(error)×2→WATCH (3 req)", agrees: true, recover: 1200})

	r = synth.New("restart", "v1.32.13", "", v031off, v035on)
	r.Kill(1)
	r.Restarted(800*time.Millisecond, true)
	cells = Cells("restart", analyze(t, r))
	check(t, cellOf(t, cells, "client-v031-off"), want{verdict: "WATCH(error)→WATCH→410→LIST→WATCH (4 req)", agrees: true, recover: 800})
	check(t, cellOf(t, cells, "client-v035-on"), want{verdict: "WATCH(error)→WATCH→410→STREAM (3 req)", agrees: true, recover: 800})

	r = synth.New("restart", "v1.32.13", "", v031off)
	r.Kill(3)
	cells = Cells("restart", analyze(t, r))
	check(t, cells[0], want{verdict: "WATCH(error)×3 (3 req), not back in sync", agrees: true, problem: "A: not back in sync after the injected fault", recover: -1})
}

func TestCellsExpired(t *testing.T) {
	r := synth.New("expired", "v1.32.13", "", v031off, v035on)
	r.Writes(2)
	r.Expire()
	r.Writes(3)
	r.Resume(300*time.Millisecond, false) // 410 as an ERROR event in a 200 watch
	cells := Cells("expired", analyze(t, r))
	check(t, cellOf(t, cells, "client-v031-off"), want{verdict: "WATCH→410→LIST→WATCH (3 req)", agrees: true, recover: 300})
	check(t, cellOf(t, cells, "client-v035-on"), want{verdict: "WATCH→410→STREAM (2 req)", agrees: true, recover: 300})

	r = synth.New("expired", "v1.32.13", "", v032on)
	r.Expire()
	r.Writes(2)
	r.Resume(300*time.Millisecond, true) // HTTP 410
	r.Forget("client-v032-on", "B", "seed-cm-1")
	cells = Cells("expired", analyze(t, r))
	check(t, cells[0], want{verdict: "WATCH(410)→LIST→WATCH (3 req)", agrees: true, lost: "B: missing default/seed-cm-1",
		problem: "B: cache at stop differs", recover: 300})
}

func TestCellsRunProblems(t *testing.T) {
	rep := analyze(t, synth.New("restart", "v1.32.13", "", v031off, v032on)) // no fault injected
	for _, c := range Cells("restart", rep) {
		check(t, c, want{verdict: "no fault injected", agrees: true, problem: "run: scenario restart, but the harness recorded no injected fault", recover: -1})
	}
	c := Cells("steady", rep)[0]
	if !slices.Contains(c.Problems, "the run recorded scenario restart, not steady") {
		t.Errorf("want the scenario mismatch named, got %q", c.Problems)
	}
}

func TestMergePatterns(t *testing.T) {
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	steps := func(errors int) []analysis.Step {
		var s []analysis.Step
		for range errors {
			s = append(s, analysis.Step{Token: "WATCH(error)", Request: true})
		}
		return append(s, analysis.Step{Token: "WATCH", Request: true, Resync: at})
	}
	name := func(s analysis.Step) string { return s.Token }
	l := &analysis.LabReport{Tags: []string{"A", "B"}}
	mk := func(n int) pattern { p := compress(steps(n), name); p.back = true; return p }
	if got := mergePatterns(l, map[string]pattern{"A": mk(2), "B": mk(3)}, "none", true); got != "WATCH(error)×2–3→WATCH (3–4 req)" {
		t.Errorf("want counts merged into ranges, got %q", got)
	}
	if got := mergePatterns(l, map[string]pattern{"A": mk(0), "B": mk(1)}, "none", true); got != "A: WATCH (1 req); B: WATCH(error)→WATCH (2 req)" {
		t.Errorf("want both informers shown, got %q", got)
	}
	l.Unsynced = []string{"B"}
	if got := mergePatterns(l, map[string]pattern{"A": mk(1)}, "none", true); got != "A: WATCH(error)→WATCH (2 req); B: never synced" {
		t.Errorf("want the unsynced informer named, got %q", got)
	}
}

func TestClientOf(t *testing.T) {
	tests := []struct {
		name, gate, how, label string
		def                    bool
	}{
		{"client-v031-off", "off", "client-go default", "client-v031 off (default)", true},
		{"client-v031-on", "on", "set by this lab (-watch-list=on; client-go default off)", "client-v031 on", false},
		{"client-v035-off", "off", "set by this lab (-watch-list=off; client-go default on)", "client-v035 off", false},
		{"client-v031-off", "off", "set by this lab (-watch-list=off; client-go default off)", "client-v031 off (default)", true},
		{"client-v032", "on", "set by this lab (-watch-list=on)", "client-v032 on", false},
	}
	for _, tt := range tests {
		c := ClientOf(&analysis.LabReport{Name: tt.name, Gate: tt.gate, GateHow: tt.how})
		if c.Label() != tt.label || c.Default != tt.def {
			t.Errorf("%s %q: want %q default %t, got %q %t", tt.name, tt.how, tt.label, tt.def, c.Label(), c.Default)
		}
	}
}

func TestCellLog(t *testing.T) {
	r := synth.New("restart", "v1.32.13", "", v031off)
	r.Writes(2)
	r.Kill(1)
	r.Restarted(time.Second, false)
	r.Forget("client-v031-off", "B", "seed-cm-0")
	rep := analyze(t, r)
	log := CellLog(rep, rep.Labs[0])
	for _, s := range []string{
		"informer-lab matrix cell: client-v031-off, scenario restart, server 1.32.13",
		"client-go v0.31.14, WatchListClient off (client-go default)",
		"== initial sync ==\n[SETUP] client-go v0.31.14",
		"[HTTP][A] GET /api/v1/configmaps?limit=500&resourceVersion=0 -> 200",
		"== steady ==\n[WATCH-EVENT][A] ADDED default/lab-cm-1 rv=104",
		"--- harness: injected kill-apiserver ---",
		"[SETUP][A] stream-broken watch stream broken (unexpected EOF)",
		"[HTTP][A] GET /api/v1/configmaps?allowWatchBookmarks=true&resourceVersion=105&timeout=<T>&timeoutSeconds=<T>&watch=true -> error: dial tcp <host>: connect: connection refused",
		"--- harness: recovered ---",
		"== cache at stop vs fresh LIST ==\nA: equal (3 objects)\nB: LOST: missing default/seed-cm-0",
		"== problems ==\nB: cache at stop differs from a fresh LIST: missing default/seed-cm-0",
	} {
		if !strings.Contains(log, s) {
			t.Errorf("want the cell log to contain %q, got:\n%s", s, log)
		}
	}
	dir := t.TempDir()
	if err := WriteCellLogs(dir, rep); err != nil {
		t.Fatal(err)
	}
}
