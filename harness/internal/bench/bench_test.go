package bench

import (
	"encoding/json"
	"encoding/xml"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"informer-lab/harness/internal/cli"
	"informer-lab/record"
)

func TestSummarize(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []float64
		want Summary
	}{
		{"one", []float64{7}, Summary{N: 1, Median: 7, Min: 7, Max: 7}},
		{"odd, unsorted", []float64{9, 1, 4}, Summary{N: 3, Median: 4, Min: 1, Max: 9}},
		{"even: mean of the middle two", []float64{4, 1, 10, 2}, Summary{N: 4, Median: 3, Min: 1, Max: 10}},
	} {
		if got := Summarize(tc.in); got != tc.want {
			t.Errorf("%s: Summarize(%v) = %+v, want %+v", tc.name, tc.in, got, tc.want)
		}
	}
	if got := Summarize(nil); got.N != 0 || !math.IsNaN(got.Median) {
		t.Errorf("Summarize(nil) = %+v, want N 0 and a NaN median", got)
	}
	in := []float64{3, 1, 2}
	Summarize(in)
	if in[0] != 3 {
		t.Errorf("Summarize sorted its input in place: %v", in)
	}
}

func TestSummaryFormat(t *testing.T) {
	for _, tc := range []struct {
		s        Summary
		decimals int
		want     string
	}{
		{Summarize([]float64{412.4, 398, 430.2}), 0, "412 (398–430)"},
		{Summarize([]float64{1.234}), 2, "1.23"},
		{Summarize([]float64{5.001, 5.002}), 1, "5.0"}, // no spread at this precision
		{Summarize(nil), 0, "n/a"},
	} {
		if got := tc.s.Format(tc.decimals); got != tc.want {
			t.Errorf("%+v.Format(%d) = %q, want %q", tc.s, tc.decimals, got, tc.want)
		}
	}
}

func TestRatio(t *testing.T) {
	list, stream := Summarize([]float64{2000, 1900, 2100}), Summarize([]float64{200})
	if got := Ratio(stream, list); got != 0.1 {
		t.Errorf("Ratio(streaming 200, LIST 2000) = %v, want 0.1", got)
	}
	for _, tc := range []struct {
		name      string
		s, l      Summary
		formatted string
	}{
		{"LIST median 0", stream, Summarize([]float64{0}), "n/a"},
		{"no streaming runs", Summarize(nil), list, "n/a"},
	} {
		if got := FormatRatio(Ratio(tc.s, tc.l)); got != tc.formatted {
			t.Errorf("%s: ratio %q, want %q", tc.name, got, tc.formatted)
		}
	}
	for r, want := range map[float64]string{0: "0×", 0.0004: "<0.001×", 0.1: "0.10×", 0.0123: "0.012×", 1.5: "1.50×", 12.3: "12×"} {
		if got := FormatRatio(r); got != want {
			t.Errorf("FormatRatio(%v) = %q, want %q", r, got, want)
		}
	}
}

func TestTableAligns(t *testing.T) {
	got := Table([]string{"K", "ratio"}, [][]string{{"16", "0.10×"}, {"1", "n/a"}})
	want := "" +
		"| K  | ratio |\n" +
		"| -- | ----- |\n" +
		"| 16 | 0.10× |\n" +
		"| 1  | n/a   |\n"
	if got != want {
		t.Errorf("Table:\n%s\nwant:\n%s", got, want)
	}
}

// results makes runs on server "1.32.13" with the given apiserver peaks above a 300 MiB baseline.
func results(c string, k int, m Mode, peaksMiB ...float64) []Result {
	return serverResults("1.32.13", c, k, m, peaksMiB...)
}

func serverResults(server, c string, k int, m Mode, peaksMiB ...float64) []Result {
	var rs []Result
	for i, p := range peaksMiB {
		base := int64(300 << 20)
		rs = append(rs, Result{Server: server, Case: c, K: k, Mode: m, Rep: i + 1, APIBaseline: base, APIPeakHWM: base + int64(p*(1<<20)), SyncMillis: 1000 * p / 100,
			Requests: 2 * k, Bytes: 100 << 20, WireBytes: 40 << 20, APICPUMillis: 10 * p, LabPeakHWM: 50 << 20})
	}
	return rs
}

