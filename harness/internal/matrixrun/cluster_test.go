package matrixrun

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"informer-lab/harness/internal/cluster"
	"informer-lab/harness/internal/standin"
	"informer-lab/lab/controlplane"
	"informer-lab/lab/labtest"
	"informer-lab/record"
)

// The user's own cluster as the grid's one column. A control plane started apart from the
// matrix stands in for it, reached as users who are neither admins nor anything but what
// RBAC binds them to (kube-apiserver runs with --authorization-mode=RBAC, see
// controlplane.UserKubeconfig), each authenticating through an exec plugin: the kubeconfig's
// own credentials are what every request uses, the labs' and the proxy's included.
func TestClusterColumn(t *testing.T) {
	ctx := t.Context()
	cp, admin := standin.Start(t, controlplane.Options{})
	keep := pids(cp)
	kc := standin.Kubeconfig(t, cp, standin.NoWatch, standin.Restricted) // current-context: the one without watch
	runs := func() []string { return standin.Namespaces(t, admin) }

	// 1. The user without watch, by the kubeconfig's current-context: refused before anything
	// is built or created, in one line that names what is missing and who lacks it.
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := Run(ctx, []string{"-out", out, "-kubeconfig", kc, "-clients", "client-v031-off", "-scenarios", "startup"}, &stdout, &stderr)
	refusal := regexp.MustCompile(`^error: user restricted-no-watch may not watch configmaps in namespace informer-lab-[a-z0-9]{5} \(SelfSubjectAccessReview\): ask for it or use another --context\n$`)
	if code != exitUsage || !refusal.MatchString(stderr.String()) {
		t.Errorf("without watch: exit %d, stderr %q; want exit %d and only the line %s", code, stderr.String(), exitUsage, refusal)
	}
	t.Logf("refused: %s", strings.TrimSpace(stderr.String()))
	if entries, _ := os.ReadDir(out); len(entries) > 0 || len(runs()) > 0 {
		t.Errorf("a refused run left %d entries in its output directory and namespaces %v", len(entries), runs())
	}

	// 2. The real matrix with the user who may: --context picks it.
	res, dirs := runGridBeside(t, keep, "-kubeconfig", kc, "-context", "restricted",
		"-clients", "client-v031-off,client-v037-on", "-scenarios", "startup,steady,reconnect,restart")
	if len(res.Servers) != 1 {
		t.Fatalf("columns %+v, want the cluster's alone (no --servers)", res.Servers)
	}
	// The restricted user may not read /metrics: the probe of a streaming list says the gate.
	col := res.Servers[0]
	if want := "cluster-" + cp.ServerVersion + " WatchList=true (probed: end bookmark)"; col.Name != want || col.FeatureGates != "WatchList=true" || col.Version != cp.ServerVersion {
		t.Errorf("column %+v, want %q with gates WatchList=true", col, want)
	}
	if len(res.Cells) != 4*2 {
		t.Errorf("%d cells, want 4 scenarios x 2 clients", len(res.Cells))
	}
	for _, c := range res.Cells {
		where := c.Scenario + " / " + c.Client
		if c.Verdict == "" || c.Lost != "" || c.Failed != "" || len(c.Problems) > 0 || !c.Agrees {
			t.Errorf("%s: verdict %q (agrees %v), lost %q, failed %q, problems %v", where, c.Verdict, c.Agrees, c.Lost, c.Failed, c.Problems)
		}
		switch c.Scenario {
		case record.ScenarioRestart:
			if !c.NotApplicable || c.Verdict != record.NotApplicableServerProcesses {
				t.Errorf("%s: %q (n/a %v), want %q", where, c.Verdict, c.NotApplicable, record.NotApplicableServerProcesses)
			}
			continue
		case record.ScenarioStartup:
			// The expectation is read from what the server said (WatchList=true): it streams.
			want := map[string]string{"client-v031-off": record.ShapeListWatch, "client-v037-on": record.ShapeStream}[c.Client]
			if c.Expected != want || !strings.HasPrefix(c.Verdict, want+" (") {
				t.Errorf("%s: verdict %q, expected %q; want %q", where, c.Verdict, c.Expected, want)
			}
		case record.ScenarioReconnect: // through the proxy, which authenticates with the exec plugin too
			if !strings.Contains(c.Verdict, "WATCH from rv") {
				t.Errorf("%s: verdict %q, want watches again from the last rv", where, c.Verdict)
			}
		}
		if _, err := os.Stat(filepath.Join(dirs[0], c.Log)); c.Log == "" || err != nil {
			t.Errorf("%s: no cell log (%q): %v", where, c.Log, err)
		}
	}

	// 3. Ctrl-C half-way through a run: the grid so far, and the namespace deleted all the same.
	interrupted, cancel := context.WithCancel(ctx)
	var said labtest.Buffer
	done := make(chan int)
	go func() {
		done <- Run(interrupted, []string{"-out", t.TempDir(), "-kubeconfig", kc, "-context", "restricted", "-clients", "client-v031-off", "-scenarios", "steady"}, io.Discard, &said)
	}()
	for !bytes.Contains(said.Bytes(), []byte("writing 8 changes")) {
		select {
		case code := <-done:
			t.Fatalf("exit %d before the writes began:\n%s", code, said.Bytes())
		case <-time.After(20 * time.Millisecond):
		}
	}
	cancel()
	code = <-done
	t.Logf("interrupted:\n%s", said.Bytes())
	if code != exitRun || !bytes.Contains(said.Bytes(), []byte("interrupted during")) || !bytes.Contains(said.Bytes(), []byte("deleted namespace")) {
		t.Errorf("interrupted: exit %d, want %d, the grid so far and the namespace deleted", code, exitRun)
	}
	labtest.CheckNoChildren(t, keep...)

	// 4. What the runs made is gone: their namespaces are deleted (envtest has no namespace
	// controller, so they stay Terminating), with no ConfigMap in them, and nothing anywhere
	// carries the run label.
	if names := runs(); len(names) != 2 {
		t.Errorf("namespaces labelled %s: %v, want the two runs'", record.RunLabel, names)
	}
	if left := standin.Left(t, admin); left != "" {
		t.Errorf("after the runs: %s", left)
	}
	// No credential in anything the run wrote: the exec plugin's certificate and key stay in
	// the kubeconfig's own files.
	filepath.WalkDir(filepath.Dir(dirs[0]), func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if b, _ := os.ReadFile(path); bytes.Contains(b, []byte("-----BEGIN")) {
				t.Errorf("%s holds PEM data", path)
			}
		}
		return nil
	})

	// 5. A user who may read /metrics (the admin) gets the gates from there.
	akc, err := cp.AdminKubeconfig("admin")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "admin.kubeconfig")
	if err := os.WriteFile(path, akc, 0o600); err != nil {
		t.Fatal(err)
	}
	cl, err := cluster.Open(ctx, path, "")
	if err != nil {
		t.Fatal(err)
	}
	if f := cl.Features(ctx, "default"); f.Gates != "WatchList=true" || f.How != "from /metrics" {
		t.Errorf("the admin's features %+v, want WatchList=true from /metrics", f)
	}
}

