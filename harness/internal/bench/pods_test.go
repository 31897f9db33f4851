package bench

import (
	"io"
	"math"
	"runtime"
	"strings"
	"testing"

	"informer-lab/envtestbin"
)

// A Pod of the pods cases is the size asked for, as JSON, and stays Pending on a cluster.
func TestPodObject(t *testing.T) {
	for _, size := range []int64{4 << 10, 10 << 10, 100 << 10} {
		p := podObject("ns", 7, size)
		got := podJSONSize(p)
		if math.Abs(float64(got-size)) > 16 {
			t.Errorf("a Pod of %d bytes is %d bytes of JSON", size, got)
		}
		ports := map[int32]bool{}
		for _, c := range p.Spec.Containers {
			for _, port := range c.Ports {
				if ports[port.ContainerPort] { // kube-apiserver warns of each, for each Pod created
					t.Errorf("port %d twice", port.ContainerPort)
				}
				ports[port.ContainerPort] = true
			}
		}
		if p.Spec.SchedulerName != podSchedulerName || len(p.Spec.Containers) != 2 || p.Name != "bench-000007" {
			t.Errorf("%d: %s, scheduler %q, %d containers", size, p.Name, p.Spec.SchedulerName, len(p.Spec.Containers))
		}
	}
	if a, b := podObject("ns", 1, 10<<10), podObject("ns", 1, 10<<10); a.Annotations["informer-lab/padding"] != b.Annotations["informer-lab/padding"] {
		t.Error("the same Pod twice differs: the runs would not seed the same objects")
	}
}

func TestParsePodCounts(t *testing.T) {
	if got, err := parsePodCounts("400, 100,300,200"); err != nil || len(got) != 4 || got[0] != 100 || got[3] != 400 {
		t.Errorf("got %v, %v", got, err)
	}
	for _, bad := range []string{"100,200,300", "100,200,300,x", "100,200,300,0", "100,200,200,300"} {
		if _, err := parsePodCounts(bad); err == nil || !strings.HasPrefix(err.Error(), "-pods-counts: ") {
			t.Errorf("%s: %v, want a -pods-counts error", bad, err)
		}
	}
	o, err := parseFlags([]string{"-cases", "pods"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if len(o.pods) != 4 || o.pods[3].Objects != 20000 || o.pods[0].Ks[0] != 4 || len(o.servers) != 2 {
		t.Errorf("-cases pods: %+v on %v, want 4 counts up to 20000 at K=4 on %s", o.pods, o.servers, DefaultPodServers)
	}
}

// The fit finds a straight line where the runs lie on one, and carries it to podTargets.
func TestFitPods(t *testing.T) {
	var rep Report
	var cases []Case
	for _, n := range []int{1000, 2000, 3000, 4000} {
		c := Case{Name: podCaseName(n), Objects: n, Ks: []int{2}}
		cases = append(cases, c)
		for rep2, wobble := range []float64{-0.1, 0.1} {
			rep.Results = append(rep.Results, Result{Server: "s", Case: c.Name, K: 2, Mode: List, Rep: rep2, SyncMillis: 1000 * (2 + 0.001*float64(n) + wobble)})
		}
	}
	f := fitPods(rep.Results, "s", cases, List, SyncTime)
	if !f.ok || math.Abs(f.PerPod-0.001) > 1e-9 || math.Abs(f.At0-2) > 1e-9 || f.R2 < 0.99 || f.N != 8 || f.MaxCount != 4000 {
		t.Fatalf("fit %+v, want 2 s + 1 ms per Pod", f)
	}
	if got := f.at(80000); math.Abs(got-82) > 1e-6 {
		t.Errorf("at 80k: %.3f, want 82", got)
	}
	if f := fitPods(rep.Results, "s", cases, Streaming, SyncTime); f.ok {
		t.Errorf("a fit of no runs: %+v", f)
	}
}

// TestPodsRun is a reduced -cases pods on envtest: four counts of Pods of 10 KiB, K=2, each
// synced by LIST→WATCH and by a streaming list; every informer gets every Pod, and the bytes
// received grow in a straight line with the count, which the fit finds and the page and plot
// carry, marked extrapolated, to 80k and 165k Pods.
func TestPodsRun(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("make bench measures through /proc: Linux only")
	}
	rep, stdout := runBench(t, "-servers", envtestbin.DefaultVersion, "-cases", "pods", "-pods-counts", "100,200,300,400", "-pods-k", "2",
		"-repeats", "1", "-overhead=false", "-settle", "2s", "-fresh=false")
	cases := rep.podScale()
	if len(cases) != 4 || len(rep.Results) != 8 {
		t.Fatalf("%d cases, %d runs; want 4 counts × 2 modes", len(cases), len(rep.Results))
	}
	for _, r := range rep.Results {
		n := map[string]int{"pods-000100": 100, "pods-000200": 200, "pods-000300": 300, "pods-000400": 400}[r.Case]
		want := map[Mode]int{List: 4, Streaming: 2}[r.Mode]
		t.Logf("%s %s: sync %.0f ms, %d requests, %d bytes received, %d on the wire", r.Case, r.Mode, r.SyncMillis, r.Requests, r.Bytes, r.WireBytes)
		if r.Requests != want || r.Bytes < int64(2*n*10<<10) {
			t.Errorf("%s %s: %d requests, %d bytes received; want %d, and both informers' %d Pods of 10 KiB", r.Case, r.Mode, r.Requests, r.Bytes, want, n)
		}
	}
	sv := rep.Servers[0].Name
	for _, m := range Modes {
		f := fitPods(rep.Results, sv, cases, m, Received)
		perPod := f.PerPod * (1 << 20) / 2 // bytes per Pod per informer
		if !f.ok || f.R2 < 0.99 || perPod < 10<<10 || perPod > 20<<10 {
			t.Errorf("%s: bytes received fitted %+v (%.0f bytes per Pod and informer); want a straight line of 10 to 20 KiB per Pod", m, f, perPod)
		}
	}
	for _, want := range []string{"Pods at scale, K=2", "at 80k Pods (extrapolated)", "at 165k Pods (extrapolated)"} {
		if !strings.Contains(stdout, want) {
			t.Errorf("the terminal lacks %q:\n%s", want, stdout)
		}
	}
	doc := Doc(rep, docFiles(rep.Cases))
	if !strings.Contains(doc, "### Pods at scale, K=2") || !strings.Contains(doc, "](pods.svg)") || strings.Contains(doc, "### pods-000100") {
		t.Errorf("the page's Pod section:\n%s", doc)
	}
	svg := PodsSVG(rep)
	if got := strings.Count(svg, "<circle") + strings.Count(svg, `width="7"`); got != 8*len(podPlotMetrics) {
		t.Errorf("the plot has %d marks, want every run in each of %d panels", got, len(podPlotMetrics))
	}
	if strings.Count(svg, `stroke-dasharray="6 4"`) != 2*len(podPlotMetrics) || !strings.Contains(svg, "extrapolated") {
		t.Errorf("the plot lacks each mode's extrapolated line in each panel")
	}
}
