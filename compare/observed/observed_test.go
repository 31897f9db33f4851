package observed

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"informer-lab/compare/analysis"
	"informer-lab/record"
)

// wireLog builds an observed log record by record, a millisecond apart, as the proxy writes it.
type wireLog struct {
	t    time.Time
	recs []record.Record
}

func newLog() *wireLog { return &wireLog{t: time.Date(2026, 12, 1, 10, 0, 0, 0, time.UTC)} }

func (l *wireLog) add(r record.Record) *wireLog {
	l.t = l.t.Add(time.Millisecond)
	r.Schema, r.Time = record.Schema, l.t
	l.recs = append(l.recs, r)
	return l
}

// wait moves the clock on: the time a watch stays open.
func (l *wireLog) wait(d time.Duration) *wireLog { l.t = l.t.Add(d); return l }

func (l *wireLog) client(name, ua string) *wireLog {
	return l.add(record.Record{Source: name, Kind: record.Setup, Step: record.StepClient, Value: ua,
		Detail: "connection 1 (127.0.0.1:41234)"})
}

// get is a GET the proxy logged: Tag the path's resource, JSON both ways.
func (l *wireLog) get(src, path, query string, status int) *wireLog {
	return l.add(record.Record{Source: src, Kind: record.HTTP, Tag: record.ResourceOf(path), Method: "GET", Path: path,
		Query: query, Accept: "application/json", Status: status, ContentType: "application/json", Millis: 2})
}

func (l *wireLog) write(src, method, path string, status int) *wireLog {
	return l.add(record.Record{Source: src, Kind: record.HTTP, Tag: record.ResourceOf(path), Method: method, Path: path,
		Accept: "application/json", Status: status, ContentType: "application/json"})
}

// list is a LIST body of n objects; body nil leaves its size out.
func (l *wireLog) list(src, tag, rv string, n int, body *record.Body) *wireLog {
	items := make([]record.Item, n)
	for i := range items {
		items[i] = record.Item{Namespace: "default", Name: "cm-" + string(rune('a'+i)), RV: rv}
	}
	return l.add(record.Record{Source: src, Kind: record.List, Tag: tag, RV: rv, Items: items, Body: body})
}

func (l *wireLog) event(src, tag, event, rv string) *wireLog {
	return l.add(record.Record{Source: src, Kind: record.WatchEvent, Tag: tag, Event: event, Namespace: "default", Name: "cm-a", RV: rv})
}

func (l *wireLog) expired(src, tag string) *wireLog {
	return l.add(record.Record{Source: src, Kind: record.WatchEvent, Tag: tag, Event: record.EventError,
		Detail: `code=410 reason=Expired message="too old resource version: 105 (110)"`})
}

// endBookmark ends a stream's initial events; blueprint false leaves the list blueprint out.
func (l *wireLog) endBookmark(src, tag, rv string, blueprint bool, body *record.Body) *wireLog {
	ann := map[string]string{record.AnnotationInitialEventsEnd: "true"}
	if blueprint {
		ann[record.AnnotationBlueprint] = "azhzAAoTCgJ2MQ=="
	}
	return l.add(record.Record{Source: src, Kind: record.WatchEvent, Tag: tag, Event: record.EventBookmark, RV: rv, Annotations: ann, Body: body})
}

