package bench

import (
	"bytes"
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"

	"informer-lab/compare/findings"
)

// The links cases' page and plot: -cases links -docs writes docs/links.md, its results and the
// plot beside it.
const (
	linksPage    = "links.md"
	linksResults = "links-results.json"
	linksPlot    = "links.svg"
)

// linkCases are the run's links cases, in order.
func (rep Report) linkCases() []Case {
	return slices.DeleteFunc(slices.Clone(rep.Cases), func(c Case) bool { return c.Link == nil })
}

// watchOf is the watch run of a link case on server in mode m, nil if there was none.
func (rep Report) watchOf(server string, c Case, m Mode) *WatchLife {
	for _, r := range rep.Results {
		if r.Server == server && r.Case == c.Name+watchLabel && r.Mode == m && r.Watch != nil {
			return r.Watch
		}
	}
	return nil
}

// LinksTable is the links cases on one server: per link and mode, the medians of the measured
// runs (sync time, and streaming's over LIST→WATCH's; bytes on the wire and received; what
// kube-apiserver spent) and, from the watch runs, when the informers sent their next request
// after their sync point, and what it was.
func LinksTable(rep Report, server string, cases []Case) string {
	header := []string{"link", "mode", "sync s", "sync, streaming / LIST", "requests", "MiB on the wire (received)", "apiserver +MiB", "apiserver peak MiB", "apiserver CPU s"}
	timeout := int64(0)
	for _, c := range cases {
		for _, m := range Modes {
			if w := rep.watchOf(server, c, m); w != nil {
				timeout = w.TimeoutSeconds
			}
		}
	}
	if timeout > 0 {
		header = append(header, fmt.Sprintf("next request, s after the sync point (timeoutSeconds=%d)", timeout), "then")
	}
	var rows [][]string
	for _, c := range cases {
		k := rep.maxK(c)
		sync := map[Mode]Summary{}
		for _, m := range Modes {
			sync[m] = Point{server, c.Name, k, m, false}.Summarize(rep.Results, SyncTime)
		}
		for _, m := range Modes {
			runs := rep.runsAt(Point{server, c.Name, k, m, false})
			ratio := ""
			if m == Streaming {
				ratio = FormatRatio(Ratio(sync[Streaming], sync[List]))
			}
			row := []string{c.Link.String(), m.Title(), sync[m].Format(2), ratio, medianOf(runs, Requests),
				fmtMedian(Summarize(values(runs, OnWire)), 1) + " (" + fmtMedian(Summarize(values(runs, Received)), 1) + ")",
				medianOf(runs, APIMem), medianOf(runs, APIPeak), medianOf(runs, APICPU)}
			if timeout > 0 {
				row = append(row, watchCells(rep.watchOf(server, c, m))...)
			}
			rows = append(rows, row)
		}
	}
	return Table(header, rows)
}

// watchCells are a watch run's two cells: when the next requests went, and what they were.
func watchCells(w *WatchLife) []string {
	switch {
	case w == nil:
		return []string{"", ""}
	case !w.Synced:
		return []string{"not synced", w.streamsText()}
	}
	return []string{w.untilNext().Format(1), w.thenText()}
}

// linkMetric is a measured cost the links findings compare, with its unit and its words.
type linkMetric struct {
	Metric
	unit, more, less string
}

var linkMetrics = []linkMetric{
	{SyncTime, "s", "took longer to sync", "synced faster"},
	{OnWire, "MiB", "moved more bytes on the wire", "moved fewer bytes on the wire"},
	{APIPeak, "MiB", "cost kube-apiserver a higher peak", "cost kube-apiserver a lower peak"},
	{Metric{APICPU.Name, 2, APICPU.Of, APICPU.Floor}, "s", "cost kube-apiserver more CPU", "cost kube-apiserver less CPU"},
}

