package matrix

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"informer-lab/compare/analysis"
	"informer-lab/record"
)

// recordedKinds is a grid with a kind axis read from real runs of make matrix (kube-apiserver
// 1.32.13, a 10 s sync wait, five client cells; kept under testdata/kinds as they were
// recorded): startup with custom-listwatch, custom-listwatch-optout and cbor, steady with
// custom-listwatch. The cbor cells of client-v031 are n/a, as make matrix adds them.
func recordedKinds(t *testing.T) *Result {
	t.Helper()
	res := New(time.Date(2026, 12, 1, 21, 38, 0, 0, time.UTC))
	res.Kinds = []string{record.KindCustomListWatch, record.KindCustomListWatchOptOut, record.KindCBOR}
	res.Scenarios = []string{"startup", "steady"}
	res.Command = "make matrix KINDS=custom-listwatch,custom-listwatch-optout,cbor SERVERS=1.32.13"
	srv := Server{Name: "1.32.13", Version: "v1.32.13"}
	for _, run := range []string{"startup/1.32.13/custom-listwatch", "startup/1.32.13/custom-listwatch-optout", "startup/1.32.13/cbor", "steady/1.32.13/custom-listwatch"} {
		r, err := analysis.LoadRun(filepath.Join("testdata/kinds", run))
		if err != nil {
			t.Fatal(err)
		}
		parts := strings.Split(run, "/")
		res.AddKind(parts[0], parts[2], srv, analysis.Analyze(r), run)
	}
	for _, cl := range []string{"client-v031-off", "client-v031-on"} {
		res.AddNotApplicable("startup", record.KindCBOR, srv.Name, cl, record.KindNotApplicable(record.KindCBOR, 31, 32))
	}
	return res
}

