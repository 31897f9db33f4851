package matrix

import (
	"bytes"
	"slices"
	"strings"
	"testing"
	"time"

	"informer-lab/record"
)

// pair is a grid of one scenario, server and kind with one lab module at both gates: on (at
// client-go's default) and off. kind "" is a grid without a kind axis.
func pair(scenario, kind string, on, off Cell) *Result {
	r := &Result{Schema: Schema, Date: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC), Scenarios: []string{scenario},
		Servers: []Server{{Name: "1.32.13", Version: "v1.32.13"}},
		Clients: []Client{
			{Name: "client-v035-off", Module: "client-v035", ClientGo: "v0.35.10", Gate: "off"},
			{Name: "client-v035-on", Module: "client-v035", ClientGo: "v0.35.10", Gate: "on", Default: true},
		}}
	if kind != "" {
		r.Kinds = []string{kind}
	}
	for _, c := range []struct {
		cell   Cell
		client string
	}{{on, "client-v035-on"}, {off, "client-v035-off"}} {
		c.cell.Scenario, c.cell.Server, c.cell.Client, c.cell.Kind, c.cell.Agrees = scenario, "1.32.13", c.client, kind, true
		c.cell.Log = scenario + "/" + c.client + LogSuffix
		r.Cells = append(r.Cells, c.cell)
	}
	return r
}

// The symptoms each cell shows, derived from what the cells record: hangs and loops only where
// a cell records whether it synced, extra requests only against the same module with the gate
// off, and only with a stream among them.
func TestHits(t *testing.T) {
	synced := func(v string, ms int64) Cell { return Cell{Verdict: v, Synced: true, SyncMillis: ms} }
	tests := []struct {
		name, scenario, kind string
		on, off              Cell
		want                 []string // symptom: detail
	}{
		{"hot loop", "fault:cut-initial-stream", "",
			Cell{Verdict: "A: not synced after 1m0s: STREAM×3083 (3083 req); B: not synced after 1m0s: STREAM×3064 (3064 req); List(): LIST (1 req)", SyncWait: "1m0s"},
			synced("synced: LIST→WATCH (2 req); List(): LIST (1 req)", 20),
			[]string{"never syncs: not synced after 1m0s", "re-streams in a hot loop: 3083 requests in 1m0s, 51 a second"}},
		{"waits, in a result without SyncWait", "fault:no-end-bookmark", "",
			Cell{Verdict: "not synced after 1m0s: STREAM (1 req); List(): no answer after 1m0s: STREAM (1 req)"},
			synced("synced: LIST→WATCH (2 req); List(): LIST (1 req)", 20),
			[]string{"never syncs: not synced after 1m0s", "a typed List() hangs: no answer after 1m0s"}},
		{"late, with extra requests", "fault:too-large-rv", "",
			synced("synced: STREAM(504)×22→LIST→WATCH (24 req); List(): STREAM(504)→LIST (12 req)", 20103),
			synced("synced: LIST→WATCH (2 req); List(): LIST (1 req)", 25),
			[]string{"syncs late: synced in 20.103s, in 25ms with the gate off", "falls back with extra requests: 24 requests, 2 with the gate off",
				"a typed List() falls back with extra requests: 12 requests, 1 with the gate off"}},
		{"a refused stream", record.ScenarioStartup, "", Cell{Verdict: "STREAM→422→LIST→WATCH (4 req)"}, Cell{Verdict: "LIST→WATCH (2 req)"},
			[]string{"falls back with extra requests: 4 requests, 2 with the gate off"}},
		{"a stream", record.ScenarioStartup, "", Cell{Verdict: "STREAM (1 req)"}, Cell{Verdict: "LIST→WATCH (2 req)"}, nil},
		{"retries without a stream", record.ScenarioRestart, "", Cell{Verdict: "WATCH(error)×2–3→WATCH (3–4 req)"}, Cell{Verdict: "WATCH(error)×2→WATCH (3 req)"}, nil},
		{"a direct List()", record.ScenarioDirect, "", Cell{Verdict: "STREAM(422)→LIST (2 req)"}, Cell{Verdict: "LIST (1 req)"},
			[]string{"a typed List() falls back with extra requests: 2 requests, 1 with the gate off"}},
		{"a kind that never syncs", record.ScenarioSteady, record.KindCustomListWatch, Cell{Verdict: "not synced after 1m0s", SyncWait: "1m0s"},
			synced("8/8 writes, same rvs", 20), []string{"never syncs: not synced after 1m0s"}},
		{"not applicable", record.ScenarioStartup, record.KindCBOR, Cell{Verdict: "n/a: …", NotApplicable: true}, Cell{Verdict: "n/a: …", NotApplicable: true}, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := pair(tt.scenario, tt.kind, tt.on, tt.off)
			var got []string
			for _, h := range r.Hits() {
				if h.Cell.Client != "client-v035-on" || h.Link != h.Cell.Log || !h.Setup.Default {
					t.Errorf("want hits of the gate-on cell, at its default, with its log, got %+v", h)
				}
				got = append(got, string(h.Symptom)+": "+h.Detail)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("want %q, got %q", tt.want, got)
			}
		})
	}
}

