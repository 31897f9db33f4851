package report

import (
	"bytes"
	"encoding/xml"
	"errors"
	"html"
	"io"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"informer-lab/compare/analysis"
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
	} {
		if got := fit(tt.s, tt.width); got != tt.want {
			t.Errorf("fit(%q, %v) = %q, want %q", tt.s, tt.width, got, tt.want)
		}
	}
}
