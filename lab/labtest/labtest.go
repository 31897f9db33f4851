// Package labtest is the test suite every lab module runs against a real envtest apiserver:
// it builds the module's own binary (GOWORK=off, so the module's pin holds), runs it as a
// real process, and checks what a user would check on the wire. Each lab module's test says
// which initial-sync handshake its client-go and gate must produce.
package labtest

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"informer-lab/envtestbin"
	"informer-lab/lab/controlplane"
	"informer-lab/lab/gobuild"
	"informer-lab/lab/lifecycle"
	"informer-lab/lab/mutator"
	"informer-lab/lab/pin"
	"informer-lab/lab/process"
	"informer-lab/lab/procs"
	"informer-lab/lab/reaper"
	"informer-lab/record"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

const secretToken = "informer-lab-test-token-must-never-be-logged"

// Main is the TestMain of a test binary whose tests boot envtest, whose processes this test
// binary's reaper stops if the binary is killed; once every test has ended, it stops the
// control plane they shared (Shared).
func Main(m *testing.M) {
	BecomeSubreaper(nil)
	lifecycle.TestMain(m, func() {
		if shared.cp != nil {
			shared.cp.Stop()
		}
	})
}

// shared is the control plane of Shared, started once.
var shared struct {
	once sync.Once
	cp   *controlplane.ControlPlane
	err  error
}

// Shared is the envtest control plane of DefaultVersion that the tests of this test binary share:
// the first test that asks starts it, Main stops it once every test has ended. A test that needs
// a server and neither kills, restarts nor reconfigures it uses this one, in a namespace of its
// own (Namespace); one that does starts its own (controlplane.Start). An envtest boot is about
// 4 CPU-seconds, most of make test's CPU when every test booted its own.
func Shared(t *testing.T) *controlplane.ControlPlane {
	t.Helper()
	shared.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
		defer cancel()
		shared.cp, shared.err = controlplane.Start(ctx, controlplane.Options{})
	})
	if shared.err != nil {
		t.Fatalf("the shared control plane: %v", shared.err)
	}
	return shared.cp
}

// Namespace creates a namespace of the test's own on cfg's server, named after the test, and
// returns its name. It is not deleted: envtest runs no namespace controller, so a deleted
// namespace would stay Terminating with its objects in it; each test's name is its own.
func Namespace(t *testing.T, cfg *rest.Config) string {
	t.Helper()
	name := strings.ToLower(nonName.ReplaceAllString(t.Name(), "-"))
	if len(name) > 63 {
		sum := sha256.Sum256([]byte(name))
		name = name[:50] + "-" + hex.EncodeToString(sum[:6])
	}
	name = strings.Trim(name, "-")
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: name}}, metav1.CreateOptions{}); err != nil {
		t.Fatalf("namespace %s for the test: %v", name, err)
	}
	return name
}

// nonName is what a test's name holds that a namespace's may not.
var nonName = regexp.MustCompile(`[^a-zA-Z0-9]+`)

// Suite runs the lab module in the current directory twice: attached to a control plane this
// test controls (writes, credentials to look for), and alone with its own envtest. The
// handshake each informer must do is the one its gate implies on that server
// (record.ExpectedShape), read from the lab's own SETUP records: every lab module runs the
// same suite, and differs only in its go.mod and its gate line. Attached, the lab must also end
// truthfully: refuse a kind its server does not serve (exit 2), and name the informers that had
// not synced when it stopped (exit 1).
func Suite(t *testing.T) {
	BecomeSubreaper(t)
	bin := build(t)
	gomod, err := os.ReadFile("go.mod")
	if err != nil {
		t.Fatal(err)
	}
	pinned, err := pin.Pinned(gomod)
	if err != nil {
		t.Fatal(err)
	}
	fakeRun := startFakes(t, bin) // needs no server: it runs beside attached
	t.Run("attached", func(t *testing.T) { attached(t, bin, pinned) })
	t.Run("fakes", func(t *testing.T) { checkFakes(t, fakeRun, pinned) })
	fakeRun.Stop(10 * time.Second) // ended already, unless -run left fakes out: standalone counts children
	t.Run("standalone", func(t *testing.T) { standalone(t, bin, pinned) })
}

