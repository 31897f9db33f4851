package matrix

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"informer-lab/compare/analysis"
	"informer-lab/record"
)

// CellLog is the normalized log of one cell: the lab's initial and steady phases as compare
// diffs them, what its informers did on the wire after their sync (with the harness's fault and
// recovery marked), each informer's cache against the fresh LIST, and the problems found.
func CellLog(rep *analysis.Report, lab *analysis.LabReport) string {
	var b strings.Builder
	line := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	srv := ServerOf(rep)
	scenario := rep.Scenario
	if scenario == "" {
		scenario = "(no scenario recorded)"
	}
	line("informer-lab matrix cell: %s, scenario %s, server %s", lab.Name, scenario, srv.Name)
	line("client-go %s, WatchListClient %s (%s)", orQ(lab.ClientGo), orQ(lab.Gate), orQ(lab.GateHow))
	if lab.Kind != "" {
		line("informer kind: %s", lab.Kind)
	}
	if rep.SyncWait > 0 {
		line("sync wait: %s (informers not synced by then are reported as not synced, the run went on)", rep.SyncWait)
	}
	if rep.Proxy != "" {
		line("proxy: %s", rep.Proxy)
	}
	if rep.Injected != "" {
		line("fault injected by the harness: %s", rep.Injected)
	}
	run := runOf(rep.Dir, lab.Kind)
	line("run: %s", filepath.ToSlash(run))

	section := func(title string, lines []string) {
		line("\n== %s ==", title)
		if len(lines) == 0 {
			line("(nothing)")
		}
		for _, l := range lines {
			line("%s", l)
		}
	}
	section(analysis.PhaseInitial, lab.Initial)
	section(analysis.PhaseSteady, lab.Steady)
	section("requests and errors after each informer's sync", afterLines(rep, lab))
	if len(lab.Klog) > 0 {
		section("client-go's klog", lab.Klog)
	}
	if d := lab.Direct; d != nil {
		section("direct List() (tag DIRECT): "+d.Label+"; "+d.Result, d.Lines)
	}

	waited := rep.SyncWait > 0
	section("cache at stop vs fresh LIST", cacheLines(rep, lab, waited))
	probs := problems(rep, lab, waited)
	if len(probs) == 0 {
		probs = []string{"none"}
	}
	section("problems", probs)
	return b.String()
}

// runOf is the run directory's last two parts (<scenario>/<server>; with a kind axis three,
// <scenario>/<server>/<kind>): no local path in published logs.
func runOf(dir, kind string) string {
	run := filepath.Join(filepath.Base(filepath.Dir(dir)), filepath.Base(dir))
	if kind != "" && filepath.Base(dir) == kind {
		run = filepath.Join(filepath.Base(filepath.Dir(filepath.Dir(dir))), run)
	}
	return run
}

// cacheLines say, per informer, how its cache at stop compares with the fresh LIST, or why it
// was not compared (waited: the run had a sync wait).
func cacheLines(rep *analysis.Report, lab *analysis.LabReport, waited bool) []string {
	var caches []string
	for _, tag := range lab.Tags {
		switch d, ok := lab.Caches[tag]; {
		case rep.FreshList == nil:
			caches = append(caches, tag+": not checked (no fresh LIST)")
		case waited && unsynced(lab, tag):
			caches = append(caches, fmt.Sprintf("%s: not checked (not synced after %s)", tag, rep.SyncWait))
		case !ok:
			caches = append(caches, tag+": not checked (never synced)")
		case d == "":
			caches = append(caches, fmt.Sprintf("%s: equal (%d objects)", tag, len(rep.FreshList.Items)))
		default:
			caches = append(caches, tag+": LOST: "+d)
		}
	}
	return caches
}

// afterLines are the requests, ERROR events, end bookmarks and broken streams of every informer
// after its sync, by time, with the harness's injected and recovered records between them.
// Times are relative to the first of them.
func afterLines(rep *analysis.Report, lab *analysis.LabReport) []string {
	var recs []record.Record
	for _, tag := range lab.Tags {
		for _, r := range lab.After[tag] {
			if r.Kind == record.HTTP || (r.Kind == record.WatchEvent && (r.Event == record.EventError || record.IsEndBookmark(r))) ||
				(r.Kind == record.Setup && r.Step == record.StepBroken) {
				recs = append(recs, r)
			}
		}
	}
	if len(recs) == 0 {
		return nil
	}
	marks := []record.Record{}
	if !rep.InjectedAt.IsZero() {
		marks = append(marks, record.Record{Time: rep.InjectedAt, Source: "harness", Kind: record.Setup, Step: record.StepInjected})
	}
	if !rep.RecoveredAt.IsZero() {
		marks = append(marks, record.Record{Time: rep.RecoveredAt, Source: "harness", Kind: record.Setup, Step: record.StepRecovered})
	}
	recs = append(recs, marks...)
	slices.SortStableFunc(recs, func(a, b record.Record) int { return a.Time.Compare(b.Time) })
	t0 := recs[0].Time
	var out []string
	for _, r := range recs {
		at := fmt.Sprintf("+%6.3fs ", float64(r.Time.Sub(t0))/float64(time.Second))
		if r.Source == "harness" {
			what := r.Step
			if r.Step == record.StepInjected {
				fault, _, _ := strings.Cut(rep.Injected, " (")
				what += " " + fault
			}
			out = append(out, at+"--- harness: "+what+" ---")
			continue
		}
		out = append(out, at+analysis.NormalizeRecord(r))
	}
	return out
}