// LinksFindings are what the links runs on server show. By the rule of make bench's findings
// (findings.Costlier: a median at least 1.2 times the other's, every run above every run of the
// other): per link, where streaming cost more or less than LIST→WATCH; the rates from which
// on streaming synced slower than LIST→WATCH, and the bytes on the wire there; where a slow
// reader raised kube-apiserver's peak above the baseline link's. And what the watch runs saw.
func LinksFindings(rep Report, server string, cases []Case) []string {
	var out []string
	for _, c := range cases {
		k := rep.maxK(c)
		s, l := rep.runsAt(Point{server, c.Name, k, Streaming, false}), rep.runsAt(Point{server, c.Name, k, List, false})
		var parts []string
		for _, m := range linkMetrics {
			if r, ok := findings.Costlier(values(s, m.Metric), values(l, m.Metric)); ok {
				parts = append(parts, fmt.Sprintf("streaming %s (%s against %s %s, %s)", m.more, medianOf(s, m.Metric), medianOf(l, m.Metric), m.unit, FormatRatio(r)))
			} else if r, ok := findings.Costlier(values(l, m.Metric), values(s, m.Metric)); ok {
				parts = append(parts, fmt.Sprintf("streaming %s (%s against %s %s, %s)", m.less, medianOf(s, m.Metric), medianOf(l, m.Metric), m.unit, FormatRatio(1/r)))
			}
		}
		if len(parts) > 0 {
			out = append(out, fmt.Sprintf("%s, %s, K=%d: %s.", server, c.Link, k, strings.Join(parts, "; ")))
		}
	}
	for _, kind := range []string{linkBandwidth, linkSlowReader} {
		if f := slowerFrom(rep, server, cases, kind); f != "" {
			out = append(out, f)
		}
	}
	out = append(out, slowReaderPeaks(rep, server, cases)...)
	return append(out, watchFindings(rep, server, cases)...)
}

// slowerFrom says from which rate of a kind of link (bandwidth, slow-reader) down streaming
// synced slower than LIST→WATCH at every rate measured, by the findings' rule, and what went
// over the link there: the bytes on the wire of each mode, and whether its bodies came gzipped
// (fewer bytes on the wire than received). "" where streaming was not slower at the lowest rate.
func slowerFrom(rep Report, server string, cases []Case, kind string) string {
	var rated []Case
	for _, c := range cases {
		if c.Link.Kind == kind {
			rated = append(rated, c)
		}
	}
	slices.SortFunc(rated, func(a, b Case) int { return cmp.Compare(a.Link.Rate, b.Link.Rate) })
	from := -1 // rated[from:] is where streaming was slower, from the lowest rate up
	ratios := map[int]float64{}
	for i, c := range rated {
		k := rep.maxK(c)
		s, l := Point{server, c.Name, k, Streaming, false}.Values(rep.Results, SyncTime), Point{server, c.Name, k, List, false}.Values(rep.Results, SyncTime)
		r, ok := findings.Costlier(s, l)
		if !ok {
			break
		}
		from, ratios[i] = i, r
	}
	if from < 0 {
		return ""
	}
	top := rated[from]
	k := rep.maxK(top)
	s, l := rep.runsAt(Point{server, top.Name, k, Streaming, false}), rep.runsAt(Point{server, top.Name, k, List, false})
	what := map[string]string{linkBandwidth: "a bandwidth cap", linkSlowReader: "a slow reader"}[kind]
	where := fmt.Sprintf("from %s of %s/s down (%s there, %s at %s/s)", what, FormatBytes(top.Link.Rate), FormatRatio(ratios[from]), FormatRatio(ratios[0]), FormatBytes(rated[0].Link.Rate))
	switch {
	case from == 0:
		where = fmt.Sprintf("with %s of %s/s, the lowest rate measured (%s)", what, FormatBytes(top.Link.Rate), FormatRatio(ratios[0]))
	case from == len(rated)-1:
		where = fmt.Sprintf("with %s of %s/s and at every lower rate measured (%s there, %s at %s/s)", what, FormatBytes(top.Link.Rate), FormatRatio(ratios[from]), FormatRatio(ratios[0]), FormatBytes(rated[0].Link.Rate))
	}
	return fmt.Sprintf("%s: streaming synced slower than LIST→WATCH %s. There the streams moved %s MiB on the wire for %s MiB received (%s), the LISTs and their watches %s MiB for %s MiB (%s): %s the bytes.",
		server, where, medianOf(s, OnWire), medianOf(s, Received), gzipWords(s), medianOf(l, OnWire), medianOf(l, Received), gzipWords(l),
		FormatRatio(Ratio(Summarize(values(s, OnWire)), Summarize(values(l, OnWire)))))
}

