// Package matrixrun is make matrix: it provisions each server version, builds each lab module
// once, and plays every scenario on every server with all client cells attached at once; the
// grid (compare/matrix) is written as markdown and JSON beside the runs.
package matrixrun

import (
	"cmp"
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
	"informer-lab/harness/internal/app"
	"informer-lab/harness/internal/cli"
	"informer-lab/harness/internal/cluster"
	"informer-lab/harness/internal/labproc"
	"informer-lab/harness/internal/proxy"
	"informer-lab/harness/internal/rundir"
	"informer-lab/harness/internal/servers"
	"informer-lab/record"
)

// Servers are the kube-apiserver versions of the full grid (each built once from the module
// proxy into the envtest store), and the default one again with its WatchList gate off.
var Servers = []string{"1.31.14", "1.32.13", "1.32.13:WatchList=false", "1.33.13", "1.34.4", "1.35.4", "1.36.3", "1.37.2"}

// FaultsAlias names every fault scenario at once: `make matrix SCENARIOS=faults`, on
// FaultsDocsServers unless SERVERS says otherwise, regenerates docs/faults.md.
const FaultsAlias = "faults"

// FaultsDocsServers are docs/faults.md's columns: the oldest server with the WatchList gate on by
// default, the first with client-go v0.35's default behind it, and the newest.
const FaultsDocsServers = "1.32.13,1.34.4,1.37.2"

// FaultScenarios are the faults docs/faults.md shows: each fault of the proxy's table
// (proxy.Faults), with its default parameter or with each parameter of its Grid.
var FaultScenarios = func() []string {
	var names []string
	for _, f := range proxy.Faults() {
		if len(f.Grid) == 0 {
			names = append(names, record.ScenarioFaultPrefix+f.Name)
		}
		for _, param := range f.Grid {
			names = append(names, fmt.Sprintf("%s%s=%d", record.ScenarioFaultPrefix, f.Name, param))
		}
	}
	return names
}()

// VariantsAlias names docs/servers.md's columns at once: `make matrix SERVERS=variants`.
const VariantsAlias = "variants"

// VariantsDocsServers are docs/servers.md's columns, real servers that are not one plain
// kube-apiserver: without the watch cache on the oldest server with WatchList on by default, the
// first behind client-go v0.35's default, and the newest; that first one with a real
// aggregated apiserver of each version make sample-apiservers builds, whose WatchList defaults
// differ (their columns run the aggregated kind); and two upgrades in progress, each across a
// change of kube-apiserver's WatchList default (on in 1.32, off in 1.33, on from 1.34): two
// versions on one etcd behind a round-robin balancer.
const VariantsDocsServers = "1.32.13:watch-cache=false,1.34.4:watch-cache=false,1.37.2:watch-cache=false," +
	"1.34.4:aggregated=0.33.5,1.34.4:aggregated=0.34.13,1.32.13:upgrade=1.33.13,1.33.13:upgrade=1.34.4"

// KindsAliases name every informer kind of record.Kinds at once: `make matrix KINDS=all`.
var KindsAliases = []string{"all", "kinds"}

// The grid docs/kinds.md shows: every kind on the oldest and the newest server with WatchList on
// by default, startup and steady. `make matrix KINDS=all` regenerates it (so does the same with
// these SERVERS and SCENARIOS spelled out).
const (
	KindsDocsServers   = "1.32.13,1.37.2"
	KindsDocsScenarios = record.ScenarioStartup + "," + record.ScenarioSteady
)

// Gates each lab module runs with: one row per module and setting.
var gates = []string{"off", "on"}

const (
	exitFindings = 1 // the grid was made, and a cell lost data or a run failed
	exitUsage    = cli.ExitUsage
	exitRun      = 3
)

type options struct {
	root, out, clients, servers, scenarios, kinds string
	kubeconfig, kubeContext                       string // the user's cluster, as one more column
	docs                                          bool
	command                                       string // how the grid was asked for, as make matrix spells it
	seed                                          int64
	interval, watchTimeout, syncTimeout           time.Duration
	syncWait                                      time.Duration
}

