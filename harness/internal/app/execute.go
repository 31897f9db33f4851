package app

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"informer-lab/compare/analysis"
	"informer-lab/compare/report"
	"informer-lab/harness/internal/cli"
	"informer-lab/harness/internal/labproc"
	"informer-lab/harness/internal/proxy"
	"informer-lab/lab/crd"
	"informer-lab/lab/kind"
	"informer-lab/lab/mutator"
	"informer-lab/lab/reaper"
	"informer-lab/lab/wire"
	"informer-lab/record"

	"k8s.io/client-go/rest"
)

// Prebuilt gives Spec.Cells labs built before the run (make matrix builds them once for all).
func Prebuilt(cells []Cell) func(context.Context) ([]Cell, error) {
	return func(context.Context) ([]Cell, error) { return cells, nil }
}

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
	Dir string // the run directory, made by the caller
	// Cells returns the labs to attach. Execute calls it while envtest boots: building the lab
	// binaries and booting the server both take seconds, and neither needs the other.
	Cells func(context.Context) ([]Cell, error)
	// Kubeconfig, when set, is the user's cluster instead of envtest (Context: the kubeconfig's
	// context, "" for its current-context). The run then works in one namespace only: Namespace
	// when set (a matrix run's, which its creator made and deletes; ServerGates then says what
	// the cluster reported of its gates), else one it creates and deletes itself.
	Kubeconfig, Context, Namespace string
	ServerVersion, ServerGates     string
	Scenario                       string // one of Scenarios
	// Kind is the labs' informer kind (one of record.Kinds; "" is record.KindTypedConfigMaps):
	// what the writer writes and the fresh LIST reads follow it.
	Kind                             string
	Fault                            string // for a scenario that injects one (steady): the Name of one of Injections
	Seed                             int64
	MinWrites, SeedObjects           int
	Interval, SyncTimeout, StopGrace time.Duration
	// SyncWait is, in a fault scenario, how long the informers are given to sync: one that has not
	// by then is the result ("not synced after SyncWait"), not a failed run.
	SyncWait     time.Duration
	WatchTimeout time.Duration // the proxied scenarios (Proxied): how long each watch lasts once established, before the proxy ends it
	Stdout       io.Writer     // compare's report; nil discards it
	Say          func(format string, a ...any)
}

// Execute is one run: start an environment (a server, the labs attached and synced), play the
// scenario on it, stop it, and compare. The report is nil when the run itself failed.
func Execute(parent context.Context, s Spec) (*analysis.Report, error) {
	if s.Stdout == nil {
		s.Stdout = io.Discard
	}
	e, err := start(parent, s)
	if err != nil {
		return nil, err
	}
	defer e.Close()
	if err := e.play(); err != nil {
		e.err = err
		return nil, err
	}
	e.Close() // the labs' logs end cleanly, the server stops: then compare reads them
	return writeReport(s.Dir, s.Stdout)
}

// env is a run under way: what it started, and what its scenario wrote. Close undoes everything
// start did, in reverse, whether the run got through or not.
type env struct {
	Spec
	sc scenario
	// injection is -fault's, for a scenario that injects it (impl.injects); nil for none.
	injection *Injection
	ctx       context.Context // ends on Ctrl-C, or when the monitor sees a process die
	out       *record.Writer  // harness.jsonl
	t         *target
	px        *proxy.Proxy
	writer    *mutator.Target // the harness's own client: the writer and the fresh LIST, of the kind's resource
	procs     []*labproc.Proc
	mon       *monitor
	undo      []func()
	err       error // why the run failed, recorded in harness.jsonl at Close
	writes    int   // successful writes
	// syncDeadline ends a fault scenario's wait for the informers (Spec.SyncWait).
	syncDeadline time.Time
	expect       []record.Record // the MUTATOR record of each write every watcher must deliver
	syncWrites   *syncWriter     // the writes the labs sync among (a DuringSync scenario), until stopped
}

func (e *env) onClose(f func()) { e.undo = append(e.undo, f) }