// gzipWords says whether runs' bodies came compressed: fewer bytes off the connection than
// received (by a tenth at least).
func gzipWords(runs []Result) string {
	w, r := Summarize(values(runs, OnWire)), Summarize(values(runs, Received))
	if w.N > 0 && w.Median < 0.9*r.Median {
		return "gzipped"
	}
	return "not compressed"
}

// slowReaderPeaks says where a slow reader raised kube-apiserver's peak above the baseline
// link's (the proxy without toxic, else the direct link), mode by mode, by the findings' rule:
// kube-apiserver holding what it could not yet send.
func slowReaderPeaks(rep Report, server string, cases []Case) []string {
	i := slices.IndexFunc(cases, func(c Case) bool { return c.Link.Kind == linkProxy })
	if i < 0 {
		i = slices.IndexFunc(cases, func(c Case) bool { return c.Link.Kind == linkDirect })
	}
	if i < 0 {
		return nil
	}
	base := cases[i]
	var out []string
	for _, c := range cases {
		if c.Link.Kind != linkSlowReader {
			continue
		}
		for _, m := range Modes {
			x, y := rep.runsAt(Point{server, c.Name, rep.maxK(c), m, false}), rep.runsAt(Point{server, base.Name, rep.maxK(base), m, false})
			if r, ok := findings.Costlier(values(x, APIPeak), values(y, APIPeak)); ok {
				out = append(out, fmt.Sprintf("%s, %s: with %s kube-apiserver's peak was %s the %s link's (%s against %s MiB; %s against %s MiB above its baseline).",
					server, m.Title(), c.Link, FormatRatio(r), base.Link, medianOf(x, APIPeak), medianOf(y, APIPeak), medianOf(x, APIMem), medianOf(y, APIMem)))
			}
		}
	}
	return out
}

// watchFindings say what each link's watch runs saw (observations, not the findings' rule).
func watchFindings(rep Report, server string, cases []Case) []string {
	var out []string
	for _, c := range cases {
		s, l := rep.watchOf(server, c, Streaming), rep.watchOf(server, c, List)
		if s == nil || l == nil {
			continue
		}
		head := fmt.Sprintf("%s, %s, every watch asking for timeoutSeconds=%d:", server, c.Link, s.TimeoutSeconds)
		if !s.Synced {
			out = append(out, fmt.Sprintf("%s streaming did not sync (%s); LIST→WATCH's informers sent their next request %s s after their watch's response.", head, s.streamsText(), l.untilNext().Format(1)))
			continue
		}
		out = append(out, fmt.Sprintf("%s streaming's informers sent their next request %s s after their end bookmark: %s; LIST→WATCH's %s s after their watch's response: %s.",
			head, s.untilNext().Format(1), s.thenText(), l.untilNext().Format(1), l.thenText()))
	}
	return out
}

// terminalLinks are the links tables and findings, server by server.
func terminalLinks(b *strings.Builder, rep Report, cases []Case) {
	for _, sv := range rep.measuredOn(cases[0]) {
		fmt.Fprintf(b, "\n== kube-apiserver %s, links ==\n%s%s", sv, LinksTable(rep, sv, cases), bullets("", LinksFindings(rep, sv, cases), ""))
	}
}

// bullets is items as a Markdown list, after lead and before tail; "" for no items.
func bullets(lead string, items []string, tail string) string {
	if len(items) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString(lead)
	for _, it := range items {
		b.WriteString("- " + it + "\n")
	}
	return b.String() + tail
}

