// Package lab is informer-lab, shared by every client-go version's module: two independent
// SharedInformerFactory instances (A and B) watch core/v1 ConfigMaps through a logging
// RoundTripper, while a single writer changes one ConfigMap at a time. -kind picks another
// kind of informer (lab/kind): dynamic on a CRD, metadata-only, controller-runtime's, ...
//
// The client-v0XX modules are thin: their go.mod picks the client-go version, their main
// picks the WatchListClient gate default, and everything else is here. This package's own
// go.mod requires nothing newer than client-go v0.31, so each lab's go.mod decides.
package lab

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"informer-lab/lab/controlplane"
	"informer-lab/lab/crd"
	"informer-lab/lab/kind"
	"informer-lab/lab/kubeconfig"
	"informer-lab/lab/lifecycle"
	"informer-lab/lab/mutator"
	"informer-lab/lab/optout"
	"informer-lab/lab/optout/gates"
	"informer-lab/lab/pin"
	"informer-lab/lab/procs"
	"informer-lab/lab/wire"
	"informer-lab/record"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/features"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
)

// Gate settings for the WatchListClient feature gate.
const (
	GateDefault = "default" // leave it to client-go (its default, or KUBE_FEATURE_WatchListClient)
	GateOn      = "on"
	GateOff     = "off"
)

// Cell is what makes one lab module differ from another: its go.mod (and so its client-go)
// and the gate setting it starts with.
type Cell struct {
	GoMod     []byte // the module's go.mod, embedded by its main package
	WatchList string // GateDefault, GateOn or GateOff
}

type options struct {
	kubeconfig, context, namespace, records, name, serverVersion string
	gate, directListAt, kind, resource                           string
	optOut, optOutAt                                             string
	interval, duration                                           time.Duration
	informers, klogV                                             int
	quiet, directList                                            bool
	healthEvery                                                  time.Duration
	watchTimeout                                                 time.Duration
	fakes                                                        string // -fakes: "", fakesAll or a stand-in (fakes.go)
}

// Main runs the lab and exits: 0 after Ctrl-C or -duration; 1 for errors, and when an informer
// had not synced by then (the last line names it); 2 for bad input: flags, a kubeconfig, a
// cluster that does not serve what -kind watches.
func Main(c Cell) {
	lifecycle.Main(func(ctx context.Context) int {
		err := Run(ctx, c, os.Args[1:], os.Stdout, os.Stderr)
		switch {
		case errors.Is(err, flag.ErrHelp):
			return 0
		case errors.As(err, new(usageError)):
			fmt.Fprintln(os.Stderr, "error:", err)
			return 2
		case err != nil:
			fmt.Fprintln(os.Stderr, "error:", err)
			return 1
		}
		return 0
	})
}

type usageError struct{ error }

