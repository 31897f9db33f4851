// Package app is the harness: one control plane, every lab attached to it, one writer, and
// compare's verdict over what each lab saw.
package app

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"informer-lab/compare/analysis"
	"informer-lab/compare/report"
	"informer-lab/harness/internal/labproc"
	"informer-lab/harness/internal/rundir"
	"informer-lab/lab/mutator"
	"informer-lab/lab/reaper"
	"informer-lab/lab/wire"
	"informer-lab/record"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Exit codes: compare's 0 (verdict holds) and 1 (it does not), 2 for bad input, 3 when the
// run itself failed (a process died, a server did not come up, Ctrl-C).
const (
	exitUsage = 2
	exitRun   = 3
)

var watchers = []string{"A", "B"}

// eventOf is the watch event each write causes.
var eventOf = map[mutator.Op]string{mutator.Create: "ADDED", mutator.Update: "MODIFIED", mutator.Delete: "DELETED"}

type options struct {
	root, out, labs, kubeconfig, serverVersion, serverGates, fault string
	seed                                                           int64
	minWrites, seedObjects                                         int
	interval, syncTimeout, stopGrace                               time.Duration
}

// usageError marks bad input: exit code 2.
type usageError struct{ error }

// Run is the harness's main; it returns the process exit code.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "error:", err)
		return exitUsage
	}
	runDir, code, err := run(ctx, o, stdout, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "error:", err)
		if errors.As(err, new(usageError)) {
			code = exitUsage
		}
	}
	if runDir != "" {
		fmt.Fprintf(stderr, "run directory: %s\n", runDir)
	}
	return code
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("harness", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.root, "root", "", "repository root, holding go.work and the client-v* modules (default: found from the working directory)")
	fs.StringVar(&o.out, "out", "", "parent of run directories (default: <root>/out)")
	fs.StringVar(&o.labs, "labs", "", "comma-separated lab modules to run (default: every client-v* module)")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "use this cluster instead of envtest; the harness then works only in a namespace of its own, which it creates and deletes")
	fs.StringVar(&o.serverVersion, "server-version", "", "Kubernetes version of the envtest server (default 1.32.13; others must be provisioned with make envtest K8S_VERSION=...)")
	fs.StringVar(&o.serverGates, "server-feature-gates", "", `kube-apiserver --feature-gates for envtest, e.g. "WatchList=false"`)
	fs.StringVar(&o.fault, "fault", "", "inject a fault half-way through the writes: "+strings.Join(faultNames(), ", "))
	fs.Int64Var(&o.seed, "seed", 1, "seed of the write scenario (same seed, same writes)")
	fs.IntVar(&o.minWrites, "min-writes", 2, "at least this many creates, updates and deletes")
	fs.IntVar(&o.seedObjects, "seed-objects", 3, "ConfigMaps that exist before the labs start (their initial sync delivers them)")
	fs.DurationVar(&o.interval, "interval", 200*time.Millisecond, "time between writes (3s is the original lab's pace)")
	fs.DurationVar(&o.syncTimeout, "sync-timeout", 90*time.Second, "how long labs may take to sync, and watchers to deliver the writes")
	fs.DurationVar(&o.stopGrace, "stop-grace", 10*time.Second, "how long a lab may take to stop after SIGINT before it is killed")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected argument %q (flags only; see -h)", fs.Arg(0))
	}
	for name, d := range map[string]time.Duration{"-interval": o.interval, "-sync-timeout": o.syncTimeout, "-stop-grace": o.stopGrace} {
		if d <= 0 {
			return o, fmt.Errorf("%s must be positive, got %s", name, d)
		}
	}
	if o.minWrites < 1 || o.seedObjects < 0 {
		return o, fmt.Errorf("-min-writes must be at least 1 and -seed-objects not negative, got %d and %d", o.minWrites, o.seedObjects)
	}
	if _, ok := faults[o.fault]; o.fault != "" && !ok {
		return o, fmt.Errorf("unknown -fault %q: the faults are %s", o.fault, strings.Join(faultNames(), ", "))
	}
	var err error
	o.root, o.out, err = rundir.Defaults(o.root, o.out)
	return o, err
}

