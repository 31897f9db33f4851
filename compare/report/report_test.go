package report

import (
	"bytes"
	"encoding/xml"
	"errors"
	"html"
	"io"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"informer-lab/compare/analysis"
	"informer-lab/compare/internal/synth"
	"informer-lab/record"
)

// arrowTag matches the opening tag of one sequence-diagram arrow.
var arrowTag = regexp.MustCompile(`<g class="arrow[^"]*" data-lab="([^"]*)" data-tag="([^"]*)"`)

// render loads a saved run and renders its page.
func render(t *testing.T, dir string) (string, *analysis.Run, *analysis.Report) {
	t.Helper()
	run, err := analysis.LoadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	rep := analysis.Analyze(run)
	var buf bytes.Buffer
	if err := Write(&buf, run, rep); err != nil {
		t.Fatal(err)
	}
	return buf.String(), run, rep
}

func TestWrite(t *testing.T) {
	tests := []struct {
		run    string
		arrows map[string]int // per lab: initial-phase HTTP + LIST + WATCH-EVENT records
	}{
		// A and B: LIST request, LIST body, WATCH request | STREAM request, 3 ADDED, end BOOKMARK.
		{"synthetic", map[string]int{"client-v031": 6, "client-v032": 10}},
		// The same with 5 ConfigMaps (3 seeds + 2 of the apiserver's own).
		{"real-v1.32.13", map[string]int{"client-v031": 6, "client-v032": 14}},
	}
	for _, tt := range tests {
		t.Run(tt.run, func(t *testing.T) {
			page, run, rep := render(t, filepath.Join("..", "testdata", "runs", tt.run))

			got := map[string]int{}
			for _, m := range arrowTag.FindAllStringSubmatch(page, -1) {
				got[m[1]]++
			}
			for _, lab := range run.Labs {
				if n := arrowsInRecords(lab.Records); got[lab.Name] != n || n != tt.arrows[lab.Name] {
					t.Errorf("%s: %d arrows on the page, %d initial-phase HTTP/LIST/WATCH-EVENT records; want both %d",
						lab.Name, got[lab.Name], n, tt.arrows[lab.Name])
				}
			}
			text := html.UnescapeString(page)
			for _, want := range []string{"VERDICT: holds", rep.Conclusion(), `<span class="add">+[HTTP][A] GET /api/v1/configmaps?allowWatchBookmarks=true`,
				`<span class="del">-[HTTP][A] GET /api/v1/configmaps?limit=500&resourceVersion=0`, "identical (", ">GET ?limit=500&resourceVersion=0</text>"} {
				if !strings.Contains(text, want) {
					t.Errorf("page lacks %q", want)
				}
			}
			if n, want := strings.Count(page, `<circle class="event`), len(rep.Writes)*4; n != want {
				t.Errorf("timeline: %d event dots, want %d (%d writes × 4 watchers)", n, want, len(rep.Writes))
			}
			checkSelfContained(t, page)
			checkWellFormed(t, page)
		})
	}
}

// sequenceTag matches a sequence diagram's opening tag: its own lab and the labs it stands for.
var sequenceTag = regexp.MustCompile(`<svg class="sequence" data-lab="([^"]*)" data-labs="([^"]*)"`)