// file writes the log where Load reads it.
func (l *wireLog) file(t *testing.T) string {
	t.Helper()
	buf, err := record.MarshalLines(l.recs)
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), File)
	if err := os.WriteFile(path, buf, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// analyze loads the log from its file and analyzes it.
func (l *wireLog) analyze(t *testing.T) *Report {
	t.Helper()
	obs, err := Load(l.file(t))
	if err != nil {
		t.Fatal(err)
	}
	return Analyze(obs)
}

const (
	cms      = "/api/v1/namespaces/default/configmaps"
	listOpts = "limit=500"
	stream   = "allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&sendInitialEvents=true&timeoutSeconds=300&watch=true"
)

func watchFrom(rv string) string {
	return "allowWatchBookmarks=true&resourceVersion=" + rv + "&timeoutSeconds=300&watch=true"
}

// only is the one resource of the report's one client.
func only(t *testing.T, rep *Report) *Resource {
	t.Helper()
	if len(rep.Clients) != 1 || len(rep.Clients[0].Resources) != 1 {
		t.Fatalf("want one client of one resource, got %d clients: %+v", len(rep.Clients), rep.Clients)
	}
	return rep.Clients[0].Resources[0]
}

func TestHandshakes(t *testing.T) {
	body := &record.Body{Wire: 1500, Decoded: 1500}
	tests := []struct {
		name          string
		log           *wireLog
		label, syncBy string
		syncRV        string
		bytes, events string
		notes         []string // footnotes the table must have
	}{{
		// kubectl get configmaps -w: LIST ?limit=500, then WATCH from its rv.
		name: "list-watch",
		log: newLog().client("kubectl", "kubectl/v1.34.1 (linux/amd64) kubernetes/abcdef").
			get("kubectl", cms, listOpts, 200).list("kubectl", "configmaps", "100", 3, body).
			get("kubectl", cms, watchFrom("100"), 200).event("kubectl", "configmaps", record.EventModified, "101").
			event("kubectl", "configmaps", record.EventModified, "102"),
		label: "LIST→WATCH (2 req)", syncBy: SyncListWatch, syncRV: "100", bytes: "1.5 KiB", events: "2M",
	}, {
		name: "stream",
		log: newLog().client("client-v037", "client-v037/v0.0.0 informer/A").
			get("client-v037", cms, stream, 200).event("client-v037", "configmaps", record.EventAdded, "99").
			event("client-v037", "configmaps", record.EventAdded, "100").
			endBookmark("client-v037", "configmaps", "100", true, &record.Body{Wire: 2220, Decoded: 2220}),
		label: "STREAM (1 req)", syncBy: SyncStream, syncRV: "100", bytes: "2.2 KiB", events: "2A 1B",
	}, {
		// client gate on, server gate off: refused twice (client-go v0.31–v0.33 try again), then LIST→WATCH.
		name: "fallback-422",
		log: newLog().client("c", "c/v0.32").get("c", cms, stream, 422).get("c", cms, stream, 422).
			get("c", cms, "limit=500&resourceVersion=0", 200).list("c", "configmaps", "100", 1, body).
			get("c", cms, watchFrom("100"), 200),
		label: "STREAM→422→LIST→WATCH (4 req)", syncBy: SyncListWatch, syncRV: "100", bytes: "1.5 KiB", events: "-",
	}, {
		name:  "watch-only",
		log:   newLog().client("w", "w").get("w", cms, "watch=true", 200).event("w", "configmaps", record.EventAdded, "101"),
		label: "WATCH (1 req)", syncBy: SyncWatchOnly, bytes: "-", events: "1A",
		notes: []string{SyncWatchOnly},
	}, {
		// kubectl get configmaps: nothing to sync, the LIST is all.
		name:  "one-off",
		log:   newLog().client("kubectl", "kubectl").get("kubectl", cms, listOpts, 200).list("kubectl", "configmaps", "100", 2, body),
		label: "LIST (1 req)", syncBy: NoSyncOneOff, syncRV: "100", bytes: "1.5 KiB", events: "-",
		notes: []string{NoSyncOneOff},
	}, {
		// client-go v0.32 refuses an end bookmark without the list blueprint and lists instead.
		name: "blueprint-missing",
		log: newLog().client("c", "c").get("c", cms, stream, 200).event("c", "configmaps", record.EventAdded, "100").
			endBookmark("c", "configmaps", "100", false, body).
			get("c", cms, "resourceVersion=100&resourceVersionMatch=NotOlderThan", 200).list("c", "configmaps", "100", 1, body).
			get("c", cms, watchFrom("100"), 200),
		label: "STREAM→LIST→WATCH (3 req)", syncBy: SyncListWatch, syncRV: "100", bytes: "2.9 KiB", events: "1A 1B",
		notes: []string{"initial sync: the stream was given up for a LIST: blueprint annotation missing"},
	}, {
		// A log from before body sizes: the bytes are unknown, not zero.
		name: "no-sizes",
		log: newLog().client("c", "c").get("c", cms, listOpts, 200).list("c", "configmaps", "7", 1, nil).
			get("c", cms, watchFrom("7"), 200),
		label: "LIST→WATCH (2 req)", syncBy: SyncListWatch, syncRV: "7", bytes: "?", events: "-",
		notes: []string{"no body sizes in the log (written before they were recorded)"},
	}}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := tt.log.analyze(t)
			res := only(t, rep)
			h := res.Handshake
			if h.Label != tt.label || h.SyncBy != tt.syncBy || h.SyncRV != tt.syncRV {
				t.Errorf("handshake %q, sync point %q at rv %q; want %q, %q at rv %q", h.Label, h.SyncBy, h.SyncRV, tt.label, tt.syncBy, tt.syncRV)
			}
			if len(res.Problems) > 0 {
				t.Errorf("problems %q, want none", res.Problems)
			}
			row := rep.Table().Rows[0]
			if got := row[5].Text; got != tt.bytes {
				t.Errorf("bytes cell %q, want %q", got, tt.bytes)
			}
			if got := row[6].Text; got != tt.events {
				t.Errorf("events cell %q, want %q", got, tt.events)
			}
			checkNotes(t, rep.Table(), tt.notes)
			if rep.Relation() == "" {
				t.Error("no relation line")
			}
		})
	}
}

