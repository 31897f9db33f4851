package matrixrun

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"informer-lab/compare/matrix"
	"informer-lab/lab/labtest"

	"k8s.io/apimachinery/pkg/util/version"
)

// Orphans of anything these tests start are re-parented to this process, so a test can see
// an etcd, kube-apiserver or lab that outlived its run; the reaper stops them if it is killed.
func TestMain(m *testing.M) { labtest.Main(m) }

// The reduced grid, for real: the default server with its WatchList gate on and off, every
// client cell, startup + direct-list + steady + reconnect. The verdicts asserted are the ones the gates
// imply (record.ExpectedShape, sourced in docs/upstream.md) and what the matrix showed on every run so far.
func TestReducedGrid(t *testing.T) {
	res, dirs := runGrid(t, "-servers", "1.32.13,1.32.13:WatchList=false", "-scenarios", "startup,direct-list,steady,reconnect")
	md, err := os.ReadFile(filepath.Join(dirs[0], "matrix.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Clients) < 8 || len(res.Servers) != 2 || len(res.Cells) != 4*2*len(res.Clients) {
		t.Fatalf("want >= 8 clients x 2 servers x 4 scenarios, got %d clients, %d servers, %d cells", len(res.Clients), len(res.Servers), len(res.Cells))
	}
	clientGo := map[string]string{} // cell name -> linked client-go
	for _, c := range res.Clients {
		clientGo[c.Name] = c.ClientGo
	}
	steady := map[string]string{} // server -> the verdict every cell must share
	for _, c := range res.Cells {
		where := c.Scenario + " / " + c.Server + " / " + c.Client
		if c.Lost != "" || c.Failed != "" || len(c.Problems) > 0 {
			t.Errorf("%s: lost %q, failed %q, problems %v", where, c.Lost, c.Failed, c.Problems)
		}
		if _, err := os.Stat(filepath.Join(dirs[0], c.Log)); c.Log == "" || err != nil {
			t.Errorf("%s: no normalized log (%q): %v", where, c.Log, err)
		}
		if !strings.Contains(string(md), c.Verdict) {
			t.Errorf("%s: verdict %q not in matrix.md", where, c.Verdict)
		}
		gateOn := strings.HasSuffix(c.Client, "-on")
		serverStreams := !strings.Contains(c.Server, "WatchList=false")
		switch c.Scenario {
		case "startup":
			want := "LIST→WATCH (2 req)"
			switch {
			case gateOn && serverStreams:
				want = "STREAM (1 req)"
			case gateOn:
				want = "STREAM→422→LIST→WATCH"
			}
			if !strings.HasPrefix(c.Verdict, want) || !c.Agrees {
				t.Errorf("%s: verdict %q (agrees with the gates: %v), want %q", where, c.Verdict, c.Agrees, want)
			}
		case "steady":
			if !strings.Contains(c.Verdict, "writes, same rvs") {
				t.Errorf("%s: verdict %q, want every write with the writer's rv", where, c.Verdict)
			}
			if s, ok := steady[c.Server]; ok && s != c.Verdict {
				t.Errorf("%s: verdict %q differs from another cell's %q on the same server", where, c.Verdict, s)
			}
			steady[c.Server] = c.Verdict
		case "direct-list":
			// A typed List() streams only with the gate on and client-go before v0.34 (v0.34 took
			// streaming out of the typed clients); 1.32.13 sends the list blueprint, so nothing
			// falls back there, but its WatchList=false twin refuses the stream with a 422.
			want := "LIST (1 req)"
			if gateOn && version.MustParseGeneric(clientGo[c.Client]).LessThan(version.MajorMinor(0, 34)) {
				want = "STREAM (1 req)"
				if !serverStreams {
					want = "STREAM(422)→LIST (2 req)"
				}
			}
			if c.Verdict != want {
				t.Errorf("%s (client-go %s): verdict %q, want %q", where, clientGo[c.Client], c.Verdict, want)
			}
			// client-go says why it fell back only in a klog warning, which the lab records.
			log, _ := os.ReadFile(filepath.Join(dirs[0], c.Log))
			const why = "[SETUP][DIRECT] klog The watchlist request for configmaps ended with an error, falling back to the standard LIST semantics"
			if strings.Contains(want, "422") != strings.Contains(string(log), why) {
				t.Errorf("%s: client-go's fallback warning in the cell log: %v, want %v (%q)", where, !strings.Contains(want, "422"), strings.Contains(want, "422"), why)
			}
		case "reconnect":
			// Every re-established watch is a plain WATCH from the last rv: no cell streams or
			// relists again when the server ends a watch at its timeout.
			if !strings.Contains(c.Verdict, "WATCH from rv") || strings.Contains(c.Verdict, "STREAM") || strings.Contains(c.Verdict, "LIST") {
				t.Errorf("%s: verdict %q, want plain watches from the last rv", where, c.Verdict)
			}
		}
	}
}

// runGrid runs make matrix with args for real, checks it completed and left no process, and
// returns its result and run directory (dirs[0]).
func runGrid(t *testing.T, args ...string) (*matrix.Result, []string) {
	t.Helper()
	return runGridBeside(t, nil, args...)
}

// runGridBeside is runGrid beside processes the test started itself and still runs (keep: a
// stand-in cluster's etcd and kube-apiserver), which are no process the grid left.
func runGridBeside(t *testing.T, keep []int, args ...string) (*matrix.Result, []string) {
	t.Helper()
	out := keptOnFailure(t)
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), append([]string{"-out", out}, args...), &stdout, &stderr)
	t.Logf("stderr:\n%s", stderr.String())
	t.Logf("grid:\n%s", stdout.String())
	if code != 0 {
		t.Fatalf("exit %d, want 0 (every run completed, no cell lost data)", code)
	}
	labtest.CheckNoChildren(t, keep...)
	dirs, _ := filepath.Glob(filepath.Join(out, "matrix-*"))
	if len(dirs) != 1 {
		t.Fatalf("want one matrix run directory, got %v", dirs)
	}
	res, err := matrix.Load(filepath.Join(dirs[0], "matrix.json"))
	if err != nil {
		t.Fatal(err)
	}
	return res, dirs
}