func TestCaseTable(t *testing.T) {
	var rs []Result
	rs = append(rs, results("large", 16, List, 2000, 1800, 2200)...)
	rs = append(rs, results("large", 16, Streaming, 100, 120, 80)...)
	rs = append(rs, results("other", 16, List, 1)...)                       // another case: must not count
	rs = append(rs, serverResults("1.37.2", "large", 16, List, 1, 1, 1)...) // another server: must not count
	got := CaseTable(rs, "1.32.13", Case{Name: "large"}, []int{16})
	for _, want := range []string{"| 16 ", "| 2000 (1800–2200) ", "| 100 (80–120) ", "| 0.050× ", "| 32 / 32 ", "| 100 / 100 ", "| 40 / 40 ", "| 20.0 (18.0–22.0) / 1.0 (0.8–1.2) "} {
		if !strings.Contains(got, want) {
			t.Errorf("CaseTable lacks %q:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "\n"); n != 3 {
		t.Errorf("CaseTable has %d lines, want 3 (header, separator, one K):\n%s", n, got)
	}
}

func TestSVG(t *testing.T) {
	var rs []Result
	rs = append(rs, results("large", 1, List, 100)...)
	rs = append(rs, results("large", 16, List, 2000, 2400)...)
	rs = append(rs, results("large", 1, Streaming, 10)...)
	rs = append(rs, results("large", 16, Streaming, 50)...)
	svg := SVG(`large: 200 × 512 KiB <"&">`, CasePanels(rs, "1.32.13", Case{Name: "large"}, []int{1, 16}))

	// Well-formed XML, and the title escaped.
	dec := xml.NewDecoder(strings.NewReader(svg))
	counts := map[string]int{}
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("SVG is not well-formed XML: %v\n%s", err, svg)
		}
		if se, ok := tok.(xml.StartElement); ok {
			counts[se.Name.Local]++
		}
	}
	if counts["svg"] != 1 || counts["polyline"] != 4 || counts["circle"] != 8 {
		t.Errorf("SVG has %d svg, %d polylines, %d circles; want 1, 4 (2 panels × 2 modes), 8 (× 2 K)", counts["svg"], counts["polyline"], counts["circle"])
	}
	for _, want := range []string{"LIST→WATCH", "streaming", ModeColor[List], ModeColor[Streaming], "&lt;&#34;&amp;&#34;&gt;", ">2500<"} {
		if !strings.Contains(svg, want) {
			t.Errorf("SVG lacks %q", want)
		}
	}
}

func TestRatioTableAndPlotAcrossServers(t *testing.T) {
	var rs []Result
	rs = append(rs, serverResults("1.32.13", "large", 16, List, 1800, 1900)...)
	rs = append(rs, serverResults("1.32.13", "large", 16, Streaming, 9, 18)...)
	rs = append(rs, serverResults("1.37.2 WatchListCompression=false", "large", 16, List, 400)...)
	rs = append(rs, serverResults("1.37.2 WatchListCompression=false", "large", 16, Streaming, 500)...)
	rs[len(rs)-1].WireBytes = 80 << 20                                          // streaming moved twice the bytes on this server
	names := []string{"1.32.13", "1.37.2 WatchListCompression=false", "1.34.4"} // 1.34.4: no runs
	got := RatioTable(rs, names, Case{Name: "large"}, 16)
	for _, want := range []string{
		"| 1.32.13 ", "| 1850 / 14 ", "| 0.007× ", // apiserver +MiB, medians of two (LIST far above the floor)
		"| 1.37.2 WatchListCompression=false ", "| 400 / 500 ", "| 1.25× ",
		"| 40 / 80 ", "| 2.00× ", // bytes on the wire
		"| 1.34.4 ", "| n/a / n/a ",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("RatioTable lacks %q:\n%s", want, got)
		}
	}
	if n := strings.Count(got, "\n"); n != 5 {
		t.Errorf("RatioTable has %d lines, want 5 (header, separator, three servers):\n%s", n, got)
	}

	svg := RatioSVG("large", rs, names, Case{Name: "large"}, 16)
	dec := xml.NewDecoder(strings.NewReader(svg))
	circles := 0
	for {
		tok, err := dec.Token()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("RatioSVG is not well-formed XML: %v\n%s", err, svg)
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "circle" {
			circles++
		}
	}
	// Two servers with runs × six metrics; 1.34.4 has none.
	if circles != 2*len(RatioMetrics) {
		t.Errorf("RatioSVG has %d points, want %d", circles, 2*len(RatioMetrics))
	}
	for _, want := range []string{">1.32.13<", ">WatchListCompression=false<", ">0.001×<", ">1×<", ">bytes on the wire<"} {
		if !strings.Contains(svg, want) {
			t.Errorf("RatioSVG lacks %q", want)
		}
	}
}

