package probe

import (
	"fmt"
	"io"
	"maps"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"informer-lab/compare/analysis"
	"informer-lab/compare/matrix"
	"informer-lab/compare/report"
	"informer-lab/record"
)

// refusedByGate is the refusal of a server whose WatchList gate is off: not a fault of the
// fault grid, but what make matrix's startup shows on such servers (1.31, 1.33).
var refusedByGate = fmt.Sprintf("%s=%d", record.FaultRefuseWatchList, 422)

// consequences reads the committed grids for each pattern a grade names: which client-go
// versions and gates then never sync, loop or fall back, as the cells show, rather than
// restated here. A fault's cells are the fault grid's (docs/faults/faults.json); a 422 is what
// the matrix's startup cells on servers with the WatchList gate off show (docs/matrix/). A grid
// that cannot be read is said once.
func (r *Report) consequences(docs string) {
	var patterns []string
	for _, g := range r.Grades {
		if g.Pattern != "" && !slices.Contains(patterns, g.Pattern) {
			patterns = append(patterns, g.Pattern)
		}
	}
	if len(patterns) == 0 {
		return
	}
	r.Hits = map[string][]string{}
	grids := map[string]*matrix.Result{}
	for _, p := range patterns {
		page, scenario := matrix.PageFaults, record.ScenarioFaultPrefix+p
		if p == refusedByGate {
			page, scenario = matrix.PageMatrix, record.ScenarioStartup
		}
		grid, ok := grids[page]
		if !ok {
			var err error
			if grid, err = matrix.Load(filepath.Join(docs, page, page+".json")); err != nil {
				r.Hits[p] = []string{"the " + page + " grid could not be read: " + record.OneLine(err)}
				continue
			}
			grids[page] = grid
		}
		var hits []matrix.Hit
		for _, h := range grid.Hits() {
			switch {
			case p == refusedByGate && h.Cell.Scenario == scenario && !h.Setup.ServerStreams:
				hits = append(hits, h)
			case p != refusedByGate && h.Setup.Fault == p:
				hits = append(hits, h)
			}
		}
		lines := []string{}
		for _, g := range matrix.GroupHits(hits) {
			lines = append(lines, fmt.Sprintf("%s %s: %s", g.Symptom.Icon(), g.Symptom, g.Who()))
		}
		switch {
		case !slices.Contains(grid.Scenarios, scenario):
			lines = []string{"not a fault of the grid (" + strings.Join(grid.Scenarios, ", ") + ")"}
		case len(lines) == 0:
			lines = []string{"every client cell of the grid synced, without extra requests"}
		}
		for i := range lines {
			lines[i] = "docs/" + page + ".md: " + lines[i]
		}
		r.Hits[p] = lines
	}
}

// WriteText writes the grades as a table no wider than analysis.TermWidth, then what the fault
// grid shows for each pattern graded, then what was skipped.
func (r *Report) WriteText(w io.Writer) {
	fmt.Fprintf(w, "informer-lab probe: %s\n", r.meta())
	fmt.Fprintf(w, "%s\n\n", strings.Join(analysis.Wrap(asked, analysis.TermWidth, ""), "\n"))
	for _, line := range r.Table().Lines(analysis.TermWidth) {
		fmt.Fprintln(w, line)
	}
	fmt.Fprintf(w, "\n%s\n", r.summary())
	for _, l := range r.notes() {
		say(w, l)
	}
}

// WritePage writes the grades as an HTML page (report.html): the same table, its footnotes and
// notes.
func (r *Report) WritePage(w io.Writer) error {
	return report.WriteTablePage(w, report.TablePage{Title: "informer-lab probe", Meta: r.meta() + "; " + asked,
		Summary: r.summary(), Table: r.Table(), Lines: r.notes()})
}

// asked is the request the probe sends every resource.
const asked = "each resource asked for a streaming list, client-go v0.35+'s initial sync (watch, sendInitialEvents=true, resourceVersionMatch=NotOlderThan, allowWatchBookmarks=true)"

func (r *Report) meta() string {
	return fmt.Sprintf("kube-apiserver %s; namespaced resources in %s", r.Server, r.Namespace)
}

// Table is a row per resource graded; the answer of one that does not stream is a footnote, in
// full: it is the finding.
func (r *Report) Table() analysis.Verdict {
	v := analysis.Verdict{Columns: []string{"resource", "scope", "grade", "pattern", "took", "read", "answer"}}
	for _, g := range r.Grades {
		scope := "cluster"
		if g.Namespaced {
			scope = "namespace"
		}
		row := []string{g.Resource, scope, string(g.Verdict), orDash(g.Pattern), g.Took.Round(time.Millisecond).String(), analysis.FormatBytes(g.Bytes), g.Detail}
		cells := make([]analysis.Cell, len(row))
		for i, t := range row {
			cells[i].Text = t
		}
		if g.Verdict != Streams {
			cells[len(cells)-1].Text = ""
			cells[len(cells)-1].Notes = v.AddNote(g.Resource, g.Detail, nil)
		}
		v.Rows = append(v.Rows, cells)
	}
	return v
}

// summary counts the grades.
func (r *Report) summary() string {
	count := map[Verdict]int{}
	for _, g := range r.Grades {
		count[g.Verdict]++
	}
	return fmt.Sprintf("%d resources: %d stream, %d refuse (client-go falls back), %d misbehave, %d unknown",
		len(r.Grades), count[Streams], count[Refuses], count[Misbehaves], count[Unknown])
}

// notes say which resources aggregated apiservers serve, what the fault grid shows for each
// pattern graded, then what was skipped.
func (r *Report) notes() []string {
	var out []string
	for _, g := range r.Grades {
		if g.APIService != "" {
			out = append(out, fmt.Sprintf("%s: served by an aggregated apiserver, APIService %s", g.Resource, g.APIService))
		}
	}
	for _, p := range slices.Sorted(maps.Keys(r.Hits)) {
		for _, line := range r.Hits[p] {
			out = append(out, fmt.Sprintf("%s in %s", orDash(p), line))
		}
	}
	for _, s := range r.Skipped {
		out = append(out, "skipped "+s)
	}
	return out
}

func say(w io.Writer, s string) {
	for _, l := range analysis.Wrap(s, analysis.TermWidth, "    ") {
		fmt.Fprintln(w, l)
	}
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