func build(t *testing.T) string {
	t.Helper()
	dir, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	bin, err := gobuild.Cached(context.Background(), dir)
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

// attached: the test boots the apiserver, seeds ConfigMaps, starts the lab with a kubeconfig
// holding a client key, a certificate and a bearer token, writes, and reads the lab's records.
func attached(t *testing.T, bin, pinned string) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cp, err := controlplane.Start(ctx, controlplane.Options{Progress: testWriter{t}})
	if err != nil {
		t.Fatal(err)
	}
	defer cp.Stop()
	cms, err := mutator.TargetFor(cp.Config, mutator.ConfigMaps)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []mutator.Step{{Op: mutator.Create, Name: "seed-1", Tick: 1}, {Op: mutator.Create, Name: "seed-2", Tick: 2}} {
		if _, err := cms.Apply(ctx, "default", s); err != nil {
			t.Fatal(err)
		}
	}
	kubeconfig, secrets := writeKubeconfig(t, cp)

	lab := startLab(t, bin, "-kubeconfig", kubeconfig, "-records", "-")
	lab.waitFor(t, "both informers synced", func(recs []record.Record) bool {
		return synced(recs, "A") && synced(recs, "B")
	})
	steps := []mutator.Step{
		{Op: mutator.Create, Name: "lab-cm-1", Tick: 3}, {Op: mutator.Update, Name: "lab-cm-1", Tick: 4},
		{Op: mutator.Create, Name: "lab-cm-2", Tick: 5}, {Op: mutator.Update, Name: "lab-cm-1", Tick: 6},
		{Op: mutator.Delete, Name: "lab-cm-1", Tick: 7}, {Op: mutator.Delete, Name: "lab-cm-2", Tick: 8},
	}
	for _, s := range steps {
		if _, err := cms.Apply(ctx, "default", s); err != nil {
			t.Fatal(err)
		}
	}
	lab.waitFor(t, "A and B saw the last delete", func(recs []record.Record) bool {
		return sawEvent(recs, "A", "DELETED", "lab-cm-2") && sawEvent(recs, "B", "DELETED", "lab-cm-2")
	})
	recs, stdout, stderr := lab.stop(t)

	checkPin(t, recs, pinned)
	checkHandshake(t, recs, []string{"seed-1", "seed-2"})
	checkFanOut(t, recs, len(steps))
	for _, s := range secrets {
		for name, out := range map[string]string{"records": stdout, "stderr": stderr} {
			if strings.Contains(out, s) {
				t.Errorf("the lab's %s contain credential material from the kubeconfig (%.20s...)", name, s)
			}
		}
	}
	t.Run("kind not served", func(t *testing.T) { kindNotServed(t, bin, kubeconfig) })
	t.Run("not synced", func(t *testing.T) { notSynced(t, bin, cp) })
	t.Run("opt-out", func(t *testing.T) { optOuts(t, bin, kubeconfig) })
}

// kindNotServed: attached to a server without the lab's CRD, a dynamic-crd lab starts no
// informer; it says in one line what the server lacks and what provides it, and exits 2.
func kindNotServed(t *testing.T, bin, kubeconfig string) {
	lab := startLab(t, bin, "-kubeconfig", kubeconfig, "-records", "-", "-kind", record.KindDynamicCRD)
	recs, _, stderr, code := lab.end(t, 30*time.Second)
	lines := strings.Split(strings.TrimSpace(stderr), "\n")
	want := "error: -kind dynamic-crd watches widgets.informer-lab.dev, which this server does not serve: the lab's CustomResourceDefinition (lab/crd) is not installed"
	if code != 2 || len(lines) != 1 || !strings.HasPrefix(lines[0], want) || !strings.Contains(lines[0], "the harness installs it") {
		t.Errorf("exit %d, stderr:\n%s\nwant exit 2 and one line starting %q, saying the harness installs it", code, stderr, want)
	}
	t.Logf("exit %d: %s", code, stderr)
	for _, r := range recs {
		if r.Tag == "A" || r.Tag == "B" {
			t.Errorf("an informer ran, the server not serving its resource: %s", r.Text())
		}
	}
	// The aggregated kind's flunders: not on this server, and never on the lab's own envtest.
	for args, want := range map[string]string{
		"-kubeconfig " + kubeconfig: "error: -kind aggregated watches flunders.wardle.example.com, which this server does not serve",
		"":                          "error: -kind aggregated watches an aggregated apiserver's flunders, which the lab's own envtest does not run",
	} {
		lab := startLab(t, bin, append(strings.Fields(args), "-records", "-", "-kind", record.KindAggregated)...)
		_, _, stderr, code := lab.end(t, 30*time.Second)
		if lines := strings.Split(strings.TrimSpace(stderr), "\n"); code != 2 || len(lines) != 1 || !strings.HasPrefix(lines[0], want) {
			t.Errorf("%s -kind aggregated: exit %d, stderr:\n%s\nwant exit 2 and one line starting %q", args, code, stderr, want)
		}
	}
}

