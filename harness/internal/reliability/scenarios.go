package reliability

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"informer-lab/lab/controlplane"
	"informer-lab/record"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"
)

// Under make test every module tests at once on two cores, and CI saw an
// envtest boot take more than a minute there; these bound a hang, they do not
// measure speed, so they leave room for a loaded machine.
const (
	runTimeout = 5 * time.Minute // a whole harness or lab run
	bootWait   = 4 * time.Minute // until a started process prints its marker
)

// Scenarios returns the suite, in the order it runs.
func Scenarios() []Scenario {
	return append(append(append(faultScenarios(), badInputScenarios()...), securityScenarios()...), longRun())
}

// groupFault is the fault scenarios' group: make check runs them apart from the others
// (TestSuiteFaults).
const groupFault = "fault"

func faultScenarios() []Scenario {
	return []Scenario{
		{"kube-apiserver SIGKILLed mid-run, restarted", groupFault, "exit 0; every watcher reports its broken stream, watches again, ends with its cache equal to a fresh LIST; the fault is in the verdict",
			func(ctx context.Context, e *Env) (string, error) {
				p := run(ctx, runTimeout, e.Harness, "-out", e.Out, "-labs", twoLabs, "-fault", record.InjectKillAPIServer)
				obs := fmt.Sprintf("exit %d", p.code)
				if p.code != 0 {
					return obs, fmt.Errorf("stdout:\n%s\nstderr:\n%s", clip(p.stdout, 2000), clip(p.stderr, 1000))
				}
				// The terminal shows the verdict; compare.txt has every fact, per informer.
				detail, err := os.ReadFile(filepath.Join(runDir(p), "compare.txt"))
				if err != nil {
					return obs, err
				}
				for _, want := range []string{"streams broken by the fault | A=1 B=1", "watched again", "ended with caches equal to a fresh LIST", "fault injected by the harness: kill-apiserver"} {
					if !strings.Contains(strings.Join(strings.Fields(string(detail)), " "), want) {
						return obs, fmt.Errorf("compare.txt lacks %q", want)
					}
				}
				return obs + "; " + line(p.stdout, "After the injected fault"), nil
			}},
		{"etcd SIGKILLed mid-run", groupFault, "exit 3 with an error that names etcd; all processes gone",
			func(ctx context.Context, e *Env) (string, error) {
				p := run(ctx, runTimeout, e.Harness, "-out", e.Out, "-labs", twoLabs, "-fault", record.InjectKillEtcd)
				return badInput(p, 3, "etcd (pid")
			}},
		{"a lab crashes (SIGKILL) mid-run", groupFault, "exit 3 naming the lab; the other lab stopped; every log kept and readable",
			func(ctx context.Context, e *Env) (string, error) {
				p := run(ctx, runTimeout, e.Harness, "-out", e.Out, "-labs", twoLabs, "-fault", record.InjectCrashLab)
				obs, err := badInput(p, 3, "lab client-v031 exited")
				if err != nil {
					return obs, err
				}
				return obs, logsReadable(runDir(p), "harness", "client-v031", "client-v032")
			}},
		{"a lab hangs (SIGSTOP) mid-run", groupFault, "bounded wait (-sync-timeout 8s), the lab named in the verdict, killed after -stop-grace; exit 1",
			func(ctx context.Context, e *Env) (string, error) {
				p := run(ctx, runTimeout, e.Harness, "-out", e.Out, "-labs", twoLabs, "-fault", record.InjectHangLab, "-sync-timeout", "8s", "-stop-grace", "2s")
				obs := fmt.Sprintf("exit %d; %s", p.code, line(p.stdout, "fault: harness: writes not delivered"))
				if p.code != 1 || !strings.Contains(p.stdout, "waiting for client-v031") {
					return obs, fmt.Errorf("want exit 1 and the hung lab named; stdout: %s", clip(p.stdout, 1500))
				}
				return obs, logsReadable(runDir(p), "harness", "client-v032")
			}},
		{"the harness itself is SIGKILLed", groupFault, "its labs die with it (parent-death signal), its reaper kills etcd and kube-apiserver at once",
			func(ctx context.Context, e *Env) (string, error) {
				p, seen, err := startUntil(e.Harness, "writing", bootWait, "-out", e.Out, "-labs", twoLabs, "-interval", "1s")
				if err != nil {
					return "", err
				}
				p.Signal(syscall.SIGKILL)
				<-p.Done()
				time.Sleep(time.Second)
				return "killed at the first write; " + line(seen.String(), "[reaper]"), nil // RunAll checks nothing is left
			}},
		{"two make compare at once", groupFault, "separate ports, run directories and temp dirs; both exit 0",
			func(ctx context.Context, e *Env) (string, error) {
				var wg sync.WaitGroup
				res := make([]proc, 2)
				for i := range res {
					wg.Add(1)
					go func(i int) {
						defer wg.Done()
						res[i] = run(ctx, runTimeout, e.Harness, "-out", e.Out, "-labs", twoLabs)
					}(i)
				}
				wg.Wait()
				a, b := runDir(res[0]), runDir(res[1])
				obs := fmt.Sprintf("exit %d and %d; run directories %s and %s", res[0].code, res[1].code, filepath.Base(a), filepath.Base(b))
				if res[0].code != 0 || res[1].code != 0 || a == b || a == "" {
					return obs, fmt.Errorf("stderr: %s | %s", clip(res[0].stderr, 500), clip(res[1].stderr, 500))
				}
				return obs, nil
			}},
		{"a lab running alone is SIGKILLed", groupFault, "its reaper stops the envtest it booted",
			func(ctx context.Context, e *Env) (string, error) {
				// "[SETUP] server" comes once its envtest is up and handed to the reaper.
				p, _, err := startUntil(e.Labs["client-v031"], "stdout:[SETUP] server", bootWait, "-interval", "1s")
				if err != nil {
					return "", err
				}
				p.Signal(syscall.SIGKILL)
				<-p.Done()
				return "killed once its envtest was up", nil // RunAll checks nothing is left
			}},
		{"a lab running alone is SIGKILLed while its kube-apiserver boots", groupFault, "its reaper stops the etcd and kube-apiserver it started, although neither had been handed over by envtest yet",
			func(ctx context.Context, e *Env) (string, error) {
				p, seen, err := startUntil(e.Labs["client-v031"], "booting etcd + kube-apiserver", bootWait, "-interval", "1s")
				if err != nil {
					return "", err
				}
				// envtest starts kube-apiserver (the server, not its `-h` that envtest reads the
				// flags from) once etcd is healthy, and waits seconds for it to be healthy too: kill the lab half a second into that wait. (The control plane looks for its
				// children every 100 ms; a SIGKILL in the first 100 ms of a process escapes it.)
				booting, err := childRunning(p.PID(), "/kube-apiserver", "--etcd-servers=", bootWait)
				if err != nil {
					p.Signal(syscall.SIGKILL)
					<-p.Done()
					return "", err
				}
				time.Sleep(500 * time.Millisecond)
				p.Signal(syscall.SIGKILL)
				<-p.Done()
				time.Sleep(time.Second)
				var killed []string
				for _, what := range []string{"etcd", "kube-apiserver"} {
					if l := line(seen.String(), "started "+what+" ("); l != "" {
						killed = append(killed, l)
					}
				}
				if len(killed) != 2 {
					return "", fmt.Errorf("killed with kube-apiserver booting (%s), the reaper said: %q, want it to name etcd and kube-apiserver", booting, seen.String())
				}
				return "killed while " + booting + " booted; " + strings.Join(killed, "; "), nil // RunAll checks nothing is left
			}},
	}
}

