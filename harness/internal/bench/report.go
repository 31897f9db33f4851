package bench

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"informer-lab/compare/findings"
	"informer-lab/harness/internal/cli"
)

// overheadMode is the mode of the overhead point (wire logging on and off).
const overheadMode = Streaming

// DocsResults is the results.json of the run docs/bench.md shows, kept in docs/.
const DocsResults = "bench-results.json"

// serversPage is the page of a run of the plain shapes alone (large, small, secrets, the
// default -cases): those shapes across many server versions, beside docs/bench.md's one run of
// every dimension on fewer servers.
const serversPage = "bench-servers.md"

// pageFiles names a page, the results.json kept beside it, and its plots, so that pages
// written from different runs never overwrite each other's files.
type pageFiles struct {
	page, results string
	casePrefix    string // a case's plot is casePrefix + its name + ".svg"
	links, pods   string // the links cases' plot, the Pod cases' plot
}

func (f pageFiles) plot(c Case) string { return f.casePrefix + c.Name + ".svg" }

// runFiles are the names in a run directory: its own bench.md and plots.
var runFiles = pageFiles{page: "bench.md", results: "results.json", casePrefix: "plot-", links: linksPlot, pods: podsPlot}

// docFiles are the page -docs writes for a run of cases, its results.json and plots in docs/:
// docs/encodings.md for a run of the cbor cases alone (-cases cbor), docs/writes.md for one of
// the writes cases alone (-cases writes), docs/links.md for one of the links cases alone
// (-cases links), docs/pods.md for one of the Pod cases alone (-cases pods), and
// docs/bench-servers.md for one of the plain shapes alone (the default -cases), so that each can
// be measured again without the others; a run of several dimensions (-cases all) is
// docs/bench.md, whose plots are named bench-all-*.
func docFiles(cases []Case) pageFiles {
	only := func(is func(Case) bool) bool {
		return len(cases) > 0 && !slices.ContainsFunc(cases, func(c Case) bool { return !is(c) })
	}
	f := pageFiles{casePrefix: "bench-", links: linksPlot, pods: podsPlot}
	switch {
	case only(func(c Case) bool { return c.Link != nil }):
		f.page, f.results = linksPage, linksResults
	case only(func(c Case) bool { return c.Encoding != "" }):
		f.page, f.results = "encodings.md", "encodings-results.json"
	case only(func(c Case) bool { return c.WriteRate != 0 }):
		f.page, f.results = "writes.md", "writes-results.json"
	case only(isPodCase):
		f.page, f.results = podsPage, podsResults
	case only(isPlain):
		f.page, f.results = serversPage, "bench-servers-results.json"
	default:
		f = allFiles
	}
	return f
}

// allFiles are docs/bench.md's: a run of several dimensions (-cases all).
var allFiles = pageFiles{page: "bench.md", results: DocsResults, casePrefix: "bench-all-", links: "bench-all-links.svg", pods: "bench-all-pods.svg"}

// isPlain is a case of the plain shapes: none of the dimensions (links, encodings, writes,
// Pods).
func isPlain(c Case) bool {
	return c.Link == nil && c.Encoding == "" && c.WriteRate == 0 && !isPodCase(c)
}

func writeReport(rep *Report, o options, runDir string, stdout io.Writer, say func(string, ...any)) error {
	fmt.Fprint(stdout, Terminal(*rep))
	if rep.onCluster() { // bench.md and its plots explain envtest's /proc figures: the tables and results.json
		return writeJSON(filepath.Join(runDir, "results.json"), rep)
	}
	files := map[string]string{}
	addPage(files, runDir, *rep, runFiles)
	f := docFiles(rep.Cases)
	doc := *rep // what the page shows: this run, or docs/bench.md's run with this overhead point
	if o.docs && rep.overheadOnly() {
		f = allFiles
		var err error
		if doc, err = mergeOverhead(filepath.Join(o.root, "docs", f.results), *rep); err != nil {
			return err
		}
	}
	if o.docs {
		dir := filepath.Join(o.root, "docs")
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		addPage(files, dir, doc, f)
	}
	for path, text := range files {
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			return err
		}
	}
	if err := writeJSON(filepath.Join(runDir, "results.json"), rep); err != nil {
		return err
	}
	if o.docs { // the doc's numbers, beside it: TestDocsAreTheirResults renders them again
		if err := writeJSON(filepath.Join(o.root, "docs", f.results), &doc); err != nil {
			return err
		}
		say("wrote docs/%s, docs/%s and its plots", f.page, f.results)
	}
	return nil
}

