package matrix

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"strings"

	"informer-lab/record"
)

// Group is the hits of one symptom.
type Group struct {
	Symptom Symptom
	Hits    []Hit
}

// Setups are the distinct setups the group hits, in the order first hit.
func (g Group) Setups() []Setup {
	var out []Setup
	for _, h := range g.Hits {
		if !slices.Contains(out, h.Setup) {
			out = append(out, h.Setup)
		}
	}
	return out
}

// Defaults counts the setups the group hits at client-go's default gate.
func (g Group) Defaults() int { return Defaults(g.Setups()) }

// Defaults counts the setups at client-go's default gate.
func Defaults(setups []Setup) int {
	n := 0
	for _, s := range setups {
		if s.Default {
			n++
		}
	}
	return n
}

// GroupHits groups hits by symptom, ranked by how many real setups they hit: those at
// client-go's default gate first, then all of them, then in Symptoms order.
func GroupHits(hits []Hit) []Group {
	var out []Group
	for _, s := range Symptoms {
		g := Group{Symptom: s}
		for _, h := range hits {
			if h.Symptom == s {
				g.Hits = append(g.Hits, h)
			}
		}
		if len(g.Hits) > 0 {
			out = append(out, g)
		}
	}
	slices.SortStableFunc(out, func(a, b Group) int {
		return cmp.Or(cmp.Compare(b.Defaults(), a.Defaults()), cmp.Compare(len(b.Setups()), len(a.Setups())))
	})
	return out
}

// setupDims are the dimensions of a setup Who spells: a name, the value of a setup, and the value
// that goes without saying when every setup has it.
var setupDims = []struct {
	name  string
	of    func(Setup) string
	plain string
}{
	{"client-go", func(s Setup) string { return s.ClientGo }, ""},
	{"WatchListClient", gateLabel, ""},
	{"kube-apiserver", func(s Setup) string { return s.Server }, ""},
	{"kind", func(s Setup) string { return s.Kind }, record.KindTypedConfigMaps},
	{"fault", func(s Setup) string { return s.Fault }, ""},
	{"make bench case", func(s Setup) string { return s.Case }, ""},
}

// gateLabel is the gate and who set it: "on by default" (client-go's), or "set on".
func gateLabel(s Setup) string {
	if s.Default {
		return s.Gate + " by default"
	}
	return "set " + s.Gate
}

// Who says whom the group hits (Who), and in how many cells (make bench: points) it shows.
func (g Group) Who() string {
	cells := 0
	for _, h := range g.Hits {
		if h.Cell != nil {
			cells++
		}
	}
	var shown []string
	if cells > 0 {
		shown = append(shown, plural(cells, "cell"))
	}
	if points := len(g.Hits) - cells; points > 0 {
		shown = append(shown, plural(points, "make bench point"))
	}
	return whoOf(g.Setups(), " in "+strings.Join(shown, " and "))
}

// Who says whom setups are: how many, how many of them at client-go's default gate, then each
// dimension of the setups with the number of setups of each value, but a dimension every setup
// has at its plain value.
func Who(setups []Setup) string { return whoOf(setups, "") }

func whoOf(setups []Setup, shown string) string {
	parts := []string{fmt.Sprintf("%s (%d at client-go's default gate)%s", plural(len(setups), "setup"), Defaults(setups), shown)}
	for _, d := range setupDims {
		count := map[string]int{}
		for _, s := range setups {
			count[d.of(s)]++
		}
		if len(count) == 1 && count[d.plain] > 0 {
			continue
		}
		var values []string
		for _, v := range slices.Sorted(maps.Keys(count)) {
			values = append(values, fmt.Sprintf("%s (%d)", orNone(v), count[v]))
		}
		parts = append(parts, d.name+" "+strings.Join(values, ", "))
	}
	return strings.Join(parts, "; ")
}

func orNone(s string) string {
	if s == "" {
		return "none"
	}
	return s
}

// finding is the group as a page's findings list shows it: the symptom, whom it hits, and a link
// to where docs/findings.md gives its causes and what to do.
func (g Group) finding() finding {
	return finding{text: string(g.Symptom) + ": " + g.Who(), alert: true, icon: g.Symptom.Icon(), anchor: g.Symptom.Anchor()}
}

// MarkdownLine is the group's line in a page's findings list (without the list's "- ").
func (g Group) MarkdownLine() string { return g.finding().markdown() }
