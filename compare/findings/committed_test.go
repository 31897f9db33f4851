package findings

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"informer-lab/compare/matrix"
	"informer-lab/record"
)

const docs = "../../docs"

// committed is the committed results, only the named grids (and make bench's with "bench").
func committed(t *testing.T, names ...string) *Sources {
	t.Helper()
	src, err := Load(docs)
	if err != nil {
		t.Fatal(err)
	}
	src.Grids = slices.DeleteFunc(src.Grids, func(g Grid) bool { return !slices.Contains(names, g.Name) })
	if !slices.Contains(names, "bench") {
		src.Benches = nil
	}
	return src
}

func finding(fs []Finding, s matrix.Symptom) *Finding {
	for i := range fs {
		if fs[i].Symptom == s {
			return &fs[i]
		}
	}
	return nil
}

func cellsOf(f *Finding) []*matrix.Cell {
	var out []*matrix.Cell
	for _, h := range f.Hits {
		out = append(out, h.Cell)
	}
	return out
}

// The fault grid: every cell that says "not synced" is in the never-syncs finding, and no other;
// its hot loop is the cut stream's; a gate-off cell shows each setup synced.
func TestCommittedFaults(t *testing.T) {
	src := committed(t, "faults")
	fs := Derive(src)
	never := finding(fs, matrix.NeverSyncs)
	if never == nil {
		t.Fatal("want a never-syncs finding from the fault grid")
	}
	var want []*matrix.Cell
	r := src.Grids[0].Result
	for i := range r.Cells {
		if strings.Contains(r.Cells[i].Verdict, "not synced") {
			want = append(want, &r.Cells[i])
		}
	}
	got := cellsOf(never)
	byKey := func(a, b *matrix.Cell) int { return strings.Compare(a.Key(), b.Key()) }
	slices.SortFunc(got, byKey)
	slices.SortFunc(want, byKey)
	if len(want) != 102 || !slices.Equal(got, want) {
		t.Errorf("want the %d cells that say not synced, got %d", len(want), len(got))
	}
	if who := never.Who(); !strings.HasPrefix(who, "102 setups (45 at client-go's default gate) in 102 cells;") {
		t.Errorf("want 102 setups (34 per server), 45 at the default gate, got %q", who)
	}
	if fs[0].Symptom != matrix.NeverSyncs {
		t.Errorf("want never syncs ranked first, got %s", fs[0].Symptom)
	}
	for _, h := range finding(fs, matrix.HotLoop).Hits {
		if h.Setup.Fault != "cut-initial-stream" {
			t.Errorf("want only the cut stream in a hot loop, got %+v", h.Setup)
		}
	}
	if gateOff := never.Fixes[0]; !strings.Contains(gateOff.Text, "KUBE_FEATURE_WatchListClient=false") || len(gateOff.Works) != 102 {
		t.Errorf("want the gate off shown to work for the 102 setups, got %d", len(gateOff.Works))
	}
	if hangs := finding(fs, matrix.ListHangs); hangs == nil || len(hangs.Hits) != 27 {
		t.Errorf("want the 27 typed List() calls (9 per server) that got no answer, got %+v", hangs)
	}
}

// The kind grid: the hand-written ListWatches and controller-runtime v0.19 never sync; the
// opt-out works from client-go v0.35, which the grid shows, and not before.
func TestCommittedKinds(t *testing.T) {
	fs := Derive(committed(t, "kinds"))
	never := finding(fs, matrix.NeverSyncs)
	if never == nil || len(never.Hits) != 48 || len(never.Setups()) != 24 {
		t.Fatalf("want 24 setups (12 per server) never synced in 48 cells (startup, steady), got %s", never.Who())
	}
	texts := map[string]FixOf{}
	for _, f := range never.Fixes {
		texts[f.Text] = f
	}
	var optOut, newer, cr FixOf
	for text, f := range texts {
		switch {
		case strings.Contains(text, "IsWatchListSemanticsUnSupported"):
			optOut = f
		case strings.HasPrefix(text, "client-go v0.35.10 or later, whose reflector reads the opt-out"):
			newer = f
		case strings.Contains(text, "controller-runtime v0.20 or later (in these labs, beside client-go v0.32.13)"):
			cr = f
		}
	}
	if len(optOut.Works) != 6 || len(optOut.Fails) != 8 || record.Minor(optOut.Works[0].ClientGo) != 35 {
		t.Errorf("want the opt-out to work for v0.35-v0.37 (3 per server) and not for v0.31-v0.34 (4 per server), got %d and %d", len(optOut.Works), len(optOut.Fails))
	}
	if len(newer.Works) != 8 || len(cr.Works) != 2 {
		t.Errorf("want v0.35 for the 4 opt-outs before it and controller-runtime v0.20 for the 1, on each server, got %d and %d", len(newer.Works), len(cr.Works))
	}
}

