package bench

import (
	"bytes"
	"fmt"
	"math"
	"slices"
	"strings"
)

// The Pod cases' page and plot: -cases pods -docs writes docs/pods.md, its results and the plot
// beside it.
const (
	podsPage    = "pods.md"
	podsResults = "pods-results.json"
	podsPlot    = "pods.svg"
)

// podMetrics are what the Pod tables, fits and plot show, in that order.
var podMetrics = []Metric{SyncTime, APIPeak, APIMem, APICPU, LabMem, OnWire}

// podPlotMetrics are the plot's panels.
var podPlotMetrics = []Metric{SyncTime, APIPeak, LabMem, OnWire}

// podScale are the run's Pod cases, by count.
func (rep Report) podScale() []Case {
	cs := slices.DeleteFunc(slices.Clone(rep.Cases), func(c Case) bool { return !isPodCase(c) })
	slices.SortFunc(cs, func(a, b Case) int { return a.Objects - b.Objects })
	return cs
}

// isPodCase reports a case of -cases pods.
func isPodCase(c Case) bool {
	return strings.HasPrefix(c.Name, "pods-") && c.WriteRate == 0 && c.Link == nil
}

// PodsTable is the Pod cases on one server: a row per count, each metric's medians LIST→WATCH /
// streaming.
func PodsTable(rep Report, server string, cases []Case) string {
	header := []string{"Pods"}
	for _, m := range podMetrics {
		header = append(header, m.Name+" L / S")
	}
	header = append(header, "KiB per Pod received")
	var rows [][]string
	for _, c := range cases {
		k := c.Ks[0]
		row := []string{fmt.Sprint(c.Objects)}
		for _, m := range podMetrics {
			l := Point{server, c.Name, k, List, false}.Summarize(rep.Results, m)
			s := Point{server, c.Name, k, Streaming, false}.Summarize(rep.Results, m)
			row = append(row, fmtMedian(l, m.Decimals)+" / "+fmtMedian(s, m.Decimals))
		}
		recv := Point{server, c.Name, k, List, false}.Summarize(rep.Results, Received)
		row = append(row, fmt.Sprintf("%.1f", recv.Median*1024/float64(c.Objects*k)))
		rows = append(rows, row)
	}
	return Table(header, rows)
}

// PodFitTable is the fitted lines of one server: per metric and mode, the cost per 1,000 Pods,
// the line's value at 0, R², and the line carried to podTargets, marked extrapolated.
func PodFitTable(rep Report, server string, cases []Case) string {
	header := []string{"metric", "mode", "per 1,000 Pods", "at 0 Pods", "R²", "runs"}
	for _, n := range podTargets {
		header = append(header, fmt.Sprintf("at %dk Pods (extrapolated)", n/1000))
	}
	var rows [][]string
	for _, m := range podMetrics {
		for _, mode := range Modes {
			f := fitPods(rep.Results, server, cases, mode, m)
			if !f.ok {
				rows = append(rows, []string{m.Name, mode.Title(), "n/a", "n/a", "n/a", fmt.Sprint(f.N), "n/a", "n/a"})
				continue
			}
			row := []string{m.Name, mode.Title(), fmt.Sprintf("%.*f", m.Decimals+2, f.PerPod*1000), fmt.Sprintf("%.*f", m.Decimals, f.At0), fmt.Sprintf("%.3f", f.R2), fmt.Sprint(f.N)}
			for _, n := range podTargets {
				row = append(row, fmt.Sprintf("%.*f", m.Decimals, f.at(n)))
			}
			rows = append(rows, row)
		}
	}
	return Table(header, rows)
}