// notSynced: a user that may not list ConfigMaps gets a 403 on every request of its informers,
// which never sync; at -duration the lab's last line names both, and it exits 1.
func notSynced(t *testing.T, bin string, cp *controlplane.ControlPlane) {
	kc, err := cp.UserKubeconfig("labtest-nobody")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := os.WriteFile(path, kc, 0o600); err != nil {
		t.Fatal(err)
	}
	lab := startLab(t, bin, "-kubeconfig", path, "-records", "-", "-duration", "3s")
	recs, _, stderr, code := lab.end(t, time.Minute)
	last := recs[len(recs)-1]
	if code != 1 || last.Step != record.StepStopped || last.Detail != "not synced: A, B" {
		t.Errorf("exit %d, last record %s; want exit 1 and SETUP stopped (not synced: A, B)\nstderr:\n%s", code, last.Text(), stderr)
	}
	t.Logf("exit %d; last record %s; stderr: %s", code, last.Text(), stderr)
	if lines := strings.Split(strings.TrimSpace(stderr), "\n"); lines[len(lines)-1] != "error: informers not synced when the lab stopped: A, B" {
		t.Errorf("last stderr line %q, want the informers not synced named", lines[len(lines)-1])
	}
	forbidden := map[string]bool{}
	for _, r := range recs {
		if r.Kind == record.HTTP && (r.Tag == "A" || r.Tag == "B") {
			forbidden[r.Tag] = forbidden[r.Tag] || r.Status == 403
			if r.Status == 200 {
				t.Errorf("informer %s: a user without a binding got %s", r.Tag, r.Text())
			}
		}
	}
	if !forbidden["A"] || !forbidden["B"] {
		t.Errorf("want a 403 for A and for B, got %v", forbidden)
	}
}

// standalone: the lab boots its own envtest and writes every -interval; on Ctrl-C it must
// exit 0 and leave no etcd or kube-apiserver behind.
func standalone(t *testing.T, bin, pinned string) {
	lab := startLab(t, bin, "-records", "-", "-interval", "200ms", "-duration", "2m")
	// Its boot takes minutes when make test boots a dozen at once on two cores: the 90 s for
	// its writes must not include it.
	lab.waitWithin(t, 5*time.Minute, "its envtest up", func(recs []record.Record) bool {
		return slices.ContainsFunc(recs, func(r record.Record) bool { return r.Kind == record.Setup && r.Step == record.StepServer })
	})
	lab.waitFor(t, "A and B saw a create, an update and a delete", func(recs []record.Record) bool {
		for _, tag := range []string{"A", "B"} {
			if !sawEvent(recs, tag, "ADDED", "lab-cm-1") || !sawEvent(recs, tag, "MODIFIED", "lab-cm-1") || !sawEvent(recs, tag, "DELETED", "lab-cm-1") {
				return false
			}
		}
		return true
	})
	recs, _, stderr := lab.stop(t) // Ctrl-C
	checkPin(t, recs, pinned)
	checkHandshake(t, recs, nil)
	if last := recs[len(recs)-1]; last.Step != record.StepStopped {
		t.Errorf("last record: want SETUP stopped, got %s\nstderr:\n%s", last.Text(), stderr)
	}
	CheckNoChildren(t)
}

func checkPin(t *testing.T, recs []record.Record, pinned string) {
	t.Helper()
	for _, r := range recs {
		if r.Kind == record.Setup && r.Step == record.StepClientGo {
			if r.Value != pinned {
				t.Errorf("lab linked client-go %s, its go.mod pins %s", r.Value, pinned)
			}
			return
		}
	}
	t.Errorf("no SETUP client-go record")
}