func badInputScenarios() []Scenario {
	h := func(name, want string, code int, args ...string) Scenario {
		return Scenario{name, "bad input", fmt.Sprintf("exit %d, one error line: %q", code, want), func(ctx context.Context, e *Env) (string, error) {
			return badInput(run(ctx, runTimeout, e.Harness, append([]string{"-out", e.Out, "-labs", twoLabs}, args...)...), code, want)
		}}
	}
	lab := func(name, want string, code int, args ...string) Scenario {
		return Scenario{name, "bad input", fmt.Sprintf("exit %d, one error line: %q", code, want), func(ctx context.Context, e *Env) (string, error) {
			return badInput(run(ctx, runTimeout, e.Labs["client-v032"], args...), code, want)
		}}
	}
	cmp := func(name, want string, broken func(dir string) error) Scenario {
		return Scenario{name, "bad input", fmt.Sprintf("exit 2, one error line: %q", want), func(ctx context.Context, e *Env) (string, error) {
			dir, err := os.MkdirTemp(e.Tmp, "run-")
			if err != nil {
				return "", err
			}
			golden := filepath.Join(e.Root, "compare", "testdata", "runs", "real-v1.32.13")
			for _, f := range []string{"harness.jsonl", "client-v031.jsonl", "client-v032.jsonl"} {
				b, _ := os.ReadFile(filepath.Join(golden, f))
				os.WriteFile(filepath.Join(dir, f), b, 0o644)
			}
			if err := broken(dir); err != nil {
				return "", err
			}
			return badInput(run(ctx, runTimeout, e.Compare, dir), 2, want)
		}}
	}
	return []Scenario{
		h("harness: unknown flag", "flag provided but not defined", 2, "-no-such-flag"),
		h("harness: unknown fault", `unknown -fault "explode"`, 2, "-fault", "explode"),
		h("harness: unknown client cell", `unknown lab "client-v099"`, 2, "-labs", "client-v099"),
		h("harness: bad duration", "invalid value", 2, "-interval", "soon"),
		h("harness: kubeconfig that does not parse", "does not parse", 2, "-kubeconfig", "/etc/hostname"),
		{"harness: kubeconfig that points nowhere", "bad input", `exit 2, one error line: "does not answer"`, func(ctx context.Context, e *Env) (string, error) {
			path := filepath.Join(e.Tmp, "nowhere.kubeconfig")
			kc := "apiVersion: v1\nkind: Config\nclusters: [{name: c, cluster: {server: 'https://127.0.0.1:1'}}]\nusers: [{name: u, user: {token: t}}]\ncontexts: [{name: x, context: {cluster: c, user: u}}]\ncurrent-context: x\n"
			os.WriteFile(path, []byte(kc), 0o600)
			return badInput(run(ctx, runTimeout, e.Harness, "-out", e.Out, "-labs", twoLabs, "-kubeconfig", path), 2, "does not answer")
		}},
		h("harness: server version not provisioned", "is not provisioned: run `make envtest K8S_VERSION=1.31.999`", 2, "-server-version", "1.31.999"),
		lab("lab: bad gate value", `-watch-list must be on, off or default`, 2, "-watch-list", "maybe"),
		lab("lab: unknown flag", "flag provided but not defined", 2, "-bogus"),
		lab("lab: kubeconfig that does not parse", "kubeconfig /etc/hostname does not parse", 2, "-kubeconfig", "/etc/hostname"),
		{"compare: missing directory", "bad input", "exit 2, one error line naming the directory", func(ctx context.Context, e *Env) (string, error) {
			return badInput(run(ctx, runTimeout, e.Compare, filepath.Join(e.Tmp, "no-such-run")), 2, "no-such-run")
		}},
		cmp("compare: empty log", "client-v031.jsonl:1: no records", func(d string) error {
			return os.WriteFile(filepath.Join(d, "client-v031.jsonl"), nil, 0o644)
		}),
		cmp("compare: truncated last line", "truncated last line", func(d string) error {
			b, _ := os.ReadFile(filepath.Join(d, "client-v032.jsonl"))
			return os.WriteFile(filepath.Join(d, "client-v032.jsonl"), b[:len(b)-40], 0o644)
		}),
		cmp("compare: unknown schema version", "record schema 9", func(d string) error {
			b, _ := os.ReadFile(filepath.Join(d, "client-v031.jsonl"))
			return os.WriteFile(filepath.Join(d, "client-v031.jsonl"), []byte(strings.Replace(string(b), `"schema":1`, `"schema":9`, 1)), 0o644)
		}),
		cmp("compare: logs from two different servers", "harness.jsonl", func(d string) error {
			f, err := os.OpenFile(filepath.Join(d, "harness.jsonl"), os.O_APPEND|os.O_WRONLY, 0)
			if err != nil {
				return err
			}
			defer f.Close()
			_, err = f.WriteString(`{"schema":1,"time":"2026-11-29T17:14:20Z","source":"harness","kind":"SETUP","step":"server","value":"v1.33.13"}` + "\n")
			return err
		}),
	}
}

