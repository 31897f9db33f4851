package bench

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"math"
	"sort"
	"strings"
)

// Metric is one measured quantity of a run, as tables and plots show it.
type Metric struct {
	Name     string
	Decimals int
	Of       func(Result) float64
}

// The metrics the tables show.
var (
	APIMem   = Metric{"apiserver peak above baseline (MiB)", 0, func(r Result) float64 { return mib(r.APIDelta()) }}
	APIPeak  = Metric{"apiserver peak RSS (MiB)", 0, func(r Result) float64 { return mib(r.APIPeakHWM) }}
	SyncTime = Metric{"time until every informer synced (s)", 2, func(r Result) float64 { return r.SyncMillis / 1000 }}
	Requests = Metric{"requests", 0, func(r Result) float64 { return float64(r.Requests) }}
	Received = Metric{"MiB received", 0, func(r Result) float64 { return mib(r.Bytes) }}
	LabMem   = Metric{"lab peak RSS (MiB)", 0, func(r Result) float64 { return mib(r.LabPeakHWM) }}
)

func mib(n int64) float64 { return float64(n) / (1 << 20) }

// Point selects the runs of one case, K, mode and logging setting.
type Point struct {
	Case   string
	K      int
	Mode   Mode
	Logged bool
}

// Summarize returns m's summary over the runs of p.
func (p Point) Summarize(results []Result, m Metric) Summary {
	var xs []float64
	for _, r := range results {
		if r.Case == p.Case && r.K == p.K && r.Mode == p.Mode && r.Logged == p.Logged {
			xs = append(xs, m.Of(r))
		}
	}
	return Summarize(xs)
}

// Table renders rows as a markdown table padded to line up in a terminal too.
func Table(header []string, rows [][]string) string {
	width := make([]int, len(header))
	for i, h := range header {
		width[i] = len([]rune(h))
	}
	for _, row := range rows {
		for i, c := range row {
			width[i] = max(width[i], len([]rune(c)))
		}
	}
	var b strings.Builder
	line := func(cells []string) {
		b.WriteString("|")
		for i, c := range cells {
			b.WriteString(" " + c + strings.Repeat(" ", width[i]-len([]rune(c))) + " |")
		}
		b.WriteString("\n")
	}
	line(header)
	sep := make([]string, len(header))
	for i := range sep {
		sep[i] = strings.Repeat("-", width[i])
	}
	line(sep)
	for _, row := range rows {
		line(row)
	}
	return b.String()
}

// CaseTable is one case's table: a row per K, LIST→WATCH and streaming side by side, medians
// with their min–max, and the ratio streaming/LIST of the medians.
func CaseTable(results []Result, c Case, ks []int) string {
	header := []string{"K",
		"apiserver +MiB, LIST→WATCH", "apiserver +MiB, streaming", "ratio",
		"apiserver peak MiB L / S", "ratio",
		"sync s, LIST→WATCH", "sync s, streaming", "ratio",
		"requests L / S", "MiB received L / S", "lab peak MiB L / S"}
	var rows [][]string
	for _, k := range ks {
		l, s := Point{c.Name, k, List, false}, Point{c.Name, k, Streaming, false}
		lm, sm := l.Summarize(results, APIMem), s.Summarize(results, APIMem)
		lt, st := l.Summarize(results, SyncTime), s.Summarize(results, SyncTime)
		pair := func(m Metric) string {
			return l.Summarize(results, m).Format(m.Decimals) + " / " + s.Summarize(results, m).Format(m.Decimals)
		}
		rows = append(rows, []string{fmt.Sprint(k),
			lm.Format(0), sm.Format(0), FormatRatio(Ratio(sm, lm)),
			pair(APIPeak), FormatRatio(Ratio(s.Summarize(results, APIPeak), l.Summarize(results, APIPeak))),
			lt.Format(2), st.Format(2), FormatRatio(Ratio(st, lt)),
			pair(Requests), pair(Received), pair(LabMem)})
	}
	return Table(header, rows)
}

// OverheadTable compares the overhead point with and without wire logging.
func OverheadTable(results []Result, caseName string, k int, m Mode) string {
	q, w := Point{caseName, k, m, false}, Point{caseName, k, m, true}
	var rows [][]string
	for _, met := range []Metric{SyncTime, LabMem, APIMem, Received} {
		qs, ws := q.Summarize(results, met), w.Summarize(results, met)
		rows = append(rows, []string{met.Name, qs.Format(met.Decimals), ws.Format(met.Decimals), FormatRatio(Ratio(ws, qs))})
	}
	return Table([]string{fmt.Sprintf("K=%d, %s", k, m.Title()), "-quiet (counts only)", "wire logging", "logging / quiet"}, rows)
}

// Series is one line of a plot: a mode's medians with their min–max whiskers.
type Series struct {
	Name, Color string
	X           []float64
	Y           []Summary
}

// Panel is one plot.
type Panel struct {
	Title, XLabel, YLabel string
	XTicks                []float64
	Series                []Series
}

// ModeColor is each mode's color in every plot.
var ModeColor = map[Mode]string{List: "#d62728", Streaming: "#1f77b4"}

