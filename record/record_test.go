package record

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestTextLines(t *testing.T) {
	for _, tc := range []struct {
		rec  Record
		want string
	}{
		{Record{Kind: WatchEvent, Tag: "A", Event: "MODIFIED", Name: "lab-cm-1", RV: "521"}, "[WATCH-EVENT][A] type=MODIFIED name=lab-cm-1 rv=521"},
		{Record{Kind: Mutator, Tag: "MUT", Event: "UPDATE", Name: "lab-cm-1", Tick: 8}, "[MUTATOR][MUT] writing: UPDATE lab-cm-1 (tick=8)"},
		{Record{Kind: Handler, Tag: "A", Event: "MODIFIED", Name: "lab-cm-1", RV: "521"}, "[HANDLER][A] informer handler fired: event=MODIFIED name=lab-cm-1 rv=521"},
		{Record{Kind: List, Tag: "A", RV: "413", Items: []Item{{Name: "a", RV: "1"}}}, "[LIST][A] initial LIST returned collection resourceVersion=413 items=1 [a]"},
		{Record{Kind: HTTP, Tag: "A", Method: "GET", Path: "/api/v1/configmaps", Query: "limit=500&resourceVersion=0", Status: 200, ContentType: "application/json"},
			"[HTTP][A] GET /api/v1/configmaps?limit=500&resourceVersion=0 -> 200 application/json"},
		{Record{Kind: WatchEvent, Tag: "B", Event: "BOOKMARK", RV: "9", Annotations: map[string]string{"k8s.io/initial-events-end": "true"}},
			`[WATCH-EVENT][B] type=BOOKMARK name= rv=9 k8s.io/initial-events-end="true"`},
		{Record{Kind: Setup, Step: StepClientGo, Value: "v0.31.14", Detail: "pin v0.31.14"}, "[SETUP] client-go: v0.31.14 (pin v0.31.14)"},
	} {
		if got := tc.rec.Text(); got != tc.want {
			t.Errorf("Text():\n got %s\nwant %s", got, tc.want)
		}
	}
}

func TestWriteThenRead(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter("client-v031", &buf, nil)
	w.Setup("A", StepSynced, "informer cache synced", "")
	w.Write(Record{Kind: WatchEvent, Tag: "A", Event: "ADDED", Name: "x", RV: "5"})
	recs, err := Read(&buf, "log")
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 2 || recs[0].Source != "client-v031" || recs[1].Schema != Schema || recs[1].Time.IsZero() {
		t.Errorf("records not stamped with source, schema and time: %+v", recs)
	}
}

// A record written after Stop (a goroutine the owner could not join) is dropped: "stopped" stays
// the log's last line, in JSON and in text.
func TestStopIsLast(t *testing.T) {
	var js, text bytes.Buffer
	w := NewWriter("client-v032", &js, &text)
	w.Setup("A", StepSynced, "informer cache synced", "")
	w.Stop("informers stopped", "not synced: B")
	w.Write(Record{Kind: HTTP, Tag: "B", Method: "GET", Path: "/api/v1/configmaps", Status: 403})
	recs, err := Read(&js, "log")
	if err != nil {
		t.Fatal(err)
	}
	if last := recs[len(recs)-1]; len(recs) != 2 || last.Step != StepStopped || last.Detail != "not synced: B" {
		t.Errorf("records %+v, want 2 ending with SETUP stopped (not synced: B)", recs)
	}
	if lines := strings.Split(strings.TrimSpace(text.String()), "\n"); len(lines) != 2 || !strings.Contains(lines[1], "stopped") {
		t.Errorf("text lines %q, want 2 ending with stopped", lines)
	}
}

func TestReadErrors(t *testing.T) {
	good := `{"schema":1,"time":"2026-01-01T00:00:00Z","source":"s","kind":"SETUP","step":"x"}`
	for _, tc := range []struct{ name, in, want string }{
		{"empty", "", "log:1: no records"},
		{"truncated last line", good + "\n" + good[:30], "log:2: truncated last line"},
		{"unknown schema", strings.Replace(good, `"schema":1`, `"schema":7`, 1) + "\n", "log:1: record schema 7"},
		{"not json", "hello\n", "log:1: not a JSON record"},
		{"no schema", `{"kind":"SETUP"}` + "\n", "log:1: no schema field"},
		{"no time", `{"schema":1,"kind":"SETUP"}` + "\n", "log:1: record has no time"},
	} {
		recs, err := Read(strings.NewReader(tc.in), "log")
		var pe *ParseError
		if err == nil || !errors.As(err, &pe) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got error %v, want a ParseError containing %q", tc.name, err, tc.want)
		}
		if tc.name == "truncated last line" && len(recs) != 1 {
			t.Errorf("truncated: the complete records before the cut must be returned, got %d", len(recs))
		}
	}
}

func TestParseKeepsTime(t *testing.T) {
	now := time.Date(2026, 11, 29, 1, 2, 3, 4000, time.UTC)
	line, _ := Record{Schema: Schema, Time: now, Kind: Setup}.Marshal()
	r, err := Parse(line)
	if err != nil || !r.Time.Equal(now) {
		t.Errorf("round trip: %v %v", r.Time, err)
	}
}
