package bench

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"math"
	"sort"
	"strings"

	"informer-lab/compare/findings"
)

// Metric is one measured quantity of a run, as tables and plots show it.
type Metric struct {
	Name     string
	Decimals int
	Of       func(Result) float64
	// Floor is what the metric cannot tell from nothing: a ratio of two medians below it says
	// nothing either, and RatioCell shows "≈0" instead.
	Floor float64
}

// noiseMiB is the floor of growth above baseline: after a GC the Go runtime keeps freed heap
// resident and reuses it first, so a run whose extra memory fits in that slack grows by
// nothing to a few MiB, whatever it allocated.
const noiseMiB = 16

// RatioCell is the ratio cell of m: streaming's median over LIST→WATCH's (ratioCell).
func RatioCell(streaming, list Summary, m Metric) string {
	return ratioCell(streaming, list, m, "LIST")
}

// ratioCell is x's median over base's, "both ≈0" when both are below m's floor, and "<base> ≈0"
// when only base's is (no ratio to speak of).
func ratioCell(x, base Summary, m Metric, baseName string) string {
	switch {
	case x.N == 0 || base.N == 0:
		return "n/a"
	case base.Median < m.Floor && x.Median < m.Floor:
		return "both ≈0"
	case base.Median < m.Floor:
		return baseName + " ≈0"
	}
	return FormatRatio(Ratio(x, base))
}

// The metrics the tables show.
var (
	APIMem   = Metric{"apiserver peak above baseline (MiB)", 0, func(r Result) float64 { return mib(r.APIDelta()) }, noiseMiB}
	APIPeak  = Metric{"apiserver peak RSS (MiB)", 0, func(r Result) float64 { return mib(r.APIPeakHWM) }, 0}
	SyncTime = Metric{"time until every informer synced (s)", 2, func(r Result) float64 { return r.SyncMillis / 1000 }, 0}
	Requests = Metric{"requests", 0, func(r Result) float64 { return float64(r.Requests) }, 0}
	Received = Metric{"MiB received", 0, func(r Result) float64 { return mib(r.Bytes) }, 0}
	OnWire   = Metric{"MiB on the wire", 0, func(r Result) float64 { return mib(r.WireBytes) }, 0}
	APICPU   = Metric{"apiserver CPU (s)", 1, func(r Result) float64 { return r.APICPUMillis / 1000 }, 0}
	LabMem   = Metric{"lab peak RSS (MiB)", 0, func(r Result) float64 { return mib(r.LabPeakHWM) }, 0}
)

// RatioMetrics are what the ratio table and plot compare, streaming over LIST→WATCH, each
// with its short name and plot color.
var RatioMetrics = []struct {
	Metric
	Short, Color string
}{
	{APIMem, "apiserver +MiB", "#d62728"},
	{APIPeak, "apiserver peak", "#ff7f0e"},
	{APICPU, "apiserver CPU", "#9467bd"},
	{LabMem, "lab peak", "#2ca02c"},
	{OnWire, "bytes on the wire", "#1f77b4"},
	{SyncTime, "sync time", "#7f7f7f"},
}

func mib(n int64) float64 { return float64(n) / (1 << 20) }

// Point selects the runs of one server, case, K, mode and logging setting.
type Point struct {
	Server string
	Case   string
	K      int
	Mode   Mode
	Logged bool
}

// Summarize returns m's summary over the runs of p.
func (p Point) Summarize(results []Result, m Metric) Summary { return Summarize(p.Values(results, m)) }

// Values are m of every run at p.
func (p Point) Values(results []Result, m Metric) []float64 {
	var xs []float64
	for _, r := range results {
		if r.Server == p.Server && r.Case == p.Case && r.K == p.K && r.Mode == p.Mode && r.Logged == p.Logged {
			xs = append(xs, m.Of(r))
		}
	}
	return xs
}

