package bench

import (
	"context"
	"debug/buildinfo"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"informer-lab/harness/internal/cli"
	"informer-lab/harness/internal/labproc"
	"informer-lab/harness/internal/rundir"
	"informer-lab/harness/internal/servers"
	"informer-lab/lab/controlplane"
	"informer-lab/lab/crd"
	"informer-lab/lab/mutator"
	"informer-lab/lab/procs"
	"informer-lab/record"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Result is one run: one lab process, K informers, one mode, on a settled apiserver.
type Result struct {
	Server string `json:"server"` // servers.Server.Name(): "1.37.2 WatchListCompression=false"
	Case   string `json:"case"`
	K      int    `json:"k"`
	Mode   Mode   `json:"mode"`
	Logged bool   `json:"logged,omitempty"` // wire logging on (no -quiet): the overhead runs
	Rep    int    `json:"rep"`

	APIBaseline    int64 `json:"apiBaseline"`    // apiserver VmRSS just before the lab started
	APIPeakHWM     int64 `json:"apiPeakHWM"`     // its VmHWM at sync, reset to VmRSS at the baseline
	APIPeakSampled int64 `json:"apiPeakSampled"` // its highest VmRSS sample
	Settled        bool  `json:"settled"`        // the baseline had stopped moving before the run

	SyncMillis float64 `json:"syncMillis"` // lab's clock: its server record to its last synced record
	WallMillis float64 `json:"wallMillis"` // harness's clock: lab process start to every synced record read
	Requests   int     `json:"requests"`   // sum over the synced records' Stats
	Bytes      int64   `json:"bytes"`      // response bodies after decompression
	WireBytes  int64   `json:"wireBytes"`  // the same as they came off the connection (gzip where the server compressed)
	// ContentTypes are the media types the informers' 200 responses came in, each once.
	ContentTypes []string `json:"contentTypes,omitempty"`

	APICPUMillis float64 `json:"apiCPUMillis"` // kube-apiserver's CPU time (user + system) from the baseline to sync
	// APIMissing says why the run has no kube-apiserver figures (a cluster whose /metrics the
	// user may not read, or that several processes answered): "" when it has them.
	APIMissing string `json:"apiMissing,omitempty"`

	LabPeakHWM     int64 `json:"labPeakHWM"` // the lab process's VmHWM (a fresh process each run)
	LabPeakSampled int64 `json:"labPeakSampled"`
	Samples        int   `json:"samples"`

	// A writes case's run (Case.WriteRate), or the writer alone (Report.Alone):
	Writer *WriterStats `json:"writer,omitempty"` // what the writer and the reader met until the informers synced
	// Problems are how an informer's events after its sync point differ from the writes made
	// after it, or its cache at stop from a fresh LIST: none when every informer holds.
	Problems []string `json:"problems,omitempty"`
	// Metrics are the moves of kube-apiserver's watch-cache counters (watchCacheMetrics) from
	// the baseline to the sync.
	Metrics map[string]float64 `json:"metrics,omitempty"`
	// Detector is how many checks client-go's inconsistency detectors made (-detectors); they
	// panic, and the lab with them, on a difference.
	Detector int `json:"detector,omitempty"`
	// Watch is what a link case's watch run saw of each informer's first watch (watchRun).
	Watch *WatchLife `json:"watch,omitempty"`
}

// APIDelta is the apiserver's peak above its baseline, from VmHWM.
// (VmHWM and VmRSS come from per-CPU counters that may disagree by a few pages: never below 0.)
func (r Result) APIDelta() int64 { return max(0, r.APIPeakHWM-r.APIBaseline) }

// APIDeltaSampled is the same from the VmRSS samples.
func (r Result) APIDeltaSampled() int64 { return max(0, r.APIPeakSampled-r.APIBaseline) }

// Report is everything a run produced: what the tables, plots and docs are made from.
type Report struct {
	Started, Finished time.Time
	Machine           Machine
	Versions          Versions
	Servers           []ServerInfo // in the order measured
	Cases             []Case
	Ks                []int
	Repeats           int
	Interval          time.Duration
	Quick             bool
	Fresh             bool     // a fresh kube-apiserver process for every run
	Args              []string // the command line's flags, as the doc's header shows them
	Results           []Result
	Seeding           map[string]time.Duration // seedingKey(server, case) -> time to create its objects
	Lab               string                   `json:",omitempty"` // the lab module; "" in runs before -lab: labModule
	MemFactor         float64                  `json:",omitempty"` // the memory guard's factor (-mem-factor)
	// Alone are the writes cases' baselines: the writer and the reader with no informer
	// starting (Result.Writer only), one per server, case and repeat.
	Alone []Result `json:",omitempty"`
	// Overhead is the run the overhead point comes from when it was measured on its own after
	// the rest (make bench ARGS="-overhead-only -docs"); nil when it was measured with them.
	Overhead *OverheadRun `json:",omitempty"`
}

// OverheadRun is where and when an overhead point measured on its own was measured.
type OverheadRun struct {
	Started, Finished time.Time
	Machine           Machine
	Versions          Versions
	Args              []string
}

// ServerInfo is one server of a run, as measured.
type ServerInfo struct {
	Name     string // servers.Server.Name(), as Result.Server
	Gates    string // its settings: the --feature-gates and flags it got (record.SplitServerSettings)
	Reported string // what its /version said, e.g. "v1.37.2"
	Etcd     string
	// Cluster is the kubeconfig (and context) of a user's cluster, "" for envtest; Source says
	// where its memory and CPU came from, "" for /proc of the local process.
	Cluster string `json:",omitempty"`
	Source  string `json:",omitempty"`
}

// Versions of the client side. APIServer and Etcd are those of results.json files written
// before the server axis (one server per run): upgrade moves them into Servers.
type Versions struct {
	APIServer, Etcd            string `json:",omitempty"`
	ClientGo, GoHarness, GoLab string
}

// upgrade reads a results.json of a run before the server axis as a run of one server.
func (rep *Report) upgrade() {
	if rep.Lab == "" {
		rep.Lab = labModule
	}
	if len(rep.Servers) > 0 || rep.Versions.APIServer == "" {
		return
	}
	name := strings.TrimPrefix(rep.Versions.APIServer, "v")
	rep.Servers = []ServerInfo{{Name: name, Reported: rep.Versions.APIServer, Etcd: rep.Versions.Etcd}}
	for i := range rep.Results {
		rep.Results[i].Server = name
	}
	seeding := map[string]time.Duration{}
	for c, d := range rep.Seeding {
		seeding[seedingKey(name, c)] = d
	}
	rep.Seeding = seeding
	rep.Versions.APIServer, rep.Versions.Etcd = "", ""
}

// bed is the test bed: one control plane, its kube-apiserver's pid, the lab binary and where
// runs write.
type bed struct {
	sv         servers.Server
	server     string // sv.Name(), as Result.Server
	slug       string // sv.Slug(), the name in run file names
	cp         *controlplane.ControlPlane
	cs         kubernetes.Interface
	widgets    *mutator.Target // seeds and removes Widgets
	configMaps *mutator.Target // the writes cases' writer, and their fresh LIST
	alone      []Result        // the writes cases' baselines (Report.Alone)
	dyn        dynamic.Interface
	apiPID     int
	meter      apiMeter       // kube-apiserver's memory and CPU around each run
	cluster    *clusterTarget // the user's cluster, nil on envtest
	bin        string
	kubeconfig string
	runDir     string
	o          options
	say        func(string, ...any)
	progress   *progress
}

func run(ctx context.Context, o options, args []string, stdout, stderr io.Writer) (runDir string, err error) {
	say := func(format string, a ...any) { fmt.Fprintf(stderr, "[bench] "+format+"\n", a...) }
	cases, _ := o.selected()
	rep := &Report{Started: time.Now(), Cases: cases, Ks: o.ks, Repeats: o.repeats, Interval: o.interval, Quick: o.quick, Fresh: o.fresh, Args: args, Seeding: map[string]time.Duration{}, MemFactor: o.memFactor}

	// 0. Refuse what would not fit, and servers that do not exist, before starting anything.
	cl, err := ready(ctx, &o, cases, say, stderr)
	if err != nil {
		return "", err
	}
	rep.Machine = ReadMachine()

	runDir, err = rundir.New(o.out, "bench-", rep.Started)
	if err != nil {
		return "", err
	}
	if err := os.Mkdir(filepath.Join(runDir, "runs"), 0o755); err != nil {
		return runDir, err
	}
	tmp, err := os.MkdirTemp("", "informer-lab-bench-")
	if err != nil {
		return runDir, err
	}
	defer os.RemoveAll(tmp) // the kubeconfigs

	// 1. The lab, built outside the workspace so it links its pin.
	bin, clientGo, err := labproc.Build(ctx, filepath.Join(o.root, o.lab))
	if err != nil {
		return runDir, err
	}
	rep.Lab, rep.Versions = o.lab, Versions{ClientGo: clientGo, GoHarness: runtime.Version(), GoLab: goVersionOf(bin)}
	say("built %s (client-go %s)", o.lab, clientGo)

	// 2. Each server in turn, on its own etcd (or the cluster); each case seeded into it,
	// measured, removed.
	progress := &progress{total: o.runCount(cases), start: time.Now()}
	for i, sv := range o.servers {
		say("server %d of %d: kube-apiserver %s", i+1, len(o.servers), sv.Name())
		info, results, alone, err := measureServer(ctx, sv, cl, cases, o, bin, filepath.Join(tmp, fmt.Sprintf("kubeconfig-%d", i)), runDir, rep.Seeding, progress, say)
		rep.Results, rep.Alone = append(rep.Results, results...), append(rep.Alone, alone...)
		if info.Name != "" {
			rep.Servers = append(rep.Servers, info)
		}
		if err != nil {
			return runDir, err
		}
	}
	rep.Finished = time.Now()
	rep.Machine.LoadAfter = loadAverage()

	// 3. Tables, plots, raw results; docs/bench.md if asked.
	return runDir, writeReport(rep, o, runDir, stdout, say)
}

// ready refuses cases that would not fit in memory, then opens the user's cluster (the one
// server, returned) or builds the envtest servers the store does not have yet.
func ready(ctx context.Context, o *options, cases []Case, say func(string, ...any), stderr io.Writer) (*clusterTarget, error) {
	avail, err := readMemAvailable()
	if err != nil {
		return nil, err
	}
	var loads []Load
	for _, c := range cases {
		ks := c.Runs(o.ks)
		loads = append(loads, Load{Case: c.Name, Noun: nounOf(c.Resource), Objects: c.Objects, Size: c.Size, K: ks[len(ks)-1]})
	}
	if err := Guard(loads, o.memFactor, avail); err != nil {
		return nil, err
	}
	if o.kubeconfig == "" {
		return nil, servers.Provision(ctx, o.servers, say, stderr)
	}
	cl, err := openCluster(ctx, *o, cases)
	if err != nil {
		return nil, err
	}
	o.servers = []servers.Server{cl.server}
	return cl, nil
}

// runCount is how many runs, each one lab process, o makes of cases on o.servers.
func (o options) runCount(cases []Case) int {
	total := 0
	for _, sv := range o.servers {
		for _, c := range cases {
			if c.On(sv) && !o.overheadOnly {
				total += len(c.Runs(o.ks)) * o.repeats * len(Modes)
			}
			if c.On(sv) && c.Link != nil && o.linkWatch > 0 {
				total += len(Modes) // its watch runs
			}
		}
	}
	if o.overhead && slices.ContainsFunc(cases, func(c Case) bool { return c.Name == overheadBase }) {
		total += 2 * o.repeats // on the first server
	}
	return total
}

// progress says how far a run is and, from the runs so far, about when it ends.
type progress struct {
	total, done int
	start       time.Time
}

func (p *progress) step() string {
	p.done++
	left := time.Duration(float64(time.Since(p.start)) / float64(p.done) * float64(p.total-p.done))
	return fmt.Sprintf("[%d/%d, about %s left]", p.done, p.total, left.Round(time.Minute))
}

// measureServer starts one kube-apiserver (and its etcd), or attaches to the user's cluster
// (cl), runs every case on it and stops it.
func measureServer(ctx context.Context, sv servers.Server, cl *clusterTarget, cases []Case, o options, bin, kubeconfig, runDir string, seeding map[string]time.Duration, p *progress, say func(string, ...any)) (info ServerInfo, results, alone []Result, err error) {
	b := &bed{sv: sv, server: sv.Name(), slug: sv.Slug(), bin: bin, kubeconfig: kubeconfig, runDir: runDir, o: o, say: say, progress: p, cluster: cl}
	results, err = b.measureAll(ctx, cases, seeding, &info)
	return info, results, b.alone, err
}

// measureAll is measureServer on its bed.
func (b *bed) measureAll(ctx context.Context, cases []Case, seeding map[string]time.Duration, info *ServerInfo) (results []Result, err error) {
	sv := b.sv
	var cfg *rest.Config
	if b.cluster != nil {
		cfg, err = b.attach(info)
	} else {
		var cp *controlplane.ControlPlane
		if cp, err = b.startEnvtest(ctx, info); err == nil {
			defer cp.Stop()
			cfg = cp.Config
		}
	}
	if err != nil {
		return nil, err
	}
	cfg = rest.CopyConfig(cfg)
	cfg.QPS, cfg.Burst = 5000, 5000 // seeding: the workers, not client-go's limiter, set the pace
	if b.cs, err = kubernetes.NewForConfig(cfg); err != nil {
		return nil, err
	}
	if b.widgets, err = mutator.TargetFor(cfg, mutator.Widgets); err != nil {
		return nil, err
	}
	if b.configMaps, err = mutator.TargetFor(cfg, mutator.ConfigMaps); err != nil {
		return nil, err
	}
	if b.dyn, err = dynamic.NewForConfig(cfg); err != nil {
		return nil, err
	}
	if slices.ContainsFunc(cases, func(c Case) bool { return c.Resource == record.CRDResource }) {
		if err := crd.Install(ctx, cfg); err != nil {
			return nil, err
		}
	}
	for _, c := range cases {
		rs, took, err := b.runCase(ctx, c)
		results = append(results, rs...)
		seeding[seedingKey(sv.Name(), c.Name)] = took
		if err != nil {
			return results, err
		}
	}
	return results, nil
}

// startEnvtest starts sv's control plane, writes its admin kubeconfig for the labs and measures
// its kube-apiserver through /proc; a failed start stops what it started.
func (b *bed) startEnvtest(ctx context.Context, info *ServerInfo) (cp *controlplane.ControlPlane, err error) {
	sv := b.sv
	if cp, err = controlplane.Start(ctx, controlplane.Options{Version: sv.Version, Settings: sv.Settings, Progress: cli.Lines(b.say)}); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			cp.Stop()
		}
	}()
	b.cp = cp
	*info = ServerInfo{Name: sv.Name(), Gates: sv.Settings, Reported: cp.ServerVersion, Etcd: etcdVersion(ctx, cp.Assets)}
	kc, err := cp.AdminKubeconfig("informer-lab-bench")
	if err != nil {
		return nil, err
	}
	if err := os.WriteFile(b.kubeconfig, kc, 0o600); err != nil {
		return nil, err
	}
	if b.apiPID, err = cp.APIServerPID(); err != nil {
		return nil, err
	}
	b.meter = &procMeter{b: b}
	b.say("kube-apiserver %s pid %d: VmRSS and VmHWM from /proc/%d/status, CPU from /proc/%d/stat", cp.ServerVersion, b.apiPID, b.apiPID, b.apiPID)
	return cp, nil
}

