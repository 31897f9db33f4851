package matrix

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"informer-lab/compare/analysis"
)

// Diff lists, cell by cell (same scenario, server and client), how b differs from a, and the
// cells only one of them has. It compares what a cell says, not what varies from run to run:
// times are left out, and rvs, repeat counts (×N, "N req") and durations are masked first,
// since how many times a reflector retried or re-watched depends on timing.
func Diff(a, b *Result) []string {
	var out []string
	inB := map[string]*Cell{}
	for i := range b.Cells {
		inB[b.Cells[i].Key()] = &b.Cells[i]
	}
	inA := map[string]bool{}
	a.eachCell(func(ca *Cell) {
		inA[ca.Key()] = true
		cb, ok := inB[ca.Key()]
		if !ok {
			out = append(out, "only in OLD: "+ca.Key()+": "+ca.Verdict)
			return
		}
		for _, d := range cellDiff(ca, cb) {
			out = append(out, ca.Key()+": "+d)
		}
	})
	b.eachCell(func(cb *Cell) {
		if !inA[cb.Key()] {
			out = append(out, "only in NEW: "+cb.Key()+": "+cb.Verdict)
		}
	})
	return out
}

func cellDiff(a, b *Cell) []string {
	var out []string
	field := func(name, x, y string) {
		if mask(x) != mask(y) {
			out = append(out, fmt.Sprintf("%s %q → %q", name, x, y))
		}
	}
	field("verdict", a.Verdict, b.Verdict)
	field("expected", a.Expected, b.Expected)
	if a.Agrees != b.Agrees {
		out = append(out, fmt.Sprintf("agrees with the expectation %t → %t", a.Agrees, b.Agrees))
	}
	field("lost", a.Lost, b.Lost)
	field("failed", a.Failed, b.Failed)
	if a.SeqDiffers != b.SeqDiffers {
		out = append(out, fmt.Sprintf("steady sequence differs from the other cells %t → %t", a.SeqDiffers, b.SeqDiffers))
	}
	pa, pb := maskAll(a.Problems), maskAll(b.Problems)
	for i, p := range pa {
		if !slices.Contains(pb, p) {
			out = append(out, "problem gone: "+a.Problems[i])
		}
	}
	for i, p := range pb {
		if !slices.Contains(pa, p) {
			out = append(out, "new problem: "+b.Problems[i])
		}
	}
	return out
}

var volatile = []struct {
	re   *regexp.Regexp
	with string
}{
	{regexp.MustCompile(`\b(rv|resourceVersion|rev)([= ])[0-9]+`), "${1}${2}N"},
	{regexp.MustCompile(`\bserver has [0-9]+`), "server has N"},
	{regexp.MustCompile(` ?×[0-9]+(–[0-9]+)?`), ""},
	{regexp.MustCompile(` \([0-9]+(–[0-9]+)? req\)`), ""},
	{regexp.MustCompile(`\b[0-9]+/[0-9]+ writes`), "N/N writes"},
}

// mask replaces what varies between two runs of the same cell.
func mask(s string) string {
	s = analysis.NormalizeText(s)
	for _, v := range volatile {
		s = v.re.ReplaceAllString(s, v.with)
	}
	// a unit repeated a different number of times may now appear twice in a row: "WATCH→WATCH"
	parts := strings.Split(s, "→")
	return strings.Join(slices.Compact(parts), "→")
}

func maskAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = mask(s)
	}
	return out
}
