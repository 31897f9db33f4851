package bench

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"informer-lab/harness/internal/standin"
	"informer-lab/lab/controlplane"
	"informer-lab/lab/labtest"
	"informer-lab/record"

	rbacv1 "k8s.io/api/rbac/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
)

// make bench KUBECONFIG=path, on a stand-in cluster: a control plane of its own, reached as
// users bound by RBAC to what a run of the small case needs (standin), one of them also to GET
// /metrics, through an exec plugin. envtest runs no namespace controller, so the test plays
// kube-controller-manager's: it finalizes every run namespace once deleted.
func TestClusterRun(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("the lab's memory comes from /proc: Linux only")
	}
	ctx := t.Context()
	cp, admin := standin.Start(t, controlplane.Options{})
	const reader, blind = "bench-metrics", "bench-no-metrics"
	for _, u := range []string{reader, blind} {
		standin.Grant(t, admin, u, needs("any", Case{Resource: record.ResourceConfigMaps}))
	}
	grantMetrics(t, admin, reader)
	kc := standin.Kubeconfig(t, cp, reader, blind) // current-context: the reader
	go finalizeNamespaces(ctx, admin)
	gone := func(when string) {
		t.Helper()
		if left := standin.Namespaces(t, admin); len(left) > 0 {
			t.Errorf("%s: namespaces %v left on the cluster", when, left)
		}
	}

	// 1. What makes no sense on a cluster: one line, exit 2, nothing created.
	for _, tc := range []struct{ args, want string }{
		{"-servers 1.32.13", "-servers picks envtest's kube-apiservers"},
		{"-fresh", "-fresh restarts kube-apiserver"},
		{"-small-count 5000", "-small-count 5000 is more than -max-objects 2000"},
		{"-cases cbor", "-cases cbor installs a CustomResourceDefinition"},
		{"-cases secrets -secrets-count 10", "user bench-metrics may not create secrets in namespace informer-lab-bench-secrets-"},
	} {
		var stderr bytes.Buffer
		code := Run(ctx, append([]string{"-out", t.TempDir(), "-kubeconfig", kc}, strings.Fields(tc.args)...), io.Discard, &stderr)
		if code != 2 || strings.Count(stderr.String(), "\n") != 1 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 and one line with %q", tc.args, code, stderr.String(), tc.want)
		}
	}

	// 2. -dry-run: what would be made and run, the counts it lowered, and nothing made.
	var dry, dryErr bytes.Buffer
	if code := Run(ctx, []string{"-kubeconfig", kc, "-cases", "small", "-k", "1,2", "-repeats", "2", "-dry-run"}, &dry, &dryErr); code != 0 {
		t.Fatalf("-dry-run: exit %d: %s", code, dryErr.String())
	}
	t.Logf("-dry-run:\n%s", dry.String())
	for _, want := range []string{"kube-apiserver " + cp.ServerVersion + ", user " + reader, "-small-count 2000 (not 20000: -max-objects)",
		"namespace informer-lab-bench-small-xxxxx: small: 2000 ConfigMaps × 1.0 KiB (2.0 MiB); K = 1, 2, 2 repeat(s)",
		"12 runs, each one lab process", "kube-apiserver's memory and CPU: GET /metrics of the cluster", "nothing was created"} {
		if !strings.Contains(dry.String(), want) {
			t.Errorf("-dry-run lacks %q", want)
		}
	}
	gone("after -dry-run")

	// 3. A real run by the user who may read /metrics: kube-apiserver's figures come from there.
	run := []string{"-kubeconfig", kc, "-cases", "small", "-small-count", "200", "-k", "2", "-repeats", "1", "-overhead=false", "-settle", "2s"}
	rep, stdout := runBench(t, run...)
	if len(rep.Servers) != 1 || rep.Servers[0].Name != "cluster-"+cp.ServerVersion || rep.Servers[0].Source != metricsSource || len(rep.Results) != 2 {
		t.Fatalf("servers %+v, %d results; want cluster-%s read from /metrics, and 2 runs", rep.Servers, len(rep.Results), cp.ServerVersion)
	}
	for _, r := range rep.Results {
		t.Logf("%s: baseline %s, peak %s, CPU %.0f ms, %d requests, %s", r.Mode, FormatBytes(r.APIBaseline), FormatBytes(r.APIPeakHWM), r.APICPUMillis, r.Requests, FormatBytes(r.Bytes))
		if r.APIMissing != "" || r.APIBaseline < 10<<20 || r.APIPeakHWM < r.APIBaseline || r.APICPUMillis <= 0 || r.Requests < 2 || r.Bytes < 2*200*1024 || r.LabPeakHWM == 0 {
			t.Errorf("%s: %+v; want kube-apiserver's memory and CPU, and both informers' 200 ConfigMaps", r.Mode, r)
		}
	}
	t.Logf("stdout:\n%s", stdout)
	if !strings.Contains(stdout, "apiserver +MiB, LIST→WATCH") || !strings.Contains(stdout, "kube-apiserver's memory and CPU: GET /metrics of the cluster") {
		t.Errorf("the terminal has no server columns, or no line saying where they come from:\n%s", stdout)
	}
	gone("after the run")

	// 4. The user who may not: the same runs, the client side only, said plainly.
	rep, stdout = runBench(t, append(run, "-context", blind)...)
	for _, r := range rep.Results {
		if r.APIMissing != forbiddenSource || r.Requests < 2 || r.Bytes < 2*200*1024 {
			t.Errorf("%s without /metrics: %+v; want %q and the client's figures", r.Mode, r, forbiddenSource)
		}
	}
	t.Logf("stdout:\n%s", stdout)
	if !strings.Contains(stdout, forbiddenSource) || strings.Contains(stdout, "apiserver +MiB") || !strings.Contains(stdout, "sync s, streaming") {
		t.Errorf("without /metrics, the terminal:\n%s", stdout)
	}
	gone("after the run without /metrics")

	// 5. Ctrl-C once seeded: the namespace goes all the same.
	interrupted, cancel := context.WithCancel(ctx)
	var said labtest.Buffer
	done := make(chan int)
	go func() { done <- Run(interrupted, append([]string{"-out", t.TempDir()}, run...), io.Discard, &said) }()
	seeded := regexp.MustCompile(`seeded .* in namespace informer-lab-bench-small-`)
	for !seeded.Match(said.Bytes()) {
		select {
		case code := <-done:
			t.Fatalf("exit %d before seeding ended:\n%s", code, said.Bytes())
		case <-time.After(20 * time.Millisecond):
		}
	}
	cancel()
	code := <-done
	t.Logf("interrupted:\n%s", said.Bytes())
	if code != 1 || !bytes.Contains(said.Bytes(), []byte("deleted namespace informer-lab-bench-small-")) || !bytes.Contains(said.Bytes(), []byte("error: interrupted")) {
		t.Errorf("interrupted: exit %d, want 1 and the namespace deleted:\n%s", code, said.Bytes())
	}
	gone("after Ctrl-C")
}