func (b *bed) runCase(ctx context.Context, c Case) (results []Result, seeding time.Duration, err error) {
	if !c.On(b.sv) {
		b.say("%s: skipped on kube-apiserver %s, which runs without %s", c.Name, b.server, c.Gate)
		return nil, 0, nil
	}
	ns := "bench-" + c.Name + "-" + utilrand.String(5)
	create := func() error { return controlplane.EnsureNamespace(ctx, b.cs, ns) }
	if b.cluster != nil { // named, and its permissions checked, before anything was created
		ns = b.cluster.namespaces[c.Name]
		create = func() error { return b.cluster.CreateNamespace(ctx, ns) }
	}
	if err := create(); err != nil {
		return nil, 0, err
	}
	defer func() { // on an error and on Ctrl-C too: removeNamespace takes its own context
		if cerr := b.removeNamespace(ns, c); cerr != nil && err == nil {
			err = cerr
		}
	}()
	start := time.Now()
	if err := seed(ctx, b.cs, b.widgets, ns, c, b.o.workers); err != nil {
		return nil, 0, err
	}
	seeding = time.Since(start)
	b.say("seeded %s in namespace %s in %s", c, ns, seeding.Round(time.Millisecond))

	if results, err = b.points(ctx, c, ns); err != nil {
		return results, seeding, err
	}
	ws, err := b.watchRuns(ctx, c, ns, results)
	if results = append(results, ws...); err != nil {
		return results, seeding, err
	}
	// The harness's own cost: the same point with wire logging, alternating with -quiet, on the
	// first server.
	if b.o.overhead && c.Name == overheadBase && b.sv == b.o.servers[0] {
		oh, err := b.overheadRuns(ctx, c, ns)
		return append(results, oh...), seeding, err
	}
	return results, seeding, nil
}

