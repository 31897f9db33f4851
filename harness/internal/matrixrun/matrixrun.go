// Package matrixrun is make matrix: it provisions each server version, builds each lab module
// once, and plays every scenario on every server with all client cells attached at once; the
// grid (compare/matrix) is written as markdown and JSON beside the runs.
package matrixrun

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"informer-lab/compare/matrix"
	"informer-lab/envtestbin"
	"informer-lab/harness/internal/app"
	"informer-lab/harness/internal/rundir"
)

// Servers are the kube-apiserver versions of the full grid (each built once from the module
// proxy into the envtest store), and the default one again with its WatchList gate off.
var Servers = []string{"1.31.14", "1.32.13", "1.32.13:WatchList=false", "1.33.13", "1.34.4", "1.35.4", "1.36.3", "1.37.2"}

// FaultsAlias names every fault scenario at once: `make matrix SCENARIOS=faults`, on the default
// server unless SERVERS says otherwise, regenerates docs/faults.md.
const FaultsAlias = "faults"

// FaultScenarios are the faults docs/faults.md shows: each fault of the proxy with its default
// parameter, and the refusals whose status decides between falling back and retrying.
var FaultScenarios = []string{
	"fault:no-end-bookmark", "fault:strip-annotations", "fault:ignore-send-initial-events",
	"fault:cut-initial-stream", "fault:too-large-rv",
	"fault:refuse-watch-list=400", "fault:refuse-watch-list=406", "fault:refuse-watch-list=500",
}

// Gates each lab module runs with: one row per module and setting.
var gates = []string{"off", "on"}

const (
	exitFindings = 1 // the grid was made, and a cell lost data or a run failed
	exitUsage    = 2
	exitRun      = 3
)

type options struct {
	root, out, clients, servers, scenarios string
	docs                                   bool
	seed                                   int64
	interval, watchTimeout, syncTimeout    time.Duration
	syncWait                               time.Duration
}

// server is one column: a version and the kube-apiserver feature gates it runs with.
type server struct{ version, gates string }

func (s server) name() string {
	if s.gates == "" {
		return s.version
	}
	return s.version + " " + s.gates
}

func (s server) slug() string { return strings.NewReplacer(" ", "-", ",", "-").Replace(s.name()) }

func parseServer(s string) (server, error) {
	v, g, _ := strings.Cut(strings.TrimSpace(s), ":")
	if _, err := fmt.Sscanf(v, "%d.%d.%d", new(int), new(int), new(int)); err != nil || strings.Count(v, ".") != 2 {
		return server{}, fmt.Errorf("server %q: want a version X.Y.Z, optionally with kube-apiserver feature gates after a colon (1.32.13:WatchList=false)", s)
	}
	return server{v, g}, nil
}

// Run is make matrix; it returns the process exit code.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err != nil {
		fmt.Fprintln(stderr, "error:", err)
		return exitUsage
	}
	code, err := run(ctx, o, stdout, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "error:", err)
	}
	return code
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("matrix", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.root, "root", "", "repository root, holding go.work and the client-v* modules (default: found from the working directory)")
	fs.StringVar(&o.out, "out", "", "parent of run directories (default: <root>/out)")
	fs.StringVar(&o.clients, "clients", "", "comma-separated client cells (client-v031-on) or modules (client-v031: both gates); default: every client-v* module, gate off and on")
	fs.StringVar(&o.servers, "servers", "", "comma-separated server versions, a version may carry kube-apiserver feature gates after a colon; default: "+strings.Join(Servers, ","))
	fs.StringVar(&o.scenarios, "scenarios", "", "comma-separated scenarios; default: "+strings.Join(app.Scenarios, ",")+`; fault:NAME[=N] for a server that does not play along, "faults" for all of `+strings.Join(FaultScenarios, ","))
	fs.DurationVar(&o.syncWait, "sync-wait", 60*time.Second, `fault scenarios: how long the informers may take to sync before a cell says "not synced after" this`)
	fs.BoolVar(&o.docs, "docs", false, "also write docs/matrix.md and the cells' logs under docs/matrix/ (the full grid does this by default)")
	fs.Int64Var(&o.seed, "seed", 1, "seed of the write scripts (same seed, same writes)")
	fs.DurationVar(&o.interval, "interval", 200*time.Millisecond, "time between writes")
	fs.DurationVar(&o.watchTimeout, "watch-timeout", 3*time.Second, "reconnect and expired: when kube-apiserver ends each watch")
	fs.DurationVar(&o.syncTimeout, "sync-timeout", 60*time.Second, "how long labs may take to sync, and watchers to deliver the writes")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected argument %q (flags only; see -h)", fs.Arg(0))
	}
	switch {
	case o.clients == "" && o.servers == "" && o.scenarios == "":
		o.docs = true // the whole grid is what docs/matrix.md shows
	case o.clients == "" && o.servers == "" && o.scenarios == FaultsAlias:
		o.servers = envtestbin.DefaultVersion // every fault on the default server: docs/faults.md
		o.docs = true
	}
	if o.syncWait <= 0 {
		return o, fmt.Errorf("-sync-wait must be positive, got %s", o.syncWait)
	}
	var err error
	o.root, o.out, err = rundir.Defaults(o.root, o.out)
	return o, err
}