func securityScenarios() []Scenario {
	return []Scenario{
		{"no credentials in wire logs or run directories", "security", "no key, certificate, kubeconfig data or token in any run directory the suite produced",
			func(ctx context.Context, e *Env) (string, error) {
				p := run(ctx, runTimeout, e.Harness, "-out", e.Out, "-labs", twoLabs)
				if p.code != 0 {
					return fmt.Sprintf("exit %d", p.code), fmt.Errorf("%s", clip(p.stderr, 500))
				}
				dirs, _ := filepath.Glob(filepath.Join(e.Out, "*"))
				if bad := scanCredentials(e.Out); len(bad) > 0 {
					return "", fmt.Errorf("credential material in: %s", strings.Join(bad, ", "))
				}
				return fmt.Sprintf("scanned %d run directories: clean", len(dirs)), nil
			}},
		{"the kubeconfig the harness writes", "security", "mode 0600, outside the run directory, deleted at the end",
			func(ctx context.Context, e *Env) (string, error) {
				p, _, err := startUntil(e.Harness, "labs synced (", bootWait, "-out", e.Out, "-labs", twoLabs, "-interval", "500ms")
				if err != nil {
					return "", err
				}
				path, dir := "", ""
				for _, d := range newestRuns(e.Out) {
					recs, _ := readLog(filepath.Join(d, "harness.jsonl"))
					for _, r := range recs {
						if r.Step == "kubeconfig" {
							path, dir = r.Value, d
						}
					}
					if path != "" {
						break
					}
				}
				st, serr := os.Stat(path)
				<-p.Done()
				if serr != nil {
					return "", fmt.Errorf("kubeconfig %q not found while the run was going: %v", path, serr)
				}
				obs := fmt.Sprintf("mode %v during the run", st.Mode().Perm())
				if st.Mode().Perm() != 0o600 || strings.HasPrefix(path, dir) {
					return obs, fmt.Errorf("want 0600 outside %s, got %v at %s", dir, st.Mode().Perm(), path)
				}
				if _, err := os.Stat(path); !os.IsNotExist(err) {
					return obs, fmt.Errorf("%s still exists after the run", path)
				}
				return obs + "; deleted at the end", nil
			}},
		{"attached to a cluster (-kubeconfig)", "security", "works only in a namespace it creates, removes its objects and the namespace, touches nothing else; exit 0",
			func(ctx context.Context, e *Env) (string, error) {
				cp, err := controlplane.Start(ctx, controlplane.Options{})
				if err != nil {
					return "", err
				}
				defer cp.Stop()
				kc, err := cp.AdminKubeconfig("cluster-user")
				if err != nil {
					return "", err
				}
				path := filepath.Join(e.Tmp, "cluster.kubeconfig")
				os.WriteFile(path, kc, 0o600)
				cfg, _ := clientcmd.RESTConfigFromKubeConfig(kc)
				cs, err := kubernetes.NewForConfig(cfg)
				if err != nil {
					return "", err
				}
				cs.CoreV1().ConfigMaps("default").Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "users-own"}, Data: map[string]string{"keep": "me"}}, metav1.CreateOptions{})
				before := snapshot(ctx, cs)
				p := run(ctx, runTimeout, e.Harness, "-out", e.Out, "-labs", twoLabs, "-kubeconfig", path)
				if p.code != 0 {
					return fmt.Sprintf("exit %d", p.code), fmt.Errorf("%s", clip(p.stderr+p.stdout, 1500))
				}
				after := snapshot(ctx, cs)
				var changed []string
				for k, v := range after {
					if strings.HasPrefix(k, "ns/informer-lab-") {
						continue // its own namespace: Terminating on a server without a namespace controller
					}
					if before[k] != v {
						changed = append(changed, k)
					}
				}
				for k := range before {
					if _, ok := after[k]; !ok {
						changed = append(changed, k+" (deleted)")
					}
				}
				if len(changed) > 0 {
					return "", fmt.Errorf("objects outside its namespace changed: %s", strings.Join(changed, ", "))
				}
				return "exit 0; " + line(p.stderr, "deleted namespace") + "; everything else unchanged", nil
			}},
	}
}

