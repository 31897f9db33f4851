package record

import "testing"

func req(query string, status int) Record {
	return Record{Kind: HTTP, Tag: "A", Method: "GET", Path: "/api/v1/configmaps", Query: query, Status: status}
}

func TestClassify(t *testing.T) {
	const (
		list   = "limit=500&resourceVersion=0"
		watch  = "allowWatchBookmarks=true&resourceVersion=47&timeout=9m9s&timeoutSeconds=549&watch=true"
		stream = "allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&sendInitialEvents=true&timeout=6m33s&timeoutSeconds=393&watch=true"
		listSt = "resourceVersion=0&resourceVersionMatch=NotOlderThan&sendInitialEvents=true&watch=true"
	)
	tests := []struct {
		name      string
		reqs      []Record
		wantShape string
		wantLabel string
	}{
		{"gate off", []Record{req(list, 200), req(watch, 200)}, ShapeListWatch, "LIST→WATCH (2 req)"},
		{"gate on, server streams", []Record{req(stream, 200)}, ShapeStream, "STREAM (1 req)"},
		{"gate on, WatchList=false", []Record{req(stream, 422), req(listSt, 422), req(list, 200), req(watch, 200)}, ShapeFallback, "STREAM→422→LIST→WATCH (4 req)"},
		{"refused for another reason", []Record{req(stream, 500), req(list, 200), req(watch, 200)}, "STREAM(500)→LIST→WATCH", "STREAM(500)→LIST→WATCH (3 req)"},
		{"watch re-established", []Record{req(list, 200), req(watch, 200), req(watch, 200)}, "LIST→WATCH→WATCH", "LIST→WATCH→WATCH (3 req)"},
		{"transport error", []Record{{Kind: HTTP, Query: stream, Error: "EOF"}}, "STREAM(error)", "STREAM(error) (1 req)"},
		{"nothing", nil, "no request", "no request (0 req)"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			shape, label := Classify(tt.reqs)
			if shape != tt.wantShape || label != tt.wantLabel {
				t.Errorf("want %q / %q, got %q / %q", tt.wantShape, tt.wantLabel, shape, label)
			}
		})
	}
}

func TestExpectedShape(t *testing.T) {
	tests := []struct{ gate, serverGates, version, want string }{
		{"off", "", "v1.32.13", ShapeListWatch},
		{"off", "WatchList=false", "v1.32.13", ShapeListWatch},
		{"on", "", "v1.32.13", ShapeStream},
		{"on", "WatchList=true", "v1.32.13", ShapeStream},
		{"on", "WatchList=false", "v1.32.13", ShapeFallback},
		{"on", "ConsistentListFromCache=true,WatchList=false", "v1.32.13", ShapeFallback},
		// the server's own default when no gate is set
		{"on", "", "v1.31.14", ShapeFallback},
		{"on", "", "v1.33.13", ShapeFallback},
		{"on", "", "v1.34.4", ShapeStream},
		{"on", "", "v1.37.2", ShapeStream},
		{"on", "WatchList=true", "v1.33.13", ShapeStream},
		{"on", "", "cluster", ShapeStream},
		{"", "", "v1.32.13", ""},
	}
	for _, tt := range tests {
		if got := ExpectedShape(tt.gate, tt.serverGates, tt.version); got != tt.want {
			t.Errorf("ExpectedShape(%q, %q, %q): want %q, got %q", tt.gate, tt.serverGates, tt.version, tt.want, got)
		}
	}
}

func TestKindExpectedShape(t *testing.T) {
	tests := []struct{ kind, clientGo, gate, want string }{
		{KindTypedConfigMaps, "v0.35.10", "on", ShapeStream},
		{"", "v0.35.10", "on", ShapeStream}, // logs from before kinds
		{KindCustomListWatch, "v0.35.10", "on", ShapeStream},
		// the opt-out is read from v0.35 on; older reflectors do not ask
		{KindCustomListWatchOptOut, "v0.35.10", "on", ShapeListWatch},
		{KindCustomListWatchOptOut, "v0.37.2", "on", ShapeListWatch},
		{KindCustomListWatchOptOut, "v0.34.13", "on", ShapeStream},
		{KindCustomListWatchOptOut, "v0.34.13", "off", ShapeListWatch},
		{KindCustomListWatchOptOut, "v0.35.10", "", ""},
	}
	for _, tt := range tests {
		if got := KindExpectedShape(tt.kind, tt.clientGo, tt.gate, "", "v1.32.13"); got != tt.want {
			t.Errorf("KindExpectedShape(%q, %q, %q): want %q, got %q", tt.kind, tt.clientGo, tt.gate, tt.want, got)
		}
	}
}