// checkNotes fails unless the table's footnotes include want.
func checkNotes(t *testing.T, v analysis.Verdict, want []string) {
	t.Helper()
	var have []string
	for _, n := range v.Notes {
		have = append(have, n.Text)
	}
	for _, w := range want {
		found := false
		for _, h := range have {
			found = found || h == w
		}
		if !found {
			t.Errorf("no footnote %q; have %q", w, have)
		}
	}
}

func TestWatchResumesFromList(t *testing.T) {
	rep := newLog().client("c", "c").get("c", cms, listOpts, 200).list("c", "configmaps", "100", 1, nil).
		get("c", cms, watchFrom("99"), 200).analyze(t)
	want := "initial sync: WATCH resumed from rv=99, LIST returned rv=100"
	if p := only(t, rep).Problems; len(p) != 1 || p[0] != want {
		t.Errorf("problems %q, want [%q]", p, want)
	}
	if got := rep.Relation(); !strings.HasPrefix(got, "WATCH resumes from its LIST's rv: NO: c configmaps: "+want) {
		t.Errorf("relation %q", got)
	}
	if row := rep.Table().Rows[0]; row[2].Mark() == "" {
		t.Errorf("handshake cell %q refers to no footnote", row[2])
	}
}

// A watch expires while the client is away: 410, then it lists again and watches from the new
// LIST's rv.
func TestReestablishedAfter410(t *testing.T) {
	l := newLog().client("c", "c").get("c", cms, listOpts, 200).list("c", "configmaps", "100", 1, nil).
		get("c", cms, watchFrom("100"), 200).event("c", "configmaps", record.EventModified, "105").
		wait(5*time.Second).get("c", cms, watchFrom("105"), 200).expired("c", "configmaps").
		get("c", cms, "resourceVersion=105", 200).list("c", "configmaps", "110", 1, nil).
		get("c", cms, watchFrom("111"), 200)
	rep := l.analyze(t)
	res := only(t, rep)
	if got, want := Sequence(res.Steps), "WATCH→410→LIST→WATCH (3 req)"; got != want {
		t.Errorf("after sync %q, want %q", got, want)
	}
	var whys []string
	for _, c := range res.Causes {
		whys = append(whys, c.Why)
	}
	if want := []string{CauseWatchEnded, CauseExpired, CauseRelist}; strings.Join(whys, "|") != strings.Join(want, "|") {
		t.Errorf("causes %q, want %q", whys, want)
	}
	if got := res.Causes[0].Detail; got != "5s after it opened, before its timeoutSeconds=300" {
		t.Errorf("first cause's detail %q", got)
	}
	if got, want := res.CauseSummary(), "WATCH: "+CauseWatchEnded+"; LIST: "+CauseExpired+"; WATCH: "+CauseRelist; got != want {
		t.Errorf("cause summary %q, want %q", got, want)
	}
	// The relist's watch skipped an rv: the same relation as the handshake's, checked again.
	if p := res.Problems; len(p) != 1 || !strings.HasSuffix(p[0], "WATCH resumed from rv=111, LIST returned rv=110") {
		t.Errorf("problems %q, want the relist's watch", p)
	}
	if h := res.Handshake; h.Label != "LIST→WATCH (2 req)" {
		t.Errorf("handshake %q: the requests after the sync point are not part of it", h.Label)
	}
}

func TestSequenceCountsRuns(t *testing.T) {
	steps := []analysis.Step{{Token: "WATCH", Request: true}, {Token: "WATCH", Request: true}, {Token: "WATCH", Request: true},
		{Token: "410"}, {Token: "STREAM(422)", Request: true}, {Token: "STREAM(422)", Request: true}, {Token: "LIST", Request: true}}
	if got, want := Sequence(steps), "WATCH×2→WATCH→410→STREAM(422)×2→LIST (6 req)"; got != want {
		t.Errorf("Sequence = %q, want %q", got, want)
	}
	if got := Sequence(nil); got != "none" {
		t.Errorf("Sequence(nil) = %q", got)
	}
}