// A page whose cells hang says so, with counts, and links to the causes; never "None" then.
func TestMarkdownSaysSymptoms(t *testing.T) {
	r := pair("fault:no-end-bookmark", "", Cell{Verdict: "not synced after 1m0s: STREAM (1 req); List(): LIST (1 req)"},
		Cell{Verdict: "synced: LIST→WATCH (2 req); List(): LIST (1 req)", Synced: true})
	var b bytes.Buffer
	if err := r.Markdown(&b); err != nil {
		t.Fatal(err)
	}
	want := "\n## Findings\n\n- 🔴 never syncs: 1 setup (1 at client-go's default gate) in 1 cell; client-go v0.35.10 (1); WatchListClient on by default (1); kube-apiserver 1.32.13 (1); fault no-end-bookmark (1). Causes and what to do: [findings.md](findings.md#never-syncs)\n"
	if !strings.HasSuffix(b.String(), want) {
		t.Errorf("want the page to end with %q, got:\n%s", want, b.String())
	}
}

// Findings are ranked by the setups they hit at client-go's default gate, then by all.
func TestGroupHitsRanks(t *testing.T) {
	set := func(client string, def bool) Setup {
		return Setup{ClientGo: client, Gate: "on", Default: def, Server: "1.37.2", Kind: record.KindTypedConfigMaps}
	}
	hits := []Hit{
		{Symptom: NeverSyncs, Setup: set("v0.31.14", false)}, {Symptom: NeverSyncs, Setup: set("v0.32.13", false)},
		{Symptom: ExtraRequests, Setup: set("v0.35.10", true)}, {Symptom: ExtraRequests, Setup: set("v0.35.10", true)},
		{Symptom: HotLoop, Setup: set("v0.31.14", false)},
	}
	var got []string
	for _, g := range GroupHits(hits) {
		got = append(got, g.Who())
	}
	want := []string{
		"1 setup (1 at client-go's default gate) in 2 make bench points; client-go v0.35.10 (1); WatchListClient on by default (1); kube-apiserver 1.37.2 (1)",
		"2 setups (0 at client-go's default gate) in 2 make bench points; client-go v0.31.14 (1), v0.32.13 (1); WatchListClient set on (2); kube-apiserver 1.37.2 (2)",
		"1 setup (0 at client-go's default gate) in 1 make bench point; client-go v0.31.14 (1); WatchListClient set on (1); kube-apiserver 1.37.2 (1)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("want\n%q\ngot\n%q", want, got)
	}
}

func TestSlug(t *testing.T) {
	for heading, want := range map[string]string{
		"fault:refuse-watch-list=400":                      "faultrefuse-watch-list400",
		"startup · 1.37.2":                                 "startup--1372",
		"A typed List() hangs":                             "a-typed-list-hangs",
		"kube-apiserver 1.37.2 WatchListCompression=false": "kube-apiserver-1372-watchlistcompressionfalse",
	} {
		if got := Slug(heading); got != want {
			t.Errorf("Slug(%q): want %q, got %q", heading, want, got)
		}
	}
}