// CasePanels are the two plots of a case: apiserver peak memory and sync time against K.
func CasePanels(results []Result, c Case, ks []int) []Panel {
	panel := func(title, ylabel string, m Metric) Panel {
		p := Panel{Title: title, XLabel: "informers started at once (K)", YLabel: ylabel}
		for _, k := range ks {
			p.XTicks = append(p.XTicks, float64(k))
		}
		for _, mode := range Modes {
			s := Series{Name: mode.Title(), Color: ModeColor[mode]}
			for _, k := range ks {
				s.X = append(s.X, float64(k))
				s.Y = append(s.Y, Point{c.Name, k, mode, false}.Summarize(results, m))
			}
			p.Series = append(p.Series, s)
		}
		return p
	}
	return []Panel{
		panel("kube-apiserver peak RSS above baseline", "MiB", APIMem),
		panel("time until every informer synced", "seconds", SyncTime),
	}
}

// SVG draws panels side by side, with a title above: plain SVG 1.1, no scripts, no fonts to load.
func SVG(title string, panels []Panel) string {
	const pw, ph, top = 460, 340, 40
	var b bytes.Buffer
	w := pw * len(panels)
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", w, ph+top, w, ph+top)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", w, ph+top)
	fmt.Fprintf(&b, `<text x="%d" y="24" text-anchor="middle" font-size="15" font-weight="bold">%s</text>`+"\n", w/2, esc(title))
	for i, p := range panels {
		drawPanel(&b, p, float64(i*pw), top, pw, ph)
	}
	b.WriteString("</svg>\n")
	return b.String()
}

func drawPanel(b *bytes.Buffer, p Panel, x0, y0, w, h float64) {
	const left, right, ptop, bottom = 60, 20, 30, 50
	plotW, plotH := w-left-right, h-ptop-bottom
	xmax, ymax := 0.0, 0.0
	for _, t := range p.XTicks {
		xmax = math.Max(xmax, t)
	}
	for _, s := range p.Series {
		for i, y := range s.Y {
			xmax = math.Max(xmax, s.X[i])
			if y.N > 0 {
				ymax = math.Max(ymax, y.Max)
			}
		}
	}
	xmax = math.Max(xmax, 1)
	ymax = niceCeil(ymax)
	px := func(x float64) float64 { return x0 + left + x/xmax*plotW }
	py := func(y float64) float64 { return y0 + ptop + plotH - y/ymax*plotH }

	fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle" font-size="13">%s</text>`+"\n", x0+left+plotW/2, y0+18, esc(p.Title))
	// Axes, grid and ticks.
	for i := 0; i <= 5; i++ {
		v := ymax * float64(i) / 5
		y := py(v)
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", px(0), y, px(xmax), y)
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="end">%s</text>`+"\n", px(0)-6, y+4, tickLabel(v))
	}
	for _, t := range p.XTicks {
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333"/>`+"\n", px(t), py(0), px(t), py(0)+5)
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n", px(t), py(0)+18, tickLabel(t))
	}
	fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333"/>`+"\n", px(0), py(0), px(xmax), py(0))
	fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333"/>`+"\n", px(0), py(0), px(0), py(ymax))
	fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n", x0+left+plotW/2, y0+h-12, esc(p.XLabel))
	fmt.Fprintf(b, `<text transform="translate(%.1f %.1f) rotate(-90)" text-anchor="middle">%s</text>`+"\n", x0+16, y0+ptop+plotH/2, esc(p.YLabel))
	// One line per series: medians joined, min–max whiskers, a dot per point.
	for si, s := range p.Series {
		var pts []string
		for i, y := range s.Y {
			if y.N == 0 {
				continue
			}
			x := px(s.X[i])
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", x, py(y.Median)))
			fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s"/>`+"\n", x, py(y.Min), x, py(y.Max), s.Color)
			fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s"/>`+"\n", x, py(y.Median), s.Color)
		}
		if len(pts) > 0 {
			fmt.Fprintf(b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"/>`+"\n", strings.Join(pts, " "), s.Color)
		}
		ly := y0 + ptop + 12 + float64(si)*18
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2"/>`+"\n", px(0)+10, ly-4, px(0)+30, ly-4, s.Color)
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f">%s</text>`+"\n", px(0)+36, ly, esc(s.Name))
	}
}

// niceCeil rounds v up to 1, 2, 2.5 or 5 times a power of ten (1 for v <= 0), so that five
// grid steps have short labels.
func niceCeil(v float64) float64 {
	if v <= 0 || math.IsNaN(v) {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(v)))
	for _, m := range []float64{1, 2, 2.5, 5, 10} {
		if m*p >= v*(1-1e-9) {
			return m * p
		}
	}
	return 10 * p
}

func tickLabel(v float64) string {
	s := fmt.Sprintf("%.2f", v)
	s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	return s
}

func esc(s string) string {
	var b bytes.Buffer
	xml.EscapeText(&b, []byte(s))
	return b.String()
}

// sortedKs returns ks in increasing order, as tables and plots show them.
func sortedKs(ks []int) []int {
	s := append([]int(nil), ks...)
	sort.Ints(s)
	return s
}
