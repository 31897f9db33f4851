package analysis

import (
	"slices"
	"testing"
)

// SpelledRequests reads back what Spell writes: each count, the upper end of a merged range.
func TestSpelledRequests(t *testing.T) {
	p := Pattern{Units: []Unit{{Text: "WATCH(error)", Lo: 2, Hi: 3}, {Text: "WATCH", Lo: 1, Hi: 1}}, ReqLo: 3, ReqHi: 4}
	for text, want := range map[string][]int{
		p.Spell(true): {4},
		"A: not synced after 1m0s: STREAM×3083 (3083 req); B: STREAM (1 req); List(): LIST (1 req)": {3083, 1, 1},
		"8/8 writes, same rvs": nil,
	} {
		if got := SpelledRequests(text); !slices.Equal(got, want) {
			t.Errorf("SpelledRequests(%q): want %v, got %v", text, want, got)
		}
	}
}
