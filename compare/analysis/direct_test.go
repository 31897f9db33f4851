package analysis

import (
	"strings"
	"testing"

	"informer-lab/record"
)

// The direct List()'s records in the shapes the labs wrote them (see
// testdata/runs/real-matrix-direct-list-1.34.4 for a real run of each).
func TestDirectList(t *testing.T) {
	const streamQ = "allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&sendInitialEvents=true&watch=true"
	http := func(query string, status int) record.Record {
		return record.Record{Kind: record.HTTP, Tag: record.TagDirect, Method: "GET", Path: "/api/v1/configmaps", Query: query, Status: status}
	}
	added := record.Record{Kind: record.WatchEvent, Tag: record.TagDirect, Event: "ADDED", Name: "cm", RV: "10"}
	end := func(blueprint string) record.Record {
		a := map[string]string{"k8s.io/initial-events-end": "true"}
		if blueprint != "" {
			a[record.AnnotationBlueprint] = blueprint
		}
		return record.Record{Kind: record.WatchEvent, Tag: record.TagDirect, Event: "BOOKMARK", RV: "12", Annotations: a}
	}
	warning := record.Record{Kind: record.Setup, Tag: record.TagDirect, Step: record.StepKlog,
		Value: `The watchlist request for configmaps ended with an error, falling back to the standard LIST semantics, err = "kubernetes.io/initial-events-list-blueprint" annotation is missing content`}
	returned := record.Record{Kind: record.Setup, Tag: record.TagDirect, Step: record.StepDirect, Value: "returned 1 items, resourceVersion=12"}
	failed := record.Record{Kind: record.Setup, Tag: record.TagDirect, Step: record.StepDirect, Value: "failed", Detail: "connection refused"}

	for _, tc := range []struct {
		name      string
		recs      []record.Record
		label     string
		returned  bool
		result    string
		warnings  int
		fallsBack bool
	}{
		{"plain LIST (gate off, or client-go v0.34+)", []record.Record{http("", 200), returned},
			"LIST (1 req)", true, "returned 1 items, resourceVersion=12", 0, false},
		{"streamed, blueprint present (v0.32 on 1.32)", []record.Record{http(streamQ, 200), added, end("azhz"), returned},
			"STREAM (1 req)", true, "returned 1 items, resourceVersion=12", 0, false},
		{"streamed without a blueprint: v0.31 does not check it", []record.Record{http(streamQ, 200), added, end(""), returned},
			"STREAM (1 req)", true, "returned 1 items, resourceVersion=12", 0, false},
		{"refused by a server without WatchList", []record.Record{http(streamQ, 422), http("", 200), returned},
			"STREAM(422)→LIST (2 req)", true, "returned 1 items, resourceVersion=12", 0, false},
		{"blueprint missing (v0.32/v0.33 on 1.34+)", []record.Record{http(streamQ, 200), added, end(""), warning, http("", 200), returned},
			"STREAM→fallback: blueprint annotation missing (2 req)", true, "returned 1 items, resourceVersion=12", 1, true},
		{"blueprint missing, the bookmark decoded after the LIST was sent", []record.Record{http(streamQ, 200), warning, http("", 200), added, end(""), returned},
			"STREAM→fallback: blueprint annotation missing (2 req)", true, "returned 1 items, resourceVersion=12", 1, true},
		{"stream given up for another reason: client-go's warning says which", []record.Record{http(streamQ, 200), {Kind: record.Setup, Tag: record.TagDirect, Step: record.StepKlog, Value: "unexpected watch close"}, http("", 200), returned},
			"STREAM→fallback: unexpected watch close (2 req)", true, "returned 1 items, resourceVersion=12", 1, true},
		{"the call failed", []record.Record{{Kind: record.HTTP, Tag: record.TagDirect, Method: "GET", Path: "/api/v1/configmaps", Error: "connection refused"}, failed},
			"LIST(error) (1 req)", true, "failed: connection refused", 0, false},
		{"the lab stopped before the call returned", []record.Record{http(streamQ, 200), added},
			"STREAM (1 req)", false, "no SETUP direct-list record", 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			d := directList(tc.recs)
			if d.Label != tc.label || d.Returned != tc.returned || !strings.HasPrefix(d.Result, tc.result) || len(d.Warnings) != tc.warnings || (d.Fallback != "") != tc.fallsBack {
				t.Errorf("got label %q returned %v result %q warnings %d fallback %q\nwant label %q returned %v result %q… warnings %d falls back %v",
					d.Label, d.Returned, d.Result, len(d.Warnings), d.Fallback, tc.label, tc.returned, tc.result, tc.warnings, tc.fallsBack)
			}
			if len(d.Lines) != len(tc.recs) {
				t.Errorf("%d normalized lines for %d records", len(d.Lines), len(tc.recs))
			}
		})
	}
	if d := directList(nil); d != nil {
		t.Errorf("no records: want nil, got %+v", d)
	}
}

// A lab's DIRECT records are its direct call's, not an informer's: they must not make an
// informer tag (which would "never sync"), and the scenario must find them.
func TestDirectListKeptApartFromInformers(t *testing.T) {
	run, err := LoadRun("../testdata/runs/real-matrix-direct-list-1.34.4")
	if err != nil {
		t.Fatal(err)
	}
	rep := Analyze(run)
	if len(rep.Failures) > 0 {
		t.Fatalf("failures: %v", rep.Failures)
	}
	for _, l := range rep.Labs {
		if strings.Join(l.Tags, ",") != "A,B" {
			t.Errorf("%s: informer tags %v, want A,B", l.Name, l.Tags)
		}
		if l.Direct == nil || !l.Direct.Returned {
			t.Errorf("%s: no direct List() read", l.Name)
		}
	}
	// The same run without its DIRECT records: the scenario says what is missing.
	for _, lab := range run.Labs {
		lab.Direct = nil
	}
	rep = Analyze(run)
	if len(rep.Failures) != len(run.Labs) || !strings.Contains(rep.Failures[0], "no direct List() recorded") {
		t.Errorf("want one 'no direct List() recorded' failure per lab, got %v", rep.Failures)
	}
}
