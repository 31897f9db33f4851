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
	"informer-lab/lab/controlplane"
	"informer-lab/lab/mutator"
	"informer-lab/lab/wire"
	"informer-lab/record"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
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
	root, out, labs, kubeconfig, serverVersion, serverGates string
	seed                                                    int64
	minWrites, seedObjects                                  int
	interval, syncTimeout                                   time.Duration
}

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
	fs.StringVar(&o.serverVersion, "server-version", "", "Kubernetes version of the envtest server (default 1.32.13)")
	fs.StringVar(&o.serverGates, "server-feature-gates", "", `kube-apiserver --feature-gates for envtest, e.g. "WatchList=false"`)
	fs.Int64Var(&o.seed, "seed", 1, "seed of the write scenario (same seed, same writes)")
	fs.IntVar(&o.minWrites, "min-writes", 2, "at least this many creates, updates and deletes")
	fs.IntVar(&o.seedObjects, "seed-objects", 3, "ConfigMaps that exist before the labs start (their initial sync delivers them)")
	fs.DurationVar(&o.interval, "interval", 200*time.Millisecond, "time between writes (3s is the original lab's pace)")
	fs.DurationVar(&o.syncTimeout, "sync-timeout", 90*time.Second, "how long labs may take to sync, and watchers to deliver the writes")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected argument %q (flags only; see -h)", fs.Arg(0))
	}
	if o.interval <= 0 || o.minWrites < 1 || o.seedObjects < 0 {
		return o, fmt.Errorf("-interval must be positive, -min-writes at least 1, -seed-objects not negative")
	}
	if o.root == "" {
		root, err := findRoot()
		if err != nil {
			return o, err
		}
		o.root = root
	}
	if o.out == "" {
		o.out = filepath.Join(o.root, "out")
	}
	return o, nil
}

func run(ctx context.Context, o options, stdout, stderr io.Writer) (runDir string, code int, err error) {
	labDirs, err := labModules(o.root, o.labs)
	if err != nil {
		return "", exitUsage, err
	}
	runDir, err = newRunDir(o.out)
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

	tmp, err := os.MkdirTemp("", "informer-lab-harness-")
	if err != nil {
		return runDir, exitRun, err
	}
	defer os.RemoveAll(tmp) // the kubeconfig and the lab binaries: not part of the run

	// 1. Build every lab outside the workspace, so each links its own pin.
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

	// 2. One server for everyone: envtest, or the user's cluster.
	cfg, kubeconfig, ns, stopServer, err := server(ctx, o, tmp, out, say)
	if err != nil {
		return runDir, exitRun, err
	}
	defer stopServer()
	mutCfg := rest.CopyConfig(cfg)
	mutCfg.Wrap(wire.Wrap("MUT", out))
	cs, err := kubernetes.NewForConfig(mutCfg)
	if err != nil {
		return runDir, exitRun, err
	}
	for i := 1; i <= o.seedObjects; i++ {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("seed-cm-%d", i)}, Data: map[string]string{"seed": "true"}}
		if _, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			return runDir, exitRun, fmt.Errorf("seed ConfigMaps: %w", err)
		}
	}

	// 3. Every lab attached, each its own process, records streamed into the run directory.
	var procs []*labproc.Proc
	defer func() {
		for _, p := range procs {
			if serr := p.Stop(15 * time.Second); serr != nil {
				say("%v", serr)
			}
		}
	}()
	for _, l := range labs {
		args := []string{"-kubeconfig", kubeconfig, "-records", "-", "-name", l.name}
		if o.kubeconfig != "" {
			args = append(args, "-namespace", ns)
		}
		p, err := labproc.Start(l.name, l.bin, args, filepath.Join(runDir, l.name+".jsonl"), filepath.Join(runDir, l.name+".stderr"))
		if err != nil {
			return runDir, exitRun, err
		}
		procs = append(procs, p)
	}
	start := time.Now()
	if err := waitFor(ctx, procs, o.syncTimeout, func(p *labproc.Proc) bool { return p.Synced(watchers...) }); err != nil {
		return runDir, exitRun, fmt.Errorf("waiting for the labs' informers to sync: %w", err)
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
				return runDir, exitRun, fmt.Errorf("interrupted during the writes: %w", ctx.Err())
			case <-time.After(o.interval):
			}
		}
		rv, err := mutator.Apply(ctx, cs, ns, s)
		out.Write(mutator.Record(ns, s, rv, err))
		if err != nil {
			return runDir, exitRun, err
		}
		events = append(events, labproc.Key(eventOf[s.Op], ns, s.Name))
	}
	out.Setup("", record.StepWriteDone, fmt.Sprint(len(steps)), "")
	if err := waitFor(ctx, procs, o.syncTimeout, func(p *labproc.Proc) bool { return p.Missing(events, watchers...) == 0 }); err != nil {
		// Not fatal: compare shows exactly which watcher missed what.
		out.Setup("", record.StepFault, "writes not delivered", err.Error())
		say("not every watcher delivered every write: %v", err)
	}

	// 5. Stop the labs (their logs end cleanly), then the server, then read what they saw.
	for _, p := range procs {
		if serr := p.Stop(15 * time.Second); serr != nil {
			out.Setup("", record.StepFault, "lab stop", serr.Error())
		}
	}
	procs = nil
	stopServer()
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

