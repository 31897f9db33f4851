package probe

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"informer-lab/envtestbin"
	"informer-lab/harness/internal/proxy"
	"informer-lab/lab/aggregated"
	"informer-lab/lab/labtest"
	"informer-lab/record"
)

func TestMain(m *testing.M) { labtest.Main(m) }

// run runs make probe's main on a kubeconfig and returns its exit code, output and report.
func run(t *testing.T, kubeconfig []byte, args ...string) (int, string, string, *Report) {
	t.Helper()
	dir := t.TempDir()
	kc, js := filepath.Join(dir, "kubeconfig"), filepath.Join(dir, "grades.json")
	if err := os.WriteFile(kc, kubeconfig, 0o600); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), append([]string{"-root", "../../..", "-out", dir, "-kubeconfig", kc, "-json", js, "-timeout", "3s"}, args...), &stdout, &stderr)
	var rep Report
	if b, err := os.ReadFile(js); err == nil {
		if err := json.Unmarshal(b, &rep); err != nil {
			t.Fatal(err)
		}
	}
	return code, stdout.String(), stderr.String(), &rep
}

// faultTimeout is how long the probe waits for an end bookmark through a fault: one that never
// comes is graded when it passes, and a stream that ends at all does so within milliseconds here.
const faultTimeout = "3s"

// Every resource of a real kube-apiserver streams; through the fault proxy, each fault of the
// grid is graded as its pattern, with what the committed fault grid shows for it; a user without
// permissions gets one line and exit 2, or nothing graded.
func TestProbe(t *testing.T) {
	ctx := context.Background()
	cp := labtest.StartServer(t, ctx, envtestbin.DefaultVersion)
	admin, err := cp.AdminKubeconfig("probe-admin")
	if err != nil {
		t.Fatal(err)
	}

	t.Run("envtest", func(t *testing.T) {
		code, out, stderr, rep := run(t, admin)
		t.Logf("%s\n%s", out, stderr)
		if code != 0 || len(rep.Grades) < 40 {
			t.Fatalf("exit %d, %d grades, want 0 and every built-in resource", code, len(rep.Grades))
		}
		for _, g := range rep.Grades {
			if g.Verdict != Streams {
				t.Errorf("%s: %s %s, want streams", g.Resource, g.Verdict, g.Detail)
			}
		}
		if !strings.Contains(stderr, "deleted namespace "+rep.Namespace) {
			t.Errorf("the probe's namespace %s was not deleted: %s", rep.Namespace, stderr)
		}
		// report.html: the same grades, one row per resource.
		_, path, _ := strings.Cut(out, "\nreport: ")
		page, err := os.ReadFile(strings.TrimSpace(path))
		if err != nil {
			t.Fatalf("report.html: %v (stdout ends %q)", err, path)
		}
		rows := strings.Count(string(page), "<tr><th>") - 1 // the head is a row too
		if rows != len(rep.Grades) || !strings.Contains(string(page), "<th>configmaps</th><td>namespace</td><td>streams</td>") {
			t.Errorf("report.html: %d rows, want one per grade (%d), configmaps streaming among them", rows, len(rep.Grades))
		}
	})

	for _, tc := range []struct {
		fault   string
		verdict Verdict
		pattern string
		grid    string // what the committed fault grid says of it, in part
	}{
		{record.FaultNoEndBookmark, Misbehaves, record.FaultNoEndBookmark, "never syncs"},
		{record.FaultStripAnnotations, Misbehaves, record.FaultStripAnnotations, "never syncs"},
		{record.FaultCutInitialStream + "=1", Misbehaves, record.FaultCutInitialStream, "re-streams in a hot loop"},
		{record.FaultTooLargeRV, Misbehaves, record.FaultTooLargeRV, "never syncs"},
		{record.FaultRefuseWatchList + "=400", Refuses, record.FaultRefuseWatchList + "=400", "falls back with extra requests"},
	} {
		t.Run(tc.fault, func(t *testing.T) {
			f, err := proxy.ParseFault(tc.fault)
			if err != nil {
				t.Fatal(err)
			}
			p, err := proxy.Start(cp.Config, proxy.Options{Fault: &f})
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			kc, err := p.Kubeconfig()
			if err != nil {
				t.Fatal(err)
			}
			code, out, _, rep := run(t, kc, "-resources", "configmaps,namespaces", "-timeout", faultTimeout)
			t.Logf("%s", out)
			if code != 0 || len(rep.Grades) != 2 {
				t.Fatalf("exit %d, grades %+v", code, rep.Grades)
			}
			for _, g := range rep.Grades {
				if g.Verdict != tc.verdict || g.Pattern != tc.pattern {
					t.Errorf("%s: %s %q (%s), want %s %q", g.Resource, g.Verdict, g.Pattern, g.Detail, tc.verdict, tc.pattern)
				}
			}
			if lines := strings.Join(rep.Hits[tc.pattern], "\n"); !strings.Contains(lines, tc.grid) {
				t.Errorf("the fault grid for %s: %q, want it to say %q", tc.pattern, lines, tc.grid)
			}
		})
	}

	t.Run("restricted user", func(t *testing.T) {
		nobody, err := cp.UserKubeconfig("probe-nobody")
		if err != nil {
			t.Fatal(err)
		}
		code, _, stderr, _ := run(t, nobody)
		if lines := strings.Split(strings.TrimSpace(stderr), "\n"); code != 2 || !strings.HasPrefix(lines[len(lines)-1], "error: may not create a namespace for the probe") {
			t.Errorf("exit %d, stderr %q; want 2 and one line saying to give -namespace", code, stderr)
		}
		code, out, _, rep := run(t, nobody, "-namespace", "default")
		if code != 0 || len(rep.Grades) != 0 || len(rep.Skipped) < 40 || !strings.Contains(out, "skipped configmaps: may not list") {
			t.Errorf("exit %d, %d grades, %d skipped; want 0, none, every resource skipped as not permitted:\n%s", code, len(rep.Grades), len(rep.Skipped), out)
		}
	})
}