// A LIST the server gzipped (1.32 compresses bodies above 128 KiB): bytes both ways.
func TestGzipBytes(t *testing.T) {
	l := newLog().client("c", "c")
	l.add(record.Record{Source: "c", Kind: record.HTTP, Tag: "configmaps", Method: "GET", Path: cms, Query: listOpts,
		Accept: "application/vnd.kubernetes.protobuf,application/json", Status: 200,
		ContentType: "application/vnd.kubernetes.protobuf", Encoding: "gzip"})
	l.list("c", "configmaps", "100", 3, &record.Body{Wire: 30_000, Decoded: 200_000})
	l.add(record.Record{Source: "c", Kind: record.HTTP, Tag: "configmaps", Method: "GET", Path: cms, Query: watchFrom("100"),
		Accept: "application/vnd.kubernetes.protobuf,application/json", Status: 200,
		ContentType: "application/vnd.kubernetes.protobuf;stream=watch"})
	rep := l.analyze(t)
	res := only(t, rep)
	if res.Synced.Wire != 30_000 || res.Synced.Decoded != 200_000 || res.Synced.Bodies != 1 {
		t.Errorf("bytes to sync %+v, want 30000 on the wire, 200000 decoded, 1 body", res.Synced)
	}
	row := rep.Table().Rows[0]
	if got, want := row[4].Text, "protobuf,json → protobuf gzip"; got != want {
		t.Errorf("content type cell %q, want %q", got, want)
	}
	if got, want := row[5].Text, "195 KiB"; got != want {
		t.Errorf("bytes cell %q, want %q", got, want)
	}
	checkNotes(t, rep.Table(), []string{"to sync: 29 KiB on the wire, 195 KiB decoded in 1 body",
		"Accept → content type: application/vnd.kubernetes.protobuf,application/json → application/vnd.kubernetes.protobuf; " +
			"application/vnd.kubernetes.protobuf,application/json → application/vnd.kubernetes.protobuf;stream=watch; encoded: gzip LIST"})
}

// Two clients at once, their records interleaved: each has its own handshake, and they are
// listed in the order of their first request, not of their SETUP records.
func TestInterleavedClients(t *testing.T) {
	l := newLog().client("client-v031-2", "client-v031/v0.31.14 informer/B").client("kubectl", "kubectl/v1.34.1")
	l.get("kubectl", "/api", "", 200).get("kubectl", "/apis", "", 200).get("kubectl", "/apis", "", 200)
	l.get("client-v031-2", "/apis/apps/v1/deployments", stream, 200)
	l.get("kubectl", cms, listOpts, 200)
	l.event("client-v031-2", "apps/deployments", record.EventAdded, "50")
	l.list("kubectl", "configmaps", "100", 2, nil)
	l.endBookmark("client-v031-2", "apps/deployments", "50", true, nil)
	l.get("kubectl", cms, watchFrom("100"), 200)
	l.write("kubectl", "PATCH", cms+"/cm-a", 200).get("kubectl", cms+"/cm-a", "", 200)
	rep := l.analyze(t)

	var got []string
	for _, c := range rep.Clients {
		for _, res := range c.Resources {
			got = append(got, c.Name+" "+res.Name+" "+res.Handshake.Label)
		}
	}
	want := []string{"kubectl configmaps LIST→WATCH (2 req)", "client-v031-2 apps/deployments STREAM (1 req)"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("rows %q, want %q", got, want)
	}
	k := rep.Clients[0]
	if got, want := k.NonResourceSummary(), "3 non-resource requests: GET /api, GET /apis ×2"; got != want {
		t.Errorf("non-resource summary %q, want %q", got, want)
	}
	if got, want := k.Resources[0].OtherSummary(), "2 other requests: PATCH "+cms+"/cm-a, GET "+cms+"/cm-a"; got != want {
		t.Errorf("other requests %q, want %q", got, want)
	}
	if n := len(k.Initial); n != 3 {
		t.Errorf("kubectl's initial records: %d, want 3 (LIST request, LIST body, WATCH)", n)
	}
	var text bytes.Buffer
	rep.WriteText(&text)
	for _, want := range []string{
		"kubectl: User-Agent kubectl/v1.34.1; connection 1 (127.0.0.1:41234)",
		"  3 non-resource requests: GET /api, GET /apis ×2",
		"  configmaps: 2 other requests: PATCH",
		"The sync point is inferred from the wire",
		"WATCH resumes from its LIST's rv: yes, in each of 1 LIST→WATCH handshake",
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
	checkWidth(t, text.String())
}

// A client that made only non-resource requests (kubectl version) still has its row.
func TestNonResourceOnly(t *testing.T) {
	rep := newLog().client("kubectl", "kubectl/v1.34.1").get("kubectl", "/version", "", 200).
		get("kubectl", "/openapi/v3", "", 403).analyze(t)
	c := rep.Clients[0]
	if len(c.Resources) != 0 || len(c.NonResource) != 2 {
		t.Fatalf("%d resources, %d non-resource requests; want 0 and 2", len(c.Resources), len(c.NonResource))
	}
	if got, want := c.NonResourceSummary(), "2 non-resource requests: GET /version, GET /openapi/v3 → 403"; got != want {
		t.Errorf("summary %q, want %q", got, want)
	}
	if rows := rep.Table().Rows; len(rows) != 1 || rows[0][0].Text != "kubectl" || rows[0][1].Text != "(none)" {
		t.Errorf("rows %v, want kubectl's one row without resource", rows)
	}
}

func TestDetail(t *testing.T) {
	rep := newLog().client("c", "c").get("c", cms, listOpts, 200).list("c", "configmaps", "100", 1, nil).
		get("c", cms, watchFrom("100"), 200).wait(time.Second).get("c", cms, watchFrom("100"), 200).analyze(t)
	var b bytes.Buffer
	rep.WriteDetail(&b)
	for _, want := range []string{
		"  initial sync: LIST→WATCH (2 req); sync point: " + SyncListWatch,
		"  after sync: WATCH (1 req)",
		"WATCH: the watch before it ended (1s after it opened, before its timeoutSeconds=300)",
		"  [HTTP][configmaps] GET " + cms + "?limit=500 -> 200 application/json (accept application/json)",
		"  [LIST][configmaps] initial LIST returned collection resourceVersion=100 items=1 [cm-a]",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("detail lacks %q:\n%s", want, b.String())
		}
	}
}

