// Package app is the harness: one control plane, every lab attached to it, one writer, and
// compare's verdict over what each lab saw.
package app

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"time"

	"informer-lab/harness/internal/cli"
	"informer-lab/harness/internal/labproc"
	"informer-lab/harness/internal/rundir"
	"informer-lab/lab/gobuild"
	"informer-lab/record"
)

// Exit codes: compare's 0 (verdict holds) and 1 (it does not), 2 for bad input, 3 when the
// run itself failed (a process died, a server did not come up, Ctrl-C).
const (
	exitUsage = cli.ExitUsage
	exitRun   = 3
)

var watchers = []string{"A", "B"}

type options struct {
	root, out, labs, kubeconfig, kubeContext, serverVersion, serverGates string
	fault, scenario, kind                                                string
	seed                                                                 int64
	minWrites, seedObjects                                               int
	interval, syncTimeout, stopGrace, watchTimeout, syncWait             time.Duration
}

// Run is the harness's main; it returns the process exit code.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseFlags(args, stderr)
	if code, ok := cli.Parsed(err, stderr); !ok {
		return code
	}
	runDir, code, err := run(ctx, o, stdout, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "error:", err)
		if cli.IsUsage(err) {
			code = cli.ExitUsage
		}
	}
	if runDir != "" {
		fmt.Fprintf(stderr, "run directory: %s\n", runDir)
	}
	return code
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := cli.NewFlags("harness", "go.work and the client-v* modules", stderr)
	fs.StringVar(&o.labs, "labs", "", "comma-separated lab modules to run (default: every client-v* module)")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "use this cluster instead of envtest; the harness then works only in a namespace of its own, which it creates (once the user is known to have every permission the run needs) and deletes")
	fs.StringVar(&o.kubeContext, "context", "", "with -kubeconfig: the kubeconfig's context to use (default: its current-context)")
	fs.StringVar(&o.serverVersion, "server-version", "", "Kubernetes version of the envtest server (default 1.32.13; others must be provisioned with make envtest K8S_VERSION=...)")
	fs.StringVar(&o.serverGates, "server-feature-gates", "", `envtest's kube-apiserver settings: feature gates, and flags such as watch-cache=false, e.g. "WatchList=false"`)
	fs.StringVar(&o.fault, "fault", "", "inject a fault half-way through the writes: "+strings.Join(injectionNames(), ", "))
	fs.StringVar(&o.scenario, "scenario", record.ScenarioSteady, "what happens once the labs have synced: "+strings.Join(Scenarios, ", ")+"; or fault:NAME, a server that does not play along: "+strings.Join(proxyFaults(), ", "))
	fs.StringVar(&o.kind, "kind", "", "the labs' kind of informer: "+strings.Join(record.Kinds, ", ")+" (default "+record.KindTypedConfigMaps+"; "+record.KindAggregated+" on a server with "+record.SettingAggregated+"=VERSION)")
	fs.DurationVar(&o.syncWait, "sync-wait", 60*time.Second, "fault scenarios and kinds other than "+record.KindTypedConfigMaps+": how long the informers may take to sync before a cell says \"not synced after\" this")
	fs.DurationVar(&o.watchTimeout, "watch-timeout", 3*time.Second, strings.Join(Proxied(), " and ")+": how long each watch lasts once established (a streaming list: once its initial events have ended), before the proxy between labs and server ends it as kube-apiserver does at a timeout")
	fs.Int64Var(&o.seed, "seed", 1, "seed of the write scenario (same seed, same writes)")
	fs.IntVar(&o.minWrites, "min-writes", 2, "at least this many creates, updates and deletes")
	fs.IntVar(&o.seedObjects, "seed-objects", 3, "ConfigMaps that exist before the labs start (their initial sync delivers them)")
	fs.DurationVar(&o.interval, "interval", 200*time.Millisecond, "time between writes (3s is the original lab's pace)")
	fs.DurationVar(&o.syncTimeout, "sync-timeout", 90*time.Second, "how long labs may take to sync, and watchers to deliver the writes")
	fs.DurationVar(&o.stopGrace, "stop-grace", 10*time.Second, "how long a lab may take to stop after SIGINT before it is killed")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if err := o.check(); err != nil {
		return o, err
	}
	var err error
	o.root, o.out, err = fs.Dirs()
	return o, err
}

