package bench

import (
	"bytes"
	"encoding/xml"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"informer-lab/envtestbin"
	"informer-lab/harness/internal/doccheck"
	"informer-lab/record"
)

// -links is links separated by commas: each kind's value checked, each link once; a wrong one
// is one line naming it and what a link is.
func TestParseLinks(t *testing.T) {
	got, err := ParseLinks("direct, proxy,latency=1ms,latency=100ms,bandwidth=10MiB,slow-reader=512KiB,bandwidth=1GiB/s")
	if err != nil {
		t.Fatal(err)
	}
	want := []Link{{Kind: linkDirect}, {Kind: linkProxy}, {Kind: linkLatency, RTT: time.Millisecond}, {Kind: linkLatency, RTT: 100 * time.Millisecond},
		{Kind: linkBandwidth, Rate: 10 << 20}, {Kind: linkSlowReader, Rate: 512 << 10}, {Kind: linkBandwidth, Rate: 1 << 30}}
	if !slices.Equal(got, want) {
		t.Errorf("ParseLinks:\n%+v\nwant\n%+v", got, want)
	}
	for spec, says := range map[string]string{
		"latency=20":                `"latency=20": the round trip must be whole milliseconds`,
		"latency=1500us":            `"latency=1500us": the round trip must be whole milliseconds`,
		"latency=11s":               `"latency=11s": the round trip must be whole milliseconds`,
		"bandwidth=10MB":            `"bandwidth=10MB": the rate must be a whole number of KiB, MiB or GiB`,
		"bandwidth=0MiB":            `"bandwidth=0MiB": the rate must be`,
		"slow-reader=1.5MiB":        `"slow-reader=1.5MiB": the rate must be`,
		"bandwidth=11GiB":           `"bandwidth=11GiB": the rate must be`,
		"direct=1":                  `"direct=1": direct takes no value`,
		"lossy=1%":                  `"lossy=1%": no such link`,
		"direct,,proxy":             `"": no such link`,
		"latency=20ms,latency=20ms": "-links: latency=20ms is there twice",
	} {
		_, err := ParseLinks(spec)
		if err == nil || !strings.Contains(err.Error(), says) || strings.Contains(err.Error(), "\n") {
			t.Errorf("ParseLinks(%q): %v; want one line with %q", spec, err, says)
		}
	}
	for _, l := range want { // a link's spec reads back as itself
		if back, err := ParseLinks(l.spec()); err != nil || back[0] != l {
			t.Errorf("%+v: spec %q reads back as %+v, %v", l, l.spec(), back, err)
		}
	}
}