func TestKindNotApplicable(t *testing.T) {
	for _, k := range Kinds {
		if k != KindCBOR && KindNotApplicable(k, 31, 32) != "" {
			t.Errorf("%s should run everywhere, got %q", k, KindNotApplicable(k, 31, 32))
		}
	}
	if got := KindNotApplicable(KindCBOR, Minor("v0.31.14"), Minor("1.37.2")); got != "n/a: client-go v0.31 has no ClientsAllowCBOR gate (from v0.32)" {
		t.Errorf("cbor on v0.31: got %q", got)
	}
	if got := KindNotApplicable(KindCBOR, 32, Minor("v1.31.14")); got != "n/a: kube-apiserver 1.31 has no CBORServingAndStorage gate (from 1.32)" {
		t.Errorf("cbor on 1.31: got %q", got)
	}
	if got := KindNotApplicable(KindCBOR, 32, 32); got != "" {
		t.Errorf("cbor v0.32 on 1.32: got %q", got)
	}
	if !IsKind(KindCR) || IsKind("typed") {
		t.Error("IsKind")
	}
}

// A server setting aggregated=VERSION registers a sample-apiserver: the aggregated kind runs
// there only, is what such a server runs by default, and expects what that sample-apiserver's
// k8s.io/apiserver decides, not kube-apiserver's version or gates.
func TestAggregatedSetting(t *testing.T) {
	settings := "WatchList=true,aggregated=0.33.5"
	if got := AggregatedOf(settings); got != "0.33.5" {
		t.Errorf("AggregatedOf(%q) = %q", settings, got)
	}
	if gates, flags, err := SplitServerSettings(settings); err != nil || gates != "WatchList=true" || flags != "aggregated=0.33.5" {
		t.Errorf("SplitServerSettings(%q) = %q, %q, %v", settings, gates, flags, err)
	}
	if f, ok := ServerFlagOf(SettingAggregated); !ok || !f.Beside {
		t.Errorf("%s is not a setting beside kube-apiserver: %+v %v", SettingAggregated, f, ok)
	}
	for _, tc := range []struct{ settings, kind, na string }{
		{"", KindTypedConfigMaps, "n/a: needs an aggregated apiserver (the server setting aggregated=VERSION)"},
		{"aggregated=0.34.13", KindAggregated, ""},
		{"watch-cache=false", KindTypedConfigMaps, "n/a: needs an aggregated apiserver (the server setting aggregated=VERSION)"},
	} {
		if got := DefaultKind(tc.settings); got != tc.kind {
			t.Errorf("DefaultKind(%q) = %q, want %q", tc.settings, got, tc.kind)
		}
		if got := KindNotApplicableOn(KindAggregated, tc.settings); got != tc.na {
			t.Errorf("KindNotApplicableOn(aggregated, %q) = %q, want %q", tc.settings, got, tc.na)
		}
	}
	for _, tc := range []struct{ settings, version, want string }{
		{"aggregated=0.33.5", "v1.34.4", ShapeFallback},               // kube-apiserver streams, sample-apiserver 0.33 does not
		{"aggregated=0.34.13", "v1.33.13", ShapeStream},               // and the other way round
		{"WatchList=false,aggregated=0.34.13", "1.34.4", ShapeStream}, // kube-apiserver's gates do not reach it
	} {
		if got := KindExpectedShape(KindAggregated, "v0.37.2", "on", tc.settings, tc.version); got != tc.want {
			t.Errorf("KindExpectedShape(aggregated, on, %q, %s) = %q, want %q", tc.settings, tc.version, got, tc.want)
		}
	}
	if got := KindExpectedShape(KindTypedConfigMaps, "v0.37.2", "on", "aggregated=0.33.5", "v1.34.4"); got != ShapeStream {
		t.Errorf("ConfigMaps on kube-apiserver 1.34.4 beside sample-apiserver 0.33.5: %q, want %q", got, ShapeStream)
	}
	if got := ScenarioNotApplicable(ScenarioDirect, KindAggregated); got == "" {
		t.Error("the direct List() of ConfigMaps ran for the aggregated kind")
	}
	if got := ScenarioNotApplicable(ScenarioDirect, KindMetadata); got != "" {
		t.Errorf("direct-list with the metadata kind (ConfigMaps): %q", got)
	}
}