// linksSection is the doc's part on the links cases: how they run, each server's table and
// findings, the plot, and the upstream code that explains them.
func linksSection(p func(string, ...any), rep Report, cases []Case, plot string) {
	c := cases[0]
	k := rep.maxK(c)
	var names []string
	for _, c := range cases {
		names = append(names, c.Link.String())
	}
	p("### The connection to kube-apiserver, K=%d\n\n", k)
	p("%d ConfigMaps of %s, synced by %d informers at once (the lab's one HTTP/2 connection, shared by them) through each link in turn: %s. ", c.Objects, FormatBytes(c.Size), k, strings.Join(names, ", "))
	p("A link is a [Toxiproxy](https://github.com/Shopify/toxiproxy) proxy in the harness's process, one per run, between the lab and kube-apiserver: it forwards TCP, so the lab's TLS session is kube-apiserver's own. ")
	p("*direct* is no proxy at all, *proxy* the proxy without toxic (what it costs by itself); *latency* adds a round trip, half each way, to every exchange: both sides of the proxy are loopback, so what a round trip costs here is what the protocols' own round trips cost (TLS, each request, HTTP/2's flow control); ")
	p("*bandwidth* caps each direction; a *slow reader* caps only what comes from kube-apiserver: the proxy then takes kube-apiserver's bytes no faster than it hands them on, and kube-apiserver's writes block once the buffers between them are full, as for a client that reads slowly.\n\n")
	p("Sync time, bytes and kube-apiserver's figures are the medians of the measured runs (`-quiet`), as in the tables above. ")
	if w := firstWatch(rep, cases); w != nil {
		p("*next request* comes from one more run per link and mode, logging the wire, whose lab asks kube-apiserver to end every watch after %d s (`-watch-timeout`, which rewrites the `timeoutSeconds` of the reflector's watches): per informer, the time from its sync point (a streaming list's initial-events-end bookmark as the client read it; after a LIST, its watch's response) to the next request it sent, which the reflector sends as that watch ends: at once to watch on from where it was, after a backoff of 0.8 to 1.6 s to start over with a LIST or a streaming list, as it does after a watch it gave up as very short (closed within a second with no event; client-go's klog says so, and *then* counts it). ", w.TimeoutSeconds)
	}
	p("\n\n")
	lead := fmt.Sprintf("What these runs show (streaming against LIST→WATCH, and a slow reader against the baseline link, by the rule of the findings: a median at least %.1f times the other's, every run above every run of the other; the watch runs as they came):\n\n", findings.CostRatio)
	for _, sv := range rep.measuredOn(c) {
		p("kube-apiserver %s:\n\n%s\n%s", sv, LinksTable(rep, sv, cases), bullets(lead, LinksFindings(rep, sv, cases), "\n"))
	}
	p("![streaming's sync time over LIST→WATCH's, by link](%s)\n\n", plot)
	p("Why the bytes differ: kube-apiserver gzips a response above 128 KiB for a client that accepts gzip, as client-go's transport does (k8s.io/apiserver@v0.37.2 pkg/endpoints/handlers/responsewriters/writers.go: \"defaultGzipThresholdBytes = 128 * 1024\"), and a LIST here is larger; ")
	p("a watch's stream was never compressed before 1.37 ([docs/upstream.md §3.10](upstream.md#310-response-encoding-and-compression)), and 1.37 gzips a streaming list's under its `WatchListCompression` gate (k8s.io/apiserver@v0.37.2 pkg/features/kube_features.go: \"Enables compression for WatchList responses\"). ")
	p("Why a watch can end soon after its end bookmark: kube-apiserver starts the watch's timer as it starts serving it, before the initial events (k8s.io/apiserver@v0.37.2 pkg/endpoints/handlers/watch.go: \"timeoutCh, cleanup := s.TimeoutFactory.TimeoutCh() defer cleanup() // begin the stream\"), so the time a streaming list takes comes off its watch ([kubernetes/kubernetes#134837](https://github.com/kubernetes/kubernetes/issues/134837)); ")
	p("client-go v0.32's reflector gives up a watch that ended within a second with no event (k8s.io/client-go@v0.32.13 tools/cache/reflector.go: \"watch lasted less than a second and no items received\") and starts over with a LIST or a streaming list.\n\n")
}

// firstWatch is any watch run of the links cases, nil if there was none.
func firstWatch(rep Report, cases []Case) *WatchLife {
	for _, sv := range rep.serverNames() {
		for _, c := range cases {
			if w := rep.watchOf(sv, c, Streaming); w != nil {
				return w
			}
		}
	}
	return nil
}