// Seven labs (make compare, synthetic and recorded) and the twelve cells of recorded matrix runs:
// one verdict row per lab, one diagram per distinct initial sync, every lab in exactly one of them.
func TestWriteManyLabs(t *testing.T) {
	seven := t.TempDir()
	if err := sevenLabs().WriteDir(seven); err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name, dir string
		diagrams  []string // each diagram's labs; nil: only check every lab is in one
	}{
		{"seven labs", seven, []string{"client-v031 client-v033 client-v034", "client-v032 client-v035 client-v036 client-v037"}},
		{"real-v1.32.13-seven-labs", filepath.Join("..", "testdata", "runs", "real-v1.32.13-seven-labs"),
			[]string{"client-v031 client-v033 client-v034", "client-v032 client-v035 client-v036 client-v037"}},
		{"real-matrix-direct-list-1.34.4", filepath.Join("..", "testdata", "runs", "real-matrix-direct-list-1.34.4"), nil},
		{"real-matrix-expired-1.33.13", filepath.Join("..", "testdata", "runs", "real-matrix-expired-1.33.13"), nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			page, run, rep := render(t, tt.dir)
			verdict, _, _ := strings.Cut(page[strings.Index(page, `<table class="verdict-table">`):], "</table>")
			_, body, _ := strings.Cut(verdict, "<tbody>")
			if n := strings.Count(body, "<tr>"); n != len(rep.Labs) {
				t.Errorf("want one verdict row per lab (%d), got %d", len(rep.Labs), n)
			}
			if n := strings.Count(verdict, "<thead><tr><th>lab</th>"); n != 1 {
				t.Errorf("want the verdict table with labs as rows (a \"lab\" column), got %d", n)
			}
			seen := map[string]int{}
			var groups []string
			arrows := map[string]int{}
			for _, m := range arrowTag.FindAllStringSubmatch(page, -1) {
				arrows[m[1]]++
			}
			for _, m := range sequenceTag.FindAllStringSubmatch(page, -1) {
				groups = append(groups, m[2])
				for _, l := range strings.Fields(m[2]) {
					seen[l]++
				}
				if !strings.HasPrefix(m[2], m[1]) {
					t.Errorf("want a diagram drawn from its first lab, got %s for %q", m[1], m[2])
				}
			}
			for _, lab := range run.Labs {
				if seen[lab.Name] != 1 {
					t.Errorf("%s: in %d diagrams, want 1 (diagrams: %q)", lab.Name, seen[lab.Name], groups)
				}
				first := slices.ContainsFunc(groups, func(g string) bool { return strings.Fields(g)[0] == lab.Name })
				if n := arrowsInRecords(lab.Records); first && arrows[lab.Name] != n {
					t.Errorf("%s: %d arrows, want %d (its initial-phase records)", lab.Name, arrows[lab.Name], n)
				} else if !first && arrows[lab.Name] != 0 {
					t.Errorf("%s: shares a diagram drawn from another lab's log, want no arrows of its own, got %d", lab.Name, arrows[lab.Name])
				}
			}
			if tt.diagrams != nil && strings.Join(groups, "|") != strings.Join(tt.diagrams, "|") {
				t.Errorf("want diagrams %q, got %q", tt.diagrams, groups)
			}
			if len(groups) >= len(run.Labs) {
				t.Errorf("want fewer diagrams than labs (%d), got %d", len(run.Labs), len(groups))
			}
			checkWellFormed(t, page)
		})
	}
}

// sevenLabs is make compare's run of seven labs, synthetic: three LIST→WATCH, four streaming.
func sevenLabs() *synth.Run {
	var labs []synth.Lab
	for _, l := range []struct{ name, clientGo, gate string }{
		{"client-v031", "v0.31.14", "off"}, {"client-v032", "v0.32.13", "on"}, {"client-v033", "v0.33.13", "off"},
		{"client-v034", "v0.34.13", "off"}, {"client-v035", "v0.35.10", "on"}, {"client-v036", "v0.36.6", "on"},
		{"client-v037", "v0.37.2", "on"},
	} {
		shape := synth.ListWatch
		if l.gate == "on" {
			shape = synth.Stream
		}
		labs = append(labs, synth.Lab{Name: l.name, ClientGo: l.clientGo, Gate: l.gate, GateHow: "client-go default", Shape: shape})
	}
	r := synth.New("", "v1.32.13", "", labs...)
	r.Writes(8)
	r.Stop()
	return r
}