// overheadBase is the case whose largest K the overhead point measures again (overheadCase).
const overheadBase = "small"

// points measures c at each of its K, -repeats times in each mode, alternating (a writes case:
// its writer alone first); nothing with -overhead-only.
func (b *bed) points(ctx context.Context, c Case, ns string) (results []Result, err error) {
	if b.o.overheadOnly {
		return nil, nil
	}
	for _, k := range c.Runs(b.o.ks) {
		for rep := 1; rep <= b.o.repeats; rep++ {
			if c.WriteRate > 0 {
				if err := b.writeAlone(ctx, c, ns, rep); err != nil {
					return results, err
				}
			}
			for _, m := range Modes {
				r, err := b.measure(ctx, c, c.Name, ns, k, m, false, rep)
				if err != nil {
					return results, err
				}
				results = append(results, r)
			}
		}
	}
	return results, nil
}

// overheadRuns are the overhead point's runs: the largest K, streaming, -quiet and wire logging
// alternating.
func (b *bed) overheadRuns(ctx context.Context, c Case, ns string) (results []Result, err error) {
	k := b.o.maxK()
	for rep := 1; rep <= b.o.repeats; rep++ {
		for _, logged := range []bool{false, true} {
			r, err := b.measure(ctx, c, overheadCase, ns, k, overheadMode, logged, rep)
			if err != nil {
				return results, err
			}
			results = append(results, r)
		}
	}
	return results, nil
}

