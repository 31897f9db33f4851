package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"informer-lab/compare/analysis"
	"informer-lab/compare/report"
	"informer-lab/harness/internal/labproc"
	"informer-lab/harness/internal/proxy"
	"informer-lab/lab/reaper"
	"informer-lab/lab/wire"
	"informer-lab/record"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Cell is one lab process of a run: a built lab module and the WatchListClient setting it runs
// with. make compare runs each module once with its own setting; make matrix runs each module
// with the gate off and on.
type Cell struct {
	Name      string // the lab's -name, its log's name: "client-v031", "client-v031-on"
	Module    string // the module directory's name: "client-v031"
	Bin       string
	ClientGo  string
	WatchList string // "" leaves the module's own setting; else on, off or default
}

// Spec is one run: one server, every cell attached, one scenario.
type Spec struct {
	Dir                                    string // the run directory, made by the caller
	Cells                                  []Cell
	Kubeconfig, ServerVersion, ServerGates string
	Scenario                               string // one of Scenarios
	Fault                                  string // steady only: one of faults
	Seed                                   int64
	MinWrites, SeedObjects                 int
	Interval, SyncTimeout, StopGrace       time.Duration
	WatchTimeout                           time.Duration // reconnect and expired: when the server ends each watch
	Stdout                                 io.Writer     // compare's report; nil discards it
	Say                                    func(format string, a ...any)
}