// grid is what to run: the columns, the rows and the scenarios.
type grid struct {
	servers   []server
	clients   []string // cell names: client-v031-off
	scenarios []string
}

func (o options) grid() (grid, error) {
	var g grid
	for _, s := range split(o.servers, Servers) {
		sv, err := parseServer(s)
		if err != nil {
			return g, err
		}
		g.servers = append(g.servers, sv)
	}
	for _, s := range split(o.scenarios, app.Scenarios) {
		if s == FaultsAlias {
			g.scenarios = append(g.scenarios, FaultScenarios...)
			continue
		}
		if err := app.ValidateScenario(s); err != nil {
			return g, err
		}
		g.scenarios = append(g.scenarios, s)
	}
	mods, err := filepath.Glob(filepath.Join(o.root, "client-v*", "go.mod"))
	if err != nil || len(mods) == 0 {
		return g, fmt.Errorf("no client-v*/go.mod under %s", o.root)
	}
	var all []string
	for _, m := range mods {
		for _, gate := range gates {
			all = append(all, filepath.Base(filepath.Dir(m))+"-"+gate)
		}
	}
	for _, c := range split(o.clients, all) {
		switch {
		case slices.Contains(all, c):
			g.clients = append(g.clients, c)
		case slices.Contains(all, c+"-off"):
			g.clients = append(g.clients, c+"-off", c+"-on")
		default:
			return g, fmt.Errorf("unknown client %q: the cells are %s (a module name alone means both gates)", c, strings.Join(all, ", "))
		}
	}
	return g, nil
}