// seed creates c.Objects ConfigMaps of c.Size bytes of data (random base64 text, so nothing
// compresses it away), Widgets with as much text in their spec, or Secrets of c.Size random
// bytes (as the perf-tests watch-list job writes them), with workers concurrent creates.
func seed(ctx context.Context, cs kubernetes.Interface, widgets *mutator.Target, ns string, c Case, workers int) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	next := make(chan int)
	errs := make(chan error, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				var err error
				meta := metav1.ObjectMeta{Name: fmt.Sprintf("bench-%06d", i)}
				switch c.Resource {
				case record.ResourceSecrets:
					s := &corev1.Secret{ObjectMeta: meta, Data: map[string][]byte{"data": randomBytes(uint64(i), c.Size)}}
					_, err = cs.CoreV1().Secrets(ns).Create(ctx, s, metav1.CreateOptions{})
				case record.ResourcePods:
					_, err = cs.CoreV1().Pods(ns).Create(ctx, podObject(ns, uint64(i), c.Size), metav1.CreateOptions{})
				case record.CRDResource:
					_, err = widgets.Create(ctx, widgets.Object(ns, meta.Name, false, map[string]string{"seed": payload(uint64(i), c.Size)}))
				default:
					cm := &corev1.ConfigMap{ObjectMeta: meta, Data: map[string]string{"data": payload(uint64(i), c.Size)}}
					_, err = cs.CoreV1().ConfigMaps(ns).Create(ctx, cm, metav1.CreateOptions{})
				}
				if err != nil {
					errs <- fmt.Errorf("seed %s %d of %d in %s: %w", c.Resource, i+1, c.Objects, ns, err)
					cancel()
					return
				}
			}
		}()
	}
