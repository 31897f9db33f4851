package analysis

import (
	"fmt"
	"strings"

	"github.com/sergi/go-diff/diffmatchpatch"
)

// diffContext is how many equal lines are kept around a change.
const diffContext = 3

// unifiedDiff renders the line diff of a (the baseline) and b as a unified text diff.
// It returns "" when the lines are equal.
func unifiedDiff(aName, bName string, a, b []string) string {
	dmp := diffmatchpatch.New()
	// Line mode: each line becomes one rune, so the diff never splits a line.
	ca, cb, lines := dmp.DiffLinesToChars(joinLines(a), joinLines(b))
	diffs := dmp.DiffCharsToLines(dmp.DiffMain(ca, cb, false), lines)

	type op struct {
		prefix byte
		text   string
	}
	var ops []op
	changed := false
	for _, d := range diffs {
		prefix := byte(' ')
		switch d.Type {
		case diffmatchpatch.DiffDelete:
			prefix, changed = '-', true
		case diffmatchpatch.DiffInsert:
			prefix, changed = '+', true
		}
		for _, l := range strings.SplitAfter(d.Text, "\n") {
			if l != "" {
				ops = append(ops, op{prefix, strings.TrimSuffix(l, "\n")})
			}
		}
	}
	if !changed {
		return ""
	}

	// Keep an equal line only when a change is within diffContext lines of it.
	keep := make([]bool, len(ops))
	for i, o := range ops {
		if o.prefix == ' ' {
			continue
		}
		for j := max(0, i-diffContext); j <= min(len(ops)-1, i+diffContext); j++ {
			keep[j] = true
		}
	}
	var w strings.Builder
	fmt.Fprintf(&w, "--- %s\n+++ %s\n", aName, bName)
	la, lb := 1, 1 // line numbers in a and b of the next op
	inHunk := false
	for i, o := range ops {
		if keep[i] && !inHunk {
			fmt.Fprintf(&w, "@@ -%d +%d @@\n", la, lb)
		}
		inHunk = keep[i]
		if keep[i] {
			w.WriteString(string(o.prefix) + o.text + "\n")
		}
		if o.prefix != '+' {
			la++
		}
		if o.prefix != '-' {
			lb++
		}
	}
	return w.String()
}

func joinLines(lines []string) string {
	if len(lines) == 0 {
		return ""
	}
	return strings.Join(lines, "\n") + "\n"
}