// Run is the whole lab, in order: flags, versions and gate, the informer kind, a server, the informers,
// a writer, and the wait for Ctrl-C.
func Run(ctx context.Context, c Cell, args []string, stdout, stderr io.Writer) error {
	name := moduleName(c.GoMod)
	opts, err := parseFlags(name, c, args, stderr)
	if err != nil {
		return err
	}

	// Where records go: JSON lines to a file or stdout, the text lines to stdout otherwise.
	out, closeOut, err := openRecords(opts, stdout)
	if err != nil {
		return err
	}
	defer closeOut()

	// 1. Which client-go is this, really? (go.work can link another one than the pin.)
	if err := pin.Ensure(c.GoMod, func(msg string) { out.Setup("", record.StepReexec, msg, "") }); err != nil {
		return err
	}
	linked, _ := pin.Linked()
	pinned, _ := pin.Pinned(c.GoMod)
	out.Setup("", record.StepClientGo, linked, "pin "+pinned)
	if opts.fakes != "" { // client-go's test doubles instead, with no server (fakes.go)
		return runFakes(ctx, opts, out)
	}

	// 2. The gate that decides LIST→WATCH or a streaming list. Set in code before any
	// informer exists: the reflector reads it once, when it is built. An -opt-out at start
	// comes first, as a program makes it before anything asks client-go's gates (client-go
	// reads its KUBE_FEATURE_ variables once, on the first question).
	optedOut := ""
	if opts.optOut != "" && opts.optOutAt == optout.AtStart {
		if optedOut, err = gates.Switch(opts.optOut); err != nil {
			return err
		}
	}
	gate, how, err := setWatchListGate(opts.gate)
	if err != nil {
		return err
	}
	if optout.ReplacesGates(opts.optOut) && opts.optOutAt == optout.AtStart {
		how = "replaced by -opt-out " + opts.optOut
	}
	out.Setup("", record.StepGate, gate, how)
	if optedOut != "" {
		out.Setup("", record.StepOptOut, gate, "-opt-out "+opts.optOut+" at start: "+optedOut)
	}

	// 3. The kind of informer: the typed factory of the original lab, or another way
	// controllers watch (lab/kind); some need a gate of their own set before any client exists.
	did, err := kind.SetUp(opts.kind)
	if err != nil {
		return usageError{err}
	}
	if watched := mutator.Watched(opts.kind, opts.resource); watched != mutator.Watched(opts.kind, "") {
		if did != "" {
			did += "; "
		}
		did += "watching " + watched.Resource + " (-resource " + opts.resource + ")"
	}
	out.Setup("", record.StepKind, opts.kind, did)

	// client-go's own words (why it fell back, why it retried) go to the records too, apart
	// from the lab's lines.
	klogs := &klogRecorder{stop: func() {}}
	if opts.klogV >= 0 {
		klogs = recordKlog(out, opts.klogV)
	}
	defer klogs.Stop()

	// 4. A server: our own envtest, or an existing one (attached mode, e.g. the harness's).
	cfg, stopServer, err := connect(ctx, opts, out, stderr)
	if err != nil {
		return err
	}
	defer stopServer()
	if opts.duration > 0 { // the lab's watching time, from now: booting does not count
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, opts.duration)
		defer cancel()
	}

	// 5. Independent informers, A and B (more with -informers): each its own reflector, watch
	// stream and cache, of the kind -kind says.
	informers := map[string]kind.Informer{}
	var synced []cache.InformerSynced
	for i := 0; i < opts.informers; i++ {
		tag := record.InformerTag(i)
		if i == 1 && opts.optOutAt == optout.AtBetween {
			if err := switchBetween(ctx, opts.optOut, synced[0], out); err != nil {
				return err
			}
		}
		counters := &wire.Counters{}
		icfg := rest.CopyConfig(cfg)
		// client-go's own User-Agent, and which informer: make observe, which sees the lab
		// from outside, tells A from B by it (they share one HTTP/2 connection).
		icfg.UserAgent = rest.DefaultKubernetesUserAgent() + " informer/" + tag
		icfg.Wrap(wire.WrapCounting(tag, out, counters, opts.quiet))
		if opts.watchTimeout > 0 { // wrapped around the wire: the wire logs the rewritten request
			icfg.Wrap(shortWatches(opts.watchTimeout))
		}
		discovery := rest.CopyConfig(cfg)
		discovery.Wrap(wire.Wrap(record.TagServer, out))
		inf, err := kind.New(opts.kind, icfg, kind.Options{Namespace: opts.namespace, Tag: tag, Out: out, Quiet: opts.quiet, Logged: counters.CaughtUp,
			Resource: opts.resource, Discovery: discovery, OptOut: perInformerOptOut(opts, i)})
		if err != nil {
			return err
		}
		informers[tag] = inf
		synced = append(synced, inf.HasSynced)
		inf.Start(ctx)
		go func() {
			if cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
				counters.CaughtUp() // the events it synced with are logged before "synced"
				out.Write(record.Record{Kind: record.Setup, Tag: tag, Step: record.StepSynced, Value: "informer cache synced", Stats: counters.Stats()})
			}
		}()
	}

	// 6. The writer, in standalone mode only: attached labs watch someone else's writes.
	// writers counts the goroutines that still write records after ctx ends (the mutator's
	// cancelled request is logged by the wire); step 6 waits for them, so that "stopped"
	// really is the last record.
	var writers sync.WaitGroup
	if opts.kubeconfig == "" {
		writers.Add(1)
		go func() {
			defer writers.Done()
			runMutator(ctx, cfg, mutator.Watched(opts.kind, opts.resource), opts.interval, out)
		}()
	}

	// With -direct-list, one typed List(): what a controller's own List call sends, which is not
	// what its informers send (directlist.go). Made once the informers are synced, as a
	// controller makes it, or at once (-direct-list-at start): against a server that does not
	// play along, the informers may never sync.
	if opts.directList {
		writers.Add(1)
		go func() {
			defer writers.Done()
			if opts.directListAt == "start" || cache.WaitForCacheSync(ctx.Done(), synced...) {
				directList(ctx, cfg, opts.namespace, out, klogs)
			}
		}()
	}

	if opts.healthEvery > 0 {
		writers.Add(1)
		go func() { defer writers.Done(); reportHealth(ctx, opts.healthEvery, out) }()
	}

	// 7. Run until Ctrl-C or -duration, then stop the informers (and klog's recording) before
	// the server, and say what each cache held: a reader can check it against a fresh LIST.
	// The last line names the informers that had not synced, if any: their caches were never a
	// copy of the server's, whatever they held, and the lab exits 1.
	<-ctx.Done()
	writers.Wait()
	unsynced := notSynced(informers)
	for _, inf := range informers {
		inf.Shutdown()
	}
	klogs.Stop() // what the stopping reflectors logged is recorded before "stopped"
	for _, tag := range sortedTags(informers) {
		out.Write(record.Record{Kind: record.Setup, Tag: tag, Step: record.StepStore, Value: "informer cache at stop", Items: informers[tag].Items()})
	}
	if opts.healthEvery > 0 {
		out.Write(record.Record{Kind: record.Setup, Step: record.StepHealth, Value: "at stop", Health: health()})
	}
	if len(unsynced) > 0 {
		out.Stop("informers stopped", "not synced: "+strings.Join(unsynced, ", "))
		return fmt.Errorf("informers not synced when the lab stopped: %s", strings.Join(unsynced, ", "))
	}
	out.Stop("informers stopped", "")
	return nil
}