func split(list string, all []string) []string {
	if list == "" {
		return all
	}
	var out []string
	for _, s := range strings.Split(list, ",") {
		if s = strings.TrimSpace(s); s != "" && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	return out
}

func run(ctx context.Context, o options, stdout, stderr io.Writer) (int, error) {
	g, err := o.grid()
	if err != nil {
		return exitUsage, err
	}
	start := time.Now()
	say := func(format string, a ...any) { fmt.Fprintf(stderr, "[matrix] "+format+"\n", a...) }

	// 1. Every server version, built once from the module proxy and reused after that.
	for _, v := range versions(g.servers) {
		t := time.Now()
		if _, err := envtestbin.Lookup(ctx, envtestbin.Options{Version: v, NoBuild: true}); err != nil {
			say("kube-apiserver %s is not in the envtest store yet: building it from the Go module proxy (3-8 minutes cold)", v)
			if _, err := envtestbin.Lookup(ctx, envtestbin.Options{Version: v, Progress: prefixed{stderr, "[envtest " + v + "] "}}); err != nil {
				code := exitRun
				if errors.Is(err, envtestbin.ErrNotServed) || errors.Is(err, envtestbin.ErrBadVersion) {
					code = exitUsage // a version that does not exist: the user's input
				}
				return code, fmt.Errorf("provision kube-apiserver %s: %w", v, err)
			}
			say("kube-apiserver %s built in %s", v, time.Since(t).Round(time.Second))
		}
	}

	// 2. Every lab module built once; each client cell is a module and a gate setting.
	dir, err := rundir.New(o.out, "matrix-", start)
	if err != nil {
		return exitRun, err
	}
	say("run directory: %s", dir)
	var mods []string
	for _, c := range g.clients {
		if m := module(c); !slices.Contains(mods, m) {
			mods = append(mods, m)
		}
	}
	for i := range mods {
		mods[i] = filepath.Join(o.root, mods[i])
	}
	built, err := app.BuildCells(ctx, mods, func(f string, a ...any) { say(f, a...) })
	if err != nil {
		return exitRun, err
	}
	var cells []app.Cell
	for _, c := range g.clients {
		for _, b := range built {
			if b.Module == module(c) {
				b.Name, b.WatchList = c, c[strings.LastIndex(c, "-")+1:]
				cells = append(cells, b)
			}
		}
	}

	// 3. One run per server and scenario, every cell attached at once.
	res := matrix.New(start)
	res.Scenarios = g.scenarios
	for _, s := range g.servers { // the columns in the order asked, even for a run that fails
		res.Servers = append(res.Servers, matrix.Server{Name: s.name(), Version: "v" + s.version, FeatureGates: s.gates})
	}
	total, n := len(g.servers)*len(g.scenarios), 0
	gridStart := time.Now() // after the builds: what is left is runs like the ones done
	// Server by server, so the estimate of what is left holds (every server plays every scenario).
	for _, s := range g.servers {
		for _, sc := range g.scenarios {
			n++
			eta := ""
			if n > 1 {
				left := time.Since(gridStart) / time.Duration(n-1) * time.Duration(total-n+1)
				eta = fmt.Sprintf(", about %s left", left.Round(time.Second))
			}
			say("%d/%d: kube-apiserver %s, scenario %s (%d cells; %s so far%s)", n, total, s.name(), sc, len(cells), time.Since(start).Round(time.Second), eta)
			err := runOne(ctx, o, res, dir, sc, s, cells, say)
			if ctx.Err() != nil {
				// Keep what was finished: the grid so far, without the interrupted run's cells.
				res.Cells = slices.DeleteFunc(res.Cells, func(c matrix.Cell) bool { return c.Scenario == sc && c.Server == s.name() })
				res.Duration = time.Since(start).Round(time.Second).String()
				o.docs = false
				if err := write(res, dir, o, stdout, say); err != nil {
					say("writing the partial grid: %v", err)
				}
				return exitRun, fmt.Errorf("interrupted during %s on %s; the grid so far and the finished runs are in %s", sc, s.name(), dir)
			}
			if err != nil {
				say("run failed: %v", err)
			}
		}
	}
	res.Duration = time.Since(start).Round(time.Second).String()

	// 4. The grid: on the terminal, and as markdown and JSON beside the runs.
	if err := write(res, dir, o, stdout, say); err != nil {
		return exitRun, err
	}
	say("grid of %d cells in %s: %s", len(res.Cells), res.Duration, filepath.Join(dir, "matrix.md"))
	for _, c := range res.Cells {
		if c.Lost != "" || c.Failed != "" {
			return exitFindings, nil
		}
	}
	return 0, nil
}

// runOne plays one scenario on one server with every cell, and adds each cell's verdict and
// normalized log to res. A run that fails still gives its cells, marked failed.
func runOne(ctx context.Context, o options, res *matrix.Result, parent, sc string, s server, cells []app.Cell, say func(string, ...any)) error {
	// No ':' or '=' in a path: a relative link "fault:x/..." would read as a URL scheme.
	rel := filepath.Join(strings.NewReplacer(":", "-", "=", "-").Replace(sc), s.slug())
	dir := filepath.Join(parent, rel)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	rep, err := app.Execute(ctx, app.Spec{
		Dir: dir, Cells: app.Prebuilt(cells), ServerVersion: s.version, ServerGates: s.gates, Scenario: sc,
		Seed: o.seed, MinWrites: 2, SeedObjects: 3, Interval: o.interval, SyncTimeout: o.syncTimeout,
		StopGrace: 10 * time.Second, WatchTimeout: o.watchTimeout, SyncWait: o.syncWait,
		Say: func(f string, a ...any) { say("  "+f, a...) },
	})
	if err != nil {
		for _, c := range cells {
			res.Cells = append(res.Cells, matrix.Cell{Scenario: sc, Server: s.name(), Client: c.Name, Verdict: "run failed", Failed: oneLine(err), Run: filepath.ToSlash(rel)})
		}
		return err
	}
	res.Add(sc, rep, filepath.ToSlash(rel))
	return matrix.WriteCellLogs(dir, rep)
}

func oneLine(err error) string { return strings.Join(strings.Fields(err.Error()), " ") }

// module is the lab module of a cell name: client-v031-on -> client-v031.
func module(cell string) string { return cell[:strings.LastIndex(cell, "-")] }

// versions lists the distinct server versions, in order.
func versions(servers []server) []string {
	var vs []string
	for _, s := range servers {
		if !slices.Contains(vs, s.version) {
			vs = append(vs, s.version)
		}
	}
	return vs
}

// prefixed writes each line of a build's progress with a prefix.
type prefixed struct {
	w      io.Writer
	prefix string
}

func (p prefixed) Write(b []byte) (int, error) {
	for _, line := range strings.Split(strings.TrimRight(string(b), "\n"), "\n") {
		fmt.Fprintln(p.w, p.prefix+line)
	}
	return len(b), nil
}
