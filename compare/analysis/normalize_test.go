package analysis

import (
	"reflect"
	"testing"

	"informer-lab/record"
)

func TestNormalizeLine(t *testing.T) {
	sync := initialRV(map[string]bool{"47": true})
	tests := []struct {
		name string
		rec  record.Record
		rv   rvMapper
		want string
	}{
		{"list request keeps rv 0", record.Record{Kind: record.HTTP, Tag: "A", Method: "GET", Path: "/api/v1/configmaps",
			Query: "resourceVersion=0&limit=500", Status: 200, ContentType: "application/json"}, sync,
			"[HTTP][A] GET /api/v1/configmaps?limit=500&resourceVersion=0 -> 200 application/json"},
		{"watch request: timeouts masked, sync rv mapped", record.Record{Kind: record.HTTP, Tag: "A", Method: "GET", Path: "/api/v1/configmaps",
			Query: "allowWatchBookmarks=true&resourceVersion=47&timeout=9m9s&timeoutSeconds=549&watch=true", Status: 200,
			ContentType: "application/json", Accept: "application/json, */*"}, sync,
			"[HTTP][A] GET /api/v1/configmaps?allowWatchBookmarks=true&resourceVersion=<RV0>&timeout=<T>&timeoutSeconds=<T>&watch=true -> 200 application/json (accept application/json, */*)"},
		{"watch from another rv", record.Record{Kind: record.HTTP, Tag: "B", Method: "GET", Path: "/p", Query: "resourceVersion=12&watch=true", Status: 200}, sync,
			"[HTTP][B] GET /p?resourceVersion=<RV>&watch=true -> 200"},
		{"request error scrubbed of host and port", record.Record{Kind: record.HTTP, Tag: "A", Method: "GET", Path: "/p",
			Error: "dial tcp 127.0.0.1:34567: connect: connection refused"}, sync,
			"[HTTP][A] GET /p -> error: dial tcp <host>: connect: connection refused"},
		{"list: collection rv is the sync rv, item rvs dropped", record.Record{Kind: record.List, Tag: "A", RV: "47",
			Items: []record.Item{{Namespace: "default", Name: "a", RV: "40"}, {Namespace: "default", Name: "b", RV: "41"}}}, sync,
			"[LIST][A] rv=<RV0> items=2 default/a default/b"},
		{"initial ADDED: object rv", record.Record{Kind: record.WatchEvent, Tag: "A", Event: "ADDED", Namespace: "default", Name: "a", RV: "40"}, sync,
			"[WATCH-EVENT][A] ADDED default/a rv=<RV>"},
		{"end bookmark keeps annotation", record.Record{Kind: record.WatchEvent, Tag: "A", Event: "BOOKMARK", RV: "47",
			Annotations: map[string]string{initialEventsEnd: "true"}}, sync,
			"[WATCH-EVENT][A] BOOKMARK rv=<RV0> k8s.io/initial-events-end=true"},
		{"steady event keeps rv", record.Record{Kind: record.WatchEvent, Tag: "B", Event: "MODIFIED", Namespace: "default", Name: "lab-cm-1", RV: "521"}, steadyRV,
			"[WATCH-EVENT][B] MODIFIED default/lab-cm-1 rv=521"},
		{"error event detail", record.Record{Kind: record.WatchEvent, Tag: "A", Event: "ERROR", Detail: "410: too old resource version"}, steadyRV,
			"[WATCH-EVENT][A] ERROR 410: too old resource version"},
		{"handler", record.Record{Kind: record.Handler, Tag: "A", Event: "DELETED", Name: "lab-cm-1", RV: "530"}, steadyRV,
			"[HANDLER][A] DELETED lab-cm-1 rv=530"},
		{"setup drops source and time", record.Record{Kind: record.Setup, Source: "client-v031", Step: "client-go", Value: "v0.31.14", Detail: "pin k8s.io/client-go v0.31.14"}, sync,
			"[SETUP] client-go v0.31.14 (pin k8s.io/client-go v0.31.14)"},
		{"synced", record.Record{Kind: record.Setup, Tag: "B", Step: record.StepSynced}, sync, "[SETUP][B] synced"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := normalizeLine(tt.rec, tt.rv); got != tt.want {
				t.Errorf("normalizeLine:\nwant %q\ngot  %q", tt.want, got)
			}
		})
	}
}

func TestNormalizeQuery(t *testing.T) {
	tests := []struct{ raw, want string }{
		{"", ""},
		{"watch=true&allowWatchBookmarks=true", "allowWatchBookmarks=true&watch=true"},
		{"timeoutSeconds=393&timeout=6m33s", "timeout=<T>&timeoutSeconds=<T>"},
		{"resourceVersion=0&resourceVersionMatch=NotOlderThan", "resourceVersion=0&resourceVersionMatch=NotOlderThan"},
		{"resourceVersion=47", "resourceVersion=<RV0>"},
		{"labelSelector=app%3Dlab", "labelSelector=app=lab"},
		{"bad=%zz", "bad=%zz"}, // unparsable: kept as sent
	}
	rv := initialRV(map[string]bool{"47": true})
	for _, tt := range tests {
		if got := normalizeQuery(tt.raw, rv); got != tt.want {
			t.Errorf("normalizeQuery(%q): want %q, got %q", tt.raw, tt.want, got)
		}
	}
}

func TestScrub(t *testing.T) {
	tests := []struct{ in, want string }{
		{"Get \"https://127.0.0.1:6443/api\": EOF", "Get \"https://<host>/api\": EOF"},
		{"dial [::1]:8080 failed", "dial <host> failed"},
		{"localhost:1234 at 2025-01-02T03:04:05.123Z", "<host> at <time>"},
		{"client-go v0.32.13", "client-go v0.32.13"},
	}
	for _, tt := range tests {
		if got := scrub(tt.in); got != tt.want {
			t.Errorf("scrub(%q): want %q, got %q", tt.in, tt.want, got)
		}
	}
}

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
	} {
		if NormalizeText(tc.a) != NormalizeText(tc.b) {
			t.Errorf("want equal after normalization:\n%s\n%s", NormalizeText(tc.a), NormalizeText(tc.b))
		}
	}
	for _, tc := range []struct{ a, b string }{
		{"GET /api/v1/configmaps?limit=500&resourceVersion=0", "GET /api/v1/configmaps?limit=500&resourceVersion=57"},
		{"[WATCH-EVENT][A] type=MODIFIED name=lab-cm-1 rv=5", "[WATCH-EVENT][A] type=ADDED name=lab-cm-1 rv=5"},
	} {
		if NormalizeText(tc.a) == NormalizeText(tc.b) {
			t.Errorf("want different after normalization: %q and %q", tc.a, tc.b)
		}
	}
}

func TestScrubKeepsTags(t *testing.T) {
	for in, want := range map[string]string{
		"[SETUP][A] synced":                   "[SETUP][A] synced",
		"dial tcp [::1]:6443: refused":        "dial tcp <host>: refused",
		"dial tcp 127.0.0.1:43211: refused":   "dial tcp <host>: refused",
		"at 2026-11-29T17:18:46.354739Z done": "at <time> done",
	} {
		if got := scrub(in); got != want {
			t.Errorf("scrub(%q) = %q, want %q", in, got, want)
		}
	}
}