func faultNames() []string {
	names := make([]string, 0, len(faults))
	for n := range faults {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// run is make compare, in order: build the labs, start a server, attach the labs, write,
// check what they saw against a fresh LIST, stop everything, and compare.
func run(parent context.Context, o options, stdout, stderr io.Writer) (runDir string, code int, err error) {
	labDirs, err := labModules(o.root, o.labs)
	if err != nil {
		return "", exitUsage, err
	}
	runDir, err = rundir.New(o.out, "", time.Now())
	if err != nil {
		return "", exitRun, err
	}
	hlog, err := os.OpenFile(filepath.Join(runDir, "harness.jsonl"), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return runDir, exitRun, err
	}
	defer hlog.Close()
	out := record.NewWriter("harness", hlog, nil)
	say := func(format string, a ...any) { fmt.Fprintf(stderr, "[harness] "+format+"\n", a...) }
	defer func() {
		if err != nil {
			out.Setup("", record.StepFault, "run failed", err.Error())
		}
	}()

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
		return runDir, exitRun, err
	}
	defer rp.Close()

	tmp, err := os.MkdirTemp("", "informer-lab-harness-")
	if err != nil {
		return runDir, exitRun, err
	}
	defer os.RemoveAll(tmp) // the kubeconfig and the lab binaries: not part of the run

	// 1. One server for everyone: envtest, or the user's cluster (first: bad input fails fast).
	t, err := server(ctx, o, tmp, out, rp, say)
	if err != nil {
		return runDir, exitRun, err
	}
	defer t.stop()
	out.Setup("", "kubeconfig", t.kubeconfig, "the labs' credentials: owner-only, outside the run directory, deleted at the end when the harness wrote it")
	// 2. Build every lab outside the workspace, so each links its own pin.
	type lab struct{ name, bin, clientGo string }
	var labs []lab
	for _, dir := range labDirs {
		start := time.Now()
		bin, cg, err := labproc.Build(ctx, dir, tmp)
		if err != nil {
			return runDir, exitRun, err
		}
		name := filepath.Base(dir)
		say("built %s (client-go %s) in %s", name, cg, time.Since(start).Round(time.Millisecond))
		out.Setup("", "lab", name, "client-go "+cg)
		labs = append(labs, lab{name, bin, cg})
	}

	mutCfg := rest.CopyConfig(t.cfg)
	mutCfg.Wrap(wire.Wrap("MUT", out))
	cs, err := kubernetes.NewForConfig(mutCfg)
	if err != nil {
		return runDir, exitRun, err
	}
	for i := 1; i <= o.seedObjects; i++ {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("seed-cm-%d", i)}, Data: map[string]string{"seed": "true"}}
		if _, err := cs.CoreV1().ConfigMaps(t.namespace).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			return runDir, exitRun, fmt.Errorf("seed ConfigMaps: %w", err)
		}
	}

	// 3. Every lab attached, each its own process, records streamed into the run directory.
	var procs []*labproc.Proc
	stopLabs := func() {
		for _, p := range procs {
			if serr := p.Stop(o.stopGrace); serr != nil {
				out.Setup("", record.StepFault, "lab stop", serr.Error())
				say("%v", serr)
			}
		}
		procs = nil
	}
	defer stopLabs()
	for _, l := range labs {
		args := []string{"-kubeconfig", t.kubeconfig, "-records", "-", "-name", l.name}
		if o.kubeconfig != "" {
			args = append(args, "-namespace", t.namespace)
		}
		p, err := labproc.Start(l.name, l.bin, args, filepath.Join(runDir, l.name+".jsonl"), filepath.Join(runDir, l.name+".stderr"))
		if err != nil {
			return runDir, exitRun, err
		}
		rp.Watch(p.PID(), "lab "+l.name)
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
	if err := waitFor(ctx, procs, o.syncTimeout, func(p *labproc.Proc) bool { return p.Synced(watchers...) }); err != nil {
		return runDir, exitRun, failed("waiting for the labs' informers to sync", err)
	}
	say("all %d labs synced (%d watchers) in %s", len(procs), len(procs)*len(watchers), time.Since(start).Round(time.Millisecond))

	// 4. The single writer: a seeded script, each write recorded with the rv it got.
	steps := mutator.Script(o.seed, o.minWrites)
	say("writing %d changes (seed %d, one every %s)", len(steps), o.seed, o.interval)
	var events []string
	for i, s := range steps {
		if i > 0 {
			select {
			case <-ctx.Done():
				return runDir, exitRun, failed("during the writes", ctx.Err())
			case <-time.After(o.interval):
			}
		}
		if o.fault != "" && i == len(steps)/2 {
			if err := inject(ctx, o.fault, t, mon, procs, rp, out, say); err != nil {
				return runDir, exitRun, failed("injecting "+o.fault, err)
			}
		}
		rv, err := mutator.Apply(ctx, cs, t.namespace, s)
		out.Write(mutator.Record(t.namespace, s, rv, err))
		if err != nil {
			return runDir, exitRun, failed("write", err)
		}
		events = append(events, labproc.Key(eventOf[s.Op], t.namespace, s.Name))
	}
	out.Setup("", record.StepWriteDone, fmt.Sprint(len(steps)), "")
	if err := waitFor(ctx, procs, o.syncTimeout, func(p *labproc.Proc) bool { return p.Missing(events, watchers...) == 0 }); err != nil {
		if ctx.Err() != nil {
			return runDir, exitRun, failed("waiting for the writes to arrive", err)
		}
		// Not fatal: compare shows exactly which watcher missed what.
		out.Setup("", record.StepFault, "writes not delivered", err.Error())
		say("not every watcher delivered every write: %v", err)
	}

	// 5. What the server holds now, for compare to check every informer's cache against.
	list, err := cs.CoreV1().ConfigMaps(listNamespace(o, t)).List(ctx, metav1.ListOptions{})
	if err != nil {
		return runDir, exitRun, failed("fresh LIST", err)
	}
	out.Write(record.Record{Kind: record.Setup, Tag: "LIST", Step: record.StepStore, Value: "fresh LIST before the labs stop", RV: list.ResourceVersion, Items: listItems(list)})

	// 6. Stop the labs (their logs end cleanly), then the server, then read what they saw.
	stopMonitor()
	stopLabs()
	t.stop()
	out.Setup("", record.StepStopped, "run complete", "")

	r, err := analysis.LoadRun(runDir)
	if err != nil {
		return runDir, exitRun, fmt.Errorf("compare: %w", err)
	}
	rep := analysis.Analyze(r)
	f, err := os.Create(filepath.Join(runDir, "compare.txt"))
	if err != nil {
		return runDir, exitRun, err
	}
	defer f.Close()
	rep.WriteText(io.MultiWriter(stdout, f))

	// The same report as one page to open in a browser: diagrams of what the text tells.
	var page bytes.Buffer
	if err := report.Write(&page, r, rep); err != nil {
		return runDir, exitRun, err
	}
	if err := os.WriteFile(filepath.Join(runDir, "report.html"), page.Bytes(), 0o644); err != nil {
		return runDir, exitRun, err
	}
	return runDir, rep.ExitCode(), nil
}

// listNamespace is what the labs watch: every namespace on envtest, the run's own on a cluster.
func listNamespace(o options, t *target) string {
	if o.kubeconfig != "" {
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