// checkHandshake checks informer A's and B's initial sync, up to their synced records, against
// the shape the lab's gate implies on its server.
func checkHandshake(t *testing.T, recs []record.Record, seeds []string) {
	t.Helper()
	want := record.ExpectedShape(setup(recs, record.StepGate), "", setup(recs, record.StepServer))
	if want != record.ShapeListWatch && want != record.ShapeStream {
		t.Fatalf("the lab's gate %q on server %q implies %q: this suite checks LIST→WATCH and STREAM only", setup(recs, record.StepGate), setup(recs, record.StepServer), want)
	}
	for _, tag := range []string{"A", "B"} {
		var reqs, lists, added []record.Record
		endBookmark := false
		for _, r := range recs {
			if r.Tag != tag {
				continue
			}
			if r.Kind == record.Setup && r.Step == record.StepSynced {
				break
			}
			switch {
			case r.Kind == record.HTTP:
				reqs = append(reqs, r)
			case r.Kind == record.List:
				lists = append(lists, r)
			case r.Kind == record.WatchEvent && r.Event == record.EventAdded:
				added = append(added, r)
			case record.IsEndBookmark(r):
				endBookmark = true
			}
		}
		shapes := make([]string, len(reqs))
		for i, r := range reqs {
			shapes[i] = r.Method + " " + r.Path + "?" + r.Query + fmt.Sprintf(" -> %d", r.Status)
		}
		got := strings.Join(shapes, "\n  ")
		// A LIST→WATCH informer may report synced just before its WATCH is logged.
		if shape, label := record.Classify(reqs); shape != want && !(want == record.ShapeListWatch && shape == record.TokenList) {
			t.Errorf("%s: want %s before synced, got %s:\n  %s", tag, want, label, got)
			continue
		}
		switch want {
		case record.ShapeListWatch:
			if len(lists) != 1 {
				t.Errorf("%s: want 1 LIST body before synced, got %d", tag, len(lists))
				continue
			}
			if l := query(reqs[0]); l.Get("resourceVersion") != "0" || l.Get("limit") != "500" {
				t.Errorf("%s: first request: want GET ?limit=500&resourceVersion=0, got %s", tag, shapes[0])
			}
			if w := firstWatch(recs, tag); w == nil {
				t.Errorf("%s: no WATCH after the LIST", tag)
			} else if q := query(*w); q.Get("allowWatchBookmarks") != "true" || q.Get("sendInitialEvents") != "" || q.Get("resourceVersion") != lists[0].RV {
				t.Errorf("%s: want a plain WATCH with allowWatchBookmarks=true from the LIST's collection rv %s, got %s?%s", tag, lists[0].RV, w.Path, w.Query)
			}
			for _, s := range seeds {
				if !hasItem(lists[0], s) {
					t.Errorf("%s: LIST body lacks seeded ConfigMap %s", tag, s)
				}
			}
		case record.ShapeStream:
			if q := query(reqs[0]); q.Get("resourceVersionMatch") != "NotOlderThan" || q.Get("allowWatchBookmarks") != "true" {
				t.Errorf("%s: want WATCH with sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true -> 200, got %s", tag, shapes[0])
			}
			if !endBookmark {
				t.Errorf("%s: no BOOKMARK with %s=\"true\" before synced", tag, record.AnnotationInitialEventsEnd)
			}
			for _, s := range seeds {
				if !slices.ContainsFunc(added, func(a record.Record) bool { return a.Name == s }) {
					t.Errorf("%s: no ADDED event for seeded ConfigMap %s before synced", tag, s)
				}
			}
		}
	}
}

// setup is the Value of the lab's first SETUP record of step.
func setup(recs []record.Record, step string) string {
	for _, r := range recs {
		if r.Kind == record.Setup && r.Step == step {
			return r.Value
		}
	}
	return ""
}

// firstWatch is informer tag's first watch request.
func firstWatch(recs []record.Record, tag string) *record.Record {
	for i, r := range recs {
		if r.Tag == tag && record.IsWatch(r) {
			return &recs[i]
		}
	}
	return nil
}

