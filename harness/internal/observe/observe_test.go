package observe

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"informer-lab/compare/observed"
	"informer-lab/harness/internal/cli"
	"informer-lab/harness/internal/labproc"
	"informer-lab/harness/internal/standin"
	"informer-lab/lab/controlplane"
	"informer-lab/lab/labtest"
	"informer-lab/lab/lifecycle"
	"informer-lab/record"
)

// The tests start etcd, kube-apiserver, labs and kubectl: this binary is their reaper.
func TestMain(m *testing.M) { lifecycle.TestMain(m) }

// observeRun is make observe with args, in a run directory of the test's own; it returns the
// exit code, what it printed, and the analysis of what it recorded.
func observeRun(t *testing.T, args ...string) (int, string, string, *observed.Report) {
	t.Helper()
	return observeUntil(t, nil, args...)
}

// observeUntil is observeRun interrupted, as Ctrl-C interrupts it, once what it printed so far
// satisfies until (never when nil).
func observeUntil(t *testing.T, until func(stderr string) bool, args ...string) (int, string, string, *observed.Report) {
	t.Helper()
	out := t.TempDir()
	var stdout bytes.Buffer
	var stderr labtest.Buffer
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	if until != nil {
		go func() {
			for ctx.Err() == nil && !until(string(stderr.Bytes())) {
				time.Sleep(50 * time.Millisecond)
			}
			cancel()
		}()
	}
	code := Run(ctx, append([]string{"-out", out, "-interval", "300ms", "-writes", "4"}, args...), &stdout, &stderr)
	runs, _ := filepath.Glob(filepath.Join(out, "observe-*", observed.File))
	if len(runs) != 1 {
		return code, stdout.String(), string(stderr.Bytes()), nil
	}
	obs, err := observed.Load(runs[0])
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []string{"report.html", "observe.txt", "cmd.stdout"} {
		if _, err := os.Stat(filepath.Join(filepath.Dir(runs[0]), f)); err != nil {
			t.Errorf("the run directory has no %s: %v", f, err)
		}
	}
	return code, stdout.String(), string(stderr.Bytes()), observed.Analyze(obs)
}

// resource finds what the client whose User-Agent ends in uaSuffix did with resource.
func resource(t *testing.T, rep *observed.Report, uaSuffix, resource string) *observed.Resource {
	t.Helper()
	for _, c := range rep.Clients {
		if !strings.HasSuffix(c.UserAgent, uaSuffix) {
			continue
		}
		for _, r := range c.Resources {
			if r.Name == resource {
				return r
			}
		}
	}
	var seen []string
	for _, c := range rep.Clients {
		seen = append(seen, c.Name+" ("+c.UserAgent+")")
	}
	t.Fatalf("no client with User-Agent …%s and resource %s; clients: %s", uaSuffix, resource, strings.Join(seen, "; "))
	return nil
}

// A lab seen from outside: what the proxy made of each informer's initial sync is what the lab's
// own wire log says it did, request for request and at the same rv, with its gate off and on.
func TestObserveLabAgreesWithItsOwnLog(t *testing.T) {
	root, err := filepath.Abs("../../..")
	if err != nil {
		t.Fatal(err)
	}
	bin, _, err := labproc.Build(context.Background(), filepath.Join(root, "client-v037"))
	if err != nil {
		t.Fatal(err)
	}
	for gate, want := range map[string]string{"off": record.ShapeListWatch, "on": record.ShapeStream} {
		t.Run("watch-list="+gate, func(t *testing.T) {
			own := filepath.Join(t.TempDir(), "lab.jsonl")
			code, _, stderr, rep := observeRun(t, "-for", "6s", "--", bin, "-kubeconfig", KubeconfigArg, "-records", own, "-name", "lab", "-watch-list", gate)
			if code != 0 || rep == nil {
				t.Fatalf("exit %d:\n%s", code, stderr)
			}
			recs, err := record.ReadFile(own)
			if err != nil {
				t.Fatal(err)
			}
			for _, tag := range []string{"A", "B"} {
				reqs, rv := ownHandshake(recs, tag)
				shape, label := record.Classify(reqs)
				seen := resource(t, rep, "informer/"+tag, record.ResourceConfigMaps)
				if shape != want || seen.Handshake.Label != label || seen.Handshake.SyncRV != rv {
					t.Errorf("informer %s: the lab logged %s at rv %s (want %s); the proxy saw %s at rv %s", tag, label, rv, want, seen.Handshake.Label, seen.Handshake.SyncRV)
				}
				for i, r := range seen.Handshake.Requests {
					if i < len(reqs) && (r.Method != reqs[i].Method || r.Path != reqs[i].Path || r.Query != reqs[i].Query || r.Status != reqs[i].Status || r.ContentType != reqs[i].ContentType) {
						t.Errorf("informer %s request %d: the lab logged %s, the proxy saw %s", tag, i+1, reqs[i].Text(), r.Text())
					}
				}
			}
		})
	}
}