// podsSection is docs/bench.md's part on the Pod cases.
func podsSection(p func(string, ...any), rep Report, cases []Case, plot string) {
	largest := cases[len(cases)-1]
	k := largest.Ks[0]
	var counts []string
	for _, c := range cases {
		counts = append(counts, fmt.Sprint(c.Objects))
	}
	p("### Pods at scale, K=%d\n\n", k)
	p("Pods of %s each (their JSON as created: two containers with ports, environment, resources, probes and volume mounts, labels, annotations, a toleration and two volumes, padded with an annotation of random text; kube-apiserver adds defaults, managedFields and a status, and *KiB per Pod received* is what each informer took per Pod after decompression), at %s Pods, each count seeded into a namespace of its own and watched by %d informers at once. ", FormatBytes(largest.Size), strings.Join(counts, ", "), k)
	p("Every Pod names a scheduler that does not exist (`schedulerName: %s`), so it stays Pending wherever it is created. ", podSchedulerName)
	if rep.MemFactor > 0 {
		est := Estimate(Load{Objects: largest.Objects, Size: largest.Size, K: k}, rep.MemFactor)
		p("How many this machine holds: make bench's memory guard, which refuses a case whose estimate is above the memory available, estimated %s for the %d Pods at K=%d (Pods × (size + 2 KiB) × K × %g); at that rate this machine's %s of RAM holds about %d Pods at K=%d. ",
			FormatBytes(est), largest.Objects, k, rep.MemFactor, FormatBytes(rep.Machine.MemTotal), int64(float64(rep.Machine.MemTotal)/float64(est)*float64(largest.Objects)), k)
	}
	p("Cells are medians, LIST→WATCH / streaming.\n\n")
	for _, sv := range rep.measuredOn(largest) {
		p("kube-apiserver %s:\n\n%s\n", sv, PodsTable(rep, sv, cases))
		p("Fitted: a straight line through every run (least squares, cost = at 0 + per Pod × Pods), and that line carried past the largest count measured (%d). The last columns are **extrapolated**, not measured: they hold only if the cost keeps growing in a straight line, and an R² below about 0.9 says the runs did not lie on one.\n\n%s\n", largest.Objects, PodFitTable(rep, sv, cases))
	}
	p("![Pods at scale: costs against the number of Pods, fitted and extrapolated](%s)\n\n", plot)
}

// PodsSVG is the Pod cases' plot: a panel per metric of podPlotMetrics against the number of
// Pods, from 0 to the largest of podTargets: every run a dot (LIST→WATCH) or a square
// (streaming), one color per server, the fitted line solid over the counts measured and dashed
// where it is extrapolated, in the shaded part.
func PodsSVG(rep Report) string {
	const pw, ph, top = 460, 330, 46
	cases := rep.podScale()
	servers := rep.serverNames()
	xmax := float64(podTargets[len(podTargets)-1])
	w, h := 2*pw, top+ph*((len(podPlotMetrics)+1)/2)
	var b bytes.Buffer
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", w, h, w, h)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", w, h)
	fmt.Fprintf(&b, `<text x="%d" y="20" text-anchor="middle" font-size="15" font-weight="bold">Pods at scale: every run (● LIST→WATCH, ■ streaming), the fitted line, dashed where extrapolated</text>`+"\n", w/2)
	for i, sv := range servers {
		x := 70 + i*(w-100)/max(1, len(servers))
		fmt.Fprintf(&b, `<line x1="%d" y1="34" x2="%d" y2="34" stroke="%s" stroke-width="2"/><text x="%d" y="38">%s</text>`+"\n", x, x+20, serverColors[i%len(serverColors)], x+26, esc(sv))
	}
	for i, m := range podPlotMetrics {
		podPanel(&b, rep, cases, servers, m, float64(i%2)*pw, float64(top+(i/2)*ph), pw, ph, xmax)
	}
	b.WriteString("</svg>\n")
	return b.String()
}