// snapshot lists namespaces and ConfigMaps (name -> rv); the run's ConfigMaps must be gone.
func snapshot(ctx context.Context, cs kubernetes.Interface) map[string]string {
	out := map[string]string{}
	nss, _ := cs.CoreV1().Namespaces().List(ctx, metav1.ListOptions{})
	for _, ns := range nss.Items {
		out["ns/"+ns.Name] = ns.ResourceVersion
	}
	cms, _ := cs.CoreV1().ConfigMaps("").List(ctx, metav1.ListOptions{})
	for _, cm := range cms.Items {
		out["cm/"+cm.Namespace+"/"+cm.Name] = cm.ResourceVersion
	}
	return out
}

func newestRuns(out string) []string {
	dirs, _ := filepath.Glob(filepath.Join(out, "*"))
	for i, j := 0, len(dirs)-1; i < j; i, j = i+1, j-1 {
		dirs[i], dirs[j] = dirs[j], dirs[i]
	}
	return dirs
}

// logsReadable checks that each named log of a run directory parses to the end.
func logsReadable(dir string, names ...string) error {
	if dir == "" {
		return fmt.Errorf("no run directory printed")
	}
	for _, n := range names {
		recs, err := readLog(filepath.Join(dir, n+".jsonl"))
		if err != nil {
			return fmt.Errorf("%s.jsonl not readable: %w", n, err)
		}
		if len(recs) == 0 {
			return fmt.Errorf("%s.jsonl is empty", n)
		}
	}
	return nil
}