func TestRatioCellFloor(t *testing.T) {
	for _, tc := range []struct {
		s, l []float64
		want string
	}{
		{[]float64{0, 2}, []float64{0.1}, "both ≈0"}, // GC slack on both sides: no ratio
		{[]float64{583}, []float64{0}, "LIST ≈0"},    // streaming grew, LIST→WATCH did not
		{[]float64{10}, []float64{1700}, "0.006×"},
		{nil, []float64{1}, "n/a"},
	} {
		if got := RatioCell(Summarize(tc.s), Summarize(tc.l), APIMem); got != tc.want {
			t.Errorf("RatioCell(%v, %v) = %q, want %q", tc.s, tc.l, got, tc.want)
		}
	}
	if got := RatioCell(Summarize([]float64{1}), Summarize([]float64{4}), APIPeak); got != "0.25×" {
		t.Errorf("a metric without a floor: %q, want 0.25×", got)
	}
}

func TestHeadlineNamesEveryServer(t *testing.T) {
	var rs []Result
	rs = append(rs, serverResults("1.32.13", "secrets", 16, List, 5000)...)
	rs = append(rs, serverResults("1.32.13", "secrets", 16, Streaming, 50)...)
	rs = append(rs, serverResults("1.37.2", "secrets", 16, List, 1000)...)
	rs = append(rs, serverResults("1.37.2", "secrets", 16, Streaming, 900)...)
	rep := Report{Results: rs, Ks: []int{1, 4}, Cases: []Case{{Name: "secrets", Ks: []int{16}}}, Servers: []ServerInfo{{Name: "1.32.13"}, {Name: "1.37.2"}}}
	got := Headline(rep)
	for _, want := range []string{"**secrets** at K=16", "1.32.13 0.066× (+5000 / +50 MiB)", "1.37.2 0.92× (+1000 / +900 MiB)"} {
		if !strings.Contains(got, want) {
			t.Errorf("Headline lacks %q: %s", want, got)
		}
	}
}

func TestFallbacks(t *testing.T) {
	var rs []Result
	rs = append(rs, serverResults("1.33.13", "large", 4, List, 100)...)      // 8 requests
	rs = append(rs, serverResults("1.33.13", "large", 4, Streaming, 100)...) // 8 requests: refused, then LIST→WATCH
	rs[len(rs)-1].Requests = 12
	rs = append(rs, serverResults("1.37.2", "large", 4, Streaming, 1)...)
	rs[len(rs)-1].Requests = 4
	got := Fallbacks(Report{Results: rs, Servers: []ServerInfo{{Name: "1.33.13"}, {Name: "1.37.2"}}})
	if len(got) != 1 || !strings.Contains(got[0], "kube-apiserver 1.33.13 the streaming runs made 3 requests per informer") {
		t.Errorf("Fallbacks = %q; want one note, for 1.33.13 (3 requests per informer)", got)
	}
}

func TestUpgradeOneServerResults(t *testing.T) {
	// A results.json of a run before the server axis: no Servers, no Result.Server.
	old := []byte(`{"Versions":{"APIServer":"v1.32.13","Etcd":"3.5.16","ClientGo":"v0.32.13"},"Ks":[16],"Cases":[{"Name":"large","Objects":200,"Size":524288}],
		"Results":[{"case":"large","k":16,"mode":"list","apiBaseline":1,"apiPeakHWM":2}],"Seeding":{"large":3100000000}}`)
	var rep Report
	if err := json.Unmarshal(old, &rep); err != nil {
		t.Fatal(err)
	}
	rep.upgrade()
	if len(rep.Servers) != 1 || rep.Servers[0].Name != "1.32.13" || rep.Servers[0].Etcd != "3.5.16" || rep.Results[0].Server != "1.32.13" || rep.Seeding["1.32.13 large"] == 0 {
		t.Errorf("upgrade: servers %+v, result server %q, seeding %v", rep.Servers, rep.Results[0].Server, rep.Seeding)
	}
}

func TestNiceCeil(t *testing.T) {
	for in, want := range map[float64]float64{0: 1, 0.7: 1, 1: 1, 1.2: 2, 2.3: 2.5, 2400: 2500, 2600: 5000, 9000: 10000} {
		if got := niceCeil(in); math.Abs(got-want) > 1e-9 {
			t.Errorf("niceCeil(%v) = %v, want %v", in, got, want)
		}
	}
}

