package bench

import (
	"io"
	"runtime"
	"strings"
	"testing"

	"informer-lab/envtestbin"
	"informer-lab/record"
)

// Writes during the initial sync, reduced: 300 ConfigMaps, 2 informers, 100 writes/s, both
// modes, with client-go's inconsistency detectors on. Every informer must get every write made
// after its own sync point, once and in rv order, and end with its cache equal to a fresh LIST;
// the writer alone is the baseline; the detectors must have checked each informer's sync (and,
// finding nothing, not panicked the lab).
func TestWritesRun(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("make bench measures through /proc: Linux only")
	}
	rep, stdout := runBench(t, "-servers", envtestbin.DefaultVersion, "-cases", "writes", "-write-rates", "100",
		"-writes-count", "300", "-writes-k", "2", "-writes-alone", "2s", "-detectors",
		"-repeats", "1", "-overhead=false", "-settle", "5s", "-fresh=false")
	if len(rep.Results) != 2 || len(rep.Alone) != 1 {
		t.Fatalf("%d results and %d writer-alone runs, want 2 modes and 1", len(rep.Results), len(rep.Alone))
	}
	if w := rep.Alone[0].Writer; w == nil || w.Writes < 100 || w.Reads < 10 {
		t.Errorf("writer alone for 2 s at 100/s: %+v, want at least 100 writes and 10 reads", w)
	}
	for _, r := range rep.Results {
		switch {
		case r.Writer == nil || r.Writer.Writes == 0:
			t.Errorf("%s: no writes during the sync: %+v", r.Mode, r.Writer)
		case len(r.Problems) > 0:
			t.Errorf("%s: %s", r.Mode, strings.Join(r.Problems, "; "))
		case r.Detector < 2:
			t.Errorf("%s: client-go's inconsistency detectors checked %d syncs, want one per informer at least", r.Mode, r.Detector)
		case r.Metrics[`apiserver_watch_cache_consistent_read_total{fallback="false",success="true"}`] == 0:
			t.Errorf("%s: the reader's consistent LISTs did not move kube-apiserver's consistent_read_total: %v", r.Mode, r.Metrics)
		}
	}
	table := "== kube-apiserver " + envtestbin.DefaultVersion + ", writes during the initial sync =="
	if !strings.Contains(stdout, table) || !strings.Contains(stdout, "held in 1 of 1") {
		t.Errorf("the terminal has no writes table %q saying the runs held:\n%s", table, stdout)
	}
}

// kube-apiserver's /metrics, as 1.32 writes them: the case's series, under their other labels.
func TestParseMetrics(t *testing.T) {
	text := `# TYPE apiserver_watch_cache_consistent_read_total counter
apiserver_watch_cache_consistent_read_total{fallback="false",resource="/configmaps",success="true"} 7
apiserver_watch_cache_consistent_read_total{fallback="true",resource="/configmaps",success="true"} 2
apiserver_watch_cache_consistent_read_total{fallback="false",resource="/pods",success="true"} 9
apiserver_terminated_watchers_total{resource="configmaps"} 1
apiserver_watch_cache_read_wait_seconds_sum{group="",resource="configmaps"} 0.5
apiserver_watch_cache_read_wait_seconds_bucket{resource="configmaps",le="0.005"} 3
`
	got := parseMetrics(text, "configmaps")
	want := map[string]float64{
		`apiserver_watch_cache_consistent_read_total{fallback="false",success="true"}`: 7,
		`apiserver_watch_cache_consistent_read_total{fallback="true",success="true"}`:  2,
		"apiserver_terminated_watchers_total":                                          1,
		"apiserver_watch_cache_read_wait_seconds_sum":                                  0.5,
	}
	if len(got) != len(want) {
		t.Errorf("got %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %v, want %v (all: %v)", k, got[k], v, got)
		}
	}
	r := Result{Metrics: metricDeltas(map[string]float64{`apiserver_watch_cache_consistent_read_total{fallback="true",success="true"}`: 1}, got)}
	if n := r.metricSum("apiserver_watch_cache_consistent_read_total", `fallback="true"`); n != 1 {
		t.Errorf("reads sent to etcd: %v, want 1 (2 after, 1 before)", n)
	}
}

// -cases writes is one case per rate; a rate, a K or a count that is no number of them is
// refused with a line naming the flag.
func TestParseFlagsWrites(t *testing.T) {
	o, err := parseFlags([]string{"-cases", "writes", "-write-rates", "20, 500", "-writes-k", "4", "-root", "/r"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	cs, _ := o.selected()
	if len(cs) != 2 || cs[0].Name != "writes-20" || cs[1].WriteRate != 500 || cs[1].Runs(o.ks)[0] != 4 || cs[0].Objects != 10000 || cs[0].Resource != record.ResourceConfigMaps {
		t.Errorf("cases %+v: want writes-20 and writes-500, 10000 ConfigMaps at K=4", cs)
	}
	if f := docFiles(cs); f.page != "writes.md" || f.results != "writes-results.json" {
		t.Errorf("a writes run's page: %s and %s", f.page, f.results)
	}
	for args, flag := range map[string]string{"-write-rates 0": "-write-rates", "-write-rates 20,x": "-write-rates", "-writes-k 27": "-writes-k",
		"-writes-count 0": "-writes-count", "-writes-alone 0s": "-writes-alone"} {
		_, err := parseFlags(append(strings.Fields(args), "-cases", "writes", "-root", "/r"), io.Discard)
		if err == nil || !strings.Contains(err.Error(), flag) {
			t.Errorf("parseFlags(%s): %v, want an error naming %s", args, err, flag)
		}
	}
}