feed:
	for i := 0; i < c.Objects; i++ {
		select {
		case next <- i:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	close(errs)
	if err := <-errs; err != nil {
		return err
	}
	return ctx.Err()
}

// payload is size bytes of base64 text drawn from a generator seeded with i.
func payload(i uint64, size int64) string {
	return base64.StdEncoding.EncodeToString(randomBytes(i, size*3/4+3))[:size]
}

// randomBytes is size bytes from a generator seeded with i: the same objects run after run.
func randomBytes(i uint64, size int64) []byte {
	r := rand.New(rand.NewPCG(i, 3157))
	raw := make([]byte, size)
	for j := range raw {
		raw[j] = byte(r.Uint32())
	}
	return raw
}

// removeNamespace deletes the seeded objects and the namespace. envtest runs no namespace
// controller, so the harness empties it and clears its finalizer itself; on a cluster it
// deletes the case's objects and the namespace, and leaves the finalizing to the cluster's own
// namespace controller (leaveNamespace).
func (b *bed) removeNamespace(ns string, c Case) error {
	// Two minutes, and one more per 10,000 objects: one DELETE of 20,000 Pods outlasted
	// kube-apiserver's request timeout of a minute (deleteCollection).
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute+time.Duration(c.Objects/10000)*time.Minute)
	defer cancel()
	if b.cluster != nil {
		return b.leaveNamespace(ctx, ns, c)
	}
	for _, d := range []struct {
		resource string
		del      func(context.Context, metav1.DeleteOptions, metav1.ListOptions) error
	}{{record.ResourceConfigMaps, b.cs.CoreV1().ConfigMaps(ns).DeleteCollection}, {record.ResourceSecrets, b.cs.CoreV1().Secrets(ns).DeleteCollection},
		{record.ResourcePods, b.cs.CoreV1().Pods(ns).DeleteCollection}} { // a Pod no node was given goes at once: no kubelet has to confirm it stopped
		if err := deleteCollection(ctx, d.del, d.resource); err != nil {
			return fmt.Errorf("delete the %s of %s: %w", d.resource, ns, err)
		}
	}
	if err := b.widgets.DeleteAll(ctx, ns); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete the Widgets of %s: %w", ns, err) // NotFound: no CRD installed, no Widgets
	}
	nss := b.cs.CoreV1().Namespaces()
	n, err := nss.Get(ctx, ns, metav1.GetOptions{})
	if err != nil {
		return fmt.Errorf("remove namespace %s: %w", ns, err)
	}
	n.Spec.Finalizers = nil
	if _, err := nss.Finalize(ctx, n, metav1.UpdateOptions{}); err != nil {
		return fmt.Errorf("clear the finalizers of namespace %s: %w", ns, err)
	}
	// The first delete only marks a namespace Terminating; with no finalizer left, the second
	// removes it.
	for i := 0; i < 2; i++ {
		if err := nss.Delete(ctx, ns, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
			return fmt.Errorf("delete namespace %s: %w", ns, err)
		}
	}
	if _, err := nss.Get(ctx, ns, metav1.GetOptions{}); !apierrors.IsNotFound(err) {
		return fmt.Errorf("namespace %s still there after deleting it (get: %v)", ns, err)
	}
	b.say("removed namespace %s and its objects", ns)
	return nil
}

// deleteCollection deletes every object del deletes, which are of resource: Pods one shard at a
// time (podObject's shard label), since one DELETE of 20,000 Pods outlasted kube-apiserver's
// request timeout of a minute (measured: "the server was unable to return a response in the time
// allotted, but may still be processing the request", and once an HTTP/2 stream reset instead);
// asked again while the server says its time ran out.
func deleteCollection(ctx context.Context, del func(context.Context, metav1.DeleteOptions, metav1.ListOptions) error, resource string) error {
	selectors := []string{""}
	if resource == record.ResourcePods {
		selectors = nil
		for shard := 0; shard < podShards; shard++ {
			selectors = append(selectors, fmt.Sprintf("%s=%d", podShardLabel, shard))
		}
		selectors = append(selectors, "") // and whatever else is there
	}
	for _, sel := range selectors {
		for {
			err := del(ctx, metav1.DeleteOptions{}, metav1.ListOptions{LabelSelector: sel})
			if err == nil {
				break
			}
			if !apierrors.IsServerTimeout(err) && !apierrors.IsTimeout(err) || ctx.Err() != nil {
				return err
			}
		}
	}
	return nil
}

// measure is one run: settle the apiserver, start one lab with k informers in mode m, sample
// both processes until every informer has synced, stop the lab.
func (b *bed) measure(ctx context.Context, c Case, label, ns string, k int, m Mode, logged bool, rep int) (Result, error) {
	r := Result{Server: b.server, Case: label, K: k, Mode: m, Logged: logged, Rep: rep}
	metrics0, err := b.prepare(ctx, c, ns, &r)
	if err != nil {
		return r, err
	}
	if err := b.meter.begin(ctx, &r); err != nil {
		return r, err
	}
	defer b.meter.end(ctx, nil)           // stops sampling after an error; once ended, does nothing
	sampler := StartSampler(b.o.interval) // the lab's VmRSS, once it has a pid
	defer sampler.Stop()                  // once stopped, does nothing

	name := fmt.Sprintf("%s-%s-k%02d-%s-%d", b.slug, label, k, m, rep)
	lk, err := b.openLink(c, name) // a links case's proxy; else the lab's own kubeconfig
	if err != nil {
		return r, err
	}
	defer lk.close()
	name, args := b.labArgs(c, name, lk.kubeconfig, ns, k, m, logged)
	logPath := filepath.Join(b.runDir, "runs", name+".jsonl")
	var w *runWrites // a writes case's writer, reader and watch of deletions, from the lab's start
	if c.WriteRate > 0 {
		if w, err = b.startRunWrites(ctx, c, ns, fmt.Sprintf("w-%s-%d", m, rep), metrics0); err != nil {
			return r, err
		}
		defer w.stop()
	}
	start := time.Now()
	p, err := b.startLab(c, name, args, logPath)
	if err != nil {
		return r, err
	}
	defer p.Stop(15 * time.Second)
	sampler.AddPID(p.PID())
	tags := record.InformerTags(k)
	if err := waitSynced(ctx, p, tags, b.o.syncTimeout); err != nil {
		return r, fmt.Errorf("%s: %w", name, err)
	}
	r.WallMillis = float64(time.Since(start).Microseconds()) / 1000
	if err := b.meter.end(ctx, &r); err != nil {
		return r, err
	}
	if err := w.synced(ctx, b.cs, c, &r); err != nil {
		return r, err
	}
	lab, err := procs.ReadMem(p.PID())
	if err != nil {
		return r, fmt.Errorf("read the lab's memory: %w", err)
	}
	peaks, samples := sampler.Stop()
	r.LabPeakHWM, r.LabPeakSampled, r.Samples = lab.HWM, peaks[p.PID()], samples
	if err := b.finish(ctx, c, w, p, ns, name, logPath, tags, &r); err != nil {
		return r, fmt.Errorf("%s: %w", name, err)
	}
	b.sayRun(name, r)
	return r, nil
}

