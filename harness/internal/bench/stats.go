package bench

import (
	"fmt"
	"math"
	"sort"
)

// Summary is the median and the spread (min–max) of one point's repeats.
type Summary struct {
	N                int
	Median, Min, Max float64
}

// Summarize returns the median, min and max of xs; the median of an even count is the mean
// of the two middle values. An empty xs gives N 0 and NaNs.
func Summarize(xs []float64) Summary {
	if len(xs) == 0 {
		return Summary{Median: math.NaN(), Min: math.NaN(), Max: math.NaN()}
	}
	s := append([]float64(nil), xs...)
	sort.Float64s(s)
	n := len(s)
	med := s[n/2]
	if n%2 == 0 {
		med = (s[n/2-1] + s[n/2]) / 2
	}
	return Summary{N: n, Median: med, Min: s[0], Max: s[n-1]}
}

// Ratio is streaming's median over LIST's median: below 1 means streaming used less. It is
// NaN when either is missing or LIST's median is 0.
func Ratio(streaming, list Summary) float64 {
	if streaming.N == 0 || list.N == 0 || list.Median == 0 {
		return math.NaN()
	}
	return streaming.Median / list.Median
}

// FormatRatio renders a ratio as "0.12×", or "n/a".
func FormatRatio(r float64) string {
	if math.IsNaN(r) || math.IsInf(r, 0) {
		return "n/a"
	}
	switch {
	case r == 0:
		return "0×"
	case r < 0.001:
		return "<0.001×"
	case r >= 10:
		return fmt.Sprintf("%.0f×", r)
	case r >= 0.1:
		return fmt.Sprintf("%.2f×", r)
	}
	return fmt.Sprintf("%.3f×", r)
}

// Format renders "median (min–max)" with the given number of decimals, or just the median
// when there is one value or no spread.
func (s Summary) Format(decimals int) string {
	if s.N == 0 {
		return "n/a"
	}
	f := func(x float64) string { return fmt.Sprintf("%.*f", decimals, x) }
	if s.N == 1 || f(s.Min) == f(s.Max) {
		return f(s.Median)
	}
	return f(s.Median) + " (" + f(s.Min) + "–" + f(s.Max) + ")"
}