// Execute is one run, in order: start a server, attach the labs, play the scenario, check
// what they hold against a fresh LIST, stop everything, and compare. The report is nil when
// the run itself failed.
func Execute(parent context.Context, s Spec) (rep *analysis.Report, err error) {
	if s.Stdout == nil {
		s.Stdout = io.Discard
	}
	say := s.Say
	hlog, err := os.OpenFile(filepath.Join(s.Dir, "harness.jsonl"), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	defer hlog.Close()
	out := record.NewWriter("harness", hlog, nil)
	defer func() {
		if err != nil {
			out.Setup("", record.StepFault, "run failed", err.Error())
		}
	}()
	sc := scenarios[s.Scenario]
	out.Setup("", record.StepScenario, s.Scenario, sc.doc)

	// A run ends early on Ctrl-C, or when the monitor sees etcd, kube-apiserver or a lab die.
	ctx, cancel := context.WithCancelCause(parent)
	defer cancel(nil)
	failed := func(what string, err error) error {
		if cause := context.Cause(ctx); cause != nil && ctx.Err() != nil {
			return fmt.Errorf("%s: %w", what, cause)
		}
		return fmt.Errorf("%s: %w", what, err)
	}

	// If the harness itself is killed (SIGKILL skips every defer), the reaper kills etcd and
	// kube-apiserver; the labs die with the harness by their parent-death signal.
	rp, err := reaper.Start()
	if err != nil {
		return nil, err
	}
	defer rp.Close()
	tmp, err := os.MkdirTemp("", "informer-lab-harness-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(tmp) // the kubeconfigs: credentials, not part of the run

	// 1. One server for everyone: envtest, or the user's cluster.
	t, err := server(ctx, s, tmp, out, rp, say)
	if err != nil {
		return nil, err
	}
	defer t.stop()
	out.Setup("", "kubeconfig", t.kubeconfig, "the labs' credentials: owner-only, outside the run directory, deleted at the end when the harness wrote it")
	labKubeconfig := t.kubeconfig
	var px *proxy.Proxy
	if sc.proxy {
		if t.cp == nil {
			return nil, usageError{fmt.Errorf("scenario %s needs the envtest server (not -kubeconfig): it restarts or proxies it", s.Scenario)}
		}
		if px, labKubeconfig, err = startProxy(t, s.WatchTimeout, tmp, out); err != nil {
			return nil, err
		}
		defer px.Close()
		say("labs connect through a proxy at %s: the apiserver ends each watch after %s", px.URL(), s.WatchTimeout)
	}

	mutCfg := rest.CopyConfig(t.cfg)
	mutCfg.Wrap(wire.Wrap("MUT", out))
	cs, err := kubernetes.NewForConfig(mutCfg)
	if err != nil {
		return nil, err
	}
	for i := 1; i <= s.SeedObjects; i++ {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("seed-cm-%d", i)}, Data: map[string]string{"seed": "true"}}
		if _, err := cs.CoreV1().ConfigMaps(t.namespace).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			return nil, fmt.Errorf("seed ConfigMaps: %w", err)
		}
	}

	// 2. Every lab attached, each its own process, records streamed into the run directory.
	var procs []*labproc.Proc
	defer func() { stopLabs(procs, s.StopGrace, out, say) }()
	for _, c := range s.Cells {
		args := []string{"-kubeconfig", labKubeconfig, "-records", "-", "-name", c.Name}
		if c.WatchList != "" {
			args = append(args, "-watch-list", c.WatchList)
		}
		if s.Kubeconfig != "" {
			args = append(args, "-namespace", t.namespace)
		}
		args = append(args, sc.labArgs...)
		out.Setup("", "lab", c.Name, "client-go "+c.ClientGo+" "+strings.Join(args[4:], " "))
		p, err := labproc.Start(c.Name, c.Bin, args, filepath.Join(s.Dir, c.Name+".jsonl"), filepath.Join(s.Dir, c.Name+".stderr"))
		if err != nil {
			return nil, err
		}
		rp.Watch(p.PID(), "lab "+c.Name)
		procs = append(procs, p)
	}
	mon := &monitor{cancel: cancel, cp: t.cp, procs: procs}
	if t.cp != nil {
		mon.etcdPID, _ = t.cp.EtcdPID()
	}
	monCtx, cancelMonitor := context.WithCancel(ctx)
	monDone := make(chan struct{})
	go func() { mon.watch(monCtx); close(monDone) }()
	stopMonitor := func() { cancelMonitor(); <-monDone } // returns once it can cancel nothing more
	defer stopMonitor()

	start := time.Now()
	if err := waitFor(ctx, procs, s.SyncTimeout, func(p *labproc.Proc) bool { return p.Synced(watchers...) }); err != nil {
		return nil, failed("waiting for the labs' informers to sync", err)
	}
	say("all %d labs synced (%d watchers) in %s", len(procs), len(procs)*len(watchers), time.Since(start).Round(time.Millisecond))

	// 3. The scenario: the single writer's seeded script, and what happens half-way.
	p := &play{Spec: s, ctx: ctx, t: t, cs: cs, out: out, mon: mon, procs: procs, rp: rp, px: px, failed: failed}
	if err := sc.run(p); err != nil {
		return nil, err
	}
	out.Setup("", record.StepWriteDone, fmt.Sprint(p.writes), "")
	if err := waitFor(ctx, procs, s.SyncTimeout, func(lp *labproc.Proc) bool { return lp.Missing(p.expect, watchers...) == 0 }); err != nil {
		if ctx.Err() != nil {
			return nil, failed("waiting for the writes to arrive", err)
		}
		// Not fatal: compare shows exactly which watcher missed what.
		out.Setup("", record.StepFault, "writes not delivered", err.Error())
		say("not every watcher delivered every write: %v", err)
	}

	// 4. What the server holds now, for compare to check every informer's cache against.
	list, err := cs.CoreV1().ConfigMaps(listNamespace(s, t)).List(ctx, metav1.ListOptions{})
	if err != nil {
		return nil, failed("fresh LIST", err)
	}
	out.Write(record.Record{Kind: record.Setup, Tag: "LIST", Step: record.StepStore, Value: "fresh LIST before the labs stop", RV: list.ResourceVersion, Items: listItems(list)})

	// 5. Stop the labs (their logs end cleanly), then the server, then read what they saw.
	stopMonitor()
	stopLabs(procs, s.StopGrace, out, say)
	procs = nil
	t.stop()
	out.Setup("", record.StepStopped, "run complete", "")
	return writeReport(s.Dir, s.Stdout)
}