// Run is make matrix; it returns the process exit code.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseFlags(args, stderr)
	if code, ok := cli.Parsed(err, stderr); !ok {
		return code
	}
	code, err := run(ctx, o, stdout, stderr)
	if err != nil {
		fmt.Fprintln(stderr, "error:", err)
	}
	return code
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := cli.NewFlags("matrix", "go.work and the client-v* modules", stderr)
	fs.StringVar(&o.clients, "clients", "", "comma-separated client cells (client-v031-on) or modules (client-v031: both gates); default: every client-v* module, gate off and on")
	fs.StringVar(&o.servers, "servers", "", "comma-separated server versions, a version may carry settings after a colon (kube-apiserver feature gates, or flags: 1.37.2:watch-cache=false); default: "+strings.Join(Servers, ",")+" (none with --kubeconfig); \""+VariantsAlias+"\" for "+VariantsDocsServers)
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "a column for this cluster too (make matrix KUBECONFIG=path): every run works in one namespace the matrix creates, once the user is known to have every permission it needs, and deletes; scenarios that need the server's processes are n/a there")
	fs.StringVar(&o.kubeContext, "context", "", "with --kubeconfig: the kubeconfig's context to use (default: its current-context)")
	fs.StringVar(&o.scenarios, "scenarios", "", "comma-separated scenarios; default: "+strings.Join(app.Scenarios, ",")+`; fault:NAME[=N] for a server that does not play along, "faults" for all of `+strings.Join(FaultScenarios, ","))
	fs.StringVar(&o.kinds, "kinds", "", "comma-separated informer kinds, one run per server, scenario and kind: "+strings.Join(record.Kinds, ", ")+`; "all" for every one a plain kube-apiserver runs; default: `+record.KindTypedConfigMaps+" only (no kind axis)")
	fs.DurationVar(&o.syncWait, "sync-wait", 60*time.Second, `fault scenarios and informer kinds other than `+record.KindTypedConfigMaps+`: how long the informers may take to sync before a cell says "not synced after" this`)
	fs.BoolVar(&o.docs, "docs", false, "also write docs/matrix.md (a grid with a kind axis: docs/kinds.md; of faults only: docs/faults.md; of servers with flags only: docs/servers.md) and the cells' logs beside it (the full grid, -kinds all, -scenarios faults and -servers variants do this by default)")
	fs.Int64Var(&o.seed, "seed", 1, "seed of the write scripts (same seed, same writes)")
	fs.DurationVar(&o.interval, "interval", 200*time.Millisecond, "time between writes")
	fs.DurationVar(&o.watchTimeout, "watch-timeout", 3*time.Second, strings.Join(app.Proxied(), " and ")+": how long each watch lasts once established (a streaming list: once its initial events have ended), before the proxy between labs and server ends it")
	fs.DurationVar(&o.syncTimeout, "sync-timeout", 60*time.Second, "how long labs may take to sync, and watchers to deliver the writes")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	o.command = command(fs.FlagSet)
	variants := o.servers == VariantsAlias
	if variants {
		o.servers = VariantsDocsServers
	}
	switch {
	case o.kubeContext != "" && o.kubeconfig == "":
		return o, fmt.Errorf("--context %s goes with --kubeconfig", o.kubeContext)
	case o.kubeconfig != "" && o.docs:
		return o, fmt.Errorf("--docs writes docs/ from envtest servers only, not from a cluster (--kubeconfig)")
	case o.kubeconfig != "":
		// A grid with the user's cluster is the user's, never docs/: only the servers asked for
		// beside it.
	case o.clients == "" && slices.Contains(KindsAliases, strings.TrimSpace(o.kinds)) &&
		(o.servers == "" || o.servers == KindsDocsServers) && (o.scenarios == "" || o.scenarios == KindsDocsScenarios):
		o.servers, o.scenarios = KindsDocsServers, KindsDocsScenarios // every kind: docs/kinds.md
		o.docs = true
	case o.kinds != "" && o.kinds != record.KindTypedConfigMaps:
		// another kind axis than docs/kinds.md's: written beside the run only, unless -docs
	case o.clients == "" && o.servers == "" && o.scenarios == "":
		o.docs = true // the whole grid is what docs/matrix.md shows
	case variants && o.clients == "" && o.scenarios == "":
		o.docs = true // every server variant: docs/servers.md
	case o.clients == "" && (o.servers == "" || o.servers == FaultsDocsServers) && o.scenarios == FaultsAlias:
		o.servers = FaultsDocsServers // every fault: docs/faults.md
		o.docs = true
	}
	if o.syncWait <= 0 {
		return o, fmt.Errorf("-sync-wait must be positive, got %s", o.syncWait)
	}
	var err error
	o.root, o.out, err = fs.Dirs()
	return o, err
}

