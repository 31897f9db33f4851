package analysis

import (
	"strings"
	"testing"

	"informer-lab/record"
)

func req(query string, status int) record.Record {
	return record.Record{Kind: record.HTTP, Tag: "A", Method: "GET", Path: "/api/v1/configmaps", Query: query, Status: status}
}

// TestVerdictForHandshakes runs whole synthetic runs through Analyze: the three shapes where the
// gates imply them hold, a shape the gates do not imply fails and the report says where.
func TestVerdictForHandshakes(t *testing.T) {
	tests := []struct {
		name        string
		serverGates string
		labs        []synthLab
		wantCode    int
		wantFailure string // a substring of the failures, when wantCode is 1
	}{
		{"off and on, server streams", "", synthLabs, 0, ""},
		{"fallback on WatchList=false", "WatchList=false", []synthLab{
			{"client-v031", "v0.31.14", "off", record.ShapeListWatch},
			{"client-v032", "v0.32.13", "on", record.ShapeFallback}}, 0, ""},
		{"gate on but LIST→WATCH", "", []synthLab{
			{"client-v031", "v0.31.14", "off", record.ShapeListWatch},
			{"client-v032", "v0.32.13", "on", record.ShapeListWatch}}, 1, "client-v032: A: expected STREAM, saw LIST→WATCH (2 req)"},
		{"stream although WatchList=false", "WatchList=false", []synthLab{
			{"client-v035", "v0.35.0", "on", record.ShapeStream}}, 1, "expected STREAM→422→LIST→WATCH, saw STREAM (1 req)"},
		{"no gate record", "", []synthLab{{"client-v031", "v0.31.14", "", record.ShapeListWatch}}, 1, "no SETUP gate record"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			rep := Analyze(runFrom(synthRun("v1.32.13", tt.serverGates, tt.labs, 3, 6), "v1.32.13", tt.serverGates))
			if got := rep.ExitCode(); got != tt.wantCode {
				t.Fatalf("want exit %d, got %d; failures: %q", tt.wantCode, got, rep.Failures)
			}
			if tt.wantFailure != "" && !strings.Contains(strings.Join(rep.Failures, "\n"), tt.wantFailure) {
				t.Errorf("want a failure containing %q, got %q", tt.wantFailure, rep.Failures)
			}
		})
	}
}

func TestHandshakeWatchMustResumeFromListRV(t *testing.T) {
	initial := []record.Record{
		req("limit=500&resourceVersion=0", 200),
		{Kind: record.List, Tag: "A", RV: "47"},
		req("allowWatchBookmarks=true&resourceVersion=46&watch=true", 200),
	}
	h := handshake("A", initial, record.ShapeListWatch)
	want := "A: WATCH resumed from rv=46, LIST returned rv=47"
	if len(h.Problems) != 1 || h.Problems[0] != want {
		t.Errorf("want problem %q, got %q", want, h.Problems)
	}
}

func TestHandshakeStreamNeedsEndBookmark(t *testing.T) {
	initial := []record.Record{
		req("allowWatchBookmarks=true&sendInitialEvents=true&watch=true", 200),
		{Kind: record.WatchEvent, Tag: "A", Event: "ADDED", Name: "a", RV: "40"},
		{Kind: record.WatchEvent, Tag: "A", Event: "BOOKMARK", RV: "41"}, // periodic, not the end
	}
	h := handshake("A", initial, record.ShapeStream)
	if len(h.Problems) != 1 || !strings.Contains(h.Problems[0], "without a BOOKMARK k8s.io/initial-events-end=true") {
		t.Errorf("want the missing end bookmark reported, got %q", h.Problems)
	}
	if want := "1 ADDED, no LIST, no initial-events-end BOOKMARK"; h.Objects != want {
		t.Errorf("objects: want %q, got %q", want, h.Objects)
	}
}