// Real aggregated apiservers (k8s.io/sample-apiserver) registered with kube-apiserver's
// aggregator: each version of wardle.example.com is graded as its own server's. The one
// built on k8s.io/apiserver v0.33 (WatchList off by default) refuses the stream with 422, as
// kube-apiserver 1.33 does, and client-go falls back; v0.34's streams through the aggregator
// (make check: it needs make sample-apiservers).
func TestProbeAggregated(t *testing.T) {
	ctx := context.Background()
	cp := labtest.StartServer(t, ctx, envtestbin.DefaultVersion)
	admin, err := cp.AdminKubeconfig("probe-admin")
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Verdict{}
	for i, v := range envtestbin.SampleAPIServers {
		bin, err := envtestbin.SampleAPIServer(ctx, envtestbin.Options{NoBuild: true}, v)
		if err != nil {
			t.Fatalf("%v (make sample-apiservers)", err)
		}
		s, err := aggregated.Start(ctx, cp, bin, "probe-test-"+aggregated.GroupVersions[i], aggregated.GroupVersions[i])
		if err != nil {
			t.Fatal(err)
		}
		defer s.Stop()
		want["flunders."+s.Version+"."+aggregated.Group] = map[bool]Verdict{true: Refuses, false: Streams}[strings.HasPrefix(v, "0.33.")]
	}
	var names []string
	for n := range want {
		names = append(names, n)
	}
	code, out, stderr, rep := run(t, admin, "-resources", strings.Join(names, ","))
	t.Logf("%s\n%s", out, stderr)
	if code != 0 || len(rep.Grades) != len(want) {
		t.Fatalf("exit %d, grades %+v", code, rep.Grades)
	}
	for _, g := range rep.Grades {
		if g.Verdict != want[g.Resource] || g.APIService == "" {
			t.Errorf("%s: %s (%s) from APIService %q, want %s from an aggregated APIService", g.Resource, g.Verdict, g.Detail, g.APIService, want[g.Resource])
		}
		if g.Verdict == Refuses && !strings.HasPrefix(g.Detail, "422 ") {
			t.Errorf("%s: want the 422 kube-apiserver 1.33 answers too, got %s", g.Resource, g.Detail)
		}
	}
	if lines := strings.Join(rep.Hits[refusedByGate], "\n"); !strings.Contains(lines, "docs/matrix.md: ⚠ falls back with extra requests") {
		t.Errorf("want what the matrix shows after a 422 (a fallback), got %q", lines)
	}
}

// A -server whose settings start a server beside kube-apiserver (a second kube-apiserver, an
// aggregated apiserver) is refused: the probe runs kube-apiserver alone and would ignore it.
func TestServerBesideRefused(t *testing.T) {
	for _, server := range []string{"1.32.13:upgrade=1.33.13", "1.34.4:aggregated=0.33.5"} {
		_, err := parseFlags([]string{"-server", server}, io.Discard)
		if err == nil || !strings.Contains(err.Error(), "starts a server beside kube-apiserver") {
			t.Errorf("-server %s: %v, want it refused", server, err)
		}
	}
}