// prepare readies the server for a run: a fresh process (-fresh), a Widgets case's watch cache,
// the settled memory it starts from; for a writes case it returns kube-apiserver's counters
// before the run (nil where /metrics cannot be read).
func (b *bed) prepare(ctx context.Context, c Case, ns string, r *Result) (metrics0 map[string]float64, err error) {
	if b.o.fresh {
		if err := b.restart(ctx); err != nil {
			return nil, err
		}
	}
	if c.Resource == record.CRDResource {
		if err := b.widgetCacheReady(ctx, ns); err != nil {
			return nil, err
		}
	}
	if _, r.Settled, err = b.settle(ctx); err != nil {
		return nil, err
	}
	if c.WriteRate > 0 && b.metricsReadable() {
		return readMetrics(ctx, b.cs, c.Resource)
	}
	return nil, nil
}

// labArgs are the lab's flags for a run, and the run's name: name, with "-logged" when the
// wire is logged.
func (b *bed) labArgs(c Case, name, kubeconfig, ns string, k int, m Mode, logged bool) (string, []string) {
	args := []string{"-kubeconfig", kubeconfig, "-records", "-", "-name", b.o.lab, "-namespace", ns,
		"-informers", fmt.Sprint(k), "-watch-list", m.Gate()}
	if b.o.kubeContext != "" {
		args = append(args, "-context", b.o.kubeContext)
	}
	if c.Kind != "" {
		args = append(args, "-kind", c.Kind)
	}
	if c.Resource != record.CRDResource { // the Widgets are the dynamic kinds' own
		args = append(args, "-resource", c.Resource)
	}
	switch {
	case logged:
		name += "-logged"
	case c.WriteRate == 0: // a writes run's check reads every informer's events
		args = append(args, "-quiet")
	}
	return name, args
}

// runWrites is a writes case's part of a run: the writer and reader (started before the lab),
// the harness's own watch of deletions, and kube-apiserver's counters before the run.
type runWrites struct {
	load      *writeLoad
	deletions *deletionWatch
	metrics0  map[string]float64 // nil where /metrics cannot be read
	writes    []record.Record    // what the writer wrote until the informers synced
}

func (b *bed) startRunWrites(ctx context.Context, c Case, ns, prefix string, metrics0 map[string]float64) (*runWrites, error) {
	w := &runWrites{metrics0: metrics0}
	var err error
	if w.deletions, err = watchDeletions(ctx, b.cs, ns); err != nil {
		return nil, err
	}
	w.load = startWrites(ctx, b.configMaps, b.cs, ns, prefix, c.WriteRate, b.o.syncTimeout)
	return w, nil
}

// synced stops the writer once every informer synced and puts its latencies and the server's
// counters into r; nothing for a run without writes (w nil).
func (w *runWrites) synced(ctx context.Context, cs kubernetes.Interface, c Case, r *Result) error {
	if w == nil {
		return nil
	}
	var stats WriterStats
	stats, w.writes = w.load.Stop(c.WriteRate)
	r.Writer = &stats
	if w.metrics0 != nil {
		metrics1, err := readMetrics(ctx, cs, c.Resource)
		if err != nil {
			return err
		}
		r.Metrics = metricDeltas(w.metrics0, metrics1)
	}
	return nil
}

// stop stops the writer (at once when synced stopped it) and the watch of deletions.
func (w *runWrites) stop() {
	w.load.Stop(0)
	w.deletions.Stop()
}

// finish stops the lab and reads the run from its records: counts, encodings and, for a writes
// case, whether every informer delivered every write after its sync point.
func (b *bed) finish(ctx context.Context, c Case, w *runWrites, p *labproc.Proc, ns, name, logPath string, tags []string, r *Result) error {
	writes, fresh := []record.Record(nil), record.Record{}
	if w != nil {
		var err error
		if writes, fresh, err = b.lastWrite(ctx, p, w.deletions, ns, name, tags, w.writes); err != nil {
			return err
		}
	}
	if err := p.Stop(15 * time.Second); err != nil {
		return err
	}
	if err := fromRecords(r, p.Setups(), tags); err != nil {
		return err
	}
	if err := c.checkEncoding(r.ContentTypes); err != nil {
		return err
	}
	if w == nil {
		return nil
	}
	var err error
	if r.Problems, err = checkWrites(logPath, tags, writes, fresh); err != nil {
		return err
	}
	r.Detector = detectorRuns(p.Setups())
	b.say("%s: %s; %s", name, r.Writer.line(), deliveryText(r.Problems))
	return nil
}