// podPanel draws one metric of PodsSVG.
func podPanel(b *bytes.Buffer, rep Report, cases []Case, servers []string, m Metric, x0, y0, w, h, xmax float64) {
	const left, right, ptop, bottom = 60, 20, 30, 46
	plotW, plotH := w-left-right, h-ptop-bottom
	measured := 0.0
	for _, c := range cases {
		measured = math.Max(measured, float64(c.Objects))
	}
	fits, ymax := podFits(rep, cases, servers, m, xmax)
	ymax = niceCeil(math.Max(ymax, 1e-9) * 1.05)
	px := func(x float64) float64 { return x0 + left + x/xmax*plotW }
	py := func(y float64) float64 { return y0 + ptop + plotH - y/ymax*plotH }
	fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle" font-size="13">%s</text>`+"\n", x0+left+plotW/2, y0+18, esc(m.Name))
	fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="#f2f2f2"/>`+"\n", px(measured), py(ymax), px(xmax)-px(measured), plotH)
	fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle" fill="#777">extrapolated</text>`+"\n", (px(measured)+px(xmax))/2, py(ymax)+14)
	for i := 0; i <= 5; i++ {
		v := ymax * float64(i) / 5
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", x0+left, py(v), x0+left+plotW, py(v))
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="end">%s</text>`+"\n", x0+left-6, py(v)+4, tickLabel(v))
	}
	for _, t := range append([]float64{0, measured}, toFloats(podTargets)...) {
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333"/>`+"\n", px(t), py(0), px(t), py(0)+5)
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n", px(t), py(0)+18, tickLabel(t/1000)+"k")
	}
	fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333"/>`+"\n", x0+left, py(0), x0+left+plotW, py(0))
	fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333"/>`+"\n", x0+left, py(0), x0+left, py(ymax))
	fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle">Pods</text>`+"\n", x0+left+plotW/2, y0+h-10)
	for i, sv := range servers {
		color := serverColors[i%len(serverColors)]
		for _, mode := range Modes {
			for _, c := range cases {
				for _, y := range (Point{sv, c.Name, c.Ks[0], mode, false}).Values(rep.Results, m) {
					if mode == Streaming {
						fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="7" height="7" fill="%s"/>`+"\n", px(float64(c.Objects))-3.5, py(y)-3.5, color)
					} else {
						fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s"/>`+"\n", px(float64(c.Objects)), py(y), color)
					}
				}
			}
			if f := fits[sv+string(mode)]; f.ok {
				podFitLine(b, f, mode, color, measured, xmax, px, py)
			}
		}
	}
}

// podFits are the fits of m against the count per server and mode (keyed server + mode), and
// the largest value of the plot: of the points, and of the fits at xmax.
func podFits(rep Report, cases []Case, servers []string, m Metric, xmax float64) (fits map[string]podFit, ymax float64) {
	fits = map[string]podFit{}
	for _, sv := range servers {
		for _, mode := range Modes {
			f := fitPods(rep.Results, sv, cases, mode, m)
			fits[sv+string(mode)] = f
			if f.ok {
				ymax = math.Max(ymax, f.at(int(xmax)))
			}
			for _, c := range cases {
				for _, y := range (Point{sv, c.Name, c.Ks[0], mode, false}).Values(rep.Results, m) {
					ymax = math.Max(ymax, y)
				}
			}
		}
	}
	return fits, ymax
}

// podFitLine draws a fit: solid over the measured counts, dashed where extrapolated; thinner
// for streaming.
func podFitLine(b *bytes.Buffer, f podFit, mode Mode, color string, measured, xmax float64, px, py func(float64) float64) {
	width := "2"
	if mode == Streaming {
		width = "1.2"
	}
	fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="%s"/>`+"\n", px(0), py(f.At0), px(measured), py(f.at(int(measured))), color, width)
	fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s" stroke-width="%s" stroke-dasharray="6 4"/>`+"\n", px(measured), py(f.at(int(measured))), px(xmax), py(f.at(int(xmax))), color, width)
}

func toFloats(xs []int) []float64 {
	var fs []float64
	for _, x := range xs {
		fs = append(fs, float64(x))
	}
	return fs
}