// A cluster whose kube-apiserver does not stream lists (a stand-in with WatchList=false): the
// probe is refused with 422, the column says so, and the gate-on cells are expected to fall
// back, which they do.
func TestClusterColumnWithoutWatchList(t *testing.T) {
	cp, _ := standin.Start(t, controlplane.Options{Settings: "WatchList=false"})
	res, _ := runGridBeside(t, pids(cp), "-kubeconfig", standin.Kubeconfig(t, cp, standin.Restricted), "-clients", "client-v031-off,client-v037-on", "-scenarios", "startup")
	if want := "cluster-" + cp.ServerVersion + " WatchList=false (probed: 422)"; len(res.Servers) != 1 || res.Servers[0].Name != want {
		t.Errorf("columns %+v, want %q", res.Servers, want)
	}
	for _, c := range res.Cells {
		want := map[string]string{"client-v031-off": record.ShapeListWatch, "client-v037-on": record.ShapeFallback}[c.Client]
		if c.Expected != want || !c.Agrees || !strings.HasPrefix(c.Verdict, want+" (") {
			t.Errorf("%s: verdict %q, expected %q (agrees %v); want %q", c.Client, c.Verdict, c.Expected, c.Agrees, want)
		}
	}
}

// pids are the stand-in's etcd and kube-apiserver: the test's processes, not any the grid left.
func pids(cp *controlplane.ControlPlane) []int {
	var out []int
	for _, pid := range []func() (int, error){cp.EtcdPID, cp.APIServerPID} {
		if p, err := pid(); err == nil {
			out = append(out, p)
		}
	}
	return out
}

// A kubeconfig that cannot be used fails fast with exit 2 and one line that says what to fix,
// before any directory is made.
func TestClusterBadInput(t *testing.T) {
	dir := t.TempDir()
	nowhere := filepath.Join(dir, "nowhere.kubeconfig")
	garbage := filepath.Join(dir, "garbage.kubeconfig")
	os.WriteFile(nowhere, []byte("apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\nusers: [{name: u, user: {token: not-a-real-token}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n"), 0o600)
	os.WriteFile(garbage, []byte("clusters: [unclosed\n  token: not-a-real-token\n"), 0o600)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--kubeconfig", garbage}, "kubeconfig " + garbage + " does not parse"},
		{[]string{"--kubeconfig", filepath.Join(dir, "missing")}, "no such file: pass the path of a kubeconfig file"},
		{[]string{"--kubeconfig", nowhere, "--context", "prod"}, `has no context "prod": its contexts are x`},
		{[]string{"--kubeconfig", nowhere}, "the cluster of kubeconfig " + nowhere + " does not answer at https://127.0.0.1:1"},
		{[]string{"--context", "prod"}, "--context prod goes with --kubeconfig"},
		{[]string{"--kubeconfig", nowhere, "--docs"}, "--docs writes docs/ from envtest servers only"},
	} {
		out := t.TempDir()
		var stdout, stderr bytes.Buffer
		code := Run(context.Background(), append([]string{"-out", out}, tc.args...), &stdout, &stderr)
		t.Logf("exit %d: %s", code, strings.TrimSpace(stderr.String()))
		if code != exitUsage || !strings.Contains(stderr.String(), tc.want) || strings.Count(stderr.String(), "\n") != 1 || strings.Contains(stderr.String(), "not-a-real-token") {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and one line with %q, no token", tc.args, code, stderr.String(), exitUsage, tc.want)
		}
		if entries, _ := os.ReadDir(out); len(entries) > 0 {
			t.Errorf("%v: bad input left %d entries in the output directory", tc.args, len(entries))
		}
	}
}