// What each kind did, read from its own wire log: the gate on with a ListWatch that drops
// sendInitialEvents is a plain WATCH whose end bookmark never comes (not synced, and not the
// handshake the gates imply); the opt-out fixes it from client-go v0.35 only; cbor streams.
// An informer that did not sync has lost no data: its cache is not checked, its problems are
// the verdict, and the steady grid compares only the informers that synced.
func TestKindCellsRecorded(t *testing.T) {
	res := recordedKinds(t)
	type want struct {
		verdict, expected string
		synced, agrees    bool
	}
	const (
		listWatch = "synced: LIST→WATCH (2 req)"
		stream    = "synced: STREAM (1 req)"
		hang      = "not synced after 10s: WATCH (1 req)"
	)
	na := record.KindNotApplicable(record.KindCBOR, 31, 32)
	for key, w := range map[string]want{
		"startup custom-listwatch client-v031-off":        {listWatch, "LIST→WATCH", true, true},
		"startup custom-listwatch client-v031-on":         {hang, "STREAM", false, false},
		"startup custom-listwatch client-v034-on":         {hang, "STREAM", false, false},
		"startup custom-listwatch client-v035-on":         {hang, "STREAM", false, false},
		"startup custom-listwatch client-v037-off":        {listWatch, "LIST→WATCH", true, true},
		"startup custom-listwatch-optout client-v031-on":  {hang, "STREAM", false, false},
		"startup custom-listwatch-optout client-v034-on":  {hang, "STREAM", false, false},
		"startup custom-listwatch-optout client-v035-on":  {listWatch, "LIST→WATCH", true, true},
		"startup custom-listwatch-optout client-v037-off": {listWatch, "LIST→WATCH", true, true},
		"startup cbor client-v031-off":                    {na, "", false, true},
		"startup cbor client-v034-on":                     {stream, "STREAM", true, true},
		"startup cbor client-v035-on":                     {stream, "STREAM", true, true},
		"startup cbor client-v037-off":                    {listWatch, "LIST→WATCH", true, true},
		"steady custom-listwatch client-v031-off":         {"8/8 writes, same rvs", "", true, true},
		"steady custom-listwatch client-v035-on":          {"not synced after 10s", "", false, true},
	} {
		f := strings.Fields(key)
		c := res.KindCell(f[0], "1.32.13", f[1], f[2])
		if c == nil {
			t.Errorf("%s: no cell", key)
			continue
		}
		if c.Verdict != w.verdict || c.Expected != w.expected || c.Synced != w.synced || c.Agrees != w.agrees {
			t.Errorf("%s: verdict %q expected %q synced %v agrees %v; want %q %q %v %v", key, c.Verdict, c.Expected, c.Synced, c.Agrees, w.verdict, w.expected, w.synced, w.agrees)
		}
		if c.Lost != "" || len(c.Problems) > 0 || c.SeqDiffers {
			t.Errorf("%s: lost %q, problems %q, sequence differs %v; want none", key, c.Lost, c.Problems, c.SeqDiffers)
		}
		if c.NotApplicable != (w.verdict == na) || c.NotApplicable != (c.Log == "") {
			t.Errorf("%s: n/a %v, log %q", key, c.NotApplicable, c.Log)
		}
	}
	// The cbor run's server had CBORServingAndStorage on (the harness adds it): its cells are
	// in the server's column all the same, and their logs say which gates it ran with.
	if len(res.Servers) != 1 || res.Servers[0].Name != "1.32.13" {
		t.Errorf("want one server column, 1.32.13, got %+v", res.Servers)
	}
	run, err := analysis.LoadRun("testdata/kinds/startup/1.32.13/cbor")
	if err != nil {
		t.Fatal(err)
	}
	rep := analysis.Analyze(run)
	for _, l := range rep.Labs {
		if l.Name != "client-v035-on" {
			continue
		}
		log := CellLog(rep, l)
		for _, s := range []string{
			"server 1.32.13 CBORServingAndStorage=true\n", "\ninformer kind: cbor\n", "\nsync wait: 10s", "\nrun: startup/1.32.13/cbor\n",
			"[SETUP] kind cbor (ClientsAllowCBOR=true, ClientsPreferCBOR=true (set by this lab))",
			"&sendInitialEvents=true&timeoutSeconds=<T>&watch=true -> 200 application/cbor-seq (accept application/json;q=0.9,application/cbor;q=1)",
			"[WATCH-EVENT][A] ADDED default/seed-cm-1 rv=<RV>", "[WATCH-EVENT][A] BOOKMARK rv=<RV0> k8s.io/initial-events-end=true",
		} {
			if !strings.Contains(log, s) {
				t.Errorf("want the cbor cell log to contain %q, got:\n%s", s, log)
			}
		}
	}
	// An informer that never synced: its cache is not checked, and the log says why.
	run, err = analysis.LoadRun("testdata/kinds/startup/1.32.13/custom-listwatch")
	if err != nil {
		t.Fatal(err)
	}
	rep = analysis.Analyze(run)
	for _, l := range rep.Labs {
		if l.Name == "client-v035-on" {
			log := CellLog(rep, l)
			for _, s := range []string{"A: not checked (not synced after 10s)", "\n== problems ==\nnone\n",
				"[HTTP][A] GET /api/v1/configmaps?timeout=<T>&timeoutSeconds=<T>&watch=true -> 200 application/vnd.kubernetes.protobuf;stream=watch"} {
				if !strings.Contains(log, s) {
					t.Errorf("want the custom-listwatch cell log to contain %q, got:\n%s", s, log)
				}
			}
		}
	}
}