// Close stops what start started, last first; a second call does nothing.
func (e *env) Close() {
	for len(e.undo) > 0 {
		f := e.undo[len(e.undo)-1]
		e.undo = e.undo[:len(e.undo)-1]
		f()
	}
}

// failed names what the run was doing when err came; when the monitor ended the run, its cause
// (a process that died) is the error.
func (e *env) failed(what string, err error) error {
	if cause := context.Cause(e.ctx); cause != nil && e.ctx.Err() != nil {
		return fmt.Errorf("%s: %w", what, cause)
	}
	return fmt.Errorf("%s: %w", what, err)
}

// start brings the run up, in order: the harness log, one server for everyone, the proxy if the
// scenario needs it, the seed objects, the writes the labs sync among if the scenario has them,
// every lab attached, and the wait until all have synced.
// On error it undoes what it did.
func start(parent context.Context, s Spec) (_ *env, err error) {
	e, err := newEnv(s)
	if err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			e.err = err
			e.Close()
		}
	}()
	if err := e.openLog(); err != nil {
		return nil, err
	}
	// A run ends early on Ctrl-C, or when the monitor sees etcd, kube-apiserver or a lab die.
	ctx, cancel := context.WithCancelCause(parent)
	e.ctx = ctx
	e.onClose(func() { cancel(nil) })
	tmp, err := os.MkdirTemp("", "informer-lab-harness-")
	if err != nil {
		return nil, err
	}
	e.onClose(func() { os.RemoveAll(tmp) })                               // the kubeconfigs: credentials, not part of the run
	if err := reaper.WatchDir(tmp, "the labs' kubeconfigs"); err != nil { // and if the harness is killed
		return nil, err
	}
	cells, err := e.startServer(tmp)
	if err != nil {
		return nil, err
	}
	labKubeconfig, err := e.labsKubeconfig(tmp)
	if err != nil {
		return nil, err
	}
	if err := e.seed(); err != nil {
		return nil, err
	}
	if e.sc.DuringSync {
		e.startSyncWrites()
	}
	if err := e.startLabs(cells, labKubeconfig); err != nil {
		return nil, err
	}
	e.startMonitor(cancel)
	if err := e.waitSynced(); err != nil {
		return nil, err
	}
	return e, nil
}

// newEnv checks a run's spec, every error of which is the user's input, and fills in what it
// leaves to the kind: the kind itself when "", and the server gates it needs.
func newEnv(s Spec) (*env, error) {
	if s.Kind == "" {
		s.Kind = record.DefaultKind(s.ServerGates)
	}
	if !record.IsKind(s.Kind) {
		return nil, cli.Usage(fmt.Errorf("unknown informer kind %q: the kinds are %s", s.Kind, strings.Join(record.Kinds, ", ")))
	}
	if why := record.ScenarioNotApplicable(s.Scenario, s.Kind); why != "" {
		return nil, cli.Usage(fmt.Errorf("scenario %s with kind %s: %s", s.Scenario, s.Kind, strings.TrimPrefix(why, "n/a: ")))
	}
	if g := record.KindServerGates(s.Kind); g != "" {
		s.ServerGates = strings.Trim(s.ServerGates+","+g, ",")
	}
	sc, err := lookup(s.Scenario)
	if err != nil {
		return nil, cli.Usage(err)
	}
	f, err := injectionOf(s.Fault)
	if err != nil {
		return nil, cli.Usage(err)
	}
	if err := onCluster(s, f); err != nil {
		return nil, cli.Usage(err)
	}
	return &env{Spec: s, sc: sc, injection: f}, nil
}

