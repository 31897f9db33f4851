package findings

import (
	"fmt"
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

// notSynced are the cells of the named committed grids that say an informer never synced.
func notSynced(src *Sources) []*matrix.Cell {
	var out []*matrix.Cell
	for _, g := range src.Grids {
		for i := range g.Result.Cells {
			if strings.Contains(g.Result.Cells[i].Verdict, "not synced") {
				out = append(out, &g.Result.Cells[i])
			}
		}
	}
	return out
}

func sortedCells(cells []*matrix.Cell) []*matrix.Cell {
	return slices.SortedFunc(slices.Values(cells), func(a, b *matrix.Cell) int { return strings.Compare(a.Key(), b.Key()) })
}

// Every grid: each cell that says an informer never synced is under the never-syncs finding,
// and no other cell is; the finding's first line counts what its hits hold.
func TestCommittedNeverSyncing(t *testing.T) {
	for _, name := range matrix.Pages {
		src := committed(t, name)
		want := notSynced(src)
		never := finding(Derive(src), matrix.NeverSyncs)
		if never == nil {
			if len(want) > 0 {
				t.Errorf("%s: %d cells say not synced, and no never-syncs finding", name, len(want))
			}
			continue
		}
		if got := cellsOf(never); !slices.Equal(sortedCells(got), sortedCells(want)) {
			t.Errorf("%s: the never-syncs finding holds %d cells, want the %d that say not synced", name, len(got), len(want))
		}
	}
}

// The counts of every finding add up: its line names the setups, the defaults among them and
// the cells its hits hold, and over all grids each symptom's hits are those of each grid alone.
func TestCommittedCountsAddUp(t *testing.T) {
	all := Derive(committed(t, append(slices.Clone(matrix.Pages), "bench")...))
	perGrid := map[matrix.Symptom]int{}
	for _, name := range append(slices.Clone(matrix.Pages), "bench") {
		for _, f := range Derive(committed(t, name)) {
			perGrid[f.Symptom] += len(f.Hits)
		}
	}
	for _, f := range all {
		cells := 0
		for _, h := range f.Hits {
			if h.Cell != nil {
				cells++
			}
		}
		if who := f.Who(); cells > 0 && !strings.HasPrefix(who, fmt.Sprintf("%d setups (%d at client-go's default gate) in %d cells", len(f.Setups()), f.Defaults(), cells)) {
			t.Errorf("%s: %q does not count its %d setups, %d defaults and %d cells", f.Symptom, who, len(f.Setups()), f.Defaults(), cells)
		}
		if perGrid[f.Symptom] != len(f.Hits) {
			t.Errorf("%s: %d hits over all grids, %d grid by grid", f.Symptom, len(f.Hits), perGrid[f.Symptom])
		}
		for _, fix := range f.Fixes {
			if len(fix.Works)+len(fix.Fails) > len(f.Setups()) {
				t.Errorf("%s: fix %q works for %d and fails for %d of %d setups", f.Symptom, fix.Text, len(fix.Works), len(fix.Fails), len(f.Setups()))
			}
		}
	}
}

// Every cell log a committed page's findings link exists.
func TestCommittedLinksExist(t *testing.T) {
	for _, f := range Derive(committed(t, matrix.Pages...)) {
		for _, h := range f.Hits {
			if h.Link == "" {
				continue
			}
			if _, err := os.Stat(filepath.Join(docs, h.Link)); err != nil {
				t.Errorf("%s: %s links %s: %v", f.Symptom, h.Cell.Key(), h.Link, err)
			}
		}
	}
}

// The fault grid: the never-syncs finding ranks first; its hot loop is the cut stream's; the
// gate off is shown to work for every setup that never syncs.
func TestCommittedFaults(t *testing.T) {
	fs := Derive(committed(t, "faults"))
	never := finding(fs, matrix.NeverSyncs)
	if never == nil {
		t.Fatal("want a never-syncs finding from the fault grid")
	}
	if fs[0].Symptom != matrix.NeverSyncs {
		t.Errorf("want never syncs ranked first, got %s", fs[0].Symptom)
	}
	for _, h := range finding(fs, matrix.HotLoop).Hits {
		if h.Setup.Fault != "cut-initial-stream" {
			t.Errorf("want only the cut stream in a hot loop, got %+v", h.Setup)
		}
	}
	if gateOff := never.Fixes[0]; !strings.Contains(gateOff.Text, "KUBE_FEATURE_WatchListClient=false") || len(gateOff.Works) != len(never.Setups()) {
		t.Errorf("want the gate off shown to work for all %d setups, got %d", len(never.Setups()), len(gateOff.Works))
	}
	if hangs := finding(fs, matrix.ListHangs); hangs == nil {
		t.Errorf("want typed List() calls that got no answer")
	}
}

// The kind grid: the hand-written ListWatches and controller-runtime v0.19 never sync; the
// opt-out works from client-go v0.35, which the grid shows, and not before.
func TestCommittedKinds(t *testing.T) {
	fs := Derive(committed(t, "kinds"))
	never := finding(fs, matrix.NeverSyncs)
	if never == nil {
		t.Fatal("want the kinds that never sync")
	}
	var optOut, newer, cr FixOf
	for _, f := range never.Fixes {
		switch {
		case strings.Contains(f.Text, "IsWatchListSemanticsUnSupported"):
			optOut = f
		case strings.HasPrefix(f.Text, "client-go v0.35.10 or later, whose reflector reads the opt-out"):
			newer = f
		case strings.Contains(f.Text, "controller-runtime v0.20 or later (in these labs, beside client-go v0.32.13)"):
			cr = f
		}
	}
	if len(optOut.Works) == 0 || len(optOut.Fails) == 0 {
		t.Fatalf("want the opt-out shown to work and to fail, got %d and %d", len(optOut.Works), len(optOut.Fails))
	}
	for _, s := range optOut.Works {
		if record.Minor(s.ClientGo) < 35 {
			t.Errorf("the opt-out works on %s, before v0.35 reads it", s.ClientGo)
		}
	}
	for _, s := range optOut.Fails {
		if record.Minor(s.ClientGo) >= 35 {
			t.Errorf("the opt-out fails on %s, which reads it", s.ClientGo)
		}
	}
	if len(newer.Works) == 0 || len(cr.Works) == 0 {
		t.Errorf("want v0.35 for the opt-outs before it and controller-runtime v0.20 shown to work, got %d and %d", len(newer.Works), len(cr.Works))
	}
}

// make matrix's grid: every cell agrees with its gates, yet the fallbacks cost requests: the
// startup, expired and restart-gap cells of the servers whose WatchList gate is off, each of
// their startup cells with the gate on among them.
func TestCommittedMatrix(t *testing.T) {
	src := committed(t, "matrix")
	fs := Derive(src)
	extra := finding(fs, matrix.ExtraRequests)
	if extra == nil || finding(fs, matrix.NeverSyncs) != nil {
		t.Fatalf("want fallbacks and no hang, got %d findings", len(fs))
	}
	hit := map[*matrix.Cell]bool{}
	for _, h := range extra.Hits {
		hit[h.Cell] = true
		if h.Setup.ServerStreams || h.Setup.Gate != "on" || !slices.Contains([]string{record.ScenarioStartup, record.ScenarioExpired, record.ScenarioRestartGap}, h.Cell.Scenario) {
			t.Errorf("want startup, expired and restart-gap on servers that refuse the stream, got %s", h.Cell.Key())
		}
		if h.Cell.Scenario == record.ScenarioStartup && h.Cell.Expected != record.ShapeFallback {
			t.Errorf("want the cells the gates expect to fall back, got %s expecting %s", h.Cell.Key(), h.Cell.Expected)
		}
	}
	r := src.Grids[0].Result
	for i := range r.Cells {
		c := &r.Cells[i]
		if s := r.SetupOf(c); c.Scenario == record.ScenarioStartup && s.Gate == "on" && !s.ServerStreams && !hit[c] {
			t.Errorf("%s: the gate on against a server that refuses the stream, and no fallback found", c.Key())
		}
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
	for _, k := range []string{record.ScenarioRestartGap, record.ScenarioExpired, "aggregated " + record.ScenarioExpired, "upgrade " + record.ScenarioExpired} {
		if counts[k] == 0 {
			t.Errorf("want %s cells, got none: %v", k, counts)
		}
	}
	aggregatedServers, upgradeServers := 0, 0
	for _, sv := range r.Servers {
		switch {
		case strings.Contains(sv.Name, record.SettingAggregated+"="):
			aggregatedServers++
		case strings.Contains(sv.Name, record.SettingUpgrade+"="):
			upgradeServers++
		}
	}
	if len(unavailable) != aggregatedServers {
		t.Errorf("want the aggregator's 503 after kube-apiserver's restart on each of the %d aggregated servers, got %v", aggregatedServers, unavailable)
	}
	if len(kept) != upgradeServers || len(mixed) != upgradeServers {
		t.Errorf("want, on each of the %d upgrade columns, a restart that kept watches on the other server (%v) and a startup where one informer streamed and the other fell back (%v)", upgradeServers, kept, mixed)
	}
}
