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

// SpelledFailedWatches reads back the failed watches Spell writes, alone, repeated or merged.
func TestSpelledFailedWatches(t *testing.T) {
	merged := Pattern{Units: []Unit{{Text: "WATCH(error)", Lo: 2, Hi: 3}, {Text: "WATCH", Lo: 1, Hi: 1}}, ReqLo: 3, ReqHi: 4}
	once := Pattern{Units: []Unit{{Text: "WATCH(error)", Lo: 1, Hi: 1}, {Text: "LIST", Lo: 1, Hi: 1}}, ReqLo: 2, ReqHi: 2}
	for text, want := range map[string]int{
		merged.Spell(true): 3,
		once.Spell(true):   1,
		"WATCH(error)×2→WATCH→410→STREAM(422)→LIST→WATCH (6 req)": 2,
		"STREAM→422→LIST→WATCH (3 req)":                           0,
	} {
		if got := SpelledFailedWatches(text); got != want {
			t.Errorf("SpelledFailedWatches(%q): want %d, got %d", text, want, got)
		}
	}
}