func parseFlags(name string, c Cell, args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "attach to this cluster instead of booting envtest (no writer: someone else writes)")
	fs.StringVar(&o.context, "context", "", "with -kubeconfig: the kubeconfig's context to use (default: its current-context)")
	fs.StringVar(&o.namespace, "namespace", "", "watch only this namespace (default: all)")
	fs.StringVar(&o.records, "records", "", `also write records as JSON lines to this file; "-" writes them to stdout instead of the text lines`)
	fs.StringVar(&o.name, "name", name, "the lab's name in its records")
	fs.StringVar(&o.serverVersion, "server-version", "", "Kubernetes version of the envtest server (default 1.32.13)")
	fs.StringVar(&o.gate, "watch-list", c.WatchList, "WatchListClient gate: on, off or default (client-go's own default)")
	fs.StringVar(&o.kind, "kind", record.KindTypedConfigMaps, "the kind of informer: "+strings.Join(record.Kinds, ", "))
	fs.StringVar(&o.resource, "resource", "", "what the informers watch, if not their kind's own: "+record.ResourceConfigMaps+" (with -kind "+record.KindDynamicCRD+" or "+record.KindCBOR+", core ConfigMaps instead of the lab's Widgets: make bench's objects in JSON and CBOR) or "+record.ResourceSecrets+" or "+record.ResourcePods+" (typed only: make bench's KEP-3157 and Pod-scale shapes; no writer writes them, so use it with -kubeconfig)")
	fs.DurationVar(&o.interval, "interval", 3*time.Second, "time between two writes of the mutator")
	fs.IntVar(&o.informers, "informers", 2, "how many independent informer factories (A, B, C, ...; at most 26)")
	fs.BoolVar(&o.quiet, "quiet", false, "record only setup lines and per-informer counts (requests, bytes): no wire decoding, for benchmarks")
	fs.BoolVar(&o.directList, record.ScenarioDirect, false, // the flag is named after the scenario that sets it
		"make one typed List() of ConfigMaps too (tag DIRECT), as a controller does outside its informers; when: -direct-list-at")
	fs.IntVar(&o.klogV, "klog-v", 4, "record what client-go logs through klog up to this verbosity (4 shows why a v0.34+ reflector gave up a streaming list; -1: leave klog alone)")
	fs.StringVar(&o.directListAt, "direct-list-at", "synced", "when to make the -direct-list call: synced (once the informers are) or start (at once)")
	fs.DurationVar(&o.healthEvery, "health-every", 0, "record the lab's RSS, goroutines and open files this often (0: off), for long runs")
	fs.DurationVar(&o.watchTimeout, "watch-timeout", 0, "ask kube-apiserver to end every watch after this long (its timeoutSeconds, whole seconds), in place of the reflector's 5 to 10 minutes (0: the reflector's)")
	fs.DurationVar(&o.duration, "duration", 0, "stop after watching this long, counted once the server is up (default: run until Ctrl-C)")
	fs.StringVar(&o.optOut, "opt-out", "", "turn client-go's streaming lists off as a user does: "+strings.Join(optout.Modes, ", ")+" (lab/optout says how each works)")
	fs.StringVar(&o.optOutAt, "opt-out-at", optout.AtStart, "when -opt-out switches: "+optout.AtStart+" (before any informer) or "+optout.AtBetween+" (once informer A synced, before B starts)")
	fs.Var(fakesFlag{&o.fakes}, "fakes", fakesUsage)
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return o, err
		}
		return o, usageError{err}
	}
	if fs.NArg() > 0 {
		return o, usageError{fmt.Errorf("unexpected argument %q (flags only; see -h)", fs.Arg(0))}
	}
	if o.informers < 1 || o.informers > 26 {
		return o, usageError{fmt.Errorf("-informers must be 1 to 26, got %d", o.informers)}
	}
	if o.directListAt != "synced" && o.directListAt != "start" {
		return o, usageError{fmt.Errorf("-direct-list-at must be synced or start, got %q", o.directListAt)}
	}
	if !record.IsKind(o.kind) {
		return o, usageError{fmt.Errorf("-kind must be one of %s, got %q", strings.Join(record.Kinds, ", "), o.kind)}
	}
	switch {
	case o.resource != "" && o.resource != record.ResourceConfigMaps && o.resource != record.ResourceSecrets && o.resource != record.ResourcePods:
		return o, usageError{fmt.Errorf("-resource must be %s, %s or %s, got %q", record.ResourceConfigMaps, record.ResourceSecrets, record.ResourcePods, o.resource)}
	case o.resource != "" && o.kind == record.KindAggregated:
		return o, usageError{fmt.Errorf("-resource %s: -kind %s watches an aggregated apiserver's %s only; drop -resource", o.resource, o.kind, record.AggregatedResource)}
	case (o.resource == record.ResourceSecrets || o.resource == record.ResourcePods) && o.kind != record.KindTypedConfigMaps:
		return o, usageError{fmt.Errorf("-resource %s works with -kind %s only (the typed factory), got -kind %s", o.resource, record.KindTypedConfigMaps, o.kind)}
	}
	if o.interval <= 0 {
		return o, usageError{fmt.Errorf("-interval must be positive, got %s", o.interval)}
	}
	if o.watchTimeout < 0 || o.watchTimeout%time.Second != 0 {
		return o, usageError{fmt.Errorf("-watch-timeout must be whole seconds (timeoutSeconds), or 0 for the reflector's own, got %s", o.watchTimeout)}
	}
	if o.kind == record.KindAggregated && o.kubeconfig == "" {
		return o, usageError{fmt.Errorf("-kind %s watches an aggregated apiserver's %s, which the lab's own envtest does not run: "+
			"make compare ARGS=\"-kind %s -server-feature-gates %s=0.34.13\" starts one and attaches the labs", o.kind, record.AggregatedResource, o.kind, record.SettingAggregated)}
	}
	if o.context != "" && o.kubeconfig == "" {
		return o, usageError{fmt.Errorf("-context %s goes with -kubeconfig (the lab's own envtest has one context)", o.context)}
	}
	if err := checkOptOut(o); err != nil {
		return o, usageError{err}
	}
	return o, nil
}

