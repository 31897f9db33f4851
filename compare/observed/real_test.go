package observed

import (
	"bufio"
	"bytes"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"informer-lab/compare/analysis"
	"informer-lab/record"
)

var update = flag.Bool("update", false, "rewrite testdata/*.jsonl from the runs they are derived from")

// fromRun derives, from the labs' own wire logs of a real run (compare/testdata/runs), the log
// make observe would have written standing between those labs and their kube-apiserver. Each
// informer is a client of its own (it sends client-go's User-Agent with " informer/A", lab/lab.go,
// though all of a lab's share one HTTP/2 connection), named lab-tag here; its records are the
// lab's HTTP, LIST and WATCH-EVENT records of that informer, Source the client and Tag
// record.ResourceOf of the request path (an informer watches one resource, so its LIST and
// WATCH-EVENT records take the resource of its requests). Records of all labs are merged in time
// order. The mapping is exact but for the SETUP client records: these logs predate the
// User-Agent and never had the connection, so those fields say they are derived. What is not on
// the wire as such goes: handler calls, SETUP facts, the harness, and the lab's requests of other
// tags (its /version, its direct List()), which come from other clients.
func fromRun(t *testing.T, dir string) []record.Record {
	t.Helper()
	run, err := analysis.LoadRun(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []record.Record
	for _, lab := range run.Labs {
		resource := map[string]string{} // informer tag -> the resource its requests were for
		for _, r := range lab.Records {
			if len(r.Tag) != 1 || (r.Kind != record.HTTP && r.Kind != record.List && r.Kind != record.WatchEvent) {
				continue // not an informer's (A, B, ...) wire record
			}
			name := lab.Name + "-" + r.Tag
			if resource[r.Tag] == "" {
				out = append(out, record.Record{Schema: record.Schema, Time: r.Time, Source: name, Kind: record.Setup, Step: record.StepClient,
					Value:  fmt.Sprintf("%s informer/%s (derived from %s.jsonl, whose records predate the User-Agent)", lab.Name, r.Tag, lab.Name),
					Detail: "connection of " + lab.Name + " (not in its log)"})
			}
			if r.Kind == record.HTTP {
				resource[r.Tag] = record.ResourceOf(r.Path)
			}
			r.Source, r.Tag = name, resource[r.Tag]
			out = append(out, r)
		}
	}
	slices.SortStableFunc(out, func(a, b record.Record) int { return a.Time.Compare(b.Time) })
	return out
}

func marshal(t *testing.T, recs []record.Record) []byte {
	t.Helper()
	b, err := record.MarshalLines(recs)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// loadDerived writes fromRun's log where Load reads it, loads and analyzes it.
func loadDerived(t *testing.T, dir string) *Report {
	t.Helper()
	path := filepath.Join(t.TempDir(), File)
	if err := os.WriteFile(path, marshal(t, fromRun(t, dir)), 0o644); err != nil {
		t.Fatal(err)
	}
	obs, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	return Analyze(obs)
}

func runDir(name string) string { return filepath.Join("..", "testdata", "runs", name) }

// resourceOf finds a client's report of a resource.
func resourceOf(t *testing.T, rep *Report, client, resource string) *Resource {
	t.Helper()
	for _, c := range rep.Clients {
		for _, res := range c.Resources {
			if c.Name == client && res.Name == resource {
				return res
			}
		}
	}
	t.Fatalf("no client %s of %s", client, resource)
	return nil
}

// An informer seen through the proxy gets the label its lab's own log gets from compare, though
// its sync point is inferred: the LIST→WATCH, STREAM and 422-fallback informers of two real runs.
func TestRealRunsSameLabelsAsTheLabs(t *testing.T) {
	for _, name := range []string{"real-v1.32.13-seven-labs", "real-matrix-expired-1.33.13"} {
		t.Run(name, func(t *testing.T) {
			run, err := analysis.LoadRun(runDir(name))
			if err != nil {
				t.Fatal(err)
			}
			labs := analysis.Analyze(run)
			rep := loadDerived(t, runDir(name))
			shapes := map[string]bool{}
			rows := 0
			for _, l := range labs.Labs {
				for _, tag := range l.Tags {
					res := resourceOf(t, rep, l.Name+"-"+tag, "configmaps")
					want := l.Sync[tag]
					if got := res.Handshake; got.Label != want.Label || got.SyncRV != want.SyncRV || !got.Synced {
						t.Errorf("%s %s: observed %q synced=%t at rv %s; the lab's log: %q at rv %s", l.Name, tag, got.Label, got.Synced, got.SyncRV, want.Label, want.SyncRV)
					}
					if len(res.Problems) > 0 {
						t.Errorf("%s %s: problems %q", l.Name, tag, res.Problems)
					}
					shapes[want.Shape] = true
					rows++
				}
			}
			if len(rep.Clients) != rows {
				t.Errorf("%d clients, want one per informer: %d", len(rep.Clients), rows)
			}
			// What the test covers: every shape these runs have, not just one.
			want := map[string][]string{
				"real-v1.32.13-seven-labs":    {record.ShapeListWatch, record.ShapeStream},
				"real-matrix-expired-1.33.13": {record.ShapeListWatch, record.ShapeFallback},
			}[name]
			for _, s := range want {
				if !shapes[s] {
					t.Errorf("no %s informer in %s", s, name)
				}
			}
			if got := rep.Relation(); !strings.Contains(got, ": yes, in each of") {
				t.Errorf("relation: %s", got)
			}
			var text bytes.Buffer
			rep.WriteText(&text)
			checkWidth(t, text.String())
		})
	}
}

// In the expired run every watch was cut and the server forgot the informers' rv: what each did
// after its (inferred) sync point is what make matrix read from the labs' logs after the fault
// (cells.txt: "client-v031-off | WATCH→410→LIST→WATCH (3 req) | ..."), for both informers.
func TestRealRunReestablishments(t *testing.T) {
	dir := runDir("real-matrix-expired-1.33.13")
	cells, err := os.ReadFile(filepath.Join(dir, "cells.txt"))
	if err != nil {
		t.Fatal(err)
	}
	rep := loadDerived(t, dir)
	sc := bufio.NewScanner(bytes.NewReader(cells))
	n := 0
	for sc.Scan() {
		fields := strings.Split(sc.Text(), " | ")
		if len(fields) < 2 {
			continue
		}
		lab, want := fields[0], fields[1]
		for _, tag := range []string{"A", "B"} {
			res := resourceOf(t, rep, lab+"-"+tag, "configmaps")
			if got := Sequence(res.Steps); got != want {
				t.Errorf("%s %s: after sync %q, make matrix saw %q", lab, tag, got, want)
			}
			// The proxy cut the watch (5 s after it opened, long before its timeoutSeconds), then
			// the server answered the rewatch with 410.
			if c := res.Causes; len(c) < 2 || c[0].Why != CauseWatchEnded || !strings.Contains(c[0].Detail, "before its timeoutSeconds") || c[1].Why != CauseExpired {
				t.Errorf("%s %s: causes %v, want the watch's end, then 410", lab, tag, c)
			}
			n++
		}
	}
	if n != 24 {
		t.Errorf("%d informers checked, want 24 (12 labs × A, B)", n)
	}
}

// testdata/real-v1.32.13.jsonl is fromRun of compare/testdata/runs/real-v1.32.13 (client-v031:
// LIST→WATCH, client-v032: STREAM, two informers each), kept as a file for the HTML page's test;
// it must stay what the derivation gives (go test -update rewrites it).
func TestDerivedTestdata(t *testing.T) {
	path := filepath.Join("testdata", "real-v1.32.13.jsonl")
	want := marshal(t, fromRun(t, runDir("real-v1.32.13")))
	if *update {
		if err := os.WriteFile(path, want, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("%s is not the derivation of real-v1.32.13: go test ./observed -run TestDerivedTestdata -update", path)
	}
	obs, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	var text bytes.Buffer
	Analyze(obs).WriteText(&text)
	for _, want := range []string{
		"client-v031-A  configmaps  LIST→WATCH (2 req)",
		"client-v032-B  configmaps  STREAM (1 req)",
	} {
		if !strings.Contains(text.String(), want) {
			t.Errorf("text lacks %q:\n%s", want, text.String())
		}
	}
}
