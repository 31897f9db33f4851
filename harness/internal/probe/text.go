package probe

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"informer-lab/compare/analysis"
	"informer-lab/compare/matrix"
	"informer-lab/record"
)

// consequences reads the committed fault grid (docs/faults/faults.json) for each pattern a grade
// names: which client-go versions and gates then never sync, loop or fall back, as its cells
// show, rather than restated here. A grid that cannot be read is said once.
func (r *Report) consequences(file string) {
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
	grid, err := matrix.Load(file)
	if err != nil {
		r.Hits[""] = []string{"the fault grid could not be read: " + record.OneLine(err)}
		return
	}
	for _, p := range patterns {
		var hits []matrix.Hit
		for _, h := range grid.Hits() {
			if h.Setup.Fault == p {
				hits = append(hits, h)
			}
		}
		lines := []string{}
		for _, g := range matrix.GroupHits(hits) {
			lines = append(lines, fmt.Sprintf("%s %s: %s", g.Symptom.Icon(), g.Symptom, g.Who()))
		}
		switch {
		case !slices.Contains(grid.Scenarios, record.ScenarioFaultPrefix+p):
			lines = []string{"not a fault of the grid (" + strings.Join(grid.Scenarios, ", ") + ")"}
		case len(lines) == 0:
			lines = []string{"every client cell of the grid synced, without extra requests"}
		}
		r.Hits[p] = lines
	}
}

// WriteText writes the grades as a table no wider than analysis.TermWidth, then what the fault
// grid shows for each pattern graded, then what was skipped.
func (r *Report) WriteText(w io.Writer) {
	fmt.Fprintf(w, "informer-lab probe: kube-apiserver %s; namespaced resources in %s\n", r.Server, r.Namespace)
	fmt.Fprintf(w, "each resource asked for a streaming list, client-go v0.35+'s initial sync (watch, sendInitialEvents=true,\nresourceVersionMatch=NotOlderThan, allowWatchBookmarks=true)\n\n")
	count := map[Verdict]int{}
	v := analysis.Verdict{Columns: []string{"resource", "scope", "grade", "pattern", "took", "read", "answer"}}
	for _, g := range r.Grades {
		count[g.Verdict]++
		scope := "cluster"
		if g.Namespaced {
			scope = "namespace"
		}
		row := []string{g.Resource, scope, string(g.Verdict), orDash(g.Pattern), g.Took.Round(time.Millisecond).String(), analysis.FormatBytes(g.Bytes), g.Detail}
		cells := make([]analysis.Cell, len(row))
		for i, t := range row {
			cells[i].Text = t
		}
		if g.Verdict != Streams { // what came back, in full, as a footnote: it is the finding
			cells[len(cells)-1].Text = ""
			cells[len(cells)-1].Notes = v.AddNote(g.Resource, g.Detail, nil)
		}
		v.Rows = append(v.Rows, cells)
	}
	for _, line := range v.Lines(analysis.TermWidth) {
		fmt.Fprintln(w, line)
	}
	fmt.Fprintf(w, "\n%d resources: %d stream, %d refuse (client-go falls back), %d misbehave, %d unknown\n",
		len(r.Grades), count[Streams], count[Refuses], count[Misbehaves], count[Unknown])
	patterns := slices.Sorted(func(yield func(string) bool) {
		for p := range r.Hits {
			if !yield(p) {
				return
			}
		}
	})
	for _, p := range patterns {
		for _, line := range r.Hits[p] {
			say(w, fmt.Sprintf("%s in docs/faults.md: %s", orDash(p), line))
		}
	}
	for _, s := range r.Skipped {
		say(w, "skipped "+s)
	}
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
