package app

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"informer-lab/compare/analysis"
	"informer-lab/lab/gobuild"
	"informer-lab/lab/labtest"
	"informer-lab/record"
)

// Orphans of anything these tests start are re-parented to this process, so a test can see
// an etcd, kube-apiserver or lab that outlived its run; the reaper stops them if it is killed.
func TestMain(m *testing.M) { labtest.Main(m) }

// The whole of make compare, for real: one envtest, both labs as processes, the writes, and
// compare's verdict: steady phase identical on all four watchers, handshakes as the gates imply (record.ExpectedShape).
func TestCompareEndToEnd(t *testing.T) {
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), []string{"-out", out}, &stdout, &stderr)
	t.Logf("harness stderr:\n%s", stderr.String())
	if code != 0 {
		t.Fatalf("exit code %d, want 0 (verdict holds)\n%s", code, stdout.String())
	}
	labtest.CheckNoChildren(t)
	runs, _ := filepath.Glob(filepath.Join(out, "*"))
	if len(runs) != 1 {
		t.Fatalf("want one run directory in %s, got %v", out, runs)
	}
	for _, f := range []string{"harness.jsonl", "client-v031.jsonl", "client-v032.jsonl", "compare.txt"} {
		if st, err := os.Stat(filepath.Join(runs[0], f)); err != nil || st.Size() == 0 {
			t.Errorf("run directory lacks %s (or it is empty): %v", f, err)
		}
	}
	if matches, _ := filepath.Glob(filepath.Join(runs[0], "*kubeconfig*")); len(matches) > 0 {
		t.Errorf("the kubeconfig must stay out of the run directory, found %v", matches)
	}
	run, err := analysis.LoadRun(runs[0])
	if err != nil {
		t.Fatal(err)
	}
	rep := analysis.Analyze(run)
	shapes := map[string]string{}
	for _, l := range rep.Labs {
		for _, tag := range []string{"A", "B"} {
			shapes[l.Name+"/"+tag] = string(l.Sync[tag].Shape)
			w := l.Watchers[tag]
			if w == nil || w.Mismatch != "" || len(w.Events) != len(rep.Writes) {
				t.Errorf("%s/%s: want all %d writes with the harness's rvs, got %+v", l.Name, tag, len(rep.Writes), w)
			}
		}
	}
	want := map[string]string{
		"client-v031/A": string(record.ShapeListWatch), "client-v031/B": string(record.ShapeListWatch),
		"client-v032/A": string(record.ShapeStream), "client-v032/B": string(record.ShapeStream),
	}
	for k, v := range want {
		if shapes[k] != v {
			t.Errorf("%s: handshake %q, want %q", k, shapes[k], v)
		}
	}
	for _, s := range []string{"VERDICT: holds", "Steady phase identical"} {
		if !strings.Contains(stdout.String(), s) {
			t.Errorf("report lacks %q", s)
		}
	}
}

// A run that fails (no lab can sync in 1ms) exits 3, keeps its logs, and stops everything.
func TestFailedRunLeavesNothing(t *testing.T) {
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), []string{"-out", out, "-labs", "client-v031", "-sync-timeout", "1ms"}, &stdout, &stderr)
	if code != exitRun || !strings.Contains(stderr.String(), "waiting for the labs' informers to sync") {
		t.Errorf("exit %d, want %d with a sync error; stderr:\n%s", code, exitRun, stderr.String())
	}
	labtest.CheckNoChildren(t)
	runs, _ := filepath.Glob(filepath.Join(out, "*", "harness.jsonl"))
	if len(runs) != 1 {
		t.Fatalf("want the failed run's harness.jsonl kept, got %v", runs)
	}
	recs, err := record.ReadFile(runs[0])
	if err != nil {
		t.Fatal(err)
	}
	if last := recs[len(recs)-1]; last.Step != record.StepFault {
		t.Errorf("last harness record: want the fault, got %s", last.Text())
	}
}

// buildHarness builds make compare's binary (GOWORK=off, as `go run` in harness/ does) into the
// checkout's binary cache, where an unchanged harness is not linked again.
func buildHarness(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	bin, err := gobuild.Cached(context.Background(), dir)
	if err != nil {
		t.Fatalf("build harness: %v", err)
	}
	return bin
}

// A second Ctrl-C while the harness stops: it exits at once (130), and what it started is
// still stopped, by its reaper: no etcd, kube-apiserver or lab is left.
func TestSecondInterruptExitsAtOnce(t *testing.T) {
	cmd := exec.Command(buildHarness(t), "-out", t.TempDir(), "-labs", "client-v031,client-v032", "-interval", "1s")
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	var seen []string
	for sc.Scan() && !strings.Contains(sc.Text(), scriptStarts) {
		seen = append(seen, sc.Text())
	}
	if sc.Err() != nil || !strings.Contains(sc.Text(), scriptStarts) {
		cmd.Wait()
		t.Fatalf("the harness never started writing, exit %d; it said:\n%s", cmd.ProcessState.ExitCode(), strings.Join(seen, "\n"))
	}
	cmd.Process.Signal(syscall.SIGINT)
	// The second signal only once the harness says it took the first: two SIGINTs sent while
	// a loaded machine has not yet run the process are pending together, and the kernel
	// delivers them as one (make test once saw exit 3, a clean stop, that way).
	for sc.Scan() && !strings.Contains(sc.Text(), "send it again") {
	}
	go func() {
		for sc.Scan() {
		}
	}()
	cmd.Process.Signal(syscall.SIGINT)
	start := time.Now()
	err := cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != 130 {
		t.Errorf("after a second SIGINT: exit %d (%v), want 130", code, err)
	}
	if took := time.Since(start); took > 2*time.Second {
		t.Errorf("the harness took %s to exit after the second SIGINT, want at once", took)
	}
	labtest.CheckNoChildren(t)
}