// serverColors are the servers' colors in the links plot, in the run's order.
var serverColors = []string{"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#7f7f7f"}

// linkPoint is one link's ratio on one server: streaming's median sync time over LIST→WATCH's.
type linkPoint struct{ x, ratio float64 }

// LinksSVG is the links cases' plot: streaming's median sync time over LIST→WATCH's, one line
// per server, against the round trip added (left; the proxy without toxic, else the direct
// link, at 0) and against the rate of a bandwidth cap or a slow reader (right, log scale).
// Above 1, streaming took longer.
func LinksSVG(rep Report) string {
	const pw, ph, top = 460, 360, 46
	servers := rep.serverNames()
	latency, bandwidth, slow := map[string][]linkPoint{}, map[string][]linkPoint{}, map[string][]linkPoint{}
	ymax := 1.0
	cases := rep.linkCases()
	zero := linkDirect
	if slices.ContainsFunc(cases, func(c Case) bool { return c.Link.Kind == linkProxy }) {
		zero = linkProxy
	}
	for _, c := range cases {
		k := rep.maxK(c)
		for _, sv := range servers {
			r := Ratio(Point{sv, c.Name, k, Streaming, false}.Summarize(rep.Results, SyncTime), Point{sv, c.Name, k, List, false}.Summarize(rep.Results, SyncTime))
			if math.IsNaN(r) || math.IsInf(r, 0) {
				continue
			}
			ymax = math.Max(ymax, r)
			switch c.Link.Kind {
			case linkLatency:
				latency[sv] = append(latency[sv], linkPoint{float64(c.Link.RTT.Milliseconds()), r})
			case zero:
				latency[sv] = append(latency[sv], linkPoint{0, r})
			case linkBandwidth:
				bandwidth[sv] = append(bandwidth[sv], linkPoint{float64(c.Link.Rate) / (1 << 20), r})
			case linkSlowReader:
				slow[sv] = append(slow[sv], linkPoint{float64(c.Link.Rate) / (1 << 20), r})
			}
		}
	}
	ymax = niceCeil(ymax * 1.05)
	var b bytes.Buffer
	w := 2 * pw
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" font-family="sans-serif" font-size="12">`+"\n", w, ph+top, w, ph+top)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", w, ph+top)
	fmt.Fprintf(&b, `<text x="%d" y="20" text-anchor="middle" font-size="15" font-weight="bold">Streaming's sync time over LIST→WATCH's, by link (medians; above 1: streaming took longer)</text>`+"\n", w/2)
	for i, sv := range servers {
		x := 70 + i*(w-100)/max(1, len(servers))
		fmt.Fprintf(&b, `<line x1="%d" y1="34" x2="%d" y2="34" stroke="%s" stroke-width="2"/><text x="%d" y="38">%s</text>`+"\n", x, x+20, serverColors[i%len(serverColors)], x+26, esc(sv))
	}
	linkPanel(&b, 0, top, pw, ph, "a round trip added", "round trip added (ms)", false, ymax, servers, latency, nil)
	linkPanel(&b, pw, top, pw, ph, "a bandwidth cap (●) or a slow reader (■)", "rate (MiB/s, log scale)", true, ymax, servers, bandwidth, slow)
	b.WriteString("</svg>\n")
	return b.String()
}