// addPage adds rep's page and plots under dir, named by f, to files (path to text).
func addPage(files map[string]string, dir string, rep Report, f pageFiles) {
	files[filepath.Join(dir, f.page)] = Doc(rep, f)
	for _, c := range rep.plotted() {
		files[filepath.Join(dir, f.plot(c))] = caseSVG(rep, c)
	}
	if len(rep.linkCases()) > 0 {
		files[filepath.Join(dir, f.links)] = LinksSVG(rep)
	}
	if len(rep.podScale()) > 0 {
		files[filepath.Join(dir, f.pods)] = PodsSVG(rep)
	}
}

// plotted are the cases with a plot of their own: all but the Pod cases, which PodsSVG shows
// together.
func (rep Report) plotted() []Case {
	return slices.DeleteFunc(slices.Clone(rep.Cases), isPodCase)
}

// caseSVG is a case's plot: its ratios across servers at its largest K, or, for a run on one
// server, its memory and sync time against K.
func caseSVG(rep Report, c Case) string {
	names := rep.measuredOn(c)
	if len(names) > 1 {
		return RatioSVG(c.String(), rep.Results, names, c, rep.maxK(c))
	}
	if len(names) == 0 { // a case every server skipped: an empty plot says so
		return SVG(c.String()+": measured on no server", nil)
	}
	return SVG(c.String(), CasePanels(rep.Results, names[0], c, c.Runs(rep.Ks)))
}

// measuredOn names the servers with runs of c: all of them but where c needs a gate the
// server did not have (Case.Gate).
func (rep Report) measuredOn(c Case) []string {
	var names []string
	for _, sv := range rep.Servers {
		if slices.ContainsFunc(rep.Results, func(r Result) bool { return r.Server == sv.Name && r.Case == c.Name }) {
			names = append(names, sv.Name)
		}
	}
	return names
}

// onCluster reports a run on a user's cluster (make bench -kubeconfig).
func (rep Report) onCluster() bool {
	return slices.ContainsFunc(rep.Servers, func(s ServerInfo) bool { return s.Cluster != "" })
}

func (rep Report) serverNames() []string {
	var names []string
	for _, s := range rep.Servers {
		names = append(names, s.Name)
	}
	return names
}

func (rep Report) maxK(c Case) int {
	ks := c.Runs(rep.Ks)
	if len(ks) == 0 {
		return 0
	}
	return ks[len(ks)-1]
}

// Terminal is what make bench prints: each server's tables, the ratios across servers, the
// overhead point, the headline.
func Terminal(rep Report) string {
	var b strings.Builder
	took := rep.Finished.Sub(rep.Started).Round(time.Second)
	sv, k, overhead := overheadPoint(rep)
	overheadTable := func() {
		fmt.Fprintf(&b, "\n== harness overhead (small case, kube-apiserver %s) ==\n%s", sv, OverheadTable(rep.Results, sv, overheadCase, k, overheadMode))
	}
	if rep.overheadOnly() {
		overheadTable() // -overhead-only: that point is all there is
		fmt.Fprintf(&b, "\nbench took %s\n", took)
		return b.String()
	}
	for _, sv := range rep.Servers {
		table := CaseTable
		if !rep.apiMeasured(sv.Name) {
			table = ClientTable
		}
		for _, c := range rep.Cases {
			if slices.Contains(rep.measuredOn(c), sv.Name) {
				fmt.Fprintf(&b, "\n== kube-apiserver %s, %s ==\n%s", sv.Name, c, table(rep.Results, sv.Name, c, c.Runs(rep.Ks)))
			}
		}
		fmt.Fprintf(&b, "%s\n", rep.sourceNote(sv))
	}
	for _, c := range rep.plotted() {
		if names := rep.measuredOn(c); len(names) > 1 {
			fmt.Fprintf(&b, "\n== %s, K=%d, across servers ==\n%s", c, rep.maxK(c), RatioTable(rep.Results, names, c, rep.maxK(c)))
		}
	}
	for _, g := range rep.encodings() {
		fmt.Fprintf(&b, "\n== %s, K=%d ==\n%s", g.title(), g.k, EncodingTable(rep.Results, g.servers, g.cases, g.k))
		for _, f := range EncodingFindings(rep.Results, g.servers, g.cases, g.k) {
			fmt.Fprintf(&b, "- %s\n", f)
		}
	}
	if ws := rep.writeCases(); len(ws) > 0 {
		for _, sv := range rep.measuredOn(ws[0]) {
			fmt.Fprintf(&b, "\n== kube-apiserver %s, writes during the initial sync ==\n%s", sv, WritesTable(rep, sv, ws))
			for _, f := range WritesFindings(rep, sv, ws) {
				fmt.Fprintf(&b, "- %s\n", f)
			}
		}
	}
	if ls := rep.linkCases(); len(ls) > 0 {
		terminalLinks(&b, rep, ls)
	}
	if ps := rep.podScale(); len(ps) > 0 {
		for _, sv := range rep.measuredOn(ps[len(ps)-1]) {
			fmt.Fprintf(&b, "\n== kube-apiserver %s, Pods at scale, K=%d ==\n%s\n%s", sv, ps[0].Ks[0], PodsTable(rep, sv, ps), PodFitTable(rep, sv, ps))
		}
	}
	if overhead {
		overheadTable()
	}
	if h := Headline(rep); h != "" {
		fmt.Fprintf(&b, "\n%s\n", h)
	}
	fmt.Fprintf(&b, "\nbench took %s\n", took)
	return b.String()
}