// scriptStarts is what the harness says once every lab synced, as its writer starts the
// scenario's script (scenario.go): the tests interrupt it from then on. Not just "writing": a
// line of anything else that holds the word would send the signal before the labs exist.
const scriptStarts = "changes (seed "

// Ctrl-C mid-run: the harness (a real process) stops the labs, etcd and kube-apiserver, keeps
// what was written, and exits non-zero.
func TestInterruptMidRun(t *testing.T) {
	bin := buildHarness(t)
	out := t.TempDir()
	cmd := exec.Command(bin, "-out", out, "-labs", "client-v031,client-v032", "-interval", "1s")
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	var seen []string
	writing := false
	for !writing && sc.Scan() {
		seen = append(seen, sc.Text())
		writing = strings.Contains(sc.Text(), scriptStarts)
	}
	if !writing { // the run ended before its writes: there is nothing mid-run to interrupt
		cmd.Wait()
		t.Fatalf("the harness never started writing, exit %d; it said:\n%s", cmd.ProcessState.ExitCode(), strings.Join(seen, "\n"))
	}
	time.Sleep(1500 * time.Millisecond) // mid-writes
	cmd.Process.Signal(syscall.SIGINT)
	go func() {
		for sc.Scan() {
		}
	}()
	err := cmd.Wait()
	if err == nil {
		t.Errorf("interrupted harness exited 0; want non-zero")
	}
	labtest.CheckNoChildren(t)
	runs, _ := filepath.Glob(filepath.Join(out, "*"))
	if len(runs) != 1 {
		t.Fatalf("want one run directory, got %v (stderr: %s)", runs, strings.Join(seen, "\n"))
	}
	for _, lab := range []string{"client-v031", "client-v032"} {
		recs, err := record.ReadFile(filepath.Join(runs[0], lab+".jsonl"))
		if err != nil {
			t.Errorf("%s: records written before Ctrl-C must be readable: %v\nthe harness said:\n%s", lab, err, strings.Join(seen, "\n"))
			continue
		}
		if last := recs[len(recs)-1]; last.Step != record.StepStopped {
			t.Errorf("%s: last record %s, want the lab's own SETUP stopped (a clean stop)", lab, last.Text())
		}
	}
}

// go run ./client-v031 typed at the repository root: the workspace links client-go v0.32,
// so the lab must re-run itself outside the workspace and end up with its pin, v0.31.14.
func TestWorkspaceRunLinksPin(t *testing.T) {
	cmd := exec.Command("go", "run", "./client-v031", "-records", "-", "-duration", "3s")
	cmd.Dir = "../../.."
	cmd.Env = append(os.Environ(), "GOWORK=") // the workspace, as a user at the root has it
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go run ./client-v031: %v\n%s", err, out)
	}
	var reexec bool
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		var r record.Record
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatalf("not a record: %q", line)
		}
		if r.Step == "reexec" {
			reexec = true
		}
		if r.Step == record.StepClientGo {
			if r.Value != "v0.31.14" {
				t.Errorf("go run ./client-v031 linked client-go %s, want its pin v0.31.14", r.Value)
			}
			if !reexec {
				t.Errorf("no reexec record before the client-go record: the lab must say it re-ran itself")
			}
			return
		}
	}
	t.Errorf("no client-go record in:\n%s", out)
}

func TestBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-labs", "client-v099"}, `unknown lab "client-v099"`},
		{[]string{"-no-such-flag"}, "flag provided but not defined"},
		{[]string{"extra"}, `unexpected argument "extra"`},
		{[]string{"-interval", "0s"}, "-interval must be positive"},
		{[]string{"-context", "prod"}, "-context prod goes with -kubeconfig"},
		{[]string{"-kubeconfig", "/no/such/kubeconfig", "-server-version", "1.33.13"}, "choose an envtest server, not a cluster"},
		// Refused before the kubeconfig is even read: the harness has no process of a cluster's.
		{[]string{"-kubeconfig", "/no/such/kubeconfig", "-scenario", "restart"}, "scenario restart, kind typed-configmaps on a cluster (-kubeconfig): needs the server's processes"},
		{[]string{"-kubeconfig", "/no/such/kubeconfig", "-fault", "kill-apiserver"}, "-fault kill-apiserver on a cluster (-kubeconfig): needs the server's processes"},
		{[]string{"-kubeconfig", "/no/such/kubeconfig", "-kind", "dynamic-crd"}, "needs a CustomResourceDefinition (cluster-scoped)"},
		{[]string{"-kubeconfig", "/no/such/kubeconfig", "-labs", "client-v031"}, "kubeconfig /no/such/kubeconfig: no such file"},
		{[]string{"-kind", "aggregated"}, "-kind aggregated: needs an aggregated apiserver (the server setting aggregated=VERSION): add it to -server-feature-gates"},
		{[]string{"-kind", "aggregated", "-server-feature-gates", "aggregated=0.34.13", "-scenario", "direct-list"}, "scenario direct-list with kind aggregated: the direct List() lists ConfigMaps"},
		{[]string{"-kubeconfig", "/no/such/kubeconfig", "-kind", "aggregated"}, "needs an aggregated apiserver the harness registers"},
		{[]string{"-server-feature-gates", "upgrade=1.99.0"}, "kube-apiserver 1.99.0 is not provisioned: run `make envtest K8S_VERSION=1.99.0` first"},
	} {
		var stdout, stderr bytes.Buffer
		code := Run(context.Background(), append([]string{"-out", t.TempDir()}, tc.args...), &stdout, &stderr)
		if code != exitUsage || !strings.Contains(stderr.String(), tc.want) {
			t.Errorf("%v: exit %d, stderr %q; want exit %d and %q", tc.args, code, stderr.String(), exitUsage, tc.want)
		}
	}
}

// restart-gap, for real: a write reaches etcd while kube-apiserver is down, so the restarted
// watch cache starts above every informer's rv. Every resumed watch must get 410 and the
// informer read its state again (gate off: a LIST; gate on: a new stream), then end equal to a
// fresh LIST (exit 0).
func TestRestartGapGets410(t *testing.T) {
	rep, _ := runScenario(t, record.ScenarioRestartGap)
	for _, l := range rep.Labs {
		again := map[string]string{"off": record.TokenList, "on": record.TokenStream}[l.Gate]
		for _, tag := range l.Tags {
			var toks []string
			for _, s := range analysis.Steps(l.After[tag], rep.InjectedAt) {
				toks = append(toks, s.Token)
			}
			seq := strings.Join(toks, " ")
			if !strings.Contains(seq, "410 "+again) {
				t.Errorf("%s/%s (gate %s): after the restart %q, want a 410 then %s", l.Name, tag, l.Gate, seq, again)
			}
		}
	}
}

// Writes during the initial sync, for real: the writer writes from before the labs start until
// they have synced, so each informer's sync point falls among the writes; every informer must
// hold the writes before it in its initial state and get every write after it as its event, in
// rv order, with the writer's rvs (analysis.Delivered), and end equal to a fresh LIST.
func TestWritesDuringSync(t *testing.T) {
	rep, stdout := runScenario(t, record.ScenarioSyncWrites)
	if len(rep.Failures) > 0 {
		t.Errorf("failures: %v", rep.Failures)
	}
	for _, l := range rep.Labs {
		for _, tag := range l.Tags {
			syncRV, err := strconv.ParseUint(l.Sync[tag].SyncRV, 10, 64)
			if err != nil {
				t.Fatalf("%s/%s: sync rv %q", l.Name, tag, l.Sync[tag].SyncRV)
			}
			before := 0
			for _, w := range rep.Writes {
				if rv, err := strconv.ParseUint(w.RV, 10, 64); err == nil && rv <= syncRV {
					before++
				}
			}
			w := l.Watchers[tag]
			if before == 0 || w.Expected == 0 || w.Mismatch != "" || len(w.Events) != w.Expected || l.Caches[tag] != "" {
				t.Errorf("%s/%s: %d writes before its sync point (rv %d), %d after, %d events, mismatch %q, cache %q; want writes on both sides, each after delivered, cache = LIST",
					l.Name, tag, before, syncRV, w.Expected, len(w.Events), w.Mismatch, l.Caches[tag])
			}
		}
	}
	if !strings.Contains(stdout, "Writes during the sync: all 4 watchers saw every write after their own sync point") {
		t.Errorf("report lacks the conclusion of the writes during the sync:\n%s", stdout)
	}
}

// runScenario runs make compare's harness on scenario with two labs (client-go v0.31, LIST→WATCH,
// and v0.32 with its gate on, streaming), for real; it fails the test unless the run exits 0
// and leaves no process, and returns compare's analysis of the run and what the harness printed.
func runScenario(t *testing.T, scenario string) (*analysis.Report, string) {
	t.Helper()
	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	code := Run(context.Background(), []string{"-out", out, "-labs", "client-v031,client-v032", "-scenario", scenario}, &stdout, &stderr)
	if code != 0 {
		t.Fatalf("exit %d, want 0\n%s\n%s", code, stdout.String(), stderr.String())
	}
	labtest.CheckNoChildren(t)
	runs, _ := filepath.Glob(filepath.Join(out, "*"))
	run, err := analysis.LoadRun(runs[0])
	if err != nil {
		t.Fatal(err)
	}
	return analysis.Analyze(run), stdout.String()
}