// ownHandshake is an informer's initial requests as its lab logged them (up to its SETUP
// synced record), and the rv it synced at: its LIST's, or its end bookmark's.
func ownHandshake(recs []record.Record, tag string) (reqs []record.Record, rv string) {
	// Up to the informer's synced record and its first watch, whichever comes last: with
	// LIST→WATCH the informer is synced once the LIST is in its store, and on a loaded machine
	// it may say so before the WATCH it sends next is logged.
	synced, watched := false, false
	for _, r := range recs {
		if r.Tag != tag {
			continue
		}
		switch {
		case r.Kind == record.Setup && r.Step == record.StepSynced:
			synced = true
		case r.Kind == record.HTTP:
			reqs = append(reqs, r)
			watched = watched || record.IsWatch(r)
		case r.Kind == record.List, record.IsEndBookmark(r):
			rv = r.RV
		}
		if synced && watched {
			return reqs, rv
		}
	}
	return reqs, rv
}

// kubectl get -w, kubectl of the server's version built from k8s.io/kubernetes, ended as one
// ends it, by Ctrl-C: a LIST, then a WATCH from the LIST's rv, and every write while it watched
// printed by kubectl; what it did until the interrupt is analyzed.
func TestObserveKubectlGetWatch(t *testing.T) {
	// The script's first four writes: lab-cm-1 created, then updated three times.
	printed := func(stderr string) bool { return strings.Count(stderr, "[CMD] lab-cm-1 ") >= 4 }
	code, _, stderr, rep := observeUntil(t, printed, "-for", "5m", "--", "kubectl", "get", "configmaps", "-w")
	if !strings.Contains(stderr, "interrupted: stopping kubectl") {
		t.Errorf("not ended by the interrupt:\n%s", stderr)
	}
	if code != 0 || rep == nil {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	cm := resource(t, rep, "", record.ResourceConfigMaps)
	if cm.Handshake.Label != "LIST→WATCH (2 req)" || len(cm.Problems) > 0 {
		t.Errorf("kubectl get -w: %s, problems %v; want LIST→WATCH (2 req) resuming from the LIST's rv", cm.Handshake.Label, cm.Problems)
	}
	if cm.Events[record.EventAdded] == 0 || cm.Events[record.EventModified] == 0 {
		t.Errorf("kubectl's watch delivered %v: the writes made while it watched are missing", cm.Events)
	}
	if !strings.Contains(stderr, "[CMD] lab-cm-1") {
		t.Errorf("kubectl did not print the ConfigMap written while it watched:\n%s", stderr)
	}
}

// Bad input is one line and exit 2, before anything starts.
func TestObserveBadInput(t *testing.T) {
	for name, tt := range map[string]struct {
		args []string
		want string
	}{
		"no command":        {nil, "no command to observe"},
		"not found":         {[]string{"--", "no-such-client-informer-lab"}, `command "no-such-client-informer-lab" not found in PATH`},
		"not a file":        {[]string{"--", "./no/such/file"}, "no executable file"},
		"context alone":     {[]string{"-context", "x", "--", "true"}, "-context needs -kubeconfig"},
		"kubeconfig broken": {[]string{"-kubeconfig", writeFile(t, "not: [a kubeconfig"), "--", "true"}, "does not parse"},
		"missing context":   {[]string{"-kubeconfig", writeFile(t, nowhere), "-context", "prod", "--", "true"}, `has no context "prod": its contexts are x`},
	} {
		t.Run(name, func(t *testing.T) {
			code, stdout, stderr, _ := observeRun(t, tt.args...)
			lines := strings.Split(strings.TrimSpace(stderr), "\n")
			if code != cli.ExitUsage || len(lines) != 1 || !strings.Contains(stderr, tt.want) || stdout != "" {
				t.Errorf("exit %d, stderr %q; want exit 2 and one line with %q", code, stderr, tt.want)
			}
		})
	}
}

// nowhere is a kubeconfig of one context, x, whose server does not answer.
const nowhere = "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\nusers: [{name: u, user: {token: not-a-real-token}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n"

func writeFile(t *testing.T, content string) string {
	p := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(p, []byte(content), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// kubectl get -w on a user's cluster as a restricted user: a control plane started apart stands
// in for it, the user reaches it through an exec plugin and may only what a run needs. The
// command watches the run's own namespace, through the proxy, with the user's credentials; the
// namespace and everything labelled for the run are gone at the end. A user who may not watch
// is refused before anything is created, and a cluster that does not answer is one line.
func TestObserveOnACluster(t *testing.T) {
	cp, admin := standin.Start(t, controlplane.Options{})
	kc := standin.Kubeconfig(t, cp, standin.Restricted, standin.NoWatch)

	code, _, stderr, rep := observeRun(t, "-kubeconfig", kc, "-for", "6s", "--", "kubectl", "get", "configmaps", "-w")
	if code != 0 || rep == nil {
		t.Fatalf("exit %d:\n%s", code, stderr)
	}
	cm := resource(t, rep, "", record.ResourceConfigMaps)
	if cm.Handshake.Label != "LIST→WATCH (2 req)" || len(cm.Problems) > 0 || cm.Events[record.EventAdded] == 0 {
		t.Errorf("kubectl get -w on the cluster: %s, problems %v, events %v", cm.Handshake.Label, cm.Problems, cm.Events)
	}
	if !strings.Contains(stderr, "user restricted") || !strings.Contains(stderr, "deleted namespace informer-lab-") {
		t.Errorf("the run does not say as whom it ran, or that it deleted its namespace:\n%s", stderr)
	}
	if left := standin.Left(t, admin); left != "" {
		t.Errorf("after the run: %s", left)
	}
	made := standin.Namespaces(t, admin)

	code, stdout, stderr, _ := observeRun(t, "-kubeconfig", kc, "-context", standin.NoWatch, "--", "kubectl", "get", "configmaps", "-w")
	refusal := regexp.MustCompile(`^error: user restricted-no-watch may not watch configmaps in namespace informer-lab-[a-z0-9]{5} \(SelfSubjectAccessReview\): ask for it or use another --context\n$`)
	if code != cli.ExitUsage || !refusal.MatchString(stderr) || stdout != "" || len(standin.Namespaces(t, admin)) != len(made) {
		t.Errorf("without watch: exit %d, stderr %q, namespaces %v; want exit 2, only the line %s, nothing created", code, stderr, standin.Namespaces(t, admin), refusal)
	}

	code, _, stderr, _ = observeRun(t, "-kubeconfig", writeFile(t, nowhere), "--", "true")
	if code != cli.ExitUsage || strings.Count(stderr, "\n") != 1 || !strings.Contains(stderr, "does not answer at https://127.0.0.1:1") || strings.Contains(stderr, "not-a-real-token") {
		t.Errorf("unreachable: exit %d, stderr %q; want exit 2 and one line naming the address, no token", code, stderr)
	}
}