// line returns the first line of s containing marker, clipped.
func line(s, marker string) string {
	for _, l := range strings.Split(s, "\n") {
		if strings.Contains(l, marker) {
			return clip(l, 200)
		}
	}
	return ""
}

// longRun runs each lab alone at the original 3-second pace for e.Soak, both at once, and
// checks that memory, goroutines and open files stay flat across watch re-establishments.
func longRun() Scenario {
	return Scenario{"labs alone at the 3 s pace (long run)", "long run", "exit 0; RSS, goroutines and file descriptors flat after warm-up; each watch re-establishment logged",
		func(ctx context.Context, e *Env) (string, error) {
			every := e.Soak / 30
			if every < 5*time.Second {
				every = 5 * time.Second
			}
			var wg sync.WaitGroup
			errs := make([]error, 2)
			files := []string{}
			for i, lab := range []string{"client-v031", "client-v032"} {
				f := filepath.Join(e.Tmp, fmt.Sprintf("soak-%s-%d.jsonl", lab, time.Now().UnixNano()))
				files = append(files, f)
				wg.Add(1)
				go func(i int, bin, f string) {
					defer wg.Done()
					p := run(ctx, e.Soak+2*time.Minute, bin, "-interval", "3s", "-duration", e.Soak.String(), "-health-every", every.String(), "-records", f)
					if p.code != 0 {
						errs[i] = fmt.Errorf("exit %d: %s", p.code, clip(p.stderr, 400))
					}
				}(i, e.Labs[lab], f)
			}
			wg.Wait()
			var obs []string
			var failed []string
			for i, lab := range []string{"client-v031", "client-v032"} {
				if errs[i] != nil {
					failed = append(failed, lab+": "+errs[i].Error())
					continue
				}
				s, err := soakStats(files[i])
				obs = append(obs, lab+": "+s.String())
				if err != nil {
					failed = append(failed, lab+": "+err.Error())
				}
			}
			if len(failed) > 0 {
				return strings.Join(obs, "; "), fmt.Errorf("%s", strings.Join(failed, "; "))
			}
			return fmt.Sprintf("%s each; ", e.Soak) + strings.Join(obs, "; "), nil
		}}
}