func openRecords(o options, stdout io.Writer) (*record.Writer, func(), error) {
	switch o.records {
	case "":
		return record.NewWriter(o.name, nil, stdout), func() {}, nil
	case "-":
		return record.NewWriter(o.name, stdout, nil), func() {}, nil
	}
	f, err := os.OpenFile(o.records, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o644)
	if err != nil {
		return nil, nil, fmt.Errorf("records file (an existing file is never overwritten): %w", err)
	}
	return record.NewWriter(o.name, f, stdout), func() { f.Close() }, nil
}

// setWatchListGate applies the -watch-list setting and returns the effective state and why.
func setWatchListGate(setting string) (state, how string, err error) {
	switch setting {
	case GateDefault:
		how = "client-go default"
		if v, ok := os.LookupEnv("KUBE_FEATURE_WatchListClient"); ok {
			how = "KUBE_FEATURE_WatchListClient=" + v
		}
	case GateOn, GateOff:
		// What the gate is before the lab touches it: client-go's own default (or what
		// KUBE_FEATURE_WatchListClient says), so a reader can tell whether the cell runs
		// the default.
		before := gateNow()
		settable, ok := features.FeatureGates().(interface {
			Set(features.Feature, bool) error
		})
		if !ok {
			return "", "", fmt.Errorf("this client-go's feature gates cannot be set in code")
		}
		if err := settable.Set(features.WatchListClient, setting == GateOn); err != nil {
			return "", "", fmt.Errorf("set WatchListClient: %w", err)
		}
		was := "client-go default " + before
		if v, ok := os.LookupEnv("KUBE_FEATURE_WatchListClient"); ok {
			was = "before: " + before + ", from KUBE_FEATURE_WatchListClient=" + v
		}
		how = "set by this lab (-watch-list=" + setting + "; " + was + ")"
	default:
		return "", "", usageError{fmt.Errorf("-watch-list must be on, off or default, got %q", setting)}
	}
	return gateNow(), how, nil
}