// grantMetrics lets user GET /metrics, as the default roles cluster-admin and system:monitoring
// do.
func grantMetrics(t *testing.T, admin kubernetes.Interface, user string) {
	t.Helper()
	name := user + "-metrics"
	role := &rbacv1.ClusterRole{ObjectMeta: metav1.ObjectMeta{Name: name}, Rules: []rbacv1.PolicyRule{{NonResourceURLs: []string{"/metrics"}, Verbs: []string{"get"}}}}
	binding := &rbacv1.ClusterRoleBinding{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		RoleRef:    rbacv1.RoleRef{APIGroup: rbacv1.GroupName, Kind: "ClusterRole", Name: name},
		Subjects:   []rbacv1.Subject{{Kind: rbacv1.UserKind, APIGroup: rbacv1.GroupName, Name: user}},
	}
	if _, err := admin.RbacV1().ClusterRoles().Create(t.Context(), role, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	if _, err := admin.RbacV1().ClusterRoleBindings().Create(t.Context(), binding, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
}

// finalizeNamespaces is the stand-in's namespace controller until ctx ends: every run
// namespace being deleted loses its finalizers, and kube-apiserver removes it.
func finalizeNamespaces(ctx context.Context, admin kubernetes.Interface) {
	for ctx.Err() == nil {
		if l, err := admin.CoreV1().Namespaces().List(ctx, metav1.ListOptions{LabelSelector: record.RunLabel}); err == nil {
			for i := range l.Items {
				if ns := &l.Items[i]; ns.DeletionTimestamp != nil {
					ns.Spec.Finalizers = nil
					admin.CoreV1().Namespaces().Finalize(ctx, ns, metav1.UpdateOptions{})
				}
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(200 * time.Millisecond):
		}
	}
}

// A bad flag without a cluster: one line, exit 2.
func TestClusterFlags(t *testing.T) {
	for _, tc := range []struct{ args, want string }{
		{"-context prod", "-context goes with -kubeconfig"},
		{"-kubeconfig x -max-objects 0", "-max-objects must be at least 1"},
		{"-kubeconfig x -docs", "drop -docs"},
		{"-kubeconfig x -cases pods -pods-counts 100,200,300,5000", "-pods-counts 100,200,300,5000 has more than -max-objects 2000"},
	} {
		var stderr bytes.Buffer
		code := Run(t.Context(), append([]string{"-root", "/r"}, strings.Fields(tc.args)...), io.Discard, &stderr)
		if code != 2 || strings.Count(stderr.String(), "\n") != 1 || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%s: exit %d, stderr %q; want exit 2 and one line with %q", tc.args, code, stderr.String(), tc.want)
		}
	}
	// Counts not given are lowered to -max-objects, and -fresh is off.
	o, err := parseFlags([]string{"-kubeconfig", "x", "-max-objects", "300", "-large-count", "100", "-root", "/r"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if o.large.Objects != 100 || o.small.Objects != 300 || o.secrets.Objects != 300 || o.fresh || o.servers != nil || !filepath.IsAbs(o.kubeconfig) {
		t.Errorf("on a cluster: large %d, small %d, secrets %d, fresh %v, servers %v, kubeconfig %q; want 100, 300, 300, false, none, absolute",
			o.large.Objects, o.small.Objects, o.secrets.Objects, o.fresh, o.servers, o.kubeconfig)
	}
	// The Pod cases' default counts become four up to -max-objects.
	o, err = parseFlags([]string{"-kubeconfig", "x", "-cases", "pods", "-root", "/r"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	var counts []int
	for _, c := range o.pods {
		counts = append(counts, c.Objects)
	}
	if fmt.Sprint(counts) != "[250 500 1000 2000]" || len(o.capped) != 1 {
		t.Errorf("-cases pods on a cluster: counts %v, capped %v; want 250, 500, 1000 and 2000, said once", counts, o.capped)
	}
}

// kube-apiserver's process series, as its /metrics writes them.
func TestParseProcess(t *testing.T) {
	s, err := parseProcess("# HELP process_resident_memory_bytes Resident memory size in bytes.\nprocess_resident_memory_bytes 2.9769728e+08\nprocess_cpu_seconds_total 12.5\nprocess_start_time_seconds 1.75e+09\nprocess_max_fds 1.048576e+06\n")
	if err != nil || s.rss != 297697280 || s.cpu != 12.5 || s.start != 1.75e9 {
		t.Errorf("parseProcess: %+v, %v", s, err)
	}
	if _, err := parseProcess("go_goroutines 7\n"); err == nil {
		t.Errorf("parseProcess without the process series: no error")
	}
}