// -cases links is one case per link, 10000 ConfigMaps of 1 KiB at K=8; alone, it runs on the
// two 1.37.2 servers unless -servers is given, and writes docs/links.md. Values out of range,
// and a user's cluster, are one usage line (exit 2).
func TestParseFlagsLinks(t *testing.T) {
	o, err := parseFlags([]string{"-cases", "links", "-root", "/r"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cs, _ := o.selected()
	var names []string
	for _, c := range cs {
		names = append(names, c.Name)
		if c.Objects != 10000 || c.Size != 1024 || !slices.Equal(c.Runs(o.ks), []int{8}) || c.Resource != record.ResourceConfigMaps || c.Link == nil {
			t.Errorf("%s: %d × %d at K=%v, link %v; want 10000 ConfigMaps × 1 KiB at K=8 through a link", c.Name, c.Objects, c.Size, c.Runs(o.ks), c.Link)
		}
	}
	wantNames := []string{"link-direct", "link-proxy", "link-latency-1ms", "link-latency-20ms", "link-latency-100ms", "link-bandwidth-100mib", "link-bandwidth-10mib", "link-slow-reader-1mib"}
	if !slices.Equal(names, wantNames) {
		t.Errorf("-cases links: %q\nwant %q", names, wantNames)
	}
	if got := serverNames(o); got != "1.37.2,1.37.2 WatchListCompression=false" || o.linkWatch != 10*time.Second {
		t.Errorf("-cases links: servers %s, watch timeout %s; want the two 1.37.2 servers, 10s", got, o.linkWatch)
	}
	if f := docFiles(cs); f.page != "links.md" || f.results != "links-results.json" || f.links != "links.svg" {
		t.Errorf("-cases links -docs writes %+v", f)
	}
	for args, servers := range map[string]string{
		"-cases links -servers 1.34.4":         "1.34.4",
		"-cases links,small":                   "1.32.13,1.33.13,1.33.13 WatchList=true,1.34.4,1.37.2,1.37.2 WatchListCompression=false",
		"-cases links -quick":                  envtestbin.DefaultVersion,
		"-cases links -links-watch-timeout 0s": "1.37.2,1.37.2 WatchListCompression=false",
	} {
		o, err := parseFlags(append(strings.Fields(args), "-root", "/r"), io.Discard)
		if err != nil || serverNames(o) != servers {
			t.Errorf("%s: servers %s, %v; want %s", args, serverNames(o), err, servers)
		}
	}
	if o, _ := parseFlags([]string{"-cases", "links", "-quick", "-root", "/r"}, io.Discard); o.links[0].Objects != 2000 {
		t.Errorf("-cases links -quick: %d ConfigMaps, want 2000", o.links[0].Objects)
	}
	for args, says := range map[string]string{
		"-links-k 0":                  "-links-k: 0 is not a number of informers from 1 to 26",
		"-links-count 0":              "-links-count must be at least 1",
		"-links-watch-timeout 1500ms": "-links-watch-timeout must be whole seconds",
		"-links latency=fast":         `-links: "latency=fast": the round trip must be whole milliseconds`,
		"-kubeconfig /k":              "-cases links puts a proxy on 127.0.0.1 between the labs and envtest's kube-apiserver",
	} {
		var stderr bytes.Buffer
		code := Run(t.Context(), append(strings.Fields(args), "-cases", "links", "-root", "/r"), io.Discard, &stderr)
		if code != 2 || strings.Count(stderr.String(), "\n") != 1 || !strings.Contains(stderr.String(), says) {
			t.Errorf("%s: exit %d, %q; want exit 2 and one line with %q", args, code, stderr.String(), says)
		}
	}
}

func serverNames(o options) string {
	var names []string
	for _, s := range o.servers {
		names = append(names, s.Name())
	}
	return strings.Join(names, ",")
}

// A round trip is split between the two directions; a cap paces both; a slow reader only what
// comes from kube-apiserver; in Toxiproxy's KB (1000 bytes) per second.
func TestToxicsOf(t *testing.T) {
	for _, tc := range []struct {
		link Link
		want []string
	}{
		{Link{Kind: linkLatency, RTT: time.Millisecond}, []string{
			`{"name":"latency-upstream","type":"latency","stream":"upstream","toxicity":1,"attributes":{"latency":0,"jitter":0}}`,
			`{"name":"latency-downstream","type":"latency","stream":"downstream","toxicity":1,"attributes":{"latency":1,"jitter":0}}`}},
		{Link{Kind: linkBandwidth, Rate: 10 << 20}, []string{
			`{"name":"bandwidth-upstream","type":"bandwidth","stream":"upstream","toxicity":1,"attributes":{"rate":10485}}`,
			`{"name":"bandwidth-downstream","type":"bandwidth","stream":"downstream","toxicity":1,"attributes":{"rate":10485}}`}},
		{Link{Kind: linkSlowReader, Rate: 1 << 10}, []string{
			`{"name":"bandwidth-downstream","type":"bandwidth","stream":"downstream","toxicity":1,"attributes":{"rate":1}}`}},
		{Link{Kind: linkProxy}, nil},
	} {
		if got := toxicsOf(tc.link); !slices.Equal(got, tc.want) {
			t.Errorf("%s:\n%q\nwant\n%q", tc.link, got, tc.want)
		}
	}
}

// A watch run's log, read back: per informer, from its sync point to its next request (sent at
// its record's time less its latency), what that request was, and the streaming lists it took.
func TestWatchLives(t *testing.T) {
	t0 := time.Date(2026, 12, 4, 21, 0, 0, 0, time.UTC)
	at := func(s float64) time.Time { return t0.Add(time.Duration(s * float64(time.Second))) }
	stream := "allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&sendInitialEvents=true&timeout=2s&timeoutSeconds=2&watch=true"
	http := func(tag string, sent, answered float64, query string) record.Record {
		return record.Record{Kind: record.HTTP, Tag: tag, Time: at(answered), Millis: int64((answered - sent) * 1000), Method: "GET", Path: "/api/v1/namespaces/n/configmaps", Query: query, Status: 200}
	}
	end := func(tag string, s float64) record.Record {
		return record.Record{Kind: record.WatchEvent, Tag: tag, Time: at(s), Event: record.EventBookmark, Annotations: map[string]string{record.AnnotationInitialEventsEnd: "true"}}
	}
	recs := []record.Record{
		http("A", 0, 0.1, stream), end("A", 1.2), http("A", 2.0, 2.1, "allowWatchBookmarks=true&resourceVersion=9&timeout=2s&timeoutSeconds=2&watch=true"),
		// B: its first stream cut before its end bookmark, the second's watch given up as very short.
		http("B", 0, 0.1, stream), http("B", 0.5, 0.6, stream), end("B", 1.9), http("B", 3.0, 3.1, stream),
		{Kind: record.Setup, Step: record.StepKlog, Time: at(2.0), Value: "very short watch: k8s.io/client-go/informers/factory.go:160: Unexpected watch close - watch lasted less than a second and no items received"},
		// C: never synced.
		http("C", 0, 0.1, stream), http("C", 1, 1.1, stream),
	}
	w, err := watchLives(recs, []string{"A", "B", "C"}, Streaming, 2, at(4))
	if err != nil {
		t.Fatal(err)
	}
	want := []InformerWatch{{Tag: "A", Streams: 1, UntilNext: 0.8, Then: nextWatch, Synced: true}, {Tag: "B", Streams: 2, UntilNext: 1.1, Then: nextStream, Synced: true}, {Tag: "C", Streams: 2}}
	for i, iw := range w.Informers {
		iw.UntilNext = math.Round(iw.UntilNext*1000) / 1000
		if iw != want[i] {
			t.Errorf("informer %d: %+v, want %+v", i, iw, want[i])
		}
	}
	if w.VeryShort != 1 || w.TimeoutSeconds != 2 {
		t.Errorf("%d very short watches, timeout %d; want 1, 2", w.VeryShort, w.TimeoutSeconds)
	}
	// LIST→WATCH: from the watch's response; a watch still open at the stop is open.
	list := []record.Record{http("A", 0, 0.3, "limit=500&resourceVersion=0"), http("A", 0.3, 0.4, "allowWatchBookmarks=true&resourceVersion=9&timeout=2s&timeoutSeconds=2&watch=true")}
	if w, err := watchLives(list, []string{"A"}, List, 2, at(1.4)); err != nil || w.Informers[0] != (InformerWatch{Tag: "A", UntilNext: 1, Open: true, Synced: true}) {
		t.Errorf("LIST→WATCH, open at the stop: %+v, %v", w.Informers, err)
	}
	// A watch that did not ask for the run's timeout: the lab did not rewrite it.
	if _, err := watchLives([]record.Record{http("A", 0, 0.1, "timeoutSeconds=331&watch=true")}, []string{"A"}, List, 2, at(1)); err == nil || !strings.Contains(err.Error(), "did not ask for timeoutSeconds=2") {
		t.Errorf("a watch with client-go's own timeout: %v", err)
	}
}

// linkResults makes runs of a link case on server: LIST→WATCH syncs in list seconds, streaming
// in stream seconds, each moving the given MiB on the wire (LIST gzipped: received twice that).
func linkResults(server string, c Case, list, stream, listMiB, streamMiB float64, reps int) []Result {
	var rs []Result
	for i := 0; i < reps; i++ {
		jitter := 1 + 0.01*float64(i-1) // 0.99, 1, 1.01: the medians are the figures given
		rs = append(rs,
			Result{Server: server, Case: c.Name, K: 8, Mode: List, Rep: i + 1, SyncMillis: 1000 * list * jitter, Requests: 16, WireBytes: int64(listMiB * (1 << 20)), Bytes: int64(2 * listMiB * (1 << 20)), APIBaseline: 300 << 20, APIPeakHWM: 400 << 20, APICPUMillis: 1000},
			Result{Server: server, Case: c.Name, K: 8, Mode: Streaming, Rep: i + 1, SyncMillis: 1000 * stream * jitter, Requests: 8, WireBytes: int64(streamMiB * (1 << 20)), Bytes: int64(streamMiB * (1 << 20)), APIBaseline: 300 << 20, APIPeakHWM: 400 << 20, APICPUMillis: 1000})
	}
	return rs
}

// The links table, findings and plot of a made-up run: streaming, uncompressed, syncs slower
// than LIST→WATCH from the 10 MiB/s cap down on one server, nowhere on the other.
func TestLinksReport(t *testing.T) {
	o, err := parseFlags([]string{"-cases", "links", "-links", "proxy,latency=20ms,bandwidth=100MiB,bandwidth=10MiB,bandwidth=1MiB,slow-reader=1MiB", "-root", "/r"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cs, _ := o.selected()
	rep := Report{Cases: cs, Ks: []int{8}, Servers: []ServerInfo{{Name: "1.37.2 WatchListCompression=false"}, {Name: "1.37.2"}}}
	off, on := rep.Servers[0].Name, rep.Servers[1].Name
	for i, c := range cs {
		slower := 1.0 + 0.5*float64(i) // streaming's sync, LIST→WATCH's 1 s: 1× through the proxy, 3.5× at 1 MiB/s
		if i == 1 || i == 2 {
			slower = 1.1 // 20 ms and 100 MiB/s: not by the findings' rule
		}
		rep.Results = append(rep.Results, linkResults(off, c, 1, slower, 50, 75, 3)...)
		rep.Results = append(rep.Results, linkResults(on, c, 1, 0.9, 50, 50, 3)...)
	}
	slowReader := cs[5]
	for i := range rep.Results {
		if r := &rep.Results[i]; r.Case == slowReader.Name && r.Mode == Streaming && r.Server == off {
			r.APIPeakHWM = 900 << 20 // holding what it cannot send
		}
	}
	rep.Results = append(rep.Results,
		Result{Server: off, Case: cs[4].Name + watchLabel, K: 8, Mode: Streaming, Logged: true, Rep: 1, Watch: &WatchLife{TimeoutSeconds: 10, Synced: true, VeryShort: 8,
			Informers: []InformerWatch{{Tag: "A", Streams: 1, UntilNext: 0.2, Then: nextStream, Synced: true}, {Tag: "B", Streams: 1, UntilNext: 0.4, Then: nextStream, Synced: true}}}},
		Result{Server: off, Case: cs[4].Name + watchLabel, K: 8, Mode: List, Logged: true, Rep: 1, Watch: &WatchLife{TimeoutSeconds: 10, Synced: true,
			Informers: []InformerWatch{{Tag: "A", UntilNext: 9.6, Then: nextWatch, Synced: true}, {Tag: "B", UntilNext: 9.8, Then: nextWatch, Synced: true}}}})

	table := LinksTable(rep, off, cs)
	for _, want := range []string{"| bandwidth 1.0 MiB/s ", "| streaming ", "| 3.50× ", "| 75.0 (75.0) ", "| 50.0 (100.0) ", "| 0.3 (0.2–0.4) ", "| 2 streamed again (client-go: 8 very short watches) ", "| 9.7 (9.6–9.8) ",
		"next request, s after the sync point (timeoutSeconds=10)"} {
		if !strings.Contains(table, want) {
			t.Errorf("LinksTable lacks %q:\n%s", want, table)
		}
	}
	got := strings.Join(LinksFindings(rep, off, cs), "\n")
	t.Logf("%s\n%s", table, got)
	for _, want := range []string{
		off + ", bandwidth 10 MiB/s, K=8: streaming took longer to sync (2.50 against 1.00 s, 2.50×); streaming moved more bytes on the wire (75 against 50 MiB, 1.50×).",
		off + ": streaming synced slower than LIST→WATCH from a bandwidth cap of 10 MiB/s down (2.50× there, 3.00× at 1.0 MiB/s). There the streams moved 75 MiB on the wire for 75 MiB received (not compressed), the LISTs and their watches 50 MiB for 100 MiB (gzipped): 1.50× the bytes.",
		off + ": streaming synced slower than LIST→WATCH with a slow reader of 1.0 MiB/s, the lowest rate measured (3.50×). There",
		off + ", streaming: with slow-reader 1.0 MiB/s kube-apiserver's peak was 2.25× the proxy link's (900 against 400 MiB; 600 against 100 MiB above its baseline).",
		off + ", bandwidth 1.0 MiB/s, every watch asking for timeoutSeconds=10: streaming's informers sent their next request 0.3 (0.2–0.4) s after their end bookmark: 2 streamed again (client-go: 8 very short watches); LIST→WATCH's 9.7 (9.6–9.8) s after their watch's response: 2 watched on.",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("LinksFindings lacks\n%s\nin\n%s", want, got)
		}
	}
	if strings.Contains(got, "bandwidth 100 MiB/s, K=8: streaming took longer") || strings.Contains(got, "latency 20ms, K=8: streaming took") {
		t.Errorf("LinksFindings names a link where streaming was not slower by the rule:\n%s", got)
	}
	if fs := strings.Join(LinksFindings(rep, on, cs), "\n"); strings.Contains(fs, "slower") {
		t.Errorf("on %s streaming was never slower, the findings say:\n%s", on, fs)
	}

	svg := LinksSVG(rep)
	dec := xml.NewDecoder(strings.NewReader(svg))
	counts := map[string]int{}
	for {
		tok, err := dec.Token()
		if err != nil {
			if err != io.EOF {
				t.Fatalf("LinksSVG is not well-formed XML: %v\n%s", err, svg)
			}
			break
		}
		if se, ok := tok.(xml.StartElement); ok {
			counts[se.Name.Local]++
		}
	}
	// Per server: proxy and latency (2 circles, a line), three caps (3 circles, a line), one slow
	// reader (a square: no line); the background rect besides.
	if counts["circle"] != 2*5 || counts["polyline"] != 2*2 || counts["rect"] != 1+2 {
		t.Errorf("LinksSVG: %d circles, %d polylines, %d rects; want 10, 4, 3", counts["circle"], counts["polyline"], counts["rect"])
	}
	for _, want := range []string{">1.37.2 WatchListCompression=false<", ">round trip added (ms)<", ">rate (MiB/s, log scale)<", ">1<", ">10<", ">100<"} {
		if !strings.Contains(svg, want) {
			t.Errorf("LinksSVG lacks %q", want)
		}
	}
	out := Terminal(rep)
	doc := Doc(rep, docFiles(rep.Cases))
	for _, want := range []string{"== kube-apiserver " + off + ", links ==", "== kube-apiserver " + on + ", links =="} {
		if !strings.Contains(out, want) {
			t.Errorf("the terminal lacks %q", want)
		}
	}
	for _, want := range []string{"# make bench -cases links:", "### The connection to kube-apiserver, K=8", "![streaming's sync time over LIST→WATCH's, by link](links.svg)",
		"(k8s.io/apiserver@v0.37.2 pkg/features/kube_features.go: \"Enables compression for WatchList responses\")"} {
		if !strings.Contains(doc, want) {
			t.Errorf("the doc lacks %q", want)
		}
	}
}

// The links section quotes upstream code: each quote is the module's line at its version, as
// make test checks every committed doc's (doccheck), here before any docs/links.md exists.
func TestLinksSectionQuotes(t *testing.T) {
	c := Case{Name: "link-proxy", Objects: 1, Size: 1024, Ks: []int{1}, Link: &Link{Kind: linkProxy}}
	var b strings.Builder
	linksSection(func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }, Report{Cases: []Case{c}}, []Case{c}, linksPlot)
	doc := filepath.Join(t.TempDir(), "links.md")
	if err := os.WriteFile(doc, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	quotes, err := doccheck.Quotes(doc)
	if err != nil || len(quotes) != 4 {
		t.Fatalf("%d quotes, %v; want the four of the section", len(quotes), err)
	}
	cache, err := doccheck.NewModuleCache()
	if err != nil {
		t.Fatal(err)
	}
	for _, q := range quotes {
		if err := doccheck.Check(q, cache.Find); err != nil {
			t.Error(err)
		}
	}
}

// make bench -cases links, reduced: 300 ConfigMaps, 2 informers, one repeat, through a link
// that adds a round trip of 300 ms and one capped at 1 MiB/s, then a watch run per link and mode
// with a watch timeout of 2 s. Both modes sync through the proxy; the round trip comes at least
// once between the lab's server record and its sync (the informers' first request), and the
// cap paces the bytes on the wire; every watch asked for the timeout, and kube-apiserver ended
// each first watch within it (the next request went within the timeout and the reflector's
// backoff of 1.6 s at most). Through the cap, where the initial events take about 0.7 s, a
// streaming list's watch ends the sooner after its end bookmark: its timer started before them.
func TestLinksRun(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("make bench measures through /proc: Linux only")
	}
	const rtt, rate, timeout = 300 * time.Millisecond, 1 << 20, 2.0
	start := time.Now()
	rep, stdout := runBench(t, "-servers", envtestbin.DefaultVersion, "-cases", "links", "-links", "latency=300ms,bandwidth=1MiB",
		"-links-count", "300", "-links-k", "2", "-links-watch-timeout", "2s", "-repeats", "1", "-overhead=false", "-settle", "2s", "-fresh=false")
	t.Logf("the run took %s", time.Since(start).Round(time.Millisecond))
	measured, watched := 0, 0
	for _, r := range rep.Results {
		if r.Watch != nil {
			watched++
			continue
		}
		measured++
		t.Logf("%s %s: sync %.0f ms, %d requests, %d bytes received, %d on the wire, apiserver +%d KiB, CPU %.0f ms", r.Case, r.Mode, r.SyncMillis, r.Requests, r.Bytes, r.WireBytes, r.APIDelta()>>10, r.APICPUMillis)
		want := map[Mode]int{List: 4, Streaming: 2}[r.Mode] // LIST and WATCH, or one stream, per informer
		switch {
		case r.Requests != want || r.Bytes < 2*300*1024:
			t.Errorf("%s %s: %d requests, %d bytes; want %d, and both informers' 300 ConfigMaps", r.Case, r.Mode, r.Requests, r.Bytes, want)
		case r.Case == "link-latency-300ms" && r.SyncMillis < float64(rtt.Milliseconds()):
			t.Errorf("%s %s: synced in %.0f ms, less than the round trip of its first request", r.Case, r.Mode, r.SyncMillis)
		case r.Case == "link-bandwidth-1mib" && r.SyncMillis/1000 < 0.8*float64(r.WireBytes)/rate:
			t.Errorf("%s %s: synced in %.0f ms, faster than %d bytes go at 1 MiB/s", r.Case, r.Mode, r.SyncMillis, r.WireBytes)
		}
	}
	if measured != 4 || watched != 4 {
		t.Fatalf("%d measured runs and %d watch runs, want 2 links × 2 modes each", measured, watched)
	}
	for _, c := range rep.linkCases() {
		next := map[Mode]Summary{}
		for _, m := range Modes {
			w := rep.watchOf(rep.Servers[0].Name, c, m)
			t.Logf("%s %s: %s", c.Name, m, w.line(m))
			if !w.Synced || len(w.Informers) != 2 {
				t.Fatalf("%s %s: %+v", c.Name, m, w)
			}
			for _, iw := range w.Informers {
				if iw.Open || iw.UntilNext > timeout+1.6 {
					t.Errorf("%s %s: informer %s's first watch %+v; want it ended by its timeout of 2 s", c.Name, m, iw.Tag, iw)
				}
			}
			next[m] = w.untilNext()
		}
		if c.Link.Kind == linkBandwidth && next[Streaming].Median > next[List].Median-0.2 {
			t.Errorf("%s: the next requests went %.2f s after the end bookmarks, and %.2f s after the watches' responses with LIST→WATCH; want the first at least 0.2 s sooner", c.Name, next[Streaming].Median, next[List].Median)
		}
	}
	for _, want := range []string{"== kube-apiserver " + envtestbin.DefaultVersion + ", links ==", "| latency 300ms ", "| bandwidth 1.0 MiB/s "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the terminal lacks %q:\n%s", want, stdout)
		}
	}
	if svg := LinksSVG(rep); strings.Count(svg, "<circle") != 2 {
		t.Errorf("the plot has %d points, want the latency link and the cap", strings.Count(svg, "<circle"))
	}
}