func TestGuard(t *testing.T) {
	large := Load{Case: "large", Noun: "ConfigMaps", Objects: 200, Size: 512 << 10, K: 16}
	if got, want := Estimate(large, 6), int64(200*(514<<10)*16*6); got != want {
		t.Errorf("Estimate = %d, want %d", got, want)
	}
	if err := Guard([]Load{large}, 6, 24<<30); err != nil {
		t.Errorf("Guard refused the default large case with 24 GiB available: %v", err)
	}
	err := Guard([]Load{{Case: "small", Objects: 1, Size: 1, K: 1}, large}, 6, 4<<30)
	if err == nil {
		t.Fatal("Guard let the large case run with 4 GiB available")
	}
	for _, want := range []string{"case large", "9.4 GiB", "200 ConfigMaps × 512 KiB × 16 informers", "4.0 GiB available"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("Guard's message %q lacks %q", err, want)
		}
	}
}

func TestMemAvailable(t *testing.T) {
	got, err := MemAvailable(strings.NewReader("MemTotal:       24576000 kB\nMemFree:         1000 kB\nMemAvailable:   23526440 kB\n"))
	if err != nil || got != 23526440<<10 {
		t.Errorf("MemAvailable = %d, %v; want %d", got, err, int64(23526440)<<10)
	}
	if _, err := MemAvailable(strings.NewReader("MemTotal: 1 kB\n")); err == nil {
		t.Error("MemAvailable without the line: no error")
	}
}

func TestCPUModel(t *testing.T) {
	if got := cpuModel(strings.NewReader("processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7B13\n")); got != "AMD EPYC 7B13" {
		t.Errorf("cpuModel = %q", got)
	}
}

func TestFromRecords(t *testing.T) {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	setups := []record.Record{
		{Kind: record.Setup, Step: record.StepClientGo, Time: t0.Add(-time.Second)},
		{Kind: record.Setup, Step: record.StepServer, Time: t0},
		{Kind: record.Setup, Tag: "B", Step: record.StepSynced, Time: t0.Add(1500 * time.Millisecond), Stats: &record.Stats{Requests: 2, Bytes: 300, WireBytes: 100}},
		{Kind: record.Setup, Tag: "A", Step: record.StepSynced, Time: t0.Add(900 * time.Millisecond), Stats: &record.Stats{Requests: 1, Bytes: 200}}, // not compressed: wire = bytes
	}
	var r Result
	if err := fromRecords(&r, setups, []string{"A", "B"}); err != nil {
		t.Fatal(err)
	}
	if r.SyncMillis != 1500 || r.Requests != 3 || r.Bytes != 500 || r.WireBytes != 300 {
		t.Errorf("fromRecords: sync %v ms, %d requests, %d bytes, %d on the wire; want 1500 ms (server to the last synced), 3, 500, 300", r.SyncMillis, r.Requests, r.Bytes, r.WireBytes)
	}
	if err := fromRecords(&Result{}, setups, []string{"A", "B", "C"}); err == nil || !strings.Contains(err.Error(), "informer C") {
		t.Errorf("fromRecords with C missing: %v, want an error naming C", err)
	}
}