// command spells the flags given as the make matrix command that gives them, e.g.
// "make matrix KINDS=all SERVERS=1.37.2", for the grid's header.
func command(fs *flag.FlagSet) string {
	vars := map[string]string{"kinds": "KINDS", "clients": "CLIENTS", "servers": "SERVERS", "scenarios": "SCENARIOS", "kubeconfig": "KUBECONFIG", "context": "CONTEXT"}
	parts := []string{"make matrix"}
	var args []string
	for _, name := range []string{"kinds", "clients", "servers", "scenarios", "kubeconfig", "context"} {
		if f := fs.Lookup(name); f != nil && f.Value.String() != "" {
			parts = append(parts, vars[name]+"="+f.Value.String())
		}
	}
	fs.Visit(func(f *flag.Flag) {
		_, isVar := vars[f.Name]
		switch b, isBool := f.Value.(interface{ IsBoolFlag() bool }); {
		case isVar || f.Name == "root" || f.Name == "out":
		case isBool && b.IsBoolFlag():
			args = append(args, "-"+f.Name+"="+f.Value.String())
		default:
			args = append(args, "-"+f.Name+" "+f.Value.String())
		}
	})
	if len(args) > 0 {
		parts = append(parts, `ARGS="`+strings.Join(args, " ")+`"`)
	}
	return strings.Join(parts, " ")
}

// grid is what to run: the columns, the rows, the scenarios and the informer kinds.
type grid struct {
	servers   []servers.Server
	clients   []string // cell names: client-v031-off
	scenarios []string
	kinds     []string // record.Kinds, in the order asked
}

// kindAxis says the grid has informer kinds as a dimension: any other than typed-configmaps
// alone, the default grid.
func (g grid) kindAxis() bool {
	return len(g.kinds) > 1 || len(g.kinds) == 1 && g.kinds[0] != record.KindTypedConfigMaps
}