// SoakStats is what a long run's health records show.
type SoakStats struct {
	Samples                  int
	RSSWarm, RSSEnd, RSSMax  int64 // KiB
	GoroutinesWarm, GorEnd   int
	FDsWarm, FDsEnd          int
	Rewatches                map[string]int // per informer: watch requests after its first
	Writes, EventsA, EventsB int
}

func (s SoakStats) String() string {
	return fmt.Sprintf("RSS %d→%d MiB (max %d), goroutines %d→%d, fds %d→%d, %d writes, events A=%d B=%d, watch re-establishments A=%d B=%d",
		s.RSSWarm/1024, s.RSSEnd/1024, s.RSSMax/1024, s.GoroutinesWarm, s.GorEnd, s.FDsWarm, s.FDsEnd, s.Writes, s.EventsA, s.EventsB, s.Rewatches["A"], s.Rewatches["B"])
}

// soakStats reads a long run's records. Warm is the first health sample a quarter into the
// run (caches full, connections open); End is the last periodic sample before stopping.
func soakStats(path string) (SoakStats, error) {
	recs, err := readLog(path)
	if err != nil {
		return SoakStats{}, err
	}
	var s SoakStats
	s.Rewatches = map[string]int{}
	var health []*record.Health
	watches := map[string]int{}
	synced := 0 // events count once both informers synced: the initial sync's ADDED events are not writes
	for _, r := range recs {
		switch {
		case r.Kind == record.Setup && r.Step == record.StepSynced:
			synced++
		case r.Kind == record.Setup && r.Step == record.StepHealth && r.Value == "periodic" && r.Health != nil:
			health = append(health, r.Health)
		case r.Kind == record.HTTP && strings.Contains(r.Query, "watch=true") && r.Status == 200:
			watches[r.Tag]++
		case r.Kind == record.Mutator && r.Error == "":
			s.Writes++ // "writing: ..." comes before the write
		case r.Kind == record.Mutator:
			s.Writes-- // ... and an error after it: the write did not happen (the last one, at stop)
		case r.Kind == record.WatchEvent && r.Event != "BOOKMARK" && synced >= 2:
			if r.Tag == "A" {
				s.EventsA++
			} else if r.Tag == "B" {
				s.EventsB++
			}
		}
	}
	for tag, n := range watches {
		s.Rewatches[tag] = n - 1
	}
	s.Samples = len(health)
	if len(health) < 4 {
		return s, fmt.Errorf("only %d health samples", len(health))
	}
	warm, end := health[len(health)/4], health[len(health)-1]
	s.RSSWarm, s.RSSEnd, s.GoroutinesWarm, s.GorEnd, s.FDsWarm, s.FDsEnd = warm.RSSKiB, end.RSSKiB, warm.Goroutines, end.Goroutines, warm.FDs, end.FDs
	for _, h := range health {
		s.RSSMax = max(s.RSSMax, h.RSSKiB)
	}
	var problems []string
	if s.GorEnd > s.GoroutinesWarm+5 {
		problems = append(problems, fmt.Sprintf("goroutines grew %d→%d", s.GoroutinesWarm, s.GorEnd))
	}
	if s.FDsEnd > s.FDsWarm+3 {
		problems = append(problems, fmt.Sprintf("file descriptors grew %d→%d", s.FDsWarm, s.FDsEnd))
	}
	if growth := s.RSSEnd - s.RSSWarm; growth > max(16<<10, s.RSSWarm/4) {
		problems = append(problems, fmt.Sprintf("RSS grew %d KiB", growth))
	}
	// The write in flight when -duration ends may land after the informers stopped: one short
	// is the stop, not a lost event.
	if s.EventsA < s.Writes-1 || s.EventsA > s.Writes || s.EventsB < s.Writes-1 || s.EventsB > s.Writes {
		problems = append(problems, fmt.Sprintf("watchers missed writes: %d writes, A=%d B=%d events", s.Writes, s.EventsA, s.EventsB))
	}
	if len(problems) > 0 {
		return s, fmt.Errorf("%s", strings.Join(problems, "; "))
	}
	return s, nil
}