// openLog creates harness.jsonl, which starts with the scenario and its doc and, at Close,
// ends with how the run ended.
func (e *env) openLog() error {
	hlog, err := os.OpenFile(filepath.Join(e.Dir, analysis.HarnessFile), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	e.out = record.NewWriter("harness", hlog, nil)
	e.onClose(func() {
		if e.err != nil {
			e.out.Setup("", record.StepFault, "run failed", e.err.Error())
		} else {
			e.out.Stop("run complete", "")
		}
		hlog.Close()
	})
	e.out.Setup("", record.StepScenario, e.Spec.Scenario, e.sc.Doc)
	return nil
}

// startServer starts one server for everyone: envtest (its processes handed to the reaper by
// controlplane), or the user's cluster. The labs are built meanwhile: it returns them.
func (e *env) startServer(tmp string) ([]Cell, error) {
	type built struct {
		cells []Cell
		err   error
	}
	cells := make(chan built, 1)
	go func() { c, err := e.Cells(e.ctx); cells <- built{c, err} }()
	t, err := server(e.ctx, e.Spec, tmp, e.out, e.Say)
	labs := <-cells // waited for even when the server failed: nothing of start outlives it
	if err != nil {
		return nil, err
	}
	e.t = t
	e.onClose(e.t.stop)
	if labs.err != nil {
		return nil, labs.err
	}
	e.out.Setup("", record.StepKubeconfig, e.t.kubeconfig, "the labs' credentials: owner-only, outside the run directory, deleted at the end when the harness wrote it")
	return labs.cells, nil
}

// labsKubeconfig is the kubeconfig the labs connect with: the server's, or a proxy's when the
// scenario puts one in front of the server. In front of a cluster too: the proxy authenticates
// upstream with the kubeconfig's own credentials (onCluster refused what needs the server's
// processes).
func (e *env) labsKubeconfig(tmp string) (string, error) {
	if !e.sc.proxy && len(e.t.servers) == 0 {
		return e.t.kubeconfig, nil
	}
	opts := proxy.Options{Fault: e.sc.fault, Servers: e.t.servers}
	if e.sc.proxy {
		opts.WatchTimeout = e.WatchTimeout
	}
	if e.sc.fault != nil {
		opts.WatchTimeout = 0 // a hang must last as long as the client's own timeout
	}
	px, path, err := startProxy(e.t, opts, tmp, e.out)
	if err != nil {
		return "", err
	}
	e.px = px
	e.onClose(func() { e.px.Close() })
	e.Say("labs connect through a proxy at %s: %s", e.px.URL(), proxyDoes(opts))
	return path, nil
}

// seed makes the harness's own client, the writer and the fresh LIST, of the kind's resource
// (installing its CustomResourceDefinition when the kind watches one), and the seed objects.
func (e *env) seed() error {
	cfg := rest.CopyConfig(e.t.cfg)
	cfg.Wrap(wire.Wrap(record.TagWriter, e.out))
	if record.KindWatchesCRD(e.Kind) {
		if err := crd.Install(e.ctx, cfg); err != nil {
			return err
		}
	}
	var err error
	if e.writer, err = mutator.TargetFor(cfg, mutator.Watched(e.Kind, "")); err != nil {
		return err
	}
	e.writer.Labels = e.t.labels
	// The odd seeds carry the selector kind's label, the even ones do not: its informers must
	// deliver only the first kind.
	for i := 1; i <= e.SeedObjects; i++ {
		obj := e.writer.Object(e.t.namespace, fmt.Sprintf("seed-cm-%d", i), i%2 == 1, map[string]string{"seed": "true"})
		if _, err := e.writer.Create(e.ctx, obj); err != nil {
			return fmt.Errorf("seed objects: %w", err)
		}
	}
	return nil
}

// startLabs attaches every lab, each its own process, its records streamed into the run
// directory. A kind this client-go or server does not have is not run: the lab would only say so.
func (e *env) startLabs(cells []Cell, kubeconfig string) error {
	e.onClose(func() { stopLabs(e.procs, e.StopGrace, e.out, e.Say); e.procs = nil })
	for _, c := range cells {
		if why := record.KindNotApplicable(e.Kind, record.Minor(c.ClientGo), record.Minor(e.t.version)); why != "" {
			e.out.Setup("", record.StepLab, c.Name, "not started: "+why)
			e.Say("%s not started: %s", c.Name, why)
			continue
		}
		args := e.labArgs(c, kubeconfig)
		e.out.Setup("", record.StepLab, c.Name, "client-go "+c.ClientGo+" "+strings.Join(args[4:], " "))
		p, err := labproc.Start(c.Name, c.Bin, args, filepath.Join(e.Dir, c.Name+".jsonl"), filepath.Join(e.Dir, c.Name+".stderr"))
		if err != nil {
			return err
		}
		e.procs = append(e.procs, p)
	}
	return nil
}

// labArgs are a lab's flags: its kubeconfig, its records on stdout and its name (the four its
// SETUP lab record leaves out), then what the cell, the kind, the cluster and the scenario ask.
func (e *env) labArgs(c Cell, kubeconfig string) []string {
	args := []string{"-kubeconfig", kubeconfig, "-records", "-", "-name", c.Name}
	if c.WatchList != "" {
		args = append(args, "-watch-list", c.WatchList)
	}
	if e.Kind != record.KindTypedConfigMaps {
		args = append(args, "-kind", e.Kind)
	}
	if e.Kubeconfig != "" {
		args = append(args, "-namespace", e.t.namespace)
	}
	if e.Context != "" && kubeconfig == e.Kubeconfig { // the proxy's kubeconfig has one context
		args = append(args, "-context", e.Context)
	}
	return append(args, e.sc.labArgs()...)
}

// startMonitor watches etcd, kube-apiserver and the labs until Close: the first to die cancels
// the run, with a cause that names it.
func (e *env) startMonitor(cancel context.CancelCauseFunc) {
	e.mon = &monitor{cancel: cancel, cp: e.t.cp, procs: e.procs}
	if e.t.cp != nil {
		e.mon.etcdPID, _ = e.t.cp.EtcdPID()
	}
	e.onClose(e.mon.start(e.ctx))
}

// waitSynced waits until every lab's informers have synced. Against a server that does not
// play along, or with an informer kind that does not follow the protocol, an informer that does
// not sync is the finding: it waits SyncWait, then the run goes on with what synced.
func (e *env) waitSynced() error {
	began := time.Now()
	synced := func(p *labproc.Proc) bool { return p.Synced(watchers...) }
	if e.sc.fault == nil && e.Kind == record.KindTypedConfigMaps {
		if err := waitFor(e.ctx, e.procs, e.SyncTimeout, synced); err != nil {
			return e.failed("waiting for the labs' informers to sync", err)
		}
		e.Say("all %d labs synced (%d watchers) in %s", len(e.procs), len(e.procs)*len(watchers), time.Since(began).Round(time.Millisecond))
		return nil
	}
	e.syncDeadline = began.Add(e.SyncWait)
	e.out.Setup("", record.StepSyncWait, e.SyncWait.String(), "informers not synced by then are reported as not synced, the run goes on")
	err := waitFor(e.ctx, e.procs, e.SyncWait, synced)
	if err != nil && (e.ctx.Err() != nil || !strings.HasPrefix(err.Error(), "timed out")) {
		return e.failed("waiting for the labs' informers to sync", err)
	}
	e.Say("after %s: %s", time.Since(began).Round(time.Millisecond), syncedSummary(e.procs))
	return nil
}

// play runs the scenario's seeded script, waits until every watcher delivered what it must,
// and records what the server holds then, for compare to check every informer's cache against.
func (e *env) play() error {
	if err := e.sc.run(e); err != nil {
		return err
	}
	e.out.Setup("", record.StepWriteDone, fmt.Sprint(e.writes), "")
	// Only informers that synced must deliver the writes; one that did not is already the finding.
	// Delivered means what compare means (record.Delivers), in any order (labproc.Proc.Missing),
	// and the watch that follows a LIST answered, so that stopping the labs cuts no handshake.
	delivered := func(lp *labproc.Proc) bool {
		return !lp.Synced(watchers...) || lp.Missing(e.expect, watchers...) == 0 && lp.WatchAnswered(watchers...)
	}
	if err := waitFor(e.ctx, e.procs, e.SyncTimeout, delivered); err != nil {
		if e.ctx.Err() != nil {
			return e.failed("waiting for the writes to arrive", err)
		}
		// Not fatal: compare shows exactly which watcher missed what.
		e.out.Setup("", record.StepFault, "writes not delivered", err.Error())
		e.Say("not every watcher delivered every write: %v", err)
	}
	rv, items, err := e.writer.List(e.ctx, listNamespace(e.Spec, e.t), kind.Selector(e.Kind))
	if err != nil {
		return e.failed("fresh LIST", err)
	}
	e.out.Write(record.Record{Kind: record.Setup, Tag: record.TagFreshList, Step: record.StepStore, Value: "fresh LIST before the labs stop", RV: rv, Items: items})
	return nil
}

// writeReport reads the run back as compare does, prints the verdict, and writes compare.txt
// (with every fact) and report.html.
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
	rep.WriteText(stdout) // fits a terminal
	rep.WriteDetail(f)    // every fact, one column per lab
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
func startProxy(t *target, opts proxy.Options, tmp string, out *record.Writer) (*proxy.Proxy, string, error) {
	px, err := proxy.Start(t.cfg, opts)
	if err != nil {
		return nil, "", fmt.Errorf("start the proxy: %w", err)
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
	out.Setup("", record.StepProxy, proxyDoes(opts), "the labs connect through a proxy; their requests are logged as they sent them")
	return px, path, nil
}

// proxyDoes says in a few words what the proxy does to the labs' requests.
func proxyDoes(opts proxy.Options) string {
	if len(opts.Servers) > 0 {
		var names []string
		for _, s := range opts.Servers {
			names = append(names, s.Name)
		}
		balance := "round-robin over kube-apiservers " + strings.Join(names, " and ")
		if opts.Fault == nil && opts.WatchTimeout == 0 {
			return balance
		}
		opts.Servers = nil
		return balance + ", " + proxyDoes(opts)
	}
	switch {
	case opts.Fault != nil:
		return "fault " + opts.Fault.String()
	case opts.WatchTimeout > 0:
		return fmt.Sprintf("watch timeout %s", opts.WatchTimeout)
	}
	return "forwards as is"
}

// syncedSummary says how many labs' informers synced.
func syncedSummary(procs []*labproc.Proc) string {
	var not []string
	for _, p := range procs {
		if !p.Synced(watchers...) {
			not = append(not, p.Name)
		}
	}
	if len(not) == 0 {
		return fmt.Sprintf("all %d labs synced", len(procs))
	}
	return fmt.Sprintf("%d of %d labs synced; not synced: %s", len(procs)-len(not), len(procs), strings.Join(not, ", "))
}

// onCluster says why a run cannot be played on the user's cluster (Spec.Kubeconfig), nil when it
// can or the run is on envtest: a scenario or an injected fault f that kills kube-apiserver or
// etcd, or an informer kind that needs something outside the namespace
// (record.ClusterNotApplicable).
func onCluster(s Spec, f *Injection) error {
	if s.Kubeconfig == "" {
		return nil
	}
	if why := record.ClusterNotApplicable(s.Scenario, s.Kind); why != "" {
		return fmt.Errorf("scenario %s, kind %s on a cluster (-kubeconfig): %s", s.Scenario, s.Kind, strings.TrimPrefix(why, "n/a: "))
	}
	if f != nil && f.ServerProcesses {
		return fmt.Errorf("-fault %s on a cluster (-kubeconfig): %s", f.Name, strings.TrimPrefix(record.NotApplicableServerProcesses, "n/a: "))
	}
	return nil
}

// listNamespace is what the labs watch: every namespace on envtest, the run's own on a cluster.
func listNamespace(s Spec, t *target) string {
	if s.Kubeconfig != "" {
		return t.namespace
	}
	return ""
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