// writeReport reads the run back as compare does and writes compare.txt and report.html.
func writeReport(dir string, stdout io.Writer) (*analysis.Report, error) {
	r, err := analysis.LoadRun(dir)
	if err != nil {
		return nil, fmt.Errorf("compare: %w", err)
	}
	rep := analysis.Analyze(r)
	f, err := os.Create(filepath.Join(dir, "compare.txt"))
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rep.WriteText(io.MultiWriter(stdout, f))
	// The same report as one page to open in a browser: diagrams of what the text tells.
	var page bytes.Buffer
	if err := report.Write(&page, r, rep); err != nil {
		return nil, err
	}
	return rep, os.WriteFile(filepath.Join(dir, "report.html"), page.Bytes(), 0o644)
}

// stopLabs stops every lab at once (SIGINT, then SIGKILL after grace): eight labs stopping one
// after the other would add their stop times up.
func stopLabs(procs []*labproc.Proc, grace time.Duration, out *record.Writer, say func(string, ...any)) {
	var wg sync.WaitGroup
	for _, p := range procs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := p.Stop(grace); err != nil {
				out.Setup("", record.StepFault, "lab stop", err.Error())
				say("%v", err)
			}
		}()
	}
	wg.Wait()
}

// startProxy puts a proxy between the labs and kube-apiserver, and writes the labs' kubeconfig
// for it. The harness's own writes and LISTs go to the server directly.
func startProxy(t *target, watchTimeout time.Duration, tmp string, out *record.Writer) (*proxy.Proxy, string, error) {
	px, err := proxy.Start(t.cfg, proxy.Options{WatchTimeout: watchTimeout})
	if err != nil {
		return nil, "", fmt.Errorf("start the watch proxy: %w", err)
	}
	kc, err := px.Kubeconfig()
	if err != nil {
		px.Close()
		return nil, "", err
	}
	path := filepath.Join(tmp, "proxy-kubeconfig")
	if err := os.WriteFile(path, kc, 0o600); err != nil {
		px.Close()
		return nil, "", err
	}
	out.Setup("", record.StepProxy, fmt.Sprintf("watch timeout %s", watchTimeout),
		"the labs connect through a proxy that sets timeoutSeconds on every watch request to this, so kube-apiserver itself ends each watch then; their requests are logged as they sent them")
	return px, path, nil
}

// listNamespace is what the labs watch: every namespace on envtest, the run's own on a cluster.
func listNamespace(s Spec, t *target) string {
	if s.Kubeconfig != "" {
		return t.namespace
	}
	return ""
}

func listItems(l *corev1.ConfigMapList) []record.Item {
	items := []record.Item{}
	for _, cm := range l.Items {
		items = append(items, record.Item{Namespace: cm.Namespace, Name: cm.Name, RV: cm.ResourceVersion})
	}
	sort.Slice(items, func(i, j int) bool {
		return items[i].Namespace+"/"+items[i].Name < items[j].Namespace+"/"+items[j].Name
	})
	return items
}

// waitFor polls until cond holds for every lab, a lab exits, ctx ends or timeout passes.
func waitFor(ctx context.Context, procs []*labproc.Proc, timeout time.Duration, cond func(*labproc.Proc) bool) error {
	deadline := time.After(timeout)
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for {
		pending := []string{}
		for _, p := range procs {
			if msg := p.Exited(); msg != "" {
				return errors.New(msg)
			}
			if !cond(p) {
				pending = append(pending, p.Name)
			}
		}
		if len(pending) == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("interrupted: %w", ctx.Err())
		case <-deadline:
			return fmt.Errorf("timed out after %s waiting for %s", timeout, strings.Join(pending, ", "))
		case <-tick.C:
		}
	}
}