func TestKindsMarkdown(t *testing.T) {
	res := recordedKinds(t)
	var b bytes.Buffer
	if err := res.Markdown(&b); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, s := range []string{
		"# informer-lab matrix: informer kinds\n\n2026-12-01 21:38 UTC",
		"\n\nMade by `make matrix KINDS=custom-listwatch,custom-listwatch-optout,cbor SERVERS=1.32.13`, from the run's own logs.\n\n",
		"; kube-apiserver 1.32.13; informer kinds custom-listwatch, custom-listwatch-optout, cbor\n",
		"| kind | the lab's two informers (A, B) |\n| --- | --- |\n| custom-listwatch | a hand-written cache.ListWatch",
		"\n## startup · 1.32.13\n\n",
		"| client | custom-listwatch | custom-listwatch-optout | cbor |\n| --- | --- | --- | --- |\n",
		"| client-v031 off (default) | [synced: LIST→WATCH (2 req)](startup/1.32.13/custom-listwatch/client-v031-off.cell.log) · in ",
		" | n/a: client-go v0.31 has no ClientsAllowCBOR gate (from v0.32) |\n",
		"| client-v035 on (default) | [not synced after 10s: WATCH (1 req)](startup/1.32.13/custom-listwatch/client-v035-on.cell.log)<br>⚠ expected STREAM | [synced: LIST→WATCH (2 req)](startup/1.32.13/custom-listwatch-optout/client-v035-on.cell.log) · in ",
		"\n## steady · 1.32.13\n\n",
		"| client-v035 on (default) | [not synced after 10s](steady/1.32.13/custom-listwatch/client-v035-on.cell.log) | – | – |\n",
		"- ⚠ startup · 1.32.13 · custom-listwatch · client-v035-on: expected STREAM, saw not synced after 10s: WATCH (1 req)\n",
	} {
		if !strings.Contains(md, s) {
			t.Errorf("want the Markdown to contain %q, got:\n%s", s, md)
		}
	}
	for _, s := range []string{"LOST", "• ", "n/a: client-go v0.31 has no ClientsAllowCBOR gate (from v0.32)]("} {
		if strings.Contains(md, s) {
			t.Errorf("want no %q in the Markdown (no lost data, no other problem, no link for an n/a cell), got:\n%s", s, md)
		}
	}
}

func TestKindsTerminal(t *testing.T) {
	var b bytes.Buffer
	recordedKinds(t).Terminal(&b, false)
	out := b.String()
	for _, s := range []string{
		"columns: informer kinds; custom = custom-listwatch · optout = custom-listwatch-optout\n",
		"\n== startup · 1.32.13 ==\nclient                    | custom | optout | cbor\n",
		"\nclient-v031 off (default) | a 9ms  | a 5ms  | b\n",
		"\nclient-v031 on            | c!     | c!     | b\n",
		"\nclient-v035 on (default)  | c!     | a 9ms  | d 7ms\n",
		"a = synced: LIST→WATCH (2 req) · b = n/a: client-go v0.31 has no ClientsAllowCBOR gate (from v0.32) · c = not synced\n  after 10s: WATCH (1 req) · d = synced: STREAM (1 req)\n",
		"\n== steady · 1.32.13 ==\n",
	} {
		if !strings.Contains(out, s) {
			t.Errorf("want the terminal grid to contain %q, got:\n%s", s, out)
		}
	}
	checkAligned(t, out)
}

// The grid make matrix KINDS=all makes on one server: 14 client cells × 8 kinds, the longest
// times, in one table of at most 120 columns.
func TestKindsTerminalFits(t *testing.T) {
	res := bigResult(1)
	res.Scenarios = []string{"startup"}
	res.Kinds = record.Kinds
	var cells []Cell
	for _, k := range record.Kinds {
		for i, cl := range res.Clients {
			c := Cell{Scenario: "startup", Server: res.Servers[0].Name, Client: cl.Name, Kind: k, Agrees: true, Synced: true, SyncWait: "1m0s", SyncMillis: 9876, Verdict: fmt.Sprintf("synced: verdict %d", i%5)}
			switch {
			case k == record.KindCBOR && i < 2:
				c = Cell{Scenario: "startup", Server: c.Server, Client: c.Client, Kind: k, Agrees: true, NotApplicable: true, Verdict: "n/a: client-go v0.31 has no ClientsAllowCBOR gate (from v0.32)"}
			case i == 3:
				c.Synced, c.Agrees, c.Expected, c.Verdict = false, false, "STREAM", "not synced after 1m0s: WATCH (1 req)"
			}
			cells = append(cells, c)
		}
	}
	res.Cells = cells
	var b bytes.Buffer
	res.Terminal(&b, false)
	out := b.String()
	for _, l := range strings.Split(out, "\n") {
		if n := utf8.RuneCountInString(l); n > termWidth {
			t.Errorf("want lines of at most %d columns, got %d: %q", termWidth, n, l)
		}
	}
	if n := strings.Count(out, "\nclient                    | typed "); n != 1 {
		t.Errorf("want the kinds in one table, got %d tables:\n%s", n, out)
	}
	for _, s := range []string{"| typed  | selector | metadata | dynamic | ctrl-rt | custom | optout | cbor", "\nclient-v031 off (default) | a 9.9s |", " | e!     |"} {
		if !strings.Contains(out, s) {
			t.Errorf("want %q, got:\n%s", s, out)
		}
	}
	checkAligned(t, out)
}