func checkWidth(t *testing.T, text string) {
	t.Helper()
	for _, line := range strings.Split(text, "\n") {
		if n := utf8.RuneCountInString(line); n > analysis.TermWidth {
			t.Errorf("line of %d columns, wider than %d: %q", n, analysis.TermWidth, line)
		}
	}
}

func TestLoadRefuses(t *testing.T) {
	dir := t.TempDir()
	write := func(name, content string) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	lab := filepath.Join("..", "testdata", "runs", "real-v1.32.13", "client-v031.jsonl")
	harness := filepath.Join("..", "testdata", "runs", "real-v1.32.13", "harness.jsonl")
	for name, tt := range map[string]struct{ path, want string }{
		"missing":  {filepath.Join(dir, "nope.jsonl"), "observed log: open " + filepath.Join(dir, "nope.jsonl") + ": no such file or directory"},
		"empty":    {write("empty.jsonl", "\n"), "empty: no records"},
		"not-json": {write("x.jsonl", "hello\n"), "not a JSON record"},
		"lab-log":  {lab, "record 4: HTTP record of \"client-v031\", which no SETUP client record introduced: not a log make observe wrote"},
		"harness":  {harness, "record 4: HTTP record of \"harness\", which no SETUP client record introduced"},
		"writer": {write("m.jsonl", `{"schema":1,"time":"2026-12-01T10:00:00Z","source":"c","kind":"SETUP","step":"client","value":"c"}`+"\n"+
			`{"schema":1,"time":"2026-12-01T10:00:01Z","source":"c","kind":"MUTATOR","event":"CREATE","name":"cm"}`+"\n"),
			"record 2: a MUTATOR record of \"c\": a lab's or the harness's log, not one make observe wrote"},
		"no-client": {write("s.jsonl", `{"schema":1,"time":"2026-12-01T10:00:00Z","source":"proxy","kind":"SETUP","step":"stopped"}`+"\n"),
			"no SETUP client record: not a log make observe wrote"},
	} {
		t.Run(name, func(t *testing.T) {
			_, err := Load(tt.path)
			if err == nil || !strings.Contains(err.Error(), tt.want) || strings.Contains(err.Error(), "\n") {
				t.Errorf("Load(%s) = %v, want one line with %q", tt.path, err, tt.want)
			}
		})
	}
}

func TestShortMedia(t *testing.T) {
	for in, want := range map[string]string{
		"application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json": "json;as=Table,json",
		"application/vnd.kubernetes.protobuf,application/json":                                                            "protobuf,json",
		"application/vnd.kubernetes.protobuf;stream=watch":                                                                "protobuf",
		"application/cbor-seq": "cbor-seq",
		"":                     "-",
	} {
		if got := shortMedia(in); got != want {
			t.Errorf("shortMedia(%q) = %q, want %q", in, got, want)
		}
	}
}
