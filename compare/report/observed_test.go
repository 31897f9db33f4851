package report

import (
	"bytes"
	"fmt"
	"html"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"informer-lab/compare/observed"
	"informer-lab/record"
)

// renderObserved loads an observed log and renders its page.
func renderObserved(t *testing.T, path string) (string, *observed.Report) {
	t.Helper()
	obs, err := observed.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	rep := observed.Analyze(obs)
	var buf bytes.Buffer
	if err := WriteObserved(&buf, obs, rep); err != nil {
		t.Fatal(err)
	}
	return buf.String(), rep
}

// syncedMark matches a diagram's synced mark and its hover text.
var syncedMark = regexp.MustCompile(`<g class="synced" data-lab="([^"]*)" data-tag="([^"]*)"><title>([^<]*)</title>`)

// The labs of compare/testdata/runs/real-v1.32.13 seen through the proxy (observed/testdata says
// how the log was derived): client-v031's informers LIST→WATCH, client-v032's stream.
func TestWriteObservedRealRun(t *testing.T) {
	page, rep := renderObserved(t, filepath.Join("..", "observed", "testdata", "real-v1.32.13.jsonl"))
	arrows := map[string]int{}
	for _, m := range arrowTag.FindAllStringSubmatch(page, -1) {
		arrows[m[1]+" "+m[2]]++
	}
	// LIST request, LIST body, WATCH request | STREAM request, 5 ADDED, end BOOKMARK.
	want := map[string]int{"client-v031-A configmaps": 3, "client-v031-B configmaps": 3, "client-v032-A configmaps": 7, "client-v032-B configmaps": 7}
	if fmt.Sprint(arrows) != fmt.Sprint(want) {
		t.Errorf("arrows per client and resource %v, want %v", arrows, want)
	}
	var diagrams []string
	for _, m := range sequenceTag.FindAllStringSubmatch(page, -1) {
		diagrams = append(diagrams, m[1])
	}
	slices.Sort(diagrams)
	if got := strings.Join(diagrams, " "); got != "client-v031-A client-v031-B client-v032-A client-v032-B" {
		t.Errorf("diagrams %q, want one per client", got)
	}
	marks := syncedMark.FindAllStringSubmatch(page, -1)
	if len(marks) != 4 {
		t.Errorf("%d synced marks, want one per client (4)", len(marks))
	}
	for _, m := range marks {
		how := observed.SyncListWatch
		if strings.HasPrefix(m[1], "client-v032") {
			how = observed.SyncStream
		}
		if want := "[SETUP][configmaps] synced: inferred from the wire: " + how; html.UnescapeString(m[3]) != want {
			t.Errorf("%s's synced mark says %q, want %q", m[1], html.UnescapeString(m[3]), want)
		}
	}
	text := html.UnescapeString(page)
	for _, want := range []string{
		observed.InferredNote,
		"<tr><th>client-v031-A</th><td>configmaps</td><td>LIST→WATCH (2 req)</td><td>none</td>",
		"<tr><th>client-v032-B</th><td>configmaps</td><td>STREAM (1 req)</td><td>none</td>",
		`<text x="70" y="21" text-anchor="middle">configmaps</text>`, // the lifeline is the resource
		rep.Relation(),
	} {
		if !strings.Contains(text, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	checkSelfContained(t, page)
	checkWellFormed(t, page)
}

// A namespace of 30 ConfigMaps streamed: the diagram draws 20 events and the end bookmark, and
// says how many it left out; a client of no resource has no diagram.
func TestWriteObservedCapsEvents(t *testing.T) {
	at := time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)
	var recs []record.Record
	add := func(r record.Record) {
		at = at.Add(time.Millisecond)
		r.Schema, r.Time = record.Schema, at
		recs = append(recs, r)
	}
	add(record.Record{Source: "ctl", Kind: record.Setup, Step: record.StepClient, Value: "ctl/v1", Detail: "connection 1 (127.0.0.1:1)"})
	add(record.Record{Source: "kubectl", Kind: record.Setup, Step: record.StepClient, Value: "kubectl/v1.34.1", Detail: "connection 2 (127.0.0.1:2)"})
	add(record.Record{Source: "kubectl", Kind: record.HTTP, Tag: record.TagNoResource, Method: "GET", Path: "/version", Status: 200})
	add(record.Record{Source: "ctl", Kind: record.HTTP, Tag: "configmaps", Method: "GET", Path: "/api/v1/configmaps",
		Query: "sendInitialEvents=true&watch=true&resourceVersionMatch=NotOlderThan", Status: 200, Encoding: "gzip"})
	for i := range 30 {
		add(record.Record{Source: "ctl", Kind: record.WatchEvent, Tag: "configmaps", Event: record.EventAdded, Name: fmt.Sprintf("cm-%d", i), RV: "1"})
	}
	add(record.Record{Source: "ctl", Kind: record.WatchEvent, Tag: "configmaps", Event: record.EventBookmark, RV: "30",
		Annotations: map[string]string{record.AnnotationInitialEventsEnd: "true", record.AnnotationBlueprint: "x"},
		Body:        &record.Body{Wire: 900, Decoded: 4000}})
	buf, err := record.MarshalLines(recs)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), observed.File)
	if err := os.WriteFile(path, buf, 0o644); err != nil {
		t.Fatal(err)
	}
	page, _ := renderObserved(t, path)
	if n := len(arrowTag.FindAllString(page, -1)); n != 1+maxDrawnEvents+1 {
		t.Errorf("%d arrows, want the STREAM, %d events and the end bookmark", n, maxDrawnEvents)
	}
	text := html.UnescapeString(page)
	for _, want := range []string{
		"10 more watch events not drawn",
		">WATCH ?resourceVersionMatch=NotOlderThan&sendInitialEvents=true → gzip</text>",
		"<td>STREAM (1 req)</td><td>none</td><td>- → - gzip<sup>[1]</sup></td><td>3.9 KiB<sup>[2]</sup></td><td>30A 1B</td>",
		"to sync: 900 B on the wire, 3.9 KiB decoded in 1 body",
		"1 non-resource request: GET /version (not drawn)",
		"no LIST or watch to draw",
	} {
		if !strings.Contains(text, want) {
			t.Errorf("page lacks %q", want)
		}
	}
	checkSelfContained(t, page)
	checkWellFormed(t, page)
}