// A cell's key names its kind unless it is typed-configmaps, so that the typed column of a
// grid with a kind axis compares with a grid without one; a saved grid comes back whole.
func TestKindsKeySaveLoad(t *testing.T) {
	if k := (Cell{Scenario: "startup", Server: "1.37.2", Client: "c", Kind: record.KindTypedConfigMaps}).Key(); k != "startup | 1.37.2 | c" {
		t.Errorf("typed-configmaps key %q", k)
	}
	if k := (Cell{Scenario: "startup", Server: "1.37.2", Client: "c", Kind: "cbor"}).Key(); k != "startup | 1.37.2 | c | cbor" {
		t.Errorf("cbor key %q", k)
	}
	res := recordedKinds(t)
	file := filepath.Join(t.TempDir(), "kinds.json")
	if err := res.Save(file); err != nil {
		t.Fatal(err)
	}
	back, err := Load(file)
	if err != nil {
		t.Fatal(err)
	}
	if d := Diff(res, back); len(d) > 0 || len(back.Cells) != len(res.Cells) || strings.Join(back.Kinds, ",") != strings.Join(res.Kinds, ",") || back.Command != res.Command {
		t.Errorf("want the saved grid back, got differences %q", d)
	}
	data, _ := os.ReadFile(file)
	for _, s := range []string{`"kinds": [`, `"kind": "custom-listwatch"`, `"notApplicable": true`, `"syncWait": "10s"`, `"synced": true`, `"command": "make matrix KINDS=`} {
		if !bytes.Contains(data, []byte(s)) {
			t.Errorf("want %s in the JSON", s)
		}
	}
	// A grid without a kind axis writes none of it.
	var plain bytes.Buffer
	sample(t).Markdown(&plain)
	for _, s := range []string{"kind", "n/a", "Made by"} {
		if strings.Contains(plain.String(), s) {
			t.Errorf("want no %q in a grid without a kind axis, got:\n%s", s, plain.String())
		}
	}
}

// A harness fault that names one lab (one that would not stop, as controller-runtime's cache of
// v0.19 with the gate on did once its informers never synced) is that lab's problem, not every
// cell's; one that names none, or several, is the run's.
func TestHarnessFaultNamesItsLab(t *testing.T) {
	run, err := analysis.LoadRun("testdata/kinds/startup/1.32.13/custom-listwatch")
	if err != nil {
		t.Fatal(err)
	}
	rep := analysis.Analyze(run)
	stop := "fault recorded: harness: lab stop client-v031-on did not stop within 10s after SIGINT: killed"
	both := "fault recorded: harness: client-v031-on and client-v031-off: something"
	rep.Failures = append(rep.Failures, stop, both)
	for _, c := range kindCells("startup", record.KindCustomListWatch, rep) {
		want := []string{"run: " + both}
		if c.Client == "client-v031-on" {
			want = []string{stop, "run: " + both}
		}
		if strings.Join(c.Problems, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: problems %q, want %q", c.Client, c.Problems, want)
		}
	}
}