// check says what is wrong with the flags given, nil if nothing is.
func (o options) check() error {
	for name, d := range map[string]time.Duration{"-interval": o.interval, "-sync-timeout": o.syncTimeout, "-stop-grace": o.stopGrace, "-watch-timeout": o.watchTimeout, "-sync-wait": o.syncWait} {
		if d <= 0 {
			return fmt.Errorf("%s must be positive, got %s", name, d)
		}
	}
	if o.minWrites < 1 || o.seedObjects < 0 {
		return fmt.Errorf("-min-writes must be at least 1 and -seed-objects not negative, got %d and %d", o.minWrites, o.seedObjects)
	}
	if err := ValidateScenario(o.scenario); err != nil {
		return fmt.Errorf("-scenario: %w", err)
	}
	if o.kind != "" && !record.IsKind(o.kind) {
		return fmt.Errorf("-kind must be one of %s, got %q", strings.Join(record.Kinds, ", "), o.kind)
	}
	switch {
	case o.kubeContext != "" && o.kubeconfig == "":
		return fmt.Errorf("-context %s goes with -kubeconfig", o.kubeContext)
	case o.kubeconfig != "" && (o.serverVersion != "" || o.serverGates != ""):
		return fmt.Errorf("-server-version and -server-feature-gates choose an envtest server, not a cluster (-kubeconfig)")
	}
	if o.fault != "" && !impls[o.scenario].injects {
		return fmt.Errorf("-fault goes with -scenario %s (the other scenarios have their own events), got -scenario %s", strings.Join(injecting(), " or "), o.scenario)
	}
	if _, _, err := record.SplitServerSettings(o.serverGates); err != nil {
		return fmt.Errorf("-server-feature-gates: %w", err)
	}
	if why := record.KindNotApplicableOn(o.kind, o.serverGates); why != "" && o.kubeconfig == "" {
		return fmt.Errorf("-kind %s: %s: add it to -server-feature-gates, e.g. %s=0.34.13", o.kind, strings.TrimPrefix(why, "n/a: "), record.SettingAggregated)
	}
	_, err := injectionOf(o.fault)
	return err
}

// run is make compare: build every lab module outside the workspace (so each links its own
// pin), then one run of the scenario with every lab attached.
func run(ctx context.Context, o options, stdout, stderr io.Writer) (runDir string, code int, err error) {
	labDirs, err := labproc.Modules(o.root, o.labs)
	if err != nil {
		return "", exitUsage, err
	}
	// Before the labs' builds (minutes, cold): a server version that is not built is bad input.
	if err := provisioned(ctx, Spec{Kubeconfig: o.kubeconfig, ServerVersion: o.serverVersion, ServerGates: o.serverGates}); err != nil {
		return "", exitUsage, err
	}
	runDir, err = rundir.New(o.out, "", time.Now())
	if err != nil {
		return "", exitRun, err
	}
	say := func(format string, a ...any) { fmt.Fprintf(stderr, "[harness] "+format+"\n", a...) }
	rep, err := Execute(ctx, Spec{
		Dir: runDir, Cells: func(ctx context.Context) ([]Cell, error) { return BuildCells(ctx, labDirs, say) }, Kubeconfig: o.kubeconfig, Context: o.kubeContext, ServerVersion: o.serverVersion, ServerGates: o.serverGates,
		Scenario: o.scenario, Kind: o.kind, Fault: o.fault, Seed: o.seed, MinWrites: o.minWrites, SeedObjects: o.seedObjects,
		Interval: o.interval, SyncTimeout: o.syncTimeout, StopGrace: o.stopGrace, WatchTimeout: o.watchTimeout, SyncWait: o.syncWait,
		Stdout: stdout, Say: say,
	})
	if err != nil {
		return runDir, exitRun, err
	}
	return runDir, rep.ExitCode(), nil
}

// BuildCells compiles the lab modules, with GOWORK=off, one after another: one cell per module,
// with the module's own gate setting. A module none of whose files changed since the last run
// is not built again (labproc.Build). One at a time because, cold, that is the least work: go
// build already uses every core, and the seven labs' `go list -deps` hold 5,455 packages of
// which 3,644 are distinct (each lab's own client-go and apimachinery, and the standard library
// and other modules that all share); built at once, a shared package is compiled by every build
// that reaches it before another has cached it.
func BuildCells(ctx context.Context, dirs []string, say func(string, ...any)) ([]Cell, error) {
	cells := make([]Cell, len(dirs))
	var errs []error
	for i, dir := range dirs {
		start := time.Now()
		// Warm, a build is skipped in milliseconds; cold, it compiles a client-go for minutes,
		// which must not look like a hang.
		stop := gobuild.Progress(15*time.Second, func(d time.Duration) {
			say("building %s (%d of %d; cold, a few minutes each): %s so far", filepath.Base(dir), i+1, len(dirs), d)
		})
		bin, cg, err := labproc.Build(ctx, dir)
		stop()
		if err != nil {
			errs = append(errs, err)
			continue
		}
		name := filepath.Base(dir)
		say("built %s (client-go %s) in %s", name, cg, time.Since(start).Round(time.Millisecond))
		cells[i] = Cell{Name: name, Module: name, Bin: bin, ClientGo: cg}
	}
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return cells, nil
}