// EncodingFindings are what an encoding group's runs show against its base (JSON), by the rule
// of make bench's findings (findings.Costlier): per server and mode, each encoding whose
// kube-apiserver peak, CPU or bytes on the wire cost more or less than the base's.
func EncodingFindings(results []Result, serverNames []string, cases []Case, k int) []string {
	base := cases[0]
	var out []string
	for _, sv := range serverNames {
		for _, mode := range Modes {
			var parts []string
			for _, c := range cases[1:] {
				var more, less []string
				for _, m := range []struct {
					Metric
					name string
				}{{APIPeak, "kube-apiserver's peak"}, {APICPU, "its CPU"}, {OnWire, "bytes on the wire"}} {
					xs, ys := Point{sv, c.Name, k, mode, false}.Values(results, m.Metric), Point{sv, base.Name, k, mode, false}.Values(results, m.Metric)
					if r, ok := findings.Costlier(xs, ys); ok {
						more = append(more, fmt.Sprintf("%s %s", m.name, FormatRatio(r)))
					} else if r, ok := findings.Costlier(ys, xs); ok {
						less = append(less, fmt.Sprintf("%s %s", m.name, FormatRatio(1/r)))
					}
				}
				if len(more) > 0 {
					parts = append(parts, fmt.Sprintf("%s costs more, %s", shortMedia(c.Encoding), strings.Join(more, ", ")))
				}
				if len(less) > 0 {
					parts = append(parts, fmt.Sprintf("%s costs less, %s", shortMedia(c.Encoding), strings.Join(less, ", ")))
				}
			}
			if len(parts) > 0 {
				out = append(out, fmt.Sprintf("%s, %s: %s (× %s's).", sv, mode.Title(), strings.Join(parts, "; "), shortMedia(base.Encoding)))
			}
		}
	}
	return out
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

// CaseTable is one case's table on one server: a row per K, LIST→WATCH and streaming side by
// side, medians with their min–max, and the ratio streaming/LIST of the medians.
func CaseTable(results []Result, server string, c Case, ks []int) string {
	header := []string{"K",
		"apiserver +MiB, LIST→WATCH", "apiserver +MiB, streaming", "ratio",
		"apiserver peak MiB L / S", "ratio",
		"apiserver CPU s L / S", "ratio",
		"sync s, LIST→WATCH", "sync s, streaming", "ratio",
		"requests L / S", "MiB received L / S", "MiB on the wire L / S", "lab peak MiB L / S"}
	var rows [][]string
	for _, k := range ks {
		l, s := Point{server, c.Name, k, List, false}, Point{server, c.Name, k, Streaming, false}
		lm, sm := l.Summarize(results, APIMem), s.Summarize(results, APIMem)
		lt, st := l.Summarize(results, SyncTime), s.Summarize(results, SyncTime)
		pair := func(m Metric) string {
			return l.Summarize(results, m).Format(m.Decimals) + " / " + s.Summarize(results, m).Format(m.Decimals)
		}
		rows = append(rows, []string{fmt.Sprint(k),
			lm.Format(0), sm.Format(0), RatioCell(sm, lm, APIMem),
			pair(APIPeak), FormatRatio(Ratio(s.Summarize(results, APIPeak), l.Summarize(results, APIPeak))),
			pair(APICPU), FormatRatio(Ratio(s.Summarize(results, APICPU), l.Summarize(results, APICPU))),
			lt.Format(2), st.Format(2), FormatRatio(Ratio(st, lt)),
			pair(Requests), pair(Received), pair(OnWire), pair(LabMem)})
	}
	return Table(header, rows)
}

// EncodingTable is one resource in several encodings at k (an encodingGroup's cases, the first
// the base): per server, mode and encoding, each metric's median and its ratio to the base's.
func EncodingTable(results []Result, serverNames []string, cases []Case, k int) string {
	base := cases[0]
	header := []string{"kube-apiserver", "mode", "encoding"}
	for _, m := range RatioMetrics {
		header = append(header, m.Short, "×"+shortMedia(base.Encoding))
	}
	var rows [][]string
	for _, sv := range serverNames {
		for _, mode := range Modes {
			pb := Point{sv, base.Name, k, mode, false}
			for _, c := range cases {
				pc := Point{sv, c.Name, k, mode, false}
				row := []string{sv, mode.Title(), shortMedia(c.Encoding)}
				for _, m := range RatioMetrics {
					sb, sc := pb.Summarize(results, m.Metric), pc.Summarize(results, m.Metric)
					ratio := ratioCell(sc, sb, m.Metric, shortMedia(base.Encoding))
					if c.Name == base.Name {
						ratio = ""
					}
					row = append(row, fmtMedian(sc, m.Decimals), ratio)
				}
				rows = append(rows, row)
			}
		}
	}
	return Table(header, rows)
}

// RatioTable is one case across servers at k: per server and metric, LIST→WATCH's and
// streaming's medians and the ratio of the two.
func RatioTable(results []Result, serverNames []string, c Case, k int) string {
	header := []string{"kube-apiserver"}
	for _, m := range RatioMetrics {
		header = append(header, m.Short+" L / S", "ratio")
	}
	var rows [][]string
	for _, sv := range serverNames {
		l, s := Point{sv, c.Name, k, List, false}, Point{sv, c.Name, k, Streaming, false}
		row := []string{sv}
		for _, m := range RatioMetrics {
			ls, ss := l.Summarize(results, m.Metric), s.Summarize(results, m.Metric)
			row = append(row, fmtMedian(ls, m.Decimals)+" / "+fmtMedian(ss, m.Decimals), RatioCell(ss, ls, m.Metric))
		}
		rows = append(rows, row)
	}
	return Table(header, rows)
}

func fmtMedian(s Summary, decimals int) string {
	if s.N == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.*f", decimals, s.Median)
}

// RatioSVG is a case's plot across servers: for each metric of RatioMetrics, streaming's
// median over LIST→WATCH's at k, one point per server, on a log scale (1 = the same cost).
func RatioSVG(title string, results []Result, serverNames []string, c Case, k int) string {
	const w, h, left, right, top, bottom = 760, 420, 70, 190, 50, 70
	plotW, plotH := float64(w-left-right), float64(h-top-bottom)
	series, lo, hi := ratioSeries(results, serverNames, c, k)
	d0, d1 := math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
	if d1 == d0 {
		d1++
	}
	px := func(x int) float64 { return left + (float64(x)+0.5)/float64(max(1, len(serverNames)))*plotW }
	py := func(v float64) float64 { return top + plotH - (math.Log10(v)-d0)/(d1-d0)*plotH }

	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", w, h, w, h)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", w, h)
	fmt.Fprintf(&b, `<text x="%d" y="22" text-anchor="middle" font-size="15" font-weight="bold">%s</text>`+"\n", (w-right+left)/2, esc(title))
	fmt.Fprintf(&b, `<text x="%d" y="40" text-anchor="middle">streaming / LIST→WATCH at K=%d (medians; below 1: streaming costs less)</text>`+"\n", (w-right+left)/2, k)
	for d := d0; d <= d1; d++ {
		v := math.Pow(10, d)
		stroke, width := "#ddd", 1
		if d == 0 {
			stroke, width = "#333", 2
		}
		fmt.Fprintf(&b, `<line x1="%d" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="%d"/>`+"\n", left, py(v), left+plotW, py(v), stroke, width)
		fmt.Fprintf(&b, `<text x="%d" y="%.1f" text-anchor="end">%g×</text>`+"\n", left-6, py(v)+4, v)
	}
	for xi, sv := range serverNames {
		version, gates, _ := strings.Cut(sv, " ")
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n", px(xi), top+plotH+18, esc(version))
		if gates != "" {
			fmt.Fprintf(&b, `<text x="%.1f" y="%.1f" text-anchor="middle" font-size="9">%s</text>`+"\n", px(xi), top+plotH+32, esc(gates))
		}
	}
	fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle">kube-apiserver</text>`+"\n", left+plotW/2, h-12)
	for mi, m := range RatioMetrics {
		var pts []string
		for _, p := range series[mi] {
			pts = append(pts, fmt.Sprintf("%.1f,%.1f", px(p.x), py(p.y)))
			fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s"/>`+"\n", px(p.x), py(p.y), m.Color)
		}
		if len(pts) > 1 {
			fmt.Fprintf(&b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"/>`+"\n", strings.Join(pts, " "), m.Color)
		}
		ly := float64(top + 14 + mi*20)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="2"/>`+"\n", left+plotW+14, ly-4, left+plotW+34, ly-4, m.Color)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.1f">%s</text>`+"\n", left+plotW+40, ly, esc(m.Short))
	}
	b.WriteString("</svg>\n")
	return b.String()
}