// gateNow is what client-go's WatchListClient gate says now: GateOn or GateOff.
func gateNow() string {
	if features.FeatureGates().Enabled(features.WatchListClient) {
		return GateOn
	}
	return GateOff
}

// connect returns the server the informers watch: the -kubeconfig cluster, or an envtest of
// the lab's own (stopped by the returned func; its processes die with the lab whatever kills it,
// see controlplane.Start). Every request the lab makes on the way is on its wire log, tagged
// record.TagServer: its GET /version, and envtest's own.
func connect(ctx context.Context, o options, out *record.Writer, stderr io.Writer) (*rest.Config, func(), error) {
	logged := wire.Wrap(record.TagServer, out)
	if o.kubeconfig != "" {
		cfg, err := attach(o, logged, out)
		return cfg, func() {}, err
	}
	cp, err := controlplane.Start(ctx, controlplane.Options{Version: o.serverVersion, Settings: record.KindServerGates(o.kind), Progress: stderr, Wrap: logged})
	if err != nil {
		return nil, nil, err
	}
	out.Setup("", record.StepServer, cp.ServerVersion, "envtest, binaries from "+cp.Assets)
	if mutator.Watched(o.kind, o.resource) == mutator.Widgets {
		// Attached, the harness (or the user) installs it, and attach checks it is served; alone,
		// the lab's own server needs it.
		cfg := rest.CopyConfig(cp.Config)
		cfg.Wrap(logged)
		if err := crd.Install(ctx, cfg); err != nil {
			cp.Stop()
			return nil, nil, err
		}
	}
	return cp.Config, func() { cp.Stop() }, nil
}

// attach loads the -kubeconfig cluster, says its version, and checks through discovery that it
// serves what the informers watch: without the lab's CRD, say, they would get a 404 on every
// request, never sync, and leave the user to guess why.
func attach(o options, logged func(http.RoundTripper) http.RoundTripper, out *record.Writer) (*rest.Config, error) {
	cfg, err := kubeconfig.Load(o.kubeconfig, o.context)
	if err != nil {
		return nil, usageError{err}
	}
	probe := rest.CopyConfig(cfg)
	probe.Wrap(logged)
	dc, err := discovery.NewDiscoveryClientForConfig(probe)
	if err != nil {
		return nil, fmt.Errorf("attach to %s: %w", o.kubeconfig, err)
	}
	version := "unknown"
	if v, err := dc.ServerVersion(); err == nil {
		version = v.GitVersion
	}
	out.Setup("", record.StepServer, version, "attached")
	return cfg, served(dc, o)
}