// encodingGroup is the cases of one resource in several encodings (the cbor cases), the first
// the one the others are compared with (JSON), and the servers that measured the last (CBOR).
type encodingGroup struct {
	cases   []Case
	servers []string
	k       int
}

func (g encodingGroup) title() string {
	var es []string
	for _, c := range g.cases {
		es = append(es, c.Encoding)
	}
	return fmt.Sprintf("%s in %s", nounOf(g.cases[0].Resource), strings.Join(es, ", "))
}

// encodings groups the run's cases with an Encoding by resource, in their order: each group
// whose last case was measured somewhere, compared on the servers that measured it.
func (rep Report) encodings() []encodingGroup {
	var gs []encodingGroup
	at := map[string]int{}
	for _, c := range rep.Cases {
		if c.Encoding == "" {
			continue
		}
		i, ok := at[c.Resource]
		if !ok {
			i, at[c.Resource] = len(gs), len(gs)
			gs = append(gs, encodingGroup{})
		}
		gs[i].cases = append(gs[i].cases, c)
	}
	var measured []encodingGroup
	for _, g := range gs {
		last := g.cases[len(g.cases)-1]
		if g.servers = rep.measuredOn(last); len(g.cases) > 1 && len(g.servers) > 0 {
			g.k = rep.maxK(last)
			measured = append(measured, g)
		}
	}
	return measured
}

// overheadCase is the overhead point's Result.Case: the small case, measured once more.
const overheadCase = overheadBase + "-overhead"

func overheadPoint(rep Report) (server string, k int, ok bool) {
	for _, r := range rep.Results {
		if r.Case == overheadCase {
			return r.Server, r.K, true
		}
	}
	return "", 0, false
}

// overheadOnly reports a run of the overhead point alone (-overhead-only).
func (rep Report) overheadOnly() bool {
	_, _, ok := overheadPoint(rep)
	return ok && !slices.ContainsFunc(rep.Results, func(r Result) bool { return r.Case != overheadCase })
}

// mergeOverhead is the report in docs/bench.md's results (path) with run's overhead point in
// place of its own, and run named as where that point comes from. The point must be the one the
// page measured: the same server, K and small case.
func mergeOverhead(path string, run Report) (Report, error) {
	var doc Report
	b, err := os.ReadFile(path)
	if err == nil {
		err = json.Unmarshal(b, &doc)
	}
	if err != nil {
		return doc, fmt.Errorf("-overhead-only -docs replaces the overhead point of docs/bench.md's run, whose results could not be read (make bench ARGS=\"-cases all -docs\" writes them): %w", err)
	}
	doc.upgrade()
	sv, k, _ := overheadPoint(run)
	docSv, docK, ok := overheadPoint(doc)
	small := func(rep Report) Case {
		i := slices.IndexFunc(rep.Cases, func(c Case) bool { return c.Name == overheadBase })
		if i < 0 {
			return Case{}
		}
		return rep.Cases[i]
	}
	if !ok || sv != docSv || k != docK || small(run).Objects != small(doc).Objects || small(run).Size != small(doc).Size {
		return doc, cli.Usage(fmt.Errorf("-overhead-only -docs: this run's point (kube-apiserver %s, K=%d, %d objects of %s) is not docs/bench.md's (kube-apiserver %s, K=%d, %d of %s): measure that one (-servers, -k, -small-count, -small-kib)",
			sv, k, small(run).Objects, FormatBytes(small(run).Size), docSv, docK, small(doc).Objects, FormatBytes(small(doc).Size)))
	}
	doc.Results = append(slices.DeleteFunc(doc.Results, func(r Result) bool { return r.Case == overheadCase }), run.Results...)
	doc.Overhead = &OverheadRun{Started: run.Started, Finished: run.Finished, Machine: run.Machine, Versions: run.Versions, Args: run.Args}
	return doc, nil
}