// server starts envtest, or connects to the user's cluster, and returns a config, a kubeconfig
// path for the labs, the namespace to write in, and how to stop (idempotent).
func server(ctx context.Context, o options, tmp string, out *record.Writer, say func(string, ...any)) (*rest.Config, string, string, func(), error) {
	if o.kubeconfig != "" {
		cfg, err := clientcmd.BuildConfigFromFlags("", o.kubeconfig)
		if err != nil {
			return nil, "", "", nil, fmt.Errorf("kubeconfig %s does not load: %w", o.kubeconfig, err)
		}
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			return nil, "", "", nil, err
		}
		v, err := cs.Discovery().ServerVersion()
		if err != nil {
			return nil, "", "", nil, fmt.Errorf("cluster of %s does not answer: %w", o.kubeconfig, err)
		}
		ns := "informer-lab-" + rand.String(5)
		if _, err := cs.CoreV1().Namespaces().Create(ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: ns}}, metav1.CreateOptions{}); err != nil {
			return nil, "", "", nil, fmt.Errorf("create namespace %s: %w", ns, err)
		}
		say("attached to %s (%s); working only in namespace %s", cfg.Host, v.GitVersion, ns)
		out.Setup("", record.StepServer, v.GitVersion, "cluster")
		stop := func() {
			if cs == nil {
				return
			}
			cs.CoreV1().Namespaces().Delete(context.Background(), ns, metav1.DeleteOptions{})
			cs = nil
		}
		return cfg, o.kubeconfig, ns, stop, nil
	}
	start := time.Now()
	cp, err := controlplane.Start(ctx, controlplane.Options{Version: o.serverVersion, FeatureGates: o.serverGates, Progress: stderrWriter{say}})
	if err != nil {
		return nil, "", "", nil, err
	}
	say("envtest control plane %s up in %s", cp.ServerVersion, time.Since(start).Round(time.Millisecond))
	out.Setup("", record.StepServer, cp.ServerVersion, o.serverGates)
	kc, err := cp.AdminKubeconfig("informer-lab")
	if err != nil {
		cp.Stop()
		return nil, "", "", nil, err
	}
	path := filepath.Join(tmp, "kubeconfig")
	if err := os.WriteFile(path, kc, 0o600); err != nil {
		cp.Stop()
		return nil, "", "", nil, err
	}
	return cp.Config, path, "default", func() { cp.Stop(); os.Remove(path) }, nil
}

type stderrWriter struct{ say func(string, ...any) }

func (w stderrWriter) Write(p []byte) (int, error) {
	w.say("%s", strings.TrimRight(string(p), "\n"))
	return len(p), nil
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

// labModules lists the lab module directories to run: client-v* directories with a go.mod.
func labModules(root, only string) ([]string, error) {
	all, _ := filepath.Glob(filepath.Join(root, "client-v*", "go.mod"))
	var dirs []string
	known := map[string]string{}
	for _, gm := range all {
		dir := filepath.Dir(gm)
		known[filepath.Base(dir)] = dir
	}
	if only == "" {
		for _, d := range known {
			dirs = append(dirs, d)
		}
	} else {
		for _, name := range strings.Split(only, ",") {
			d, ok := known[strings.TrimSpace(name)]
			if !ok {
				names := make([]string, 0, len(known))
				for n := range known {
					names = append(names, n)
				}
				sort.Strings(names)
				return nil, fmt.Errorf("unknown lab %q: the labs are %s", name, strings.Join(names, ", "))
			}
			dirs = append(dirs, d)
		}
	}
	if len(dirs) == 0 {
		return nil, fmt.Errorf("no client-v*/go.mod under %s", root)
	}
	sort.Strings(dirs)
	return dirs, nil
}

// newRunDir makes out/<timestamp>, never reusing an existing directory.
func newRunDir(parent string) (string, error) {
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", err
	}
	base := filepath.Join(parent, time.Now().Format("20060102-150405"))
	dir := base
	for i := 2; ; i++ {
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			return dir, nil
		}
		if !os.IsExist(err) {
			return "", err
		}
		dir = fmt.Sprintf("%s-%d", base, i)
	}
}

func findRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.work")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.work above %s: run from the informer-lab repository or pass -root", dir)
		}
	}
}
