package findings

import (
	"bytes"
	"strconv"
	"strings"
	"testing"
	"time"

	"informer-lab/compare/matrix"
	"informer-lab/record"
)

// grid is a synthetic grid of one fault on 1.32.13, with client-go v0.35 at both gates: on (its
// default) with the verdict given, off synced.
func grid(onVerdict string, onSynced bool) *Sources {
	scenario := record.ScenarioFaultPrefix + "no-end-bookmark"
	r := &matrix.Result{Schema: matrix.Schema, Date: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), Scenarios: []string{scenario},
		Servers: []matrix.Server{{Name: "1.32.13", Version: "v1.32.13"}},
		Clients: []matrix.Client{
			{Name: "client-v035-off", Module: "client-v035", ClientGo: "v0.35.10", Gate: "off"},
			{Name: "client-v035-on", Module: "client-v035", ClientGo: "v0.35.10", Gate: "on", Default: true},
		},
		Cells: []matrix.Cell{
			{Scenario: scenario, Server: "1.32.13", Client: "client-v035-off", Verdict: "synced: LIST→WATCH (2 req); List(): LIST (1 req)", Agrees: true, Synced: true, Log: "faults/off.cell.log"},
			{Scenario: scenario, Server: "1.32.13", Client: "client-v035-on", Verdict: onVerdict, Agrees: true, Synced: onSynced, SyncWait: "1m0s", Log: "faults/on.cell.log"},
		}}
	return &Sources{Grids: []Grid{{Name: "faults", Page: "faults.md", Result: r}}}
}

// A grid whose every cell syncs with the requests of the gate off yields no finding.
func TestHealthyGridHasNone(t *testing.T) {
	src := grid("synced: LIST→WATCH (2 req); List(): LIST (1 req)", true)
	fs := Derive(src)
	if len(fs) != 0 {
		t.Fatalf("want no finding, got %+v", fs)
	}
	var b bytes.Buffer
	if err := WriteMarkdown(&b, src, fs); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "| faults | [faults.md](faults.md) | 2026-12-01 00:00 UTC | 2 |") || !strings.Contains(b.String(), "\nNone: no cell") {
		t.Errorf("want the grid's date and None, got:\n%s", b.String())
	}
}

// A cell that never syncs is a finding with its cause, its quote, and the gate off, which the
// grid shows to work, with a link to the cell that shows it.
func TestNeverSyncsFinding(t *testing.T) {
	src := grid("not synced after 1m0s: STREAM (1 req); List(): LIST (1 req)", false)
	fs := Derive(src)
	if len(fs) != 1 || fs[0].Symptom != matrix.NeverSyncs || len(fs[0].Causes) != 1 || fs[0].Causes[0].Key != "end-bookmark" {
		t.Fatalf("want one never-syncs finding, caused by the missing end bookmark, got %+v", fs)
	}
	var b bytes.Buffer
	if err := WriteMarkdown(&b, src, fs); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{
		"\n## Never syncs\n\n🔴 **Who**: 1 setup (1 at client-go's default gate) in 1 cell; client-go v0.35.10 (1); WatchListClient on by default (1); kube-apiserver 1.32.13 (1); fault no-end-bookmark (1).\n",
		"- [faults.md](faults.md#faultno-end-bookmark) fault:no-end-bookmark · 1.32.13: [client-v035-on](faults/on.cell.log): not synced after 1m0s\n",
		`(k8s.io/client-go@v0.35.10 tools/cache/reflector.go: "if watchListBookmarkReceived { break }")`,
		"Works for 1 of the 1 setups it is a fix for: the same setup with it does not show the symptom: [fault:no-end-bookmark · 1.32.13 · client-v035-off](faults/off.cell.log).\n",
	} {
		if !strings.Contains(b.String(), s) {
			t.Errorf("want %q in:\n%s", s, b.String())
		}
	}
}

// A fix whose twin shows the symptom too is not said to work.
func TestFixNotShown(t *testing.T) {
	src := grid("not synced after 1m0s: STREAM (1 req); List(): LIST (1 req)", false)
	off := &src.Grids[0].Result.Cells[0]
	off.Synced, off.Verdict = false, "not synced after 1m0s: LIST (1 req); List(): LIST (1 req)"
	fs := Derive(src)
	if len(fs) != 1 || len(fs[0].Fixes) != 0 {
		t.Errorf("want no fix shown to work, got %+v", fs[0].Fixes)
	}
}

// make bench: streaming costs more where its median is 1.2 times LIST→WATCH's and every
// streaming run costs more than every LIST→WATCH run.
func TestBenchCostlier(t *testing.T) {
	run := func(server, mode string, mib int64) string {
		return `{"server":"` + server + `","case":"secrets","k":16,"mode":"` + mode + `","apiPeakHWM":` + strconv.FormatInt(mib<<20, 10) + `,"apiCPUMillis":1000}`
	}
	var runs []string
	for _, p := range []struct {
		server     string
		list, strm []int64
	}{
		{"apart", []int64{100, 110, 120}, []int64{130, 140, 150}},   // 1.27×, apart: costlier
		{"overlap", []int64{100, 110, 140}, []int64{130, 140, 150}}, // 1.27×, overlapping
		{"close", []int64{100, 110, 120}, []int64{121, 125, 130}},   // apart, 1.14×
		{"cheaper", []int64{100, 110, 120}, []int64{50, 55, 60}},    // less
	} {
		for i := range p.list {
			runs = append(runs, run(p.server, "list", p.list[i]), run(p.server, benchStreaming, p.strm[i]))
		}
	}
	b, err := ReadBench([]byte(`{"Versions":{"ClientGo":"v0.32.13"},"Results":[` + strings.Join(runs, ",") + `]}`))
	if err != nil {
		t.Fatal(err)
	}
	hits := b.Hits()
	if len(hits) != 1 || hits[0].Symptom != matrix.MoreMemory || hits[0].Setup.Server != "apart" || hits[0].Table != "bench.md#kube-apiserver-apart" {
		t.Errorf("want more memory on the apart server alone, got %+v", hits)
	}
	if !strings.Contains(BenchSection(b), "- ⚠ streaming costs kube-apiserver more memory: 1 setup (0 at client-go's default gate) in 1 make bench point;") {
		t.Errorf("want bench.md's findings to say so, got:\n%s", BenchSection(b))
	}
}

// Splice puts a page's findings section in place, or at its end, and leaves the rest alone.
func TestSplice(t *testing.T) {
	section := "## Findings\n\n- new\n"
	for page, want := range map[string]string{
		"# P\n\ntext\n\n## Findings\n\n- old\n":                      "# P\n\ntext\n\n## Findings\n\n- new\n",
		"# P\n\n## Findings\n\n- old\n- older\n\n## After\n\nkept\n": "# P\n\n## Findings\n\n- new\n\n## After\n\nkept\n",
		"# P\n\nno section\n":                                        "# P\n\nno section\n\n## Findings\n\n- new\n",
	} {
		if got := Splice(page, section); got != want {
			t.Errorf("Splice(%q): want %q, got %q", page, want, got)
		}
	}
}