// served is nil when the server lists the resource of -kind (mutator.Watched) in its discovery; a
// usage error that says what is missing and how to get it when it does not. When discovery
// itself fails (no answer, no permission), the informers are left to try: a lab that stops
// before they synced says so.
func served(dc discovery.DiscoveryInterface, o options) error {
	gvr := mutator.Watched(o.kind, o.resource)
	list, err := dc.ServerResourcesForGroupVersion(gvr.GroupVersion().String())
	switch {
	case err != nil && !apierrors.IsNotFound(err):
		return nil
	case err == nil && slices.ContainsFunc(list.APIResources, func(r metav1.APIResource) bool { return r.Name == gvr.Resource }):
		return nil
	}
	missing := fmt.Sprintf("-kind %s watches %s, which this server does not serve", o.kind, gvr.GroupResource())
	if gvr != mutator.Widgets {
		return usageError{errors.New(missing + " (its discovery of " + gvr.GroupVersion().String() + " does not list it)")}
	}
	return usageError{fmt.Errorf("%s: the lab's CustomResourceDefinition (lab/crd) is not installed; "+
		"the harness installs it on its own server (make compare ARGS=\"-kind %s\"), or install it here first (kubectl apply) and attach again", missing, o.kind)}
}

// runMutator is the standalone lab's writer: mutator.Cycle every interval, in namespace default.
// Each write's line comes before the write's own HTTP line, as in the original lab ("writing:
// ..."), and again with its error if it failed; a write cut short by the stop is no failure.
func runMutator(ctx context.Context, base *rest.Config, gvr schema.GroupVersionResource, interval time.Duration, out *record.Writer) {
	cfg := rest.CopyConfig(base)
	cfg.Wrap(wire.Wrap(record.TagWriter, out))
	target, err := mutator.TargetFor(cfg, gvr)
	if err != nil {
		out.Setup(record.TagWriter, record.StepFault, "mutator client", err.Error())
		return
	}
	writing := func(_ int, s mutator.Step) error {
		out.Write(mutator.Record("default", s, "", nil))
		return nil
	}
	failed := func(rec record.Record, err error) error {
		if err != nil && ctx.Err() == nil {
			out.Write(rec)
		}
		return nil // the lab writes on until it stops
	}
	mutator.Play(ctx, target, "default", mutator.Cycle(), interval, writing, failed)
}

// notSynced are the tags of the informers that have not synced, in order.
func notSynced(informers map[string]kind.Informer) []string {
	var tags []string
	for _, tag := range sortedTags(informers) {
		if !informers[tag].HasSynced() {
			tags = append(tags, tag)
		}
	}
	return tags
}

func sortedTags(m map[string]kind.Informer) []string {
	tags := make([]string, 0, len(m))
	for t := range m {
		tags = append(tags, t)
	}
	sort.Strings(tags)
	return tags
}

func reportHealth(ctx context.Context, every time.Duration, out *record.Writer) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		out.Write(record.Record{Kind: record.Setup, Step: record.StepHealth, Value: "periodic", Health: health()})
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}

// health reads this process's resident memory, goroutines and open file descriptors.
func health() *record.Health {
	h := &record.Health{Goroutines: runtime.NumGoroutine()}
	// /dev/fd lists this process's open descriptors on Linux (a link to /proc/self/fd) and macOS.
	if fds, err := os.ReadDir("/dev/fd"); err == nil {
		h.FDs = len(fds)
	}
	if m, err := procs.ReadMem(os.Getpid()); err == nil {
		h.RSSKiB = m.RSS >> 10
	}
	return h
}

// moduleName is the last element of the module path, e.g. "client-v031".
func moduleName(gomod []byte) string {
	for _, line := range strings.Split(string(gomod), "\n") {
		if f := strings.Fields(line); len(f) == 2 && f[0] == "module" {
			return f[1][strings.LastIndex(f[1], "/")+1:]
		}
	}
	return "lab"
}