func TestParseFlagsQuick(t *testing.T) {
	o, err := parseFlags([]string{"-quick", "-repeats", "2", "-root", "/r"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.large.Objects != 50 || o.small.Objects != 4000 || len(o.ks) != 2 || o.repeats != 2 || o.secrets.Objects != 40 || len(o.servers) != 1 {
		t.Errorf("-quick -repeats 2: large %d, small %d, secrets %d, ks %v, repeats %d, servers %v; want 50, 4000, 40, [1 8], 2 (explicit flags win), one server", o.large.Objects, o.small.Objects, o.secrets.Objects, o.ks, o.repeats, o.servers)
	}
	o, err = parseFlags([]string{"-root", "/r"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range o.servers {
		names = append(names, s.Name())
	}
	if got := strings.Join(names, ","); got != "1.32.13,1.33.13,1.33.13 WatchList=true,1.34.4,1.37.2,1.37.2 WatchListCompression=false" {
		t.Errorf("default servers %s", got)
	}
	if cs, _ := o.selected(); len(cs) != 3 || cs[2].Resource != record.ResourceSecrets || cs[2].Runs(o.ks)[0] != 16 || cs[2].Size != 760000 || cs[2].Objects != 400 {
		t.Errorf("default cases %+v: want large, small and 400 Secrets × 760000 bytes at K=16", cs)
	}
	for _, args := range [][]string{{"-k", "0"}, {"-k", "27"}, {"-large-kib", "1024"}, {"-cases", "huge"}, {"-repeats", "0"},
		{"-servers", "1.37"}, {"-servers", ""}, {"-secrets-bytes", "2000000"}, {"-secrets-k", "0"},
		{"-servers", "1.32.13:upgrade=1.33.13"}, {"-servers", "1.34.4:aggregated=0.33.5"}} {
		if _, err := parseFlags(append(args, "-root", "/r"), io.Discard); err == nil {
			t.Errorf("parseFlags(%v): no error", args)
		}
	}
}

// -overhead-only is the small case on the first server; with what would measure or write more,
// it is refused.
func TestParseFlagsOverheadOnly(t *testing.T) {
	o, err := parseFlags([]string{"-overhead-only", "-servers", "1.32.13,1.37.2", "-root", "/r"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if cs, _ := o.selected(); len(cs) != 1 || cs[0].Name != "small" || len(o.servers) != 1 || o.servers[0].Name() != "1.32.13" {
		t.Errorf("-overhead-only: cases %+v, servers %v; want small on 1.32.13", cs, o.servers)
	}
	for _, args := range [][]string{{"-overhead-only", "-overhead=false"}, {"-overhead-only", "-cases", "large"}} {
		if _, err := parseFlags(append(args, "-root", "/r"), io.Discard); err == nil {
			t.Errorf("parseFlags(%v): no error", args)
		}
	}
}

// -overhead-only -docs puts its point into docs/bench.md's run in place of that run's own, and
// the page says where it comes from; a point that is not the page's is refused, the page kept.
func TestMergeOverhead(t *testing.T) {
	point := func(server string, k int, ms float64) []Result {
		var rs []Result
		for i, logged := range []bool{false, true} {
			rs = append(rs, Result{Server: server, Case: overheadCase, K: k, Mode: Streaming, Logged: logged, Rep: 1, SyncMillis: ms * float64(i+1)})
		}
		return rs
	}
	small := Case{Name: "small", Objects: 20000, Size: 1024}
	page := Report{Servers: []ServerInfo{{Name: "1.32.13"}}, Cases: []Case{small}, Ks: []int{1, 16},
		Results: append([]Result{{Server: "1.32.13", Case: "small", K: 16, Mode: Streaming, Rep: 1, SyncMillis: 5000}}, point("1.32.13", 16, 4000)...)}
	path := filepath.Join(t.TempDir(), DocsResults)
	if err := writeJSON(path, &page); err != nil {
		t.Fatal(err)
	}
	started := time.Date(2026, 12, 5, 18, 40, 0, 0, time.UTC)
	run := Report{Started: started, Finished: started.Add(150 * time.Second), Servers: page.Servers, Cases: []Case{small}, Ks: []int{16},
		Args: []string{"-overhead-only", "-docs"}, Versions: Versions{ClientGo: "v0.32.13"}, Results: point("1.32.13", 16, 10000)}
	merged, err := mergeOverhead(path, run)
	if err != nil {
		t.Fatal(err)
	}
	if len(merged.Results) != 3 || merged.Results[0].Case != "small" || merged.Results[1].SyncMillis != 10000 || merged.Results[2].SyncMillis != 20000 {
		t.Errorf("merged results: %+v; want the page's small run and the new point alone", merged.Results)
	}
	doc := Doc(merged, allFiles)
	for _, want := range []string{"measured on its own after the runs above: `make bench ARGS=\"-overhead-only -docs\"` on 2026-12-05 18:40 UTC took 2m30s", "| time until every informer synced (s) | 10.00", "2.00×"} {
		if !strings.Contains(doc, want) {
			t.Errorf("docs/bench.md does not say %q:\n%s", want, doc)
		}
	}
	run.Results = point("1.37.2", 16, 10000)
	if _, err := mergeOverhead(path, run); !cli.IsUsage(err) || !strings.Contains(err.Error(), "kube-apiserver 1.37.2, K=16") {
		t.Errorf("a point on another server: %v; want a usage error naming both points", err)
	}
	if _, err := mergeOverhead(filepath.Join(t.TempDir(), DocsResults), run); err == nil || !strings.Contains(err.Error(), `make bench ARGS="-cases all -docs"`) {
		t.Errorf("no docs results: %v; want an error saying how to write them", err)
	}
}

// A run of the overhead point alone prints that point, not tables of the runs it did not make.
func TestTerminalOverheadOnly(t *testing.T) {
	var results []Result
	for i, logged := range []bool{false, true, false, true} {
		results = append(results, Result{Server: "1.32.13", Case: "small-overhead", K: 16, Mode: Streaming, Logged: logged, Rep: i/2 + 1, SyncMillis: map[bool]float64{false: 6000, true: 8400}[logged]})
	}
	out := Terminal(Report{Servers: []ServerInfo{{Name: "1.32.13"}}, Cases: []Case{{Name: "small", Objects: 20000, Size: 1024}}, Ks: []int{16}, Results: results})
	if !strings.Contains(out, "| time until every informer synced (s) | 6.00") || !strings.Contains(out, "1.40×") ||
		strings.Contains(out, "== kube-apiserver") || strings.Contains(out, "streaming/LIST→WATCH") {
		t.Errorf("Terminal of an -overhead-only run:\n%s", out)
	}
}

// TestDocsAreTheirResults: docs/bench.md, docs/bench-servers.md, docs/encodings.md,
// docs/writes.md, docs/pods.md and docs/links.md, and their plots are what this build renders
// from the real runs' results, kept beside them (written by make bench ARGS="-cases all -docs",
// ARGS=-docs and ARGS="-cases X -docs").
func TestDocsAreTheirResults(t *testing.T) {
	docs := filepath.Join("..", "..", "..", "docs")
	for _, results := range []string{DocsResults, "bench-servers-results.json", "encodings-results.json", "writes-results.json", linksResults, podsResults} {
		raw, err := os.ReadFile(filepath.Join(docs, results))
		if err != nil {
			t.Fatal(err)
		}
		var rep Report
		if err := json.Unmarshal(raw, &rep); err != nil {
			t.Fatal(err)
		}
		rep.upgrade()
		if len(rep.Servers) < 2 || len(rep.Results) == 0 || rep.Quick {
			t.Fatalf("docs/%s: %d servers, %d results, quick %v: not a full run", results, len(rep.Servers), len(rep.Results), rep.Quick)
		}
		f := docFiles(rep.Cases)
		if f.results != results {
			t.Fatalf("docs/%s holds a run whose page keeps its results in %s", results, f.results)
		}
		want := map[string]string{}
		addPage(want, docs, rep, f)
		for path, text := range want {
			name := filepath.Base(path)
			got, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			if string(got) != text {
				t.Errorf("docs/%s is not what docs/%s renders: run make bench ARGS=\"-docs -from <its run directory>\" (or a new run)", name, results)
			}
		}
		// Spot checks against the runs themselves: every writes run's informers got every write
		// (README and HOW-IT-WORKS say no event was lost); 16 informers on 1.32.13 each took the
		// whole Secrets collection, and LIST→WATCH made two requests per informer; every encoding
		// case's informers got their bodies in its encoding alone.
		for _, r := range rep.Results {
			if len(r.Problems) > 0 { // a writes run whose informer missed a write: the page would say so
				t.Errorf("docs/%s: %s run %d on %s: %s", results, r.Case, r.Rep, r.Server, r.Problems[0])
			}
			if r.Server == "1.32.13" && r.Case == "secrets" && r.K == 16 && r.Mode == List && (r.Bytes < 16*400*760000 || r.Requests < 16) {
				t.Errorf("1.32.13 secrets LIST→WATCH run %d: %d bytes, %d requests", r.Rep, r.Bytes, r.Requests)
			}
			for _, c := range rep.Cases {
				if c.Name == r.Case && c.Encoding != "" {
					if err := c.checkEncoding(r.ContentTypes); err != nil {
						t.Errorf("docs/%s: %s run %d on %s: %v", results, r.Case, r.Rep, r.Server, err)
					}
				}
			}
		}
	}
}

// Where /proc is missing, make bench says so in one line (exit 2) instead of measuring zeros.
func TestMeasuredOnLinuxOnly(t *testing.T) {
	if err := measurable("linux", "arm64"); err != nil {
		t.Errorf("linux: %v", err)
	}
	err := measurable("darwin", "arm64")
	if err == nil || !cli.IsUsage(err) || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "Linux only, and this is darwin/arm64") {
		t.Errorf("darwin: %v; want one usage line that names the system", err)
	}
}
