package record

import "testing"

// syncRV maps rv 47 to the sync placeholder and any other rv to the object placeholder, as
// compare does for an informer that synced at 47.
func syncRV(rv string) string {
	switch rv {
	case "", "0":
		return rv
	case "47":
		return PlaceholderSyncRV
	}
	return PlaceholderRV
}

func TestNormalizeLine(t *testing.T) {
	sync := syncRV
	tests := []struct {
		name string
		rec  Record
		rv   func(string) string
		want string
	}{
		{"list request keeps rv 0", Record{Kind: HTTP, Tag: "A", Method: "GET", Path: "/api/v1/configmaps",
			Query: "resourceVersion=0&limit=500", Status: 200, ContentType: "application/json"}, sync,
			"[HTTP][A] GET /api/v1/configmaps?limit=500&resourceVersion=0 -> 200 application/json"},
		{"watch request: timeouts masked, sync rv mapped", Record{Kind: HTTP, Tag: "A", Method: "GET", Path: "/api/v1/configmaps",
			Query: "allowWatchBookmarks=true&resourceVersion=47&timeout=9m9s&timeoutSeconds=549&watch=true", Status: 200,
			ContentType: "application/json", Accept: "application/json, */*"}, sync,
			"[HTTP][A] GET /api/v1/configmaps?allowWatchBookmarks=true&resourceVersion=<RV0>&timeout=<T>&timeoutSeconds=<T>&watch=true -> 200 application/json (accept application/json, */*)"},
		{"watch from another rv", Record{Kind: HTTP, Tag: "B", Method: "GET", Path: "/p", Query: "resourceVersion=12&watch=true", Status: 200}, sync,
			"[HTTP][B] GET /p?resourceVersion=<RV>&watch=true -> 200"},
		{"request error scrubbed of host and port", Record{Kind: HTTP, Tag: "A", Method: "GET", Path: "/p",
			Error: "dial tcp 127.0.0.1:34567: connect: connection refused"}, sync,
			"[HTTP][A] GET /p -> error: dial tcp <host>: connect: connection refused"},
		{"list: collection rv is the sync rv, item rvs dropped", Record{Kind: List, Tag: "A", RV: "47",
			Items: []Item{{Namespace: "default", Name: "a", RV: "40"}, {Namespace: "default", Name: "b", RV: "41"}}}, sync,
			"[LIST][A] rv=<RV0> items=2 default/a default/b"},
		{"initial ADDED: object rv", Record{Kind: WatchEvent, Tag: "A", Event: "ADDED", Namespace: "default", Name: "a", RV: "40"}, sync,
			"[WATCH-EVENT][A] ADDED default/a rv=<RV>"},
		{"end bookmark keeps annotation", Record{Kind: WatchEvent, Tag: "A", Event: "BOOKMARK", RV: "47",
			Annotations: map[string]string{AnnotationInitialEventsEnd: "true"}}, sync,
			"[WATCH-EVENT][A] BOOKMARK rv=<RV0> k8s.io/initial-events-end=true"},
		{"steady event keeps rv", Record{Kind: WatchEvent, Tag: "B", Event: "MODIFIED", Namespace: "default", Name: "lab-cm-1", RV: "521"}, KeepRV,
			"[WATCH-EVENT][B] MODIFIED default/lab-cm-1 rv=521"},
		{"error event detail", Record{Kind: WatchEvent, Tag: "A", Event: "ERROR", Detail: "410: too old resource version"}, KeepRV,
			"[WATCH-EVENT][A] ERROR 410: too old resource version"},
		{"handler", Record{Kind: Handler, Tag: "A", Event: "DELETED", Name: "lab-cm-1", RV: "530"}, KeepRV,
			"[HANDLER][A] DELETED lab-cm-1 rv=530"},
		{"setup drops source and time", Record{Kind: Setup, Source: "client-v031", Step: "client-go", Value: "v0.31.14", Detail: "pin k8s.io/client-go v0.31.14"}, sync,
			"[SETUP] client-go v0.31.14 (pin k8s.io/client-go v0.31.14)"},
		{"synced", Record{Kind: Setup, Tag: "B", Step: StepSynced}, sync, "[SETUP][B] synced"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := tt.rec.Normalized(tt.rv); got != tt.want {
				t.Errorf("Normalized:\nwant %q\ngot  %q", tt.want, got)
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
	rv := syncRV
	for _, tt := range tests {
		if got := NormalizeQuery(tt.raw, rv); got != tt.want {
			t.Errorf("NormalizeQuery(%q): want %q, got %q", tt.raw, tt.want, got)
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
		if got := Scrub(tt.in); got != tt.want {
			t.Errorf("Scrub(%q): want %q, got %q", tt.in, tt.want, got)
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
		if got := Scrub(in); got != want {
			t.Errorf("Scrub(%q) = %q, want %q", in, got, want)
		}
	}
}