// sayRun is a run's line of progress.
func (b *bed) sayRun(name string, r Result) {
	api := fmt.Sprintf("apiserver +%s (sampled +%s, baseline %s, CPU %.1fs)", FormatBytes(r.APIDelta()), FormatBytes(r.APIDeltaSampled()), FormatBytes(r.APIBaseline), r.APICPUMillis/1000)
	if r.APIMissing != "" {
		api = "apiserver n/a"
	}
	b.say("%-44s %s  sync %s  %d requests  %s received (%s on the wire)  lab peak %s  %s",
		name, api, time.Duration(r.SyncMillis*float64(time.Millisecond)).Round(time.Millisecond), r.Requests, FormatBytes(r.Bytes), FormatBytes(r.WireBytes), FormatBytes(r.LabPeakHWM), b.progress.step())
}

// checkEncoding refuses a run whose informers got a body in another encoding than the case's
// (Encoding "application/cbor" allows "application/cbor-seq", a watch's stream, too).
func (c Case) checkEncoding(got []string) error {
	if c.Encoding == "" {
		return nil
	}
	if len(got) == 0 {
		return fmt.Errorf("the case measures %s and the lab reported no content type (a lab older than Stats.ContentTypes?)", c.Encoding)
	}
	for _, t := range got {
		if t != c.Encoding && t != c.Encoding+"-seq" {
			return fmt.Errorf("the %s case measures %s, and the informers got %s: the server did not serve it", c.Name, c.Encoding, strings.Join(got, ", "))
		}
	}
	return nil
}

// fromRecords fills sync time and traffic from the lab's SETUP records: the clock starts at
// its server record (written just before the informers start) and stops at the last synced one.
func fromRecords(r *Result, setups []record.Record, tags []string) error {
	var t0, t1 time.Time
	synced := map[string]bool{}
	for _, s := range setups {
		switch s.Step {
		case record.StepServer:
			t0 = s.Time
		case record.StepSynced:
			if s.Stats == nil || synced[s.Tag] {
				continue
			}
			synced[s.Tag] = true
			r.Requests += s.Stats.Requests
			r.Bytes += s.Stats.Bytes
			r.WireBytes += s.Stats.Wire()
			for _, t := range s.Stats.ContentTypes {
				if !slices.Contains(r.ContentTypes, t) {
					r.ContentTypes = append(r.ContentTypes, t)
				}
			}
			if s.Time.After(t1) {
				t1 = s.Time
			}
		}
	}
	if t0.IsZero() {
		return errors.New("the lab wrote no server record")
	}
	for _, t := range tags {
		if !synced[t] {
			return fmt.Errorf("informer %s has no synced record with stats (a lab older than -quiet?)", t)
		}
	}
	r.SyncMillis = float64(t1.Sub(t0).Microseconds()) / 1000
	return nil
}

func waitSynced(ctx context.Context, p *labproc.Proc, tags []string, timeout time.Duration) error {
	deadline := time.After(timeout)
	tick := time.NewTicker(5 * time.Millisecond)
	defer tick.Stop()
	for !p.Synced(tags...) {
		if msg := p.Exited(); msg != "" {
			return errors.New(msg)
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("interrupted: %w", ctx.Err())
		case <-deadline:
			return fmt.Errorf("informers not synced after %s", timeout)
		case <-tick.C:
		}
	}
	return nil
}

// restart replaces kube-apiserver by a fresh process on the same etcd: no heap, no freed
// memory kept resident by the Go runtime, from the runs before.
func (b *bed) restart(ctx context.Context) error {
	if err := b.cp.KillAPIServer(); err != nil {
		return err
	}
	if err := b.cp.RestartAPIServer(ctx); err != nil {
		return err
	}
	pid, err := b.cp.APIServerPID()
	if err != nil {
		return err
	}
	b.apiPID = pid
	return nil
}

// widgetCacheReady returns once kube-apiserver's watch cache of the Widgets takes a watch. The
// first request for a custom resource after a (re)start creates its storage and its cache,
// which answers every watch with 429 until it has listed etcd
// (k8s.io/apiserver@v0.32.13 pkg/storage/cacher/cacher.go, errors.NewTooManyRequests("storage is (re)initializing", 1)):
// without this, each informer of a run on a fresh process waited out a Retry-After of 1 s,
// which the caches of built-in resources, started with the server, never cost. One watch from
// resourceVersion 0 does it: client-go's REST client retries it after the Retry-After.
func (b *bed) widgetCacheReady(ctx context.Context, ns string) error {
	timeout := int64(1)
	w, err := b.dyn.Resource(mutator.Widgets).Namespace(ns).Watch(ctx, metav1.ListOptions{ResourceVersion: "0", TimeoutSeconds: &timeout})
	if err != nil {
		return fmt.Errorf("wait for kube-apiserver's watch cache of %s: %w", mutator.Widgets.GroupResource(), err)
	}
	w.Stop()
	return nil
}