// linkPanel draws one panel of LinksSVG: lines of circles (lines), and of squares on dashed
// lines (squares), per server; the x axis linear from 0 or, with logX, in decades.
func linkPanel(b *bytes.Buffer, x0, y0, w, h float64, title, xlabel string, logX bool, ymax float64, servers []string, lines, squares map[string][]linkPoint) {
	const left, right, ptop, bottom = 60, 20, 30, 50
	plotW, plotH := w-left-right, h-ptop-bottom
	ax := newLinkAxis(logX, lines, squares)
	px := func(x float64) float64 { return x0 + left + (ax.tx(x)-ax.lo)/(ax.hi-ax.lo)*plotW }
	py := func(y float64) float64 { return y0 + ptop + plotH - y/ymax*plotH }
	fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle" font-size="13">%s</text>`+"\n", x0+left+plotW/2, y0+18, esc(title))
	for i := 0; i <= 5; i++ {
		v := ymax * float64(i) / 5
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#ddd"/>`+"\n", x0+left, py(v), x0+left+plotW, py(v))
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="end">%s×</text>`+"\n", x0+left-6, py(v)+4, tickLabel(v))
	}
	fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333" stroke-width="1.5" stroke-dasharray="4 3"/>`+"\n", x0+left, py(1), x0+left+plotW, py(1))
	for _, t := range ax.ticks {
		fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333"/>`+"\n", px(t), py(0), px(t), py(0)+5)
		fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n", px(t), py(0)+18, tickLabel(t))
	}
	fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333"/>`+"\n", x0+left, py(0), x0+left+plotW, py(0))
	fmt.Fprintf(b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="#333"/>`+"\n", x0+left, py(0), x0+left, py(ymax))
	fmt.Fprintf(b, `<text x="%.1f" y="%.1f" text-anchor="middle">%s</text>`+"\n", x0+left+plotW/2, y0+h-12, esc(xlabel))
	fmt.Fprintf(b, `<text transform="translate(%.1f %.1f) rotate(-90)" text-anchor="middle">streaming / LIST→WATCH</text>`+"\n", x0+16, y0+ptop+plotH/2)
	for i, sv := range servers {
		color := serverColors[i%len(serverColors)]
		linkSeries(b, lines[sv], false, color, px, py)
		linkSeries(b, squares[sv], true, color, px, py)
	}
}

// linkAxis is a linkPanel's x axis: how an x is placed (tx, between lo and hi) and its ticks.
type linkAxis struct {
	tx     func(float64) float64
	lo, hi float64
	ticks  []float64
}

// newLinkAxis is the x axis of the points of sets: linear from 0 with a tick at each x, or, with
// logX, whole decades.
func newLinkAxis(logX bool, sets ...map[string][]linkPoint) linkAxis {
	var xs []float64
	for _, set := range sets {
		for _, pts := range set {
			for _, p := range pts {
				if !slices.Contains(xs, p.x) {
					xs = append(xs, p.x)
				}
			}
		}
	}
	slices.Sort(xs)
	if !logX {
		ax := linkAxis{tx: func(x float64) float64 { return x }, lo: 0, hi: 1, ticks: xs}
		if len(xs) > 0 {
			ax.hi = math.Max(xs[len(xs)-1], 1e-9)
		}
		return ax
	}
	ax := linkAxis{tx: math.Log10, lo: -1, hi: 1}
	if len(xs) > 0 {
		ax.lo, ax.hi = math.Floor(math.Log10(xs[0])), math.Ceil(math.Log10(xs[len(xs)-1]))
	}
	if ax.hi == ax.lo {
		ax.hi++
	}
	for d := ax.lo; d <= ax.hi; d++ {
		ax.ticks = append(ax.ticks, math.Pow(10, d))
	}
	return ax
}

// linkSeries draws one server's points in x order: circles on a line, or squares on a dashed
// line.
func linkSeries(b *bytes.Buffer, pts []linkPoint, square bool, color string, px, py func(float64) float64) {
	pts = slices.Clone(pts)
	slices.SortFunc(pts, func(a, b linkPoint) int { return cmp.Compare(a.x, b.x) })
	var coords []string
	for _, p := range pts {
		coords = append(coords, fmt.Sprintf("%.1f,%.1f", px(p.x), py(p.ratio)))
		if square {
			fmt.Fprintf(b, `<rect x="%.1f" y="%.1f" width="7" height="7" fill="%s"/>`+"\n", px(p.x)-3.5, py(p.ratio)-3.5, color)
		} else {
			fmt.Fprintf(b, `<circle cx="%.1f" cy="%.1f" r="3.5" fill="%s"/>`+"\n", px(p.x), py(p.ratio), color)
		}
	}
	if len(coords) > 1 {
		dash := ""
		if square {
			dash = ` stroke-dasharray="6 4"`
		}
		fmt.Fprintf(b, `<polyline points="%s" fill="none" stroke="%s" stroke-width="2"%s/>`+"\n", strings.Join(coords, " "), color, dash)
	}
}