func (o options) grid() (grid, error) {
	var g grid
	for _, k := range split(o.kinds, []string{record.KindTypedConfigMaps}) {
		switch {
		case slices.Contains(KindsAliases, k):
			// Every kind a plain kube-apiserver runs: the aggregated kind's columns are
			// docs/servers.md's (a server with aggregated=VERSION).
			for _, k := range record.Kinds {
				if !slices.Contains(g.kinds, k) && record.KindNotApplicableOn(k, "") == "" {
					g.kinds = append(g.kinds, k)
				}
			}
		case record.IsKind(k):
			if !slices.Contains(g.kinds, k) {
				g.kinds = append(g.kinds, k)
			}
		default:
			return g, fmt.Errorf("--kinds: unknown kind %q: the kinds are %s, or %q for all of them", k, strings.Join(record.Kinds, ", "), KindsAliases[0])
		}
	}
	list := o.servers
	if list == "" && o.kubeconfig == "" {
		list = strings.Join(Servers, ",")
	}
	var err error
	if g.servers, err = servers.ParseList(list); err != nil {
		return g, err
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
	mods, err := labproc.Modules(o.root, "")
	if err != nil {
		return g, err
	}
	var all []string
	for _, m := range mods {
		for _, gate := range gates {
			all = append(all, filepath.Base(m)+"-"+gate)
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
	cl, ns, err := openCluster(ctx, o, say)
	if err != nil {
		return exitUsage, err
	}
	// 1. Every server version, built once from the module proxy and reused after that.
	if err := servers.Provision(ctx, g.servers, say, stderr); err != nil {
		if errors.Is(err, servers.ErrUsage) {
			return exitUsage, err // a version that does not exist: the user's input
		}
		return exitRun, err
	}
	// 2. Every lab module built once; each client cell is a module and a gate setting.
	dir, err := rundir.New(o.out, "matrix-", start)
	if err != nil {
		return exitRun, err
	}
	say("run directory: %s", dir)
	cells, err := buildCells(ctx, o.root, g.clients, say)
	if err != nil {
		return exitRun, err
	}
	cols := columns(g)
	if cl != nil {
		col, err := clusterColumnIn(ctx, cl, ns, say)
		if err != nil {
			return exitRun, err
		}
		defer deleteNamespace(cl, ns, say) // however the matrix ends
		cols = append(cols, col)
	}
	// 3. One run per server, scenario and kind, every cell attached at once.
	p := newPlay(o, g, cols, cells, dir, start, say)
	if err := p.all(ctx, g, cols, stdout); err != nil {
		return exitRun, err
	}
	orderClients(p.res, cells)
	p.res.Duration = time.Since(start).Round(time.Second).String()
	// 4. The grid: on the terminal, and as markdown and JSON beside the runs.
	if err := write(p.res, dir, o, stdout, say); err != nil {
		return exitRun, err
	}
	say("grid of %d cells in %s: %s", len(p.res.Cells), p.res.Duration, filepath.Join(dir, "matrix.md"))
	for _, c := range p.res.Cells {
		if c.Lost != "" || c.Failed != "" {
			return exitFindings, nil
		}
	}
	return 0, nil
}

// openCluster opens the user's cluster, if asked for (nil if not), and checks that its user may
// do everything a run does in the namespace the matrix will create, ns: before anything is
// built or created. Every error is the user's input.
func openCluster(ctx context.Context, o options, say func(string, ...any)) (*cluster.Cluster, string, error) {
	if o.kubeconfig == "" {
		return nil, "", nil
	}
	ns := cluster.NewNamespace()
	cl, err := cluster.Open(ctx, o.kubeconfig, o.kubeContext)
	if err != nil {
		return nil, "", err
	}
	if err := cl.Check(ctx, cluster.Needs(ns)); err != nil {
		return nil, "", err
	}
	say("cluster at %s (%s): user %s may do what the runs need in namespace %s", cl.Config.Host, cl.Version, cl.User, ns)
	return cl, ns, nil
}

// buildCells builds every lab module the client cells name, once; each cell is a module and a
// gate setting.
func buildCells(ctx context.Context, root string, clients []string, say func(string, ...any)) ([]app.Cell, error) {
	var mods []string
	for _, c := range clients {
		if m := filepath.Join(root, module(c)); !slices.Contains(mods, m) {
			mods = append(mods, m)
		}
	}
	built, err := app.BuildCells(ctx, mods, say)
	if err != nil {
		return nil, err
	}
	var cells []app.Cell
	for _, c := range clients {
		for _, b := range built {
			if b.Module == module(c) {
				b.Name, b.WatchList = c, c[strings.LastIndex(c, "-")+1:]
				cells = append(cells, b)
			}
		}
	}
	return cells, nil
}

// columns are the grid's envtest columns: every server asked for, in that order.
func columns(g grid) []column {
	var cols []column
	for _, s := range g.servers {
		cols = append(cols, column{Server: matrix.Server{Name: s.Name(), Version: "v" + s.Version, FeatureGates: s.Settings}, slug: s.Slug(), envtest: s})
	}
	return cols
}

// clusterColumnIn creates namespace ns on the cluster, the one every run there works in, and
// asks the cluster about its streaming lists in it: its column.
func clusterColumnIn(ctx context.Context, cl *cluster.Cluster, ns string, say func(string, ...any)) (column, error) {
	if err := cl.CreateNamespace(ctx, ns); err != nil {
		return column{}, err
	}
	f := cl.Features(ctx, ns)
	say("the cluster's streaming lists: %s", f)
	return clusterColumn(cl, ns, f), nil
}

// deleteNamespace deletes the cluster's namespace and what the runs made in it.
func deleteNamespace(cl *cluster.Cluster, ns string, say func(string, ...any)) {
	if err := cl.DeleteNamespace(ns); err != nil {
		say("%v", err)
		return
	}
	say("deleted namespace %s and the runs' ConfigMaps", ns)
}

// play is the grid being played, run by run: what each run is given, and the grid so far.
type play struct {
	o         options
	res       *matrix.Result
	kinds     []string // "" alone: no kind axis, the labs' default kind (the grid of before kinds)
	cells     []app.Cell
	dir       string
	start     time.Time // the matrix's
	say       func(string, ...any)
	n, total  int       // the runs so far, and of the grid
	gridStart time.Time // after the builds: what is left is runs like the ones done
}

func newPlay(o options, g grid, cols []column, cells []app.Cell, dir string, start time.Time, say func(string, ...any)) *play {
	p := &play{o: o, res: matrix.New(start), kinds: []string{""}, cells: cells, dir: dir, start: start, say: say, gridStart: time.Now()}
	p.res.Scenarios = g.scenarios
	if g.kindAxis() {
		p.res.Kinds, p.kinds, p.res.Command = g.kinds, g.kinds, o.command
	}
	for _, col := range cols { // the columns in the order asked, even for a run that fails
		p.res.Servers = append(p.res.Servers, col.Server)
	}
	p.total = len(cols) * len(g.scenarios) * len(p.kinds)
	return p
}

// all plays every scenario of every kind in every column, server by server, so the estimate of
// what is left holds (every server plays every scenario). Interrupted, it writes the grid so
// far and says where.
func (p *play) all(ctx context.Context, g grid, cols []column, stdout io.Writer) error {
	for _, col := range cols {
		for _, sc := range g.scenarios {
			for _, kind := range p.kinds {
				if err := p.one(ctx, sc, kind, col); err != nil {
					return p.interrupted(sc, kind, col, stdout)
				}
			}
		}
	}
	return nil
}

// one plays scenario sc of kind in column col with every cell attached at once, but those the
// kind cannot run with: they are n/a, and not started. It fails only when ctx ended.
func (p *play) one(ctx context.Context, sc, kind string, col column) error {
	p.n++
	run, na := applicable(sc, kind, p.cells, col)
	for _, c := range p.cells {
		if why, ok := na[c.Name]; ok {
			p.res.AddNotApplicable(sc, kind, col.Name, c.Name, why)
		}
	}
	what := runName(sc, kind, col)
	if len(run) == 0 {
		p.say("%d/%d: %s: every cell is n/a (%s): run skipped", p.n, p.total, what, strings.Join(distinct(na), "; "))
		return nil
	}
	nas := ""
	if len(na) > 0 {
		nas = fmt.Sprintf(", %d n/a", len(na))
	}
	p.say("%d/%d: %s (%d cells%s; %s so far%s)", p.n, p.total, what, len(run), nas, time.Since(p.start).Round(time.Second), p.eta())
	err := runOne(ctx, p.o, p.res, p.dir, sc, kind, col, run, p.say)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if err != nil {
		p.say("run failed: %v", err)
	}
	return nil
}

// eta estimates what is left of the grid from the runs done, "" before the first is.
func (p *play) eta() string {
	if p.n <= 1 {
		return ""
	}
	left := time.Since(p.gridStart) / time.Duration(p.n-1) * time.Duration(p.total-p.n+1)
	return fmt.Sprintf(", about %s left", left.Round(time.Second))
}

// runName names a run in the matrix's progress: "kube-apiserver 1.32.13, scenario steady",
// "cluster-v1.32.13 …, scenario steady", then its kind when the grid has a kind axis.
func runName(sc, kind string, col column) string {
	what := fmt.Sprintf("kube-apiserver %s, scenario %s", col.Name, sc)
	if col.namespace != "" {
		what = fmt.Sprintf("%s, scenario %s", col.Name, sc)
	}
	if kind != "" {
		what += ", kind " + kind
	}
	return what
}

// interrupted keeps what was finished: it writes the grid so far, without the interrupted run's
// cells, and returns the error that says where it is.
func (p *play) interrupted(sc, kind string, col column, stdout io.Writer) error {
	p.res.Cells = slices.DeleteFunc(p.res.Cells, func(c matrix.Cell) bool {
		return c.Scenario == sc && c.Server == col.Name && c.Kind == kind
	})
	p.res.Duration = time.Since(p.start).Round(time.Second).String()
	o := p.o
	o.docs = false
	orderClients(p.res, p.cells)
	if err := write(p.res, p.dir, o, stdout, p.say); err != nil {
		p.say("writing the partial grid: %v", err)
	}
	return fmt.Errorf("interrupted during %s; the grid so far and the finished runs are in %s", runName(sc, kind, col), p.dir)
}

// runOne plays one scenario in one column with every cell, of one informer kind ("": the
// labs' default, in a grid without a kind axis), and adds each cell's verdict and normalized log
// to res. A run that fails still gives its cells, marked failed.
func runOne(ctx context.Context, o options, res *matrix.Result, parent, sc, kind string, col column, cells []app.Cell, say func(string, ...any)) error {
	// No ':' or '=' in a path: a relative link "fault:x/..." would read as a URL scheme.
	rel := filepath.Join(strings.NewReplacer(":", "-", "=", "-").Replace(sc), col.slug, kind)
	dir := filepath.Join(parent, rel)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	spec := app.Spec{
		Dir: dir, Cells: app.Prebuilt(cells), ServerVersion: col.envtest.Version, ServerGates: col.envtest.Settings, Scenario: sc, Kind: kind,
		Seed: o.seed, MinWrites: 2, SeedObjects: 3, Interval: o.interval, SyncTimeout: o.syncTimeout,
		StopGrace: 10 * time.Second, WatchTimeout: o.watchTimeout, SyncWait: o.syncWait,
		Say: func(f string, a ...any) { say("  "+f, a...) },
	}
	if col.namespace != "" { // the cluster: what it reported of its gates is what the cells expect by
		spec.Kubeconfig, spec.Context, spec.Namespace, spec.ServerGates = o.kubeconfig, o.kubeContext, col.namespace, col.FeatureGates
	}
	rep, err := app.Execute(ctx, spec)
	if err != nil {
		for _, c := range cells {
			res.Cells = append(res.Cells, matrix.Cell{Scenario: sc, Server: col.Name, Client: c.Name, Kind: kind, Verdict: "run failed", Failed: record.OneLine(err), Run: filepath.ToSlash(rel)})
		}
		return err
	}
	res.AddKind(sc, kind, col.Server, rep, filepath.ToSlash(rel))
	return matrix.WriteCellLogs(dir, rep)
}

// column is one column of the grid: an envtest server, or the user's cluster (--kubeconfig).
type column struct {
	matrix.Server                // as the grid names it
	slug          string         // its runs' directories
	envtest       servers.Server // the envtest server to boot; zero for the cluster
	namespace     string         // the cluster's: the namespace every run works in; "" for envtest
}

// clusterColumn names the user's cluster's column by what it said of itself: its /version, the
// gates of its streaming lists and how they were learned, e.g.
// "cluster-v1.32.13 WatchList=true (probed: end bookmark)". Its FeatureGates are what the cells'
// expected handshake is read from (record.ExpectedShape).
func clusterColumn(cl *cluster.Cluster, ns string, f cluster.Features) column {
	name := "cluster-" + cl.Version
	if f.Gates != "" {
		name += " " + f.Gates
	}
	name += " (" + f.How + ")"
	slug := "cluster-" + strings.Map(func(r rune) rune {
		if r == '.' || r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return '-'
	}, cl.Version)
	return column{Server: matrix.Server{Name: name, Version: cl.Version, FeatureGates: f.Gates}, slug: slug, namespace: ns}
}

// applicable splits the cells of a run of scenario sc and kind in column col: those to start,
// and why each other one cannot run ("n/a: …", record.KindNotApplicable, on the cluster
// record.ClusterNotApplicable, record.KindNotApplicableOn the column's settings and
// record.ScenarioNotApplicable), by cell name.
func applicable(sc, kind string, cells []app.Cell, col column) (run []app.Cell, na map[string]string) {
	na = map[string]string{}
	for _, c := range cells {
		why := record.KindNotApplicable(kind, record.Minor(c.ClientGo), record.Minor(col.Version))
		if col.namespace != "" && why == "" {
			why = record.ClusterNotApplicable(sc, kind)
		}
		if why == "" {
			why = record.KindNotApplicableOn(kind, col.FeatureGates)
		}
		if why == "" {
			why = record.ScenarioNotApplicable(sc, cmp.Or(kind, record.DefaultKind(col.FeatureGates)))
		}
		if why != "" {
			na[c.Name] = why
			continue
		}
		run = append(run, c)
	}
	return run, na
}

// distinct lists the reasons of na once each, sorted.
func distinct(na map[string]string) []string {
	var out []string
	for _, why := range na {
		if !slices.Contains(out, why) {
			out = append(out, why)
		}
	}
	slices.Sort(out)
	return out
}

// orderClients puts the grid's rows in the order of the cells asked for, whatever run saw a
// client first (a kind that is n/a for some cells); a cell that no run started (n/a for every
// kind it was asked with) still gets its row, from what its build says.
func orderClients(res *matrix.Result, cells []app.Cell) {
	var rows []matrix.Client
	for _, c := range cells {
		i := slices.IndexFunc(res.Clients, func(cl matrix.Client) bool { return cl.Name == c.Name })
		if i >= 0 {
			rows = append(rows, res.Clients[i])
			continue
		}
		rows = append(rows, matrix.Client{Name: c.Name, Module: c.Module, ClientGo: c.ClientGo, Gate: c.WatchList})
	}
	for _, cl := range res.Clients { // a row no cell asked for (none today): kept, last
		if !slices.ContainsFunc(rows, func(r matrix.Client) bool { return r.Name == cl.Name }) {
			rows = append(rows, cl)
		}
	}
	res.Clients = rows
}

// module is the lab module of a cell name: client-v031-on -> client-v031.
func module(cell string) string { return cell[:strings.LastIndex(cell, "-")] }