// checkFanOut: every write reached A and B as the same event type, name and rv.
func checkFanOut(t *testing.T, recs []record.Record, writes int) {
	t.Helper()
	events := map[string][]string{}
	for _, r := range steady(recs) {
		if r.Kind == record.WatchEvent && r.Event != record.EventBookmark {
			events[r.Tag] = append(events[r.Tag], r.Event+" "+r.Name+" rv="+r.RV)
		}
	}
	a, b := events["A"], events["B"]
	if len(a) != writes || strings.Join(a, "\n") != strings.Join(b, "\n") {
		t.Errorf("want A and B to see the same %d events, got\nA:\n  %s\nB:\n  %s", writes, strings.Join(a, "\n  "), strings.Join(b, "\n  "))
	}
	for _, typ := range []string{"ADDED", "MODIFIED", "DELETED"} {
		if !strings.Contains(strings.Join(a, " "), typ+" ") {
			t.Errorf("no %s event arrived at A", typ)
		}
	}
}

func steady(recs []record.Record) []record.Record {
	seen := 0
	for i, r := range recs {
		if r.Kind == record.Setup && r.Step == record.StepSynced {
			seen++
			if seen == 2 {
				return recs[i+1:]
			}
		}
	}
	return nil
}

func query(r record.Record) url.Values {
	q, _ := url.ParseQuery(r.Query)
	return q
}

func hasItem(l record.Record, name string) bool {
	for _, it := range l.Items {
		if it.Name == name {
			return true
		}
	}
	return false
}

func synced(recs []record.Record, tag string) bool {
	for _, r := range recs {
		if r.Kind == record.Setup && r.Step == record.StepSynced && r.Tag == tag {
			return true
		}
	}
	return false
}

func sawEvent(recs []record.Record, tag, event, name string) bool {
	for _, r := range recs {
		if r.Kind == record.WatchEvent && r.Tag == tag && r.Event == event && r.Name == name {
			return true
		}
	}
	return false
}

// StartServer starts a control plane of kube-apiserver version for a test of what only that
// version does, stopped when the test ends. It fails the test where the envtest store lacks the
// version (make check builds every version its tests ask for; make envtest K8S_VERSION=X.Y.Z
// builds one), and where the server reports another; it skips it where KUBEBUILDER_ASSETS is
// set, whose binaries would be used instead.
func StartServer(t *testing.T, ctx context.Context, version string) *controlplane.ControlPlane {
	t.Helper()
	if os.Getenv("KUBEBUILDER_ASSETS") != "" {
		t.Skipf("KUBEBUILDER_ASSETS is set: it would be used instead of %s", version)
	}
	if _, err := envtestbin.Lookup(ctx, envtestbin.Options{Version: version, NoBuild: true}); err != nil {
		t.Fatalf("no kube-apiserver %s in the envtest store (make envtest K8S_VERSION=%s): %v", version, version, err)
	}
	cp, err := controlplane.Start(ctx, controlplane.Options{Version: version})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cp.Stop() })
	if !strings.HasPrefix(cp.ServerVersion, "v"+version) {
		t.Fatalf("asked for %s, the server reports %s", version, cp.ServerVersion)
	}
	return cp
}

// writeKubeconfig writes an admin kubeconfig with a bearer token added, and returns the strings
// that must never appear in a log: the token, and the base64 and PEM bodies of key and cert.
func writeKubeconfig(t *testing.T, cp *controlplane.ControlPlane) (string, []string) {
	t.Helper()
	raw, err := cp.AdminKubeconfig("labtest")
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.Load(raw)
	if err != nil {
		t.Fatal(err)
	}
	var secrets []string
	for _, ai := range cfg.AuthInfos {
		ai.Token = secretToken
		for _, pem := range [][]byte{ai.ClientKeyData, ai.ClientCertificateData} {
			secrets = append(secrets, base64.StdEncoding.EncodeToString(pem)[:40])
			body := strings.Split(string(pem), "\n")
			if len(body) > 2 {
				secrets = append(secrets, body[1]) // first line of the PEM body
			}
		}
	}
	secrets = append(secrets, secretToken, "PRIVATE KEY")
	path := filepath.Join(t.TempDir(), "kubeconfig")
	if err := clientcmd.WriteToFile(*cfg, path); err != nil {
		t.Fatal(err)
	}
	return path, secrets
}

// labProcess is a running lab whose JSON records are read as they come.
type labProcess struct {
	*process.Process
	recs   chan record.Record // closed once the lab exited
	all    []record.Record
	stdout strings.Builder
	stderr *strings.Builder
}