// What the informers received until they synced, and how it was encoded, is on the page: the
// verdict's column and footnote, the full table's rows, and the arrows of the responses that
// came gzipped (a LIST on 1.32, a watch-list stream on 1.37) with their bodies' sizes on hover.
func TestWriteReceived(t *testing.T) {
	r := synth.New("", "v1.32.13", "",
		synth.Lab{Name: "client-v031", ClientGo: "v0.31.14", Gate: "off", GateHow: "client-go default", Shape: synth.ListWatch},
		synth.Lab{Name: "client-v037", ClientGo: "v0.37.2", Gate: "on", GateHow: "client-go default", Shape: synth.Stream})
	r.Received("client-v031", "", 310<<10, 1229<<10, record.TokenList)
	r.Received("client-v037", "", 1130, 2085, record.TokenStream)
	r.Writes(2)
	r.Stop()
	dir := t.TempDir()
	if err := r.WriteDir(dir); err != nil {
		t.Fatal(err)
	}
	page, _, _ := render(t, dir)
	text := html.UnescapeString(page)
	for _, want := range []string{
		"<th>received<br/>to sync</th>",
		"<td>1.2 MiB<sup>[1]</sup></td>", "<td>2.0 KiB<sup>[2]</sup></td>",
		"Content-Encoding until sync: gzip for the LIST; none for the WATCH (310 KiB on the wire, 1.2 MiB decoded)",
		"Content-Encoding until sync: gzip for the STREAM (1.1 KiB on the wire, 2.0 KiB decoded)",
		"<th>received until sync</th><td>1258496 B decoded, 317440 B on the wire (2 req)</td>",
		">GET ?limit=500&resourceVersion=0 → gzip</text>",                                                    // the LIST's arrow
		"&resourceVersionMatch=NotOlderThan&sendInitial… → gzip</text>",                                      // the stream's, its query cut, its answer kept
		"items=3 [seed-cm-0 seed-cm-1 seed-cm-2] (body 310 KiB on the wire, 1.2 MiB decoded)</title>",        // the LIST body's hover
		" (stream up to here 1.1 KiB on the wire, 2.0 KiB decoded)</title>",                                  // the end bookmark's
		"-[HTTP][A] GET /api/v1/configmaps?limit=500&resourceVersion=0 -> 200 application/json gzip (accept", // the diff's lines
	} {
		if !strings.Contains(text, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	checkWellFormed(t, page)
}

// A watcher that missed a write: the page says the verdict fails and marks the missing event.
func TestWriteFails(t *testing.T) {
	run, err := analysis.LoadRun(filepath.Join("..", "testdata", "runs", "synthetic"))
	if err != nil {
		t.Fatal(err)
	}
	lab := run.Labs[1]
	_, steady := analysis.SplitPhases(lab.Records)
	var dropped string
	for i := len(lab.Records) - len(steady); i < len(lab.Records); i++ {
		if r := lab.Records[i]; r.Kind == record.WatchEvent && r.Tag == "B" {
			dropped = r.RV
			lab.Records = append(lab.Records[:i], lab.Records[i+1:]...)
			break
		}
	}
	rep := analysis.Analyze(run)
	var buf bytes.Buffer
	if err := Write(&buf, run, rep); err != nil {
		t.Fatal(err)
	}
	page := buf.String()
	for _, want := range []string{"VERDICT: fails (", `class="verdict fails"`, "missing: no event with rv=" + dropped, rep.Failures[0]} {
		if !strings.Contains(html.UnescapeString(page), want) {
			t.Errorf("page lacks %q", want)
		}
	}
	checkWellFormed(t, page)
}

// arrowsInRecords counts what the diagram must draw, from the records alone.
func arrowsInRecords(recs []record.Record) int {
	initial, _ := analysis.SplitPhases(recs)
	n := 0
	for _, r := range initial {
		if r.Kind == record.HTTP || r.Kind == record.List || r.Kind == record.WatchEvent {
			n++
		}
	}
	return n
}

// checkSelfContained fails on anything a browser would fetch from the network.
func checkSelfContained(t *testing.T, page string) {
	t.Helper()
	external := regexp.MustCompile(`(?i)<script[^>]*\ssrc=|<link[^>]*\shref=|@import|url\(\s*['"]?(https?:)?//|(src|href)=["']?(https?:)?//|https?://`)
	if m := external.FindString(page); m != "" {
		t.Errorf("page refers to an external resource: %q", m)
	}
}

// checkWellFormed parses the page as XML: every element closed and nested, every entity known.
func checkWellFormed(t *testing.T, page string) {
	t.Helper()
	d := xml.NewDecoder(strings.NewReader(page))
	d.Strict, d.Entity = true, xml.HTMLEntity
	for {
		_, err := d.Token()
		if errors.Is(err, io.EOF) {
			return
		}
		if err != nil {
			line, _ := d.InputPos()
			t.Fatalf("page is not well-formed at line %d: %v\n%s", line, err, strings.Split(page, "\n")[line-1])
		}
	}
}

func TestFit(t *testing.T) {
	for _, tt := range []struct {
		s     string
		width float64
		want  string
	}{
		{"short", 100, "short"},
		{"abcdefghij", 5 * charW, "abcd…"},
		{"abc", 0, "abc"},
		{"WATCH ?abcdefghij → gzip", 16 * charW, "WATCH ?a… → gzip"}, // the answer kept whole
	} {
		if got := fit(tt.s, tt.width); got != tt.want {
			t.Errorf("fit(%q, %v) = %q, want %q", tt.s, tt.width, got, tt.want)
		}
	}
}