// make matrix's grid: every cell agrees with its gates, yet the fallbacks cost requests: the
// startup, expired and restart-gap cells of the servers whose WatchList gate is off.
func TestCommittedMatrix(t *testing.T) {
	fs := Derive(committed(t, "matrix"))
	extra := finding(fs, matrix.ExtraRequests)
	if extra == nil || finding(fs, matrix.NeverSyncs) != nil {
		t.Fatalf("want fallbacks and no hang, got %d findings", len(fs))
	}
	for _, h := range extra.Hits {
		if h.Setup.ServerStreams || h.Setup.Gate != "on" || !slices.Contains([]string{record.ScenarioStartup, record.ScenarioExpired, record.ScenarioRestartGap}, h.Cell.Scenario) {
			t.Errorf("want startup, expired and restart-gap on servers that refuse the stream, got %s", h.Cell.Key())
		}
		if h.Cell.Scenario == record.ScenarioStartup && h.Cell.Expected != record.ShapeFallback {
			t.Errorf("want the cells the gates expect to fall back, got %s expecting %s", h.Cell.Key(), h.Cell.Expected)
		}
	}
	if len(extra.Hits) != 63 || len(extra.Setups()) != 21 || extra.Defaults() != 9 {
		t.Errorf("want 21 setups (9 at the default gate) in 63 cells, got %s", extra.Who())
	}
}

// make bench: streaming costs 1.37.2 more memory with the secrets, with WatchListCompression or
// without. It costs 1.37.2 more CPU in most of the cases, gzip the cause, but never with
// WatchListCompression=false, which the servers run shows to work for the small objects; where
// 1.32.13, which sends streams uncompressed, shows it too, the cause is not established.
func TestCommittedBench(t *testing.T) {
	fs := Derive(committed(t, "bench"))
	servers := func(s matrix.Symptom) []string {
		var out []string
		for _, set := range finding(fs, s).Setups() {
			out = append(out, set.Server+" "+set.Case)
		}
		return out
	}
	if got, want := servers(matrix.MoreMemory), []string{"1.37.2 secrets", "1.37.2 WatchListCompression=false secrets"}; !slices.Equal(got, want) {
		t.Errorf("more memory: want %q, got %q", want, got)
	}
	got := servers(matrix.MoreCPU)
	on137 := slices.DeleteFunc(slices.Clone(got), func(s string) bool { return !strings.HasPrefix(s, "1.37.2 ") })
	if !slices.Contains(got, "1.37.2 small") || !slices.Contains(got, "1.37.2 secrets") || 2*len(on137) <= len(got) {
		t.Errorf("more CPU: want 1.37.2's small and secrets, and mostly 1.37.2, got %q", got)
	}
	cpu := finding(fs, matrix.MoreCPU)
	for _, c := range cpu.Causes {
		for _, s := range c.Setups {
			if strings.Contains(s.Server, noCompression) || (c.Key == "watchlist-compression") != strings.HasPrefix(s.Server, "1.37.") {
				t.Errorf("more CPU on %s %s: want gzip as the cause exactly on 1.37 and never with %s, got %s", s.Server, s.Case, noCompression, c.Key)
			}
		}
	}
	if !slices.ContainsFunc(cpu.Fixes, func(f FixOf) bool {
		return strings.Contains(f.Text, noCompression) && len(f.Works) == 1 && f.Works[0].Case == "small"
	}) {
		t.Errorf("want WatchListCompression=false shown to work for the small objects, got %+v", cpu.Fixes)
	}
}

// Every finding of the committed results has its causes in the table, each with its quote but
// the one that says it is not established, and a fix the results show to work.
func TestCommittedCauses(t *testing.T) {
	for _, f := range Derive(committed(t, "matrix", "faults", "kinds", "bench")) {
		for _, c := range f.Causes {
			if c.Key == "" || (c.Quote == Quote{}) && !strings.HasPrefix(c.Text, "Not established") {
				t.Errorf("%s: a cause without its table entry or its quote: %+v", f.Symptom, c)
			}
		}
		if len(f.Fixes) == 0 {
			t.Errorf("%s: no fix the results show to work", f.Symptom)
		}
	}
}