func TestWatcher(t *testing.T) {
	write := func(event, name, rv string) record.Record {
		return record.Record{Kind: record.Mutator, Event: event, Namespace: "default", Name: name, RV: rv}
	}
	ev := func(event, name, rv string) record.Record {
		return record.Record{Kind: record.WatchEvent, Tag: "A", Event: event, Namespace: "default", Name: name, RV: rv}
	}
	// Seeds at rv 41..43 are part of the sync at 44: a watcher must not be asked to see them again.
	writes := []record.Record{write("CREATE", "s", "41"), write("CREATE", "t", "43"),
		write("UPDATE", "s", "50"), write("DELETE", "s", "53")}
	tests := []struct {
		name   string
		events []record.Record
		want   string
	}{
		{"exactly the writes after sync", []record.Record{ev("MODIFIED", "s", "50"), ev("BOOKMARK", "", "51"), ev("DELETED", "s", "53")}, ""},
		{"missing", []record.Record{ev("MODIFIED", "s", "50")}, "saw 1 of 2 writes, first missing: #2 DELETED default/s rv=53"},
		{"extra", []record.Record{ev("MODIFIED", "s", "50"), ev("DELETED", "s", "53"), ev("ADDED", "u", "60")}, "saw 3 events for 2 writes, first extra: #3 ADDED default/u rv=60"},
		{"other rv", []record.Record{ev("MODIFIED", "s", "51"), ev("DELETED", "s", "53")}, "#1 want MODIFIED default/s rv=50, got MODIFIED default/s rv=51"},
		{"other type", []record.Record{ev("ADDED", "s", "50"), ev("DELETED", "s", "53")}, "#1 want MODIFIED default/s rv=50, got ADDED default/s rv=50"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			w := watcher("A", tt.events, writes, "44")
			if w.Mismatch != tt.want {
				t.Errorf("want mismatch %q, got %q", tt.want, w.Mismatch)
			}
			if w.Expected != 2 {
				t.Errorf("want 2 expected writes (after rv 44), got %d", w.Expected)
			}
		})
	}
}

func TestFanOutSkew(t *testing.T) {
	rep := Analyze(runFrom(synthRun("v1.32.13", "", synthLabs, 3, 6), "v1.32.13", ""))
	sk := rep.Skew
	// The generator gives each watcher's event 200 µs after the previous watcher's (event + handler).
	if sk.Writes != 6 || sk.Watchers != 4 {
		t.Fatalf("want 6 writes × 4 watchers, got %d × %d", sk.Writes, sk.Watchers)
	}
	if sk.Min != sk.Max || sk.Median.Microseconds() != 600 {
		t.Errorf("want every skew 600 µs, got min %v median %v max %v", sk.Min, sk.Median, sk.Max)
	}
}

func TestAnalyzeWithoutLabsDoesNotPanic(t *testing.T) {
	rep := Analyze(&Run{Dir: "x"})
	var b strings.Builder
	rep.WriteText(&b)
	if rep.ExitCode() != 1 || !strings.Contains(b.String(), "no labs") {
		t.Errorf("want exit 1 and \"no labs\" in the report, got %d and %q", rep.ExitCode(), b.String())
	}
}

func TestFaultFailsTheVerdict(t *testing.T) {
	logs := synthRun("v1.32.13", "", synthLabs, 3, 6)
	logs["client-v032"] = append(logs["client-v032"], record.Record{Kind: record.Setup, Tag: "A", Step: record.StepFault,
		Value: "watch stream decode", Detail: "unexpected EOF from 127.0.0.1:6443"})
	rep := Analyze(runFrom(logs, "v1.32.13", ""))
	want := "fault recorded: client-v032: A watch stream decode unexpected EOF from <host>"
	if rep.ExitCode() != 1 || len(rep.Failures) != 1 || rep.Failures[0] != want {
		t.Errorf("want exit 1 with failure %q, got %d %q", want, rep.ExitCode(), rep.Failures)
	}
}