// settle waits, at most -settle, until the apiserver's memory stops moving, so that what the
// previous run left in its heap does not absorb the next run's peak. It returns the settled
// resident memory, and whether it held still in time.
func (b *bed) settle(ctx context.Context) (int64, bool, error) { return b.meter.settle(ctx) }

// apiMeter reads kube-apiserver's memory and CPU around each run: procMeter from /proc of the
// local process, metricsMeter from a cluster's GET /metrics.
type apiMeter interface {
	settle(ctx context.Context) (rss int64, settled bool, err error)
	// begin reads the baseline into r and starts sampling.
	begin(ctx context.Context, r *Result) error
	// end stops sampling and fills r's peaks and CPU; with r nil (after an error) it only
	// stops, and once ended it does nothing.
	end(ctx context.Context, r *Result) error
}

// procMeter is the local kube-apiserver's /proc/<pid>: VmHWM reset to VmRSS before each run
// (the baseline), read at sync (the peak), VmRSS sampled every -interval, and utime + stime.
type procMeter struct {
	b       *bed // its apiPID changes with each restart
	sampler *Sampler
	cpu0    time.Duration
}

// settle asks the apiserver for a garbage collection (its /debug/pprof/heap?gc=1, on by
// default) and waits until its VmRSS holds still.
func (m *procMeter) settle(ctx context.Context) (int64, bool, error) {
	if _, err := m.b.cs.CoreV1().RESTClient().Get().AbsPath("/debug/pprof/heap").Param("gc", "1").DoRaw(ctx); err != nil {
		return 0, false, fmt.Errorf("ask the apiserver for a GC (/debug/pprof/heap?gc=1): %w", err)
	}
	return holdStill(ctx, 100*time.Millisecond, 10, m.b.o.settle, func() (int64, error) {
		mem, err := procs.ReadMem(m.b.apiPID)
		if err != nil {
			return 0, fmt.Errorf("read the apiserver's memory: %w", err)
		}
		return mem.RSS, nil
	})
}

func (m *procMeter) begin(ctx context.Context, r *Result) error {
	pid := m.b.apiPID
	// The baseline is VmRSS at the reset, which VmHWM takes as its starting value.
	if err := ResetHWM(pid); err != nil {
		return fmt.Errorf("reset the apiserver's VmHWM: %w", err)
	}
	at, err := procs.ReadMem(pid)
	if err != nil {
		return fmt.Errorf("read the apiserver's memory: %w", err)
	}
	r.APIBaseline = at.HWM
	if m.cpu0, err = procs.ReadCPU(pid); err != nil {
		return fmt.Errorf("read the apiserver's CPU time: %w", err)
	}
	m.sampler = StartSampler(m.b.o.interval, pid)
	return nil
}

func (m *procMeter) end(ctx context.Context, r *Result) error {
	if m.sampler == nil {
		return nil
	}
	pid := m.b.apiPID
	cpu1, cpuErr := procs.ReadCPU(pid)
	peaks, _ := m.sampler.Stop()
	m.sampler = nil
	if r == nil {
		return nil
	}
	if cpuErr != nil {
		return fmt.Errorf("read the apiserver's CPU time: %w", cpuErr)
	}
	api, err := procs.ReadMem(pid)
	if err != nil {
		return fmt.Errorf("read the apiserver's memory: %w", err)
	}
	r.APIPeakHWM, r.APIPeakSampled = api.HWM, peaks[pid]
	r.APICPUMillis = float64((cpu1 - m.cpu0).Microseconds()) / 1000
	return nil
}

// holdStill reads a resident size every step until the last window+1 reads lie within 1% (or
// 2 MiB) of each other, or bound has passed; it returns the last read and whether it held.
func holdStill(ctx context.Context, step time.Duration, window int, bound time.Duration, read func() (int64, error)) (int64, bool, error) {
	var hist []int64
	deadline := time.Now().Add(bound)
	for {
		rss, err := read()
		if err != nil && ctx.Err() != nil {
			return 0, false, fmt.Errorf("interrupted: %w", ctx.Err())
		} else if err != nil {
			return 0, false, err
		}
		hist = append(hist, rss)
		if n := len(hist); n > window {
			lo, hi := hist[n-1-window], hist[n-1-window]
			for _, v := range hist[n-1-window:] {
				lo, hi = min(lo, v), max(hi, v)
			}
			if hi-lo <= max(hi/100, 2<<20) {
				return rss, true, nil
			}
		}
		if time.Now().After(deadline) {
			return rss, false, nil
		}
		select {
		case <-ctx.Done():
			return 0, false, fmt.Errorf("interrupted: %w", ctx.Err())
		case <-time.After(step):
		}
	}
}

func readMemAvailable() (int64, error) {
	f, err := os.Open("/proc/meminfo")
	if err != nil {
		return 0, fmt.Errorf("memory guard: %w", err)
	}
	defer f.Close()
	return MemAvailable(f)
}

func goVersionOf(bin string) string {
	bi, err := buildinfo.ReadFile(bin)
	if err != nil {
		return "unknown"
	}
	return bi.GoVersion
}

// etcdVersion asks the etcd binary, e.g. "3.5.16".
func etcdVersion(ctx context.Context, dir string) string {
	out, err := exec.CommandContext(ctx, filepath.Join(dir, "etcd"), "--version").Output()
	if err != nil {
		return "unknown"
	}
	for _, line := range strings.Split(string(out), "\n") {
		if v, ok := strings.CutPrefix(line, "etcd Version: "); ok {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}