// docs/findings.md and every page's findings section are what the committed results give.
func TestDocsAreCurrent(t *testing.T) {
	dir := t.TempDir()
	files := []string{Page}
	for _, b := range benchFiles {
		files = append(files, b.page, b.result)
	}
	for _, g := range gridFiles {
		files = append(files, g.page, g.result)
	}
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(docs, f))
		if err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(dir, f)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(dst, data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if _, changed, err := Write(dir); err != nil || len(changed) > 0 {
		t.Errorf("want docs/ as the results give it, got %v changed (%v): run %s", changed, err, Command)
	}
}

// docs/servers.md's servers without the watch cache: a 410 comes only from etcd's compaction
// (expired), never from a restart (restart-gap: the resumed watch reads etcd's history), and
// every startup handshake is the one the gates imply, as with the cache. With an aggregated
// apiserver: no 410 at all (its own watch cache outlives kube-apiserver's restart and etcd's
// compaction), the aggregator answers 503 until it has the APIService available again, and the
// startup handshakes are those sample-apiserver's gates imply.
func TestCommittedServers(t *testing.T) {
	src := committed(t, matrix.PageVariants)
	if len(src.Grids) != 1 {
		t.Fatalf("want docs/servers.md's results, got %d grids", len(src.Grids))
	}
	r := src.Grids[0].Result
	counts := map[string]int{}
	unavailable := map[string]bool{} // aggregated server -> a restart cell got 503
	kept := map[string]bool{}        // upgrade column -> a restart cell kept a watch on the other server
	mixed := map[string]bool{}       // upgrade column -> a startup cell whose informers streamed and fell back
	for _, c := range r.Cells {
		aggregated := strings.Contains(c.Server, record.SettingAggregated+"=")
		upgrade := strings.Contains(c.Server, record.SettingUpgrade+"=")
		switch {
		case aggregated:
			counts["aggregated "+c.Scenario]++
		case upgrade:
			counts["upgrade "+c.Scenario]++
		default:
			counts[c.Scenario]++
		}
		switch has410 := strings.Contains(c.Verdict, "410"); {
		case c.Scenario == record.ScenarioStartup && !c.Agrees:
			t.Errorf("want the handshake the gates imply, got %s: %s", c.Key(), c.Verdict)
		case strings.Contains(c.Verdict, "not back in sync"):
			t.Errorf("want every informer back in sync, got %s: %s", c.Key(), c.Verdict)
		case aggregated && has410:
			t.Errorf("want no 410 with an aggregated apiserver, got %s: %s", c.Key(), c.Verdict)
		case aggregated && c.Scenario == record.ScenarioRestart && strings.Contains(c.Verdict, "WATCH(503)"):
			unavailable[c.Server] = true
		case upgrade && c.Scenario == record.ScenarioRestart && strings.Contains(c.Verdict, "watch kept on "):
			kept[c.Server] = true
		case upgrade && c.Scenario == record.ScenarioStartup && strings.Contains(c.Verdict, record.ShapeStream+" (1 req)") && strings.Contains(c.Verdict, record.ShapeFallback):
			mixed[c.Server] = true
		case upgrade:
		case c.Scenario == record.ScenarioRestartGap && has410:
			t.Errorf("want no 410 after a restart without the watch cache, got %s: %s", c.Key(), c.Verdict)
		case c.Scenario == record.ScenarioExpired && !aggregated && !has410:
			t.Errorf("want a 410 from etcd's compaction, got %s: %s", c.Key(), c.Verdict)
		}
	}
	if counts[record.ScenarioRestartGap] != 42 || counts[record.ScenarioExpired] != 42 || counts["aggregated "+record.ScenarioExpired] != 28 || counts["upgrade "+record.ScenarioExpired] != 28 {
		t.Errorf("want 42 cells (14 clients × 3 servers) of restart-gap and of expired without the watch cache, 28 (× 2) with an aggregated apiserver and mid-upgrade, got %v", counts)
	}
	if len(unavailable) != 2 {
		t.Errorf("want the aggregator's 503 after kube-apiserver's restart on both aggregated servers, got %v", unavailable)
	}
	if len(kept) != 2 || len(mixed) != 2 {
		t.Errorf("want, on both upgrade columns, a restart that kept watches on the other server (%v) and a startup where one informer streamed and the other fell back (%v)", kept, mixed)
	}
}