// Headline states, at the largest K of each case and server by server, the ratio
// streaming/LIST→WATCH of kube-apiserver's absolute peak memory (robust: it does not depend on
// what the GC left resident) and, beside it, the growth above baseline of each mode; "" when
// no server's memory was read in every run (a cluster's /metrics).
func Headline(rep Report) string {
	var parts []string
	for _, c := range rep.Cases {
		k := rep.maxK(c)
		var per []string
		for _, sv := range rep.measuredOn(c) {
			if !rep.apiMeasured(sv) {
				continue
			}
			l, s := Point{sv, c.Name, k, List, false}, Point{sv, c.Name, k, Streaming, false}
			per = append(per, fmt.Sprintf("%s %s (+%s / +%s MiB)", sv,
				RatioCell(s.Summarize(rep.Results, APIPeak), l.Summarize(rep.Results, APIPeak), APIPeak),
				fmtMedian(l.Summarize(rep.Results, APIMem), 0), fmtMedian(s.Summarize(rep.Results, APIMem), 0)))
		}
		if len(per) > 0 {
			parts = append(parts, fmt.Sprintf("**%s** at K=%d: %s", c.Name, k, strings.Join(per, ", ")))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "kube-apiserver's peak memory, streaming/LIST→WATCH (medians; in parentheses the growth above baseline, LIST→WATCH / streaming): " + strings.Join(parts, "; ") + "."
}

// Fallbacks names the servers whose streaming runs did not stream: one WATCH per informer is a
// streaming list; more is a refused one and the reflector's LIST→WATCH after it (a server
// whose WatchList gate is off answers 422). The -quiet lab logs no requests, only their count.
func Fallbacks(rep Report) []string {
	var notes []string
	// A writes case's streams are cut by the writes and begun again (its table's requests and
	// watchers closed say so): more than one request there is not a refusal.
	written := map[string]bool{}
	for _, c := range rep.writeCases() {
		written[c.Name] = true
	}
	for _, sv := range rep.Servers {
		per := map[float64]bool{}
		for _, r := range rep.Results {
			if r.Server == sv.Name && r.Mode == Streaming && r.K > 0 && !r.Logged && !written[r.Case] && r.Watch == nil {
				per[float64(r.Requests)/float64(r.K)] = true
			}
		}
		if len(per) == 0 || len(per) == 1 && per[1] {
			continue
		}
		var counts []string
		for _, n := range slices.Sorted(maps.Keys(per)) {
			counts = append(counts, strconv.FormatFloat(n, 'f', -1, 64))
		}
		notes = append(notes, fmt.Sprintf("on kube-apiserver %s the streaming runs made %s requests per informer, not 1: the server refused the streaming list (its `WatchList` gate is off) and each reflector fell back to LIST→WATCH, so its streaming column measures that fallback.", sv.Name, strings.Join(counts, " or ")))
	}
	return notes
}

// samplingGap is the largest amount by which the 20 ms VmRSS samples fell short of VmHWM.
func samplingGap(rep Report) (gap int64, of Result) {
	for _, r := range rep.Results {
		if d := r.APIPeakHWM - r.APIPeakSampled; d > gap {
			gap, of = d, r
		}
	}
	return gap, of
}

// dimensionPages links the dimensions' own pages, with the command that writes each.
const dimensionPages = "[writes during the initial sync](writes.md) (`ARGS=\"-cases writes -docs\"`), [links: a round trip, a bandwidth cap, a slow reader](" + linksPage + ") (`ARGS=\"-cases links -docs\"`), [Pods at scale, fitted and extrapolated](" + podsPage + ") (`ARGS=\"-cases pods -docs\"`) and [JSON, protobuf and CBOR](encodings.md) (`ARGS=\"-cases cbor -docs\"`)"

// Doc is docs/bench.md: the header (machine, versions, date), the ratios across servers with
// a plot per case, each server's tables, the overhead point, how it was measured, and the
// findings (compare/findings: where streaming costs kube-apiserver more). f names its plots,
// relative to the doc.
func Doc(rep Report, f pageFiles) string {
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	docHeader(p, rep)

	p("## Result\n\n%s\n\n", Headline(rep))
	for _, note := range Fallbacks(rep) {
		p("Note: %s\n\n", note)
	}
	switch docFiles(rep.Cases).page {
	case serversPage:
		p("This page is the plain shapes on many server versions. [docs/bench.md](bench.md) is one run of every dimension (`ARGS=\"-cases all -docs\"`) on fewer servers, and each dimension has a run of its own with more points: %s.\n\n", dimensionPages)
	case "bench.md":
		p("This page is one run of every dimension below on the same servers, fewer points of each than its own page. Runs of their own with more: [the plain shapes on more server versions](%s) (`ARGS=-docs`), %s.\n\n", serversPage, dimensionPages)
	}
	p("Each table below is one shape at its largest K, one row per server: LIST→WATCH's median / streaming's median, then *ratio*, streaming's over LIST→WATCH's (below 1: streaming needs less). ")
	p("*apiserver +MiB* is kube-apiserver's peak resident memory during the informers' start-up above its settled resident memory just before (VmHWM − VmRSS); *apiserver peak* is that VmHWM itself; *apiserver CPU* its user + system CPU seconds from that moment to the last informer's sync. ")
	p("*lab peak* is the client process's VmHWM in MiB (its K caches included). *bytes on the wire* are the MiB of response bodies the K informers took off their connections until synced, compressed where kube-apiserver gzipped them; *sync time* is in seconds.\n\n")
	for _, c := range rep.plotted() {
		k := rep.maxK(c)
		p("### %s, K=%d\n\nSeeded in %s.\n\n", c, k, seedingNote(rep, c))
		if c.Gate != "" {
			p("Measured only on the servers with %s.\n\n", c.Gate)
		}
		p("%s\n![%s](%s)\n\n", RatioTable(rep.Results, rep.measuredOn(c), c, k), esc(c.String()), f.plot(c))
	}
	encodingsSection(p, rep)
	if ws := rep.writeCases(); len(ws) > 0 {
		writesSection(p, rep, ws)
	}
	if ls := rep.linkCases(); len(ls) > 0 {
		linksSection(p, rep, ls, f.links)
	}
	if ps := rep.podScale(); len(ps) > 0 {
		podsSection(p, rep, ps, f.pods)
	}
	p("## Every point, server by server\n\n")
	p("Cells are medians with the min–max of the repeats in parentheses. *requests*, *MiB received* (after decompression) and *MiB on the wire* (before) are summed over the K informers at the moment each reported synced.\n\n")
	for _, sv := range rep.Servers {
		p("### kube-apiserver %s\n\n", sv.Name)
		for _, c := range rep.Cases {
			if slices.Contains(rep.measuredOn(c), sv.Name) {
				p("%s\n\n%s\n", c, CaseTable(rep.Results, sv.Name, c, c.Runs(rep.Ks)))
			}
		}
	}

	overheadSection(p, rep)
	docMeasured(p, rep)
	p("\n%s", findings.BenchSection(findingsInput(rep)))
	return b.String()
}

// encodingsSection is a table per group of cases in several encodings (JSON, protobuf, CBOR),
// with what the runs show.
func encodingsSection(p func(string, ...any), rep Report) {
	for _, g := range rep.encodings() {
		base := g.cases[0]
		p("### %s, K=%d\n\n", g.title(), g.k)
		p("The same %d %s watched by %d informers at once in each encoding, on each server with %s. ", base.Objects, nounOf(base.Resource), g.k, g.cases[len(g.cases)-1].Gate)
		for _, c := range g.cases {
			p("%s: %s. ", c.Encoding, encodingHow(c))
		}
		p("Each cell is a median, and *×%s* is its ratio to %s's at the same server and mode (below 1: it costs less).\n\n", shortMedia(base.Encoding), base.Encoding)
		p("%s\n", EncodingTable(rep.Results, g.servers, g.cases, g.k))
		p("What the runs show: an encoding costs more (or less) than %s where its median is at least %.1f times %s's (or at most 1/%.1f), every run of the one above every run of the other (the rule of the findings below).\n\n", shortMedia(base.Encoding), findings.CostRatio, shortMedia(base.Encoding), findings.CostRatio)
		for _, f := range EncodingFindings(rep.Results, g.servers, g.cases, g.k) {
			p("- %s\n", f)
		}
		p("\n")
	}
}

// overheadSection is the harness's own cost: the overhead point, -quiet against wire logging,
// and where it was measured when on its own (-overhead-only -docs).
func overheadSection(p func(string, ...any), rep Report) {
	if sv, k, ok := overheadPoint(rep); ok {
		p("## Harness overhead\n\n")
		p("Every run above starts the lab with `-quiet`: it counts requests and bytes and decodes nothing. ")
		p("The same point (small case, K=%d, %s, kube-apiserver %s) once more, alternating `-quiet` with full wire logging (every request, LIST item and watch event decoded, written as a JSON record and read back by the harness)", k, overheadMode.Title(), sv)
		if o := rep.Overhead; o != nil {
			p(", measured on its own after the runs above: `make bench ARGS=\"%s\"` on %s took %s (client-go %s, Go %s; load average %s before, %s after)",
				strings.Join(o.Args, " "), o.Started.Format("2006-01-02 15:04 MST"), o.Finished.Sub(o.Started).Round(time.Second), o.Versions.ClientGo, o.Versions.GoLab, o.Machine.LoadBefore, o.Machine.LoadAfter)
		}
		p(":\n\n")
		p("%s\n", OverheadTable(rep.Results, sv, overheadCase, k, overheadMode))
		if rep.Overhead != nil {
			page, alone := Point{sv, overheadBase, k, overheadMode, false}.Summarize(rep.Results, SyncTime), Point{sv, overheadCase, k, overheadMode, false}.Summarize(rep.Results, SyncTime)
			p("The same `-quiet` point took %s s in the runs above and %s s in this run of its own: compare the ratio, measured within one run, not seconds across runs.\n\n", page.Format(SyncTime.Decimals), alone.Format(SyncTime.Decimals))
		}
	}
}

// docHeader is the top of docs/bench.md: the title, how and when the run was made, and the
// machine, servers, client and runs.
func docHeader(p func(string, ...any), rep Report) {
	took := rep.Finished.Sub(rep.Started).Round(time.Second)
	f := docFiles(rep.Cases)
	switch f.page {
	case linksPage:
		p("# make bench -cases links: LIST→WATCH against streaming lists through a link to kube-apiserver (a round trip added, a bandwidth cap, a slow reader), by server version\n\n")
		p("<!-- Generated by `make bench ARGS=\"-cases links -docs\"` (harness/internal/bench) from a real run. Do not edit: re-run it. -->\n\n")
	case podsPage:
		p("# make bench -cases pods: LIST→WATCH against streaming lists of Pods at several counts, fitted and extrapolated to 80k and 165k Pods, by server version\n\n")
		p("<!-- Generated by `make bench ARGS=\"-cases pods -docs\"` (harness/internal/bench) from a real run. Do not edit: re-run it. -->\n\n")
	case "writes.md":
		p("# make bench -cases writes: LIST→WATCH against streaming lists while a writer writes during the initial sync, by server version\n\n")
		p("<!-- Generated by `make bench ARGS=\"-cases writes -docs\"` (harness/internal/bench) from a real run. Do not edit: re-run it. -->\n\n")
	case "bench.md":
		p("# make bench: what kube-apiserver and the client spend when informers start, LIST→WATCH against streaming lists, in every dimension (shapes, writes during the sync, links, Pods at scale), by server version\n\n")
		p("<!-- Generated by `make bench ARGS=\"-cases all -docs\"` (harness/internal/bench) from a real run. Do not edit: re-run it. -->\n\n")
	case serversPage:
		p("# make bench: what kube-apiserver and the client spend when informers start, LIST→WATCH against streaming lists, by server version\n\n")
		p("<!-- Generated by `make bench ARGS=-docs` (harness/internal/bench) from a real run. Do not edit: re-run it. -->\n\n")
	default:
		p("# make bench -cases cbor: the same objects in JSON, protobuf and CBOR, what kube-apiserver and the client spend when informers start, by server version\n\n")
		p("<!-- Generated by `make bench ARGS=\"-cases cbor -docs\"` (harness/internal/bench) from a real run. Do not edit: re-run it. -->\n\n")
	}
	cmd := "make bench"
	if len(rep.Args) > 0 {
		cmd += ` ARGS="` + strings.Join(rep.Args, " ") + `"`
	}
	p("Written by `%s` on %s; the run took **%s**.", cmd, rep.Started.Format("2006-01-02 15:04 MST"), took)
	if rep.Quick {
		p(" It was a `-quick` run: smaller collections, fewer K, repeats and servers than the default.")
	}
	p(" The raw numbers of every run are in the run directory's `results.json`, kept as [%s](%s).\n\n", f.results, f.results)
	m := rep.Machine
	var svs []string
	for _, sv := range rep.Servers {
		svs = append(svs, fmt.Sprintf("%s (reports %s, etcd %s)", sv.Name, sv.Reported, sv.Etcd))
	}
	var shapes []string
	for _, c := range rep.Cases {
		shapes = append(shapes, fmt.Sprintf("%s: K = %s", c.Name, joinInts(c.Runs(rep.Ks))))
	}
	rows := [][]string{
		{"machine", fmt.Sprintf("%d CPUs (%s), %s RAM", m.CPUs, m.CPUModel, FormatBytes(m.MemTotal))},
		{"load average (1, 5, 15 min)", fmt.Sprintf("%s before, %s after", m.LoadBefore, m.LoadAfter)},
		{"kube-apiservers", strings.Join(svs, "; ") + " — envtest, built from the Go module proxy; " + processNote(rep.Fresh)},
		{"client-go", rep.Versions.ClientGo + " (lab `" + rep.Lab + "`, `-watch-list off` and `on`, " + loggingNote(rep) + ")"},
		{"Go", fmt.Sprintf("%s (harness), %s (lab)", rep.Versions.GoHarness, rep.Versions.GoLab)},
		{"runs", fmt.Sprintf("%s; %d repeat(s) per point, LIST→WATCH and streaming alternating run after run; VmRSS sampled every %s", strings.Join(shapes, ", "), rep.Repeats, rep.Interval)},
	}
	p("%s\n", Table([]string{"", ""}, rows))
	if busy(m) {
		p("Note: the machine was busy when the run began (load average %s on %d CPUs): other jobs shared the CPUs, which stretches sync times and CPU more than memory.\n\n", m.LoadBefore, m.CPUs)
	}
}

// loggingNote says which runs counted only (-quiet) and which logged the wire: the writes
// cases' runs, which check every event, and the links cases' watch runs.
func loggingNote(rep Report) string {
	var logged []string
	if len(rep.writeCases()) > 0 {
		logged = append(logged, "the writes cases")
	}
	if slices.ContainsFunc(rep.Results, func(r Result) bool { return r.Watch != nil }) {
		logged = append(logged, "the links cases' watch runs")
	}
	switch {
	case len(logged) == 0:
		return "`-quiet`"
	case len(rep.writeCases()) == len(rep.Cases):
		return "the wire logged"
	}
	return "`-quiet`; " + strings.Join(logged, " and ") + " with the wire logged"
}

// docMeasured is docs/bench.md's "How it is measured", and how to regenerate it.
func docMeasured(p func(string, ...any), rep Report) {
	gap, of := samplingGap(rep)
	p("## How it is measured\n\n")
	p("- Each server in turn gets its own envtest etcd + kube-apiserver for all its runs, started with the feature gates its name gives. Each case is seeded into a namespace of its own that the harness removes afterwards, and the labs watch only that namespace (`-namespace`): ConfigMaps with random base64 text, and, for *secrets*, Secrets of random bytes, the shape of KEP-3157's manual test (400 Secrets of about 1 MB, 16 informers) with the 760,000 random bytes per Secret that the perf-tests watch-list job writes. Objects are created by concurrent workers.\n")
	p("- One run is one lab process (`%s`, client-go %s) started with `-informers K`: K independent informer factories, each its own reflector, connection and cache, start at once. `-watch-list off` is LIST `resourceVersion=0` then WATCH; `on` is one WATCH with `sendInitialEvents=true`. The secrets case uses the typed Secrets informer (`-resource secrets`)%s.\n", rep.Lab, rep.Versions.ClientGo, podsNote(rep))
	if rep.Fresh {
		p("- Each run gets a fresh kube-apiserver process: the harness kills it and starts it again with the same arguments (same etcd, port and certificates), so no run inherits the heap of the one before. Measured on one process instead (`-fresh=false`), a run right after a LIST→WATCH run found hundreds of MiB of freed heap still resident, reused it without growing, and showed close to nothing; the fresh process removes that order effect.\n")
	}
	p("- Before each run the harness asks kube-apiserver for a garbage collection (`/debug/pprof/heap?gc=1`) and waits until its VmRSS holds still for a second (within 1%% or 2 MiB), so that garbage from its start-up (or from the previous run) is gone; that VmRSS is the baseline. It then resets kube-apiserver's VmHWM (`5` to `/proc/<pid>/clear_refs`), so that VmHWM read at sync is the peak of this run alone, and reads its CPU time (utime + stime of `/proc/<pid>/stat`), read again at sync.\n")
	lo, hi := baselineRange(rep)
	p("- The baseline moved between %s and %s over the runs. After a GC the Go runtime keeps some freed heap resident and reuses it before the process grows, so a run whose extra memory fits in that slack shows little growth: read small *+MiB* values as \"small\", not as exact; the absolute peak is the upper bound.\n", FormatBytes(lo), FormatBytes(hi))
	p("- VmRSS of kube-apiserver and of the lab is also sampled every %s from `/proc/<pid>/status`; ", rep.Interval)
	if gap == 0 {
		p("the samples' peak never fell short of VmHWM: at this interval the sampling misses no peak.\n")
	} else {
		p("the largest amount by which the samples' peak fell short of VmHWM was %s (%s, %s, K=%d, %s, run %d).\n", FormatBytes(gap), of.Server, of.Case, of.K, of.Mode.Title(), of.Rep)
	}
	p("- Sync time is the lab's own clock: from its record of the server (written just before the informers start) to the last informer's synced record. Requests and bytes come from those synced records' counts. Its resolution is about 100 ms: the lab waits with client-go's `cache.WaitForCacheSync`, which polls `HasSynced` every 100 ms.\n")
	p("- Bytes on the wire: client-go's transport asks for gzip (`Accept-Encoding: gzip`, added by Go's `http.Transport`) and decompresses below every RoundTripper. The lab's wire (`lab/wire`) adds that same header itself and decompresses as Go would, so the request on the wire is unchanged and it can count both the bytes it took off the connection and the bytes after decompression. HTTP/2 framing and TLS are not counted.\n")
	p("- Before starting, the harness refuses collections whose estimate (count × (size + 2 KiB) × largest K × a factor) exceeds MemAvailable, instead of letting the kernel kill a process mid-run.\n")
	if len(rep.encodings()) > 0 {
		p("- The encoding cases (`-cases cbor`) seed the same objects once per case. A run counts as measured only if every body its informers received came in the case's encoding (parameters such as `;stream=watch` aside, `application/cbor-seq` for a CBOR watch): the lab counts the media types of its 200 responses, and make bench refuses a run that got another.\n")
	}
	switch docFiles(rep.Cases).page {
	case serversPage:
	case "bench.md", linksPage, "writes.md", podsPage:
		p("\nRegenerate with the command at the top of this page (`SERVERS=` picks the servers).\n")
		return
	default:
		p("\nRegenerate with the command at the top of this page (`SERVERS=` picks the servers; the CBOR cases need servers with %s).\n", cborGate)
		return
	}
	p("\nRegenerate with `make bench ARGS=-docs` (`SERVERS=` picks the servers); `make bench ARGS=-quick` is a check of a few minutes on one server that writes only `out/bench-<timestamp>/`.\n")
}

// podsNote says which informer the Pod cases use, when the run has them.
func podsNote(rep Report) string {
	if len(rep.podScale()) == 0 {
		return ""
	}
	return ", the Pod cases the typed Pods informer (`-resource pods`)"
}

// findingsInput is the report as compare/findings reads make bench's results (its BenchRun
// fields, which compare -findings reads from docs/bench-results.json under the same names).
func findingsInput(rep Report) *findings.Bench {
	b := &findings.Bench{Page: docFiles(rep.Cases).page, Started: rep.Started}
	b.Versions.ClientGo = rep.Versions.ClientGo
	for _, r := range rep.Results {
		b.Results = append(b.Results, findings.BenchRun{Server: r.Server, Case: r.Case, K: r.K, Mode: string(r.Mode), Logged: r.Logged, APIPeakHWM: r.APIPeakHWM, APICPUMillis: r.APICPUMillis})
	}
	return b
}

func seedingNote(rep Report, c Case) string {
	var parts []string
	for _, sv := range rep.Servers {
		if d, ok := rep.Seeding[seedingKey(sv.Name, c.Name)]; ok {
			parts = append(parts, fmt.Sprintf("%s on %s", d.Round(100*time.Millisecond), sv.Name))
		}
	}
	return strings.Join(parts, ", ")
}

func busy(m Machine) bool {
	var l1 float64
	if _, err := fmt.Sscan(m.LoadBefore, &l1); err != nil {
		return false
	}
	return l1 > 0.5*float64(m.CPUs)
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprint(x)
	}
	return strings.Join(s, ", ")
}

// baselineRange is the lowest and highest baseline of the quiet runs.
func baselineRange(rep Report) (lo, hi int64) {
	for _, r := range rep.Results {
		if r.Logged {
			continue
		}
		if lo == 0 || r.APIBaseline < lo {
			lo = r.APIBaseline
		}
		hi = max(hi, r.APIBaseline)
	}
	return lo, hi
}

func processNote(fresh bool) string {
	if fresh {
		return "a fresh process for every run, on its server's etcd"
	}
	return "one process for every run"
}

// rerender writes a run directory's tables, plots and (with -docs) docs/bench.md again from its
// results.json: the numbers stay those of the real run, the rendering is this build's.
func rerender(o options, stdout, stderr io.Writer) (string, error) {
	b, err := os.ReadFile(filepath.Join(o.from, "results.json"))
	if err != nil {
		return "", cli.Usage(fmt.Errorf("-from: %w", err))
	}
	var rep Report
	if err := json.Unmarshal(b, &rep); err != nil {
		return "", cli.Usage(fmt.Errorf("-from %s: results.json: %w", o.from, err))
	}
	rep.upgrade()
	if len(rep.Servers) == 0 {
		return "", cli.Usage(fmt.Errorf("-from %s: results.json names no server: not a make bench run", o.from))
	}
	say := func(format string, a ...any) { fmt.Fprintf(stderr, "[bench] "+format+"\n", a...) }
	return o.from, writeReport(&rep, o, o.from, stdout, say)
}
