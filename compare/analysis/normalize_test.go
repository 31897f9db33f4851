package analysis

import (
	"reflect"
	"testing"

	"informer-lab/record"
)

func TestSplitPhases(t *testing.T) {
	setup := func(tag, step string) record.Record { return record.Record{Kind: record.Setup, Tag: tag, Step: step} }
	http := func(tag string) record.Record { return record.Record{Kind: record.HTTP, Tag: tag} }
	ev := func(tag string) record.Record {
		return record.Record{Kind: record.WatchEvent, Tag: tag, Event: "ADDED"}
	}
	tests := []struct {
		name            string
		recs            []record.Record
		initial, steady int
		unsynced        []string
	}{
		{"both tags sync, steady follows", []record.Record{setup("", "gate"), http("A"), http("B"), setup("A", "synced"), ev("A"), setup("B", "synced"), ev("A"), ev("B")}, 6, 2, nil},
		{"synced of a tag without requests does not close", []record.Record{http("A"), setup("C", "synced"), setup("A", "synced"), ev("A")}, 3, 1, nil},
		{"repeated synced of one tag waits for the other", []record.Record{http("A"), http("B"), setup("A", "synced"), setup("A", "synced"), setup("B", "synced")}, 5, 0, nil},
		{"B never synced: all initial", []record.Record{http("A"), http("B"), setup("A", "synced"), ev("A")}, 4, 0, []string{"B"}},
		{"no requests: all steady", []record.Record{setup("", "gate"), ev("A")}, 0, 2, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			initial, steady, unsynced := splitPhases(tt.recs)
			if len(initial) != tt.initial || len(steady) != tt.steady || !reflect.DeepEqual(unsynced, tt.unsynced) {
				t.Errorf("want %d initial, %d steady, unsynced %v; got %d, %d, %v",
					tt.initial, tt.steady, tt.unsynced, len(initial), len(steady), unsynced)
			}
		})
	}
}

func TestSteadyLinesGroupByTagAndDropPeriodicBookmarks(t *testing.T) {
	ev := func(tag, rv string) record.Record {
		return record.Record{Kind: record.WatchEvent, Tag: tag, Event: "MODIFIED", Name: "x", RV: rv}
	}
	recs := []record.Record{ev("B", "10"), ev("A", "10"),
		{Kind: record.WatchEvent, Tag: "A", Event: "BOOKMARK", RV: "11"},
		{Kind: record.HTTP, Tag: "A"}, ev("A", "12"), ev("B", "12")}
	want := []string{
		"[WATCH-EVENT][A] MODIFIED x rv=10", "[WATCH-EVENT][A] MODIFIED x rv=12",
		"[WATCH-EVENT][B] MODIFIED x rv=10", "[WATCH-EVENT][B] MODIFIED x rv=12",
	}
	if got := steadyLines(recs); !reflect.DeepEqual(got, want) {
		t.Errorf("steadyLines:\nwant %q\ngot  %q", want, got)
	}
}

func TestNormalizeText(t *testing.T) {
	for _, tc := range []struct{ a, b string }{
		{"[WATCH-EVENT][A] type=MODIFIED name=lab-cm-1 rv=521", "[WATCH-EVENT][A] type=MODIFIED name=lab-cm-1 rv=197"},
		{"GET /api/v1/configmaps?allowWatchBookmarks=true&resourceVersion=57&timeout=9m0s&timeoutSeconds=540&watch=true",
			"GET /api/v1/configmaps?allowWatchBookmarks=true&resourceVersion=12&timeout=5m33s&timeoutSeconds=333&watch=true"},
		{"fan-out skew over 8 writes × 4 watchers: min 0.1 ms, median 0.4 ms, max 0.8 ms", "fan-out skew over 8 writes × 4 watchers: min 0.2 ms, median 0.9 ms, max 1.6 ms"},
		{"run directory: /work/main/out/20261129-171410", "run directory: /tmp/fresh/out/20261129-171740"},
		{"| a  | b |", "| a | b |"},
		{"client-v031  LIST→WATCH (2 req)  2.6 KiB  yes", "client-v031  LIST→WATCH (2 req)  2.7 KiB  yes"},
		{"[1] client-v037: Content-Encoding until sync: gzip for the STREAM (1.1 KiB on the wire, 2.0 KiB decoded)",
			"[1] client-v037: Content-Encoding until sync: gzip for the STREAM (1023 KiB on the wire, 1.0 MiB decoded)"},
		{"[SETUP][A] synced: informer cache synced requests=1 bytes=2085 events=6 wire=1130", "[SETUP][A] synced: informer cache synced requests=1 bytes=2091 events=6 wire=1127"},
	} {
		if NormalizeText(tc.a) != NormalizeText(tc.b) {
			t.Errorf("want equal after normalization:\n%s\n%s", NormalizeText(tc.a), NormalizeText(tc.b))
		}
	}
	for _, tc := range []struct{ a, b string }{
		{"GET /api/v1/configmaps?limit=500&resourceVersion=0", "GET /api/v1/configmaps?limit=500&resourceVersion=57"},
		{"[WATCH-EVENT][A] type=MODIFIED name=lab-cm-1 rv=5", "[WATCH-EVENT][A] type=ADDED name=lab-cm-1 rv=5"},
		{"client-v037  STREAM (1 req)  2.0 KiB[1]", "client-v037  STREAM (1 req)  2.0 KiB"}, // compressed or not is no noise
		{"events A=8/8 B=6/6", "events A=8/8 B=8/8"},
	} {
		if NormalizeText(tc.a) == NormalizeText(tc.b) {
			t.Errorf("want different after normalization: %q and %q", tc.a, tc.b)
		}
	}
}