// ratioPoint is a point of RatioSVG: a server's index and a ratio.
type ratioPoint struct {
	x int
	y float64
}

// ratioSeries are RatioSVG's points, one series per RatioMetrics, and the range of their
// ratios (1 included).
func ratioSeries(results []Result, serverNames []string, c Case, k int) (series [][]ratioPoint, lo, hi float64) {
	series = make([][]ratioPoint, len(RatioMetrics))
	lo, hi = 1.0, 1.0
	for mi, m := range RatioMetrics {
		for xi, sv := range serverNames {
			ss, ls := Point{sv, c.Name, k, Streaming, false}.Summarize(results, m.Metric), Point{sv, c.Name, k, List, false}.Summarize(results, m.Metric)
			r := Ratio(ss, ls)
			if math.IsNaN(r) || r <= 0 || math.IsInf(r, 0) || ls.Median < m.Floor {
				continue // no ratio (LIST→WATCH's below the floor) has a place on the plot; the table says why
			}
			series[mi] = append(series[mi], ratioPoint{xi, r})
			lo, hi = math.Min(lo, r), math.Max(hi, r)
		}
	}
	return series, lo, hi
}

// OverheadTable compares the overhead point with and without wire logging.
func OverheadTable(results []Result, server, caseName string, k int, m Mode) string {
	q, w := Point{server, caseName, k, m, false}, Point{server, caseName, k, m, true}
	var rows [][]string
	for _, met := range []Metric{SyncTime, LabMem, APIMem, Received} {
		qs, ws := q.Summarize(results, met), w.Summarize(results, met)
		rows = append(rows, []string{met.Name, qs.Format(met.Decimals), ws.Format(met.Decimals), RatioCell(ws, qs, met)})
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

// CasePanels are the two plots of a case on one server: apiserver peak memory and sync time
// against K.
func CasePanels(results []Result, server string, c Case, ks []int) []Panel {
	panel := func(title, ylabel string, m Metric) Panel {
		p := Panel{Title: title, XLabel: "informers started at once (K)", YLabel: ylabel}
		for _, k := range ks {
			p.XTicks = append(p.XTicks, float64(k))
		}
		for _, mode := range Modes {
			s := Series{Name: mode.Title(), Color: ModeColor[mode]}
			for _, k := range ks {
				s.X = append(s.X, float64(k))
				s.Y = append(s.Y, Point{server, c.Name, k, mode, false}.Summarize(results, m))
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