func startLab(t *testing.T, bin string, args ...string) *labProcess {
	t.Helper()
	return startLabEnv(t, bin, nil, args...)
}

// startLabEnv is startLab with env (KEY=value) added to the lab's environment.
func startLabEnv(t *testing.T, bin string, env []string, args ...string) *labProcess {
	t.Helper()
	cmd := exec.Command(bin, args...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	p := &labProcess{recs: make(chan record.Record, 1024), stderr: &strings.Builder{}}
	cmd.Stderr = p.stderr
	proc, err := process.Start(cmd, process.Options{What: "lab " + filepath.Base(bin), Stdout: func(line []byte) {
		p.stdout.Write(line)
		r, err := record.Parse(line)
		if err != nil {
			t.Errorf("lab wrote a line that is not a record: %v: %q", err, line)
			return
		}
		p.recs <- r
	}})
	if err != nil {
		t.Fatal(err)
	}
	p.Process = proc
	t.Cleanup(func() { proc.Signal(syscall.SIGKILL) })
	go func() {
		<-proc.Done()
		close(p.recs)
	}()
	return p
}

func (p *labProcess) waitFor(t *testing.T, what string, cond func([]record.Record) bool) {
	t.Helper()
	p.waitWithin(t, 90*time.Second, what, cond)
}

// waitWithin is waitFor with its own time limit.
func (p *labProcess) waitWithin(t *testing.T, limit time.Duration, what string, cond func([]record.Record) bool) {
	t.Helper()
	timeout := time.After(limit)
	for !cond(p.all) {
		select {
		case r, ok := <-p.recs:
			if !ok {
				t.Fatalf("lab exited before %s\nstderr:\n%s", what, p.stderr)
			}
			p.all = append(p.all, r)
		case <-timeout:
			t.Fatalf("timed out waiting until %s\nstderr:\n%s", what, p.stderr)
		}
	}
}

// stop sends SIGINT (Ctrl-C) and waits for a clean exit.
func (p *labProcess) stop(t *testing.T) ([]record.Record, string, string) {
	t.Helper()
	p.Signal(syscall.SIGINT)
	return p.wait(t, 30*time.Second)
}

func (p *labProcess) wait(t *testing.T, timeout time.Duration) ([]record.Record, string, string) {
	t.Helper()
	recs, stdout, stderr, code := p.end(t, timeout)
	if code != 0 {
		t.Fatalf("lab exited %d, want exit 0\nstderr:\n%s", code, stderr)
	}
	return recs, stdout, stderr
}

// end waits until the lab exits by itself and returns its records, its output and its exit code.
func (p *labProcess) end(t *testing.T, timeout time.Duration) ([]record.Record, string, string, int) {
	t.Helper()
	deadline := time.After(timeout)
	for {
		select {
		case r, ok := <-p.recs:
			if ok {
				p.all = append(p.all, r)
				continue
			}
			_, err := p.Exited()
			var exit *exec.ExitError
			if err != nil && !errors.As(err, &exit) {
				t.Fatalf("lab ended with %v\nstderr:\n%s", err, p.stderr)
			}
			code := 0
			if exit != nil {
				code = exit.ExitCode()
			}
			return p.all, p.stdout.String(), p.stderr.String(), code
		case <-deadline:
			t.Fatalf("lab did not exit within %s\nstderr:\n%s", timeout, p.stderr)
		}
	}
}

// BecomeSubreaper makes this test process the parent of any orphan its children leave, so
// CheckNoChildren can see them. t may be nil (TestMain).
func BecomeSubreaper(t *testing.T) {
	if err := procs.BecomeSubreaper(); err != nil && t != nil {
		t.Logf("%v: leftover processes go unnoticed", err)
	}
}

// CheckNoChildren fails if a child of this process (or an orphan it adopted) is still running,
// other than this process's reaper, which lives as long as the process, and the processes
// except names (a control plane the test itself started and still runs).
func CheckNoChildren(t *testing.T, except ...int) {
	t.Helper()
	if left := procs.WaitNoChildren(5*time.Second, append(except, reaper.PID())...); len(left) > 0 {
		t.Errorf("processes left behind: %s", strings.Join(left, "; "))
	}
}

type testWriter struct{ t *testing.T }

func (w testWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}