// keptOnFailure is a directory for a grid's run that is removed when the test passes and kept
// when it fails: its cell logs and harness.jsonl say what a failed run met (a grid's failure on
// a loaded machine is seldom seen twice).
func keptOnFailure(t *testing.T) string {
	out, err := os.MkdirTemp("", "informer-lab-"+strings.ReplaceAll(t.Name(), "/", "-")+"-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the grid's run directory is kept: %s", out)
			return
		}
		os.RemoveAll(out)
	})
	return out
}

// Bad input fails fast with exit 2 and one line that says what was wrong and what is valid,
// before any server starts or any directory is made.
func TestBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--clients", "client-v099"}, `unknown client "client-v099": the cells are client-v031-off, client-v031-on`},
		{[]string{"--servers", "1.32"}, `server "1.32": want a version X.Y.Z`},
		{[]string{"--servers", "1.99.0", "--scenarios", "startup"}, "no 1.99.x release is served"},
		{[]string{"--scenarios", "boot"}, `unknown scenario "boot": the scenarios are startup, direct-list, steady, writes-during-sync, reconnect, restart, restart-gap, expired, and fault:NAME`},
		{[]string{"--scenarios", "fault:explode"}, `unknown fault "explode"`},
		{[]string{"--scenarios", "fault:cut-initial-stream=0"}, "cut-initial-stream"},
		{[]string{"--scenarios", "fault:refuse-watch-list=418"}, "refuse-watch-list"},
		{[]string{"--sync-wait", "0s"}, "-sync-wait must be positive"},
		{[]string{"--servers", "1.32.13:upgrade=1.33"}, "upgrade=1.33: want the second kube-apiserver's version X.Y.Z"},
		{[]string{"--kinds", "typed-configmaps,foo"}, `--kinds: unknown kind "foo": the kinds are typed-configmaps, selector, metadata, dynamic-crd, controller-runtime, custom-listwatch, custom-listwatch-optout, cbor, aggregated, or "all" for all of them`},
		{[]string{"extra"}, `unexpected argument "extra"`},
	} {
		out := t.TempDir()
		var stdout, stderr bytes.Buffer
		code := Run(context.Background(), append([]string{"-out", out}, tc.args...), &stdout, &stderr)
		if code != exitUsage || !strings.Contains(stderr.String(), tc.want) || strings.Count(stderr.String(), "error:") != 1 {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and one error with %q", tc.args, code, stderr.String(), exitUsage, tc.want)
		}
		if entries, _ := os.ReadDir(out); len(entries) > 0 {
			t.Errorf("%v: bad input left %d entries in the output directory", tc.args, len(entries))
		}
	}
}

// The reduced fault grid, for real: the default server behind the fault proxy, every client
// cell, no-end-bookmark and ignore-send-initial-events (docs/faults.md has them all). A cell
// with the gate off never streams, so the fault does not touch it; with the gate on every
// client-go version waits for an end bookmark that never comes: not synced when the wait is up,
// after its one streaming request. The direct List() streams, and waits too, only where it
// streams at all (gate on, client-go before v0.34).
func TestReducedFaultGrid(t *testing.T) {
	res, dirs := runGrid(t, "-servers", "1.32.13", "-scenarios", "fault:no-end-bookmark,fault:ignore-send-initial-events", "-sync-wait", "10s")
	if len(res.Clients) < 8 || len(res.Cells) != 2*len(res.Clients) {
		t.Fatalf("want >= 8 clients x 2 faults, got %d clients, %d cells", len(res.Clients), len(res.Cells))
	}
	clientGo := map[string]string{}
	for _, c := range res.Clients {
		clientGo[c.Name] = c.ClientGo
	}
	for _, c := range res.Cells {
		where := c.Scenario + " / " + c.Client + " (client-go " + clientGo[c.Client] + ")"
		if c.Lost != "" || c.Failed != "" || len(c.Problems) > 0 {
			t.Errorf("%s: lost %q, failed %q, problems %v", where, c.Lost, c.Failed, c.Problems)
		}
		gateOn := strings.HasSuffix(c.Client, "-on")
		want := "synced: LIST→WATCH (2 req)"
		if gateOn {
			want = "not synced after 10s: STREAM (1 req)"
		}
		list := "; List(): LIST (1 req)"
		if gateOn && version.MustParseGeneric(clientGo[c.Client]).LessThan(version.MajorMinor(0, 34)) {
			list = "; List(): no answer after 10s: STREAM (1 req)"
		}
		if c.Verdict != want+list || c.Synced == gateOn {
			t.Errorf("%s: verdict %q (synced %v), want %q", where, c.Verdict, c.Synced, want+list)
		}
		// The proxy, not the client, did it: the streaming request is logged as the client sent it.
		log, _ := os.ReadFile(filepath.Join(dirs[0], c.Log))
		if gateOn && !strings.Contains(string(log), "sendInitialEvents=true") {
			t.Errorf("%s: the cell log lacks the client's own streaming request", where)
		}
	}
}
