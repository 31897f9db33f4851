// Package bench is make bench: kube-apiserver memory and sync time when K informers start at
// once, LIST→WATCH (WatchListClient off) against streaming lists (on), same client-go, same
// server, run after run.
package bench

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"informer-lab/envtestbin"
	"informer-lab/harness/internal/cli"
	"informer-lab/harness/internal/rundir"
	"informer-lab/harness/internal/servers"
	"informer-lab/record"
)

// The lab module a run starts (-lab): client-go v0.32.13, whose -watch-list flag picks the mode.
const labModule = "client-v032"

// cborLabModule is the lab of a run with the cbor cases: client-go v0.37.2. Before v0.36,
// apimachinery decodes no CBOR array of more than 1024 elements
// (k8s.io/apimachinery@v0.35.10 pkg/runtime/serializer/cbor/internal/modes/decode.go,
// "MaxArrayElements: 1024,"; v0.36.6 has "MaxArrayElements: 2147483647,"), and a LIST from the
// watch cache is one page of every object: with more than 1024 of them, a CBOR LIST→WATCH
// never syncs (measured: client-v032 on 1.32.13, "cbor: exceeded max number of elements 1024
// for CBOR array", retried for 5 minutes).
const cborLabModule = "client-v037"

// cborArrayLimit is the most elements a CBOR array may have for apimachinery before v0.36.
const cborArrayLimit = 1024

// Mode is how the informers sync: the WatchListClient gate, off or on.
type Mode string

const (
	List      Mode = "list"      // gate off: LIST resourceVersion=0, then WATCH
	Streaming Mode = "streaming" // gate on: one WATCH with sendInitialEvents=true
)

// Modes in the order each repeat runs them (A B A B ...).
var Modes = []Mode{List, Streaming}

// Gate is the lab's -watch-list value for m.
func (m Mode) Gate() string {
	if m == Streaming {
		return "on"
	}
	return "off"
}

// Title is how tables and plots name m.
func (m Mode) Title() string {
	if m == Streaming {
		return "streaming"
	}
	return "LIST→WATCH"
}

// Case is one seeded collection, a shape, and the informers that watch it.
type Case struct {
	Name     string // "large", "small", "secrets", and the cbor cases' "configmaps-json", "widgets-cbor", ...
	Objects  int
	Size     int64  // data bytes per object: base64 text in a ConfigMap or a Widget's spec, random bytes in a Secret
	Resource string // record.ResourceConfigMaps, record.ResourceSecrets or record.CRDResource
	Ks       []int  // the K this case runs at; nil: every -k
	// Kind is the lab's -kind: "" for the typed informers of the original lab (ConfigMaps,
	// Secrets), record.KindDynamicCRD or record.KindCBOR for dynamic informers (on Resource:
	// the lab's Widgets, or ConfigMaps).
	Kind string
	// Gate is a kube-apiserver feature gate the case needs on ("CBORServingAndStorage=true"):
	// on a server without it, the case is skipped, and said so.
	Gate string
	// Encoding is the media type the case's informers must get their bodies in, every one of
	// them: a run that got another (a server that did not serve CBOR) is an error, not a
	// measurement of what it did not measure. "" for any.
	Encoding string
	// WriteRate is the writes per second made while the informers sync (-cases writes); 0 for
	// none. Such a run logs the wire (no -quiet): its check reads every informer's events.
	WriteRate int `json:",omitempty"`
	// Link is how the case's lab reaches kube-apiserver (-cases links): nil for straight, as
	// every other case.
	Link *Link `json:",omitempty"`
}

// nounOf is how tables name a case's resource.
func nounOf(resource string) string {
	if noun := map[string]string{record.ResourceSecrets: "Secrets", record.ResourcePods: "Pods", record.CRDResource: "Widgets"}[resource]; noun != "" {
		return noun
	}
	return "ConfigMaps"
}

// encodingHow says which informers of the lab watch c in its encoding.
func encodingHow(c Case) string {
	switch c.Kind {
	case "":
		return "client-go's typed informer factory, which asks for protobuf"
	case record.KindCBOR:
		return "dynamic informers with client-go's ClientsAllowCBOR and ClientsPreferCBOR on (the lab's -kind cbor)"
	}
	return "dynamic informers (the lab's -kind " + c.Kind + ")"
}

// shortMedia is a media type's last word: json, protobuf, cbor.
func shortMedia(media string) string {
	return media[strings.LastIndexAny(media, "/.")+1:]
}

func (c Case) String() string {
	noun := nounOf(c.Resource)
	if c.Encoding != "" {
		noun += " in " + c.Encoding
	}
	return fmt.Sprintf("%s: %d %s × %s (%s)", c.Name, c.Objects, noun, FormatBytes(c.Size), FormatBytes(int64(c.Objects)*c.Size))
}

// On reports whether c runs on sv: it needs no gate, or sv has it on.
func (c Case) On(sv servers.Server) bool { return c.Gate == "" || sv.Has(c.Gate) }

// cborGate is what the CBOR cases need of a server: kube-apiserver 1.32 and later serve CBOR
// only with it on, and then also store custom resources as CBOR.
const cborGate = "CBORServingAndStorage=true"

// The media types the encoding cases measure.
const (
	mediaJSON     = "application/json"
	mediaProtobuf = "application/vnd.kubernetes.protobuf"
	mediaCBOR     = "application/cbor"
)

// encodingCases are the CBOR comparison, -cases cbor: the same objects in each encoding the
// server offers for them. ConfigMaps in JSON and in CBOR through dynamic informers (the lab's
// dynamic-crd and cbor kinds with -resource configmaps; cbor turns client-go's ClientsAllowCBOR
// and ClientsPreferCBOR on) and in protobuf through the typed factory's; the lab's own custom
// resource (Widgets, lab/crd), which has no protobuf, in JSON and CBOR. The CBOR cases run
// where the server has cborGate, the others on every server.
func encodingCases(count int, size int64, k int) []Case {
	cm, w := record.ResourceConfigMaps, record.CRDResource
	return []Case{
		{Name: "configmaps-json", Objects: count, Size: size, Resource: cm, Ks: []int{k}, Kind: record.KindDynamicCRD, Encoding: mediaJSON},
		{Name: "configmaps-protobuf", Objects: count, Size: size, Resource: cm, Ks: []int{k}, Encoding: mediaProtobuf},
		{Name: "configmaps-cbor", Objects: count, Size: size, Resource: cm, Ks: []int{k}, Kind: record.KindCBOR, Gate: cborGate, Encoding: mediaCBOR},
		{Name: "widgets-json", Objects: count, Size: size, Resource: w, Ks: []int{k}, Kind: record.KindDynamicCRD, Encoding: mediaJSON},
		{Name: "widgets-cbor", Objects: count, Size: size, Resource: w, Ks: []int{k}, Kind: record.KindCBOR, Gate: cborGate, Encoding: mediaCBOR},
	}
}

// DefaultServers are the servers of make bench: the last before streaming LIST encoding
// (1.32), the first with it (1.33, whose WatchList gate is off by default: once as it comes,
// where a client's streaming list is refused, and once with the gate on), the first with LISTs
// from cache snapshots (1.34), the first with compressed watch lists (1.37), and 1.37 with that
// compression off.
var DefaultServers = "1.32.13,1.33.13,1.33.13:WatchList=true,1.34.4,1.37.2,1.37.2:WatchListCompression=false"

type options struct {
	root, out, cases              string
	lab                           string // the lab module: labModule, or cborLabModule for the cbor cases alone
	from                          string // re-render this run directory's results.json
	servers                       []servers.Server
	ks                            []int
	large, small, secrets         Case
	encodings                     []Case // -cases cbor: encodingCases
	writes                        []Case // -cases writes: writeCases
	links                         []Case // -cases links: linkFlags.cases, and linkWatch the timeout of their watch runs (0: none)
	pods                          []Case // -cases pods: podCases
	linkWatch                     time.Duration
	aloneFor                      time.Duration
	detectors                     bool // client-go's inconsistency detectors on in the writes runs
	repeats, workers              int
	interval, syncTimeout, settle time.Duration
	memFactor                     float64
	overhead, docs, quick, fresh  bool
	overheadOnly                  bool // measure the overhead point alone (overheadOnlyDefaults)
	// On a user's cluster (-kubeconfig, -context) instead of envtest: at most maxObjects objects
	// per case; capped says which counts not given were lowered to it.
	kubeconfig, kubeContext string
	maxObjects              int
	capped                  []string
	dryRun                  bool // print what a run would create and run, and do nothing
}

// Run is make bench's main; it returns the exit code: 0, 1 when the run failed, 2 for bad flags.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseFlags(args, stderr)
	if code, ok := cli.Parsed(err, stderr); !ok {
		return code
	}
	var runDir string
	switch {
	case o.dryRun:
		err = dryRun(ctx, o, stdout)
	case o.from != "":
		runDir, err = rerender(o, stdout, stderr)
	default:
		if err = measurable(runtime.GOOS, runtime.GOARCH); err == nil {
			runDir, err = run(ctx, o, args, stdout, stderr)
		}
	}
	if runDir != "" {
		fmt.Fprintf(stderr, "run directory: %s\n", runDir)
	}
	if err != nil {
		fmt.Fprintln(stderr, "error:", err)
		if errors.Is(err, servers.ErrUsage) || cli.IsUsage(err) {
			return 2 // the user's input: a server version that does not exist, a -from that is no run
		}
		return 1
	}
	return 0
}

// measurable refuses to measure on a system without /proc: the peak memory of kube-apiserver
// in one run is its VmHWM, reset before the run through /proc/<pid>/clear_refs, and nothing
// else gives it.
func measurable(goos, goarch string) error {
	if goos == "linux" {
		return nil
	}
	return cli.Usage(fmt.Errorf("make bench measures kube-apiserver's peak memory through /proc (VmHWM, reset per run by /proc/<pid>/clear_refs): Linux only, and this is %s/%s; docs/bench.md shows Linux runs, and ARGS='-from DIR' renders one here", goos, goarch))
}

// parseFlags reads make bench's flags: defined, parsed, -quick applied, the lists and sizes
// read into options, every value checked, and the directories found.
func parseFlags(args []string, stderr io.Writer) (options, error) {
	o := options{large: Case{Name: "large", Resource: record.ResourceConfigMaps}, small: Case{Name: "small", Resource: record.ResourceConfigMaps},
		secrets: Case{Name: "secrets", Resource: record.ResourceSecrets}}
	var v flagValues
	fs := flag.NewFlagSet("bench", flag.ContinueOnError)
	fs.SetOutput(stderr)
	defineFlags(fs, &o, &v)
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if fs.NArg() > 0 {
		return o, fmt.Errorf("unexpected argument %q (flags only; see -h)", fs.Arg(0))
	}
	allDefaults(fs, &o, &v)
	if err := linkDefaults(fs, &o, &v); err != nil {
		return o, err
	}
	podDefaults(fs, &o, &v)
	if o.quick {
		quickDefaults(fs, &o, &v)
	}
	if o.overheadOnly {
		if err := overheadOnlyDefaults(fs, &o); err != nil {
			return o, err
		}
	}
	if err := o.onCluster(fs, &v); err != nil {
		return o, err
	}
	if err := o.read(v); err != nil {
		return o, err
	}
	if o.overheadOnly { // the overhead point is measured on the first server only
		o.servers = o.servers[:1]
	}
	if o.kubeconfig != "" { // the cluster is the one server: run names it once it answers
		o.servers = nil
	}
	if err := o.check(v); err != nil {
		return o, err
	}
	return o, o.locate()
}

// flagValues are the flags options holds only once read: lists, and sizes in KiB.
type flagValues struct {
	ks, servers                  string
	largeKiB, smallKiB, secretsK int
	cborCount, cborKiB, cborK    int
	writeRates                   string
	writesCount, writesK         int
	podCounts                    string
	podKiB, podK                 int
	links                        linkFlags
}

func defineFlags(fs *flag.FlagSet, o *options, v *flagValues) {
	fs.StringVar(&o.root, "root", "", "repository root, holding go.work and the lab modules (default: found from the working directory)")
	fs.StringVar(&o.lab, "lab", "", "the lab module every run starts, client-v031 to client-v037 (default "+labModule+"; "+cborLabModule+" when -cases has cbor)")
	fs.StringVar(&o.out, "out", "", "parent of run directories (default: <root>/out)")
	fs.StringVar(&v.servers, "servers", DefaultServers, "kube-apiservers to measure, one after the other, each on its own etcd: versions X.Y.Z, each optionally with feature gates after a colon (1.37.2:WatchListCompression=false); built from the Go module proxy when missing")
	fs.StringVar(&o.cases, "cases", "large,small,secrets", "which collections to seed and measure, comma-separated: large, small, secrets (the plain shapes; -docs writes docs/bench-servers.md), writes (ConfigMaps synced while a writer writes at each -write-rates), links (ConfigMaps synced through each of -links), pods (Pods of -pods-kib at each of -pods-counts, fitted against the count; -cases pods alone measures on 1.32.13,1.37.2 unless -servers is given, and -docs writes docs/pods.md), cbor (ConfigMaps in JSON, protobuf and CBOR, Widgets in JSON and CBOR; CBOR on servers with "+cborGate+", e.g. -servers 1.37.2,1.37.2:"+cborGate+"; -cases cbor -docs writes docs/encodings.md); or all: "+AllCases+", by default on "+DefaultAllServers+", the plain shapes at K "+defaultAllKs+", links "+DefaultAllLinks+", "+strconv.Itoa(defaultAllRepeats)+" repeats, and -docs writes docs/bench.md)")
	fs.IntVar(&o.large.Objects, "large-count", 200, "ConfigMaps in the large-objects case")
	fs.IntVar(&v.largeKiB, "large-kib", 512, "KiB of data per ConfigMap in the large-objects case (at most 1000: ConfigMaps are limited to 1 MiB)")
	fs.IntVar(&o.small.Objects, "small-count", 20000, "ConfigMaps in the many-small-objects case")
	fs.IntVar(&v.smallKiB, "small-kib", 1, "KiB of data per ConfigMap in the many-small-objects case")
	fs.IntVar(&o.secrets.Objects, "secrets-count", 400, "Secrets in KEP-3157's shape (its manual test: 400 Secrets of about 1 MB, 16 informers)")
	fs.Int64Var(&o.secrets.Size, "secrets-bytes", 760000, "random bytes per Secret (the perf-tests watch-list job writes 760,000; at most 1,000,000)")
	fs.IntVar(&v.secretsK, "secrets-k", 16, "informers started at once in the secrets case (it runs at this K only)")
	fs.IntVar(&v.cborCount, "cbor-count", 10000, "objects of each resource in the cbor cases (ConfigMaps, Widgets)")
	fs.IntVar(&v.cborKiB, "cbor-kib", 1, "KiB of base64 text in each object of the cbor cases (a ConfigMap's data, a Widget's spec)")
	fs.IntVar(&v.cborK, "cbor-k", 8, "informers started at once in the cbor cases (they run at this K only)")
	fs.StringVar(&v.writeRates, "write-rates", DefaultWriteRates, "the writes cases' rates, writes per second, comma-separated: each is a case, writes-RATE")
	fs.IntVar(&v.writesCount, "writes-count", 10000, "ConfigMaps of 1 KiB seeded in the writes cases")
	fs.IntVar(&v.writesK, "writes-k", 8, "informers started at once in the writes cases (they run at this K only)")
	fs.StringVar(&v.podCounts, "pods-counts", DefaultPodCounts, "the pods cases' counts, comma-separated, at least 4: each is a case, pods-N, and every cost is fitted against the count and extrapolated to 80k and 165k Pods")
	fs.IntVar(&v.podKiB, "pods-kib", 10, "KiB of each Pod's JSON as created in the pods cases (a Deployment's Pod, padded with an annotation)")
	fs.IntVar(&v.podK, "pods-k", 4, "informers started at once in the pods cases (they run at this K only)")
	defineLinkFlags(fs, &v.links)
	fs.DurationVar(&o.aloneFor, "writes-alone", 5*time.Second, "how long the writer writes alone, with no informer starting, before each repeat of a writes case: its latencies are the baseline")
	fs.BoolVar(&o.detectors, "detectors", false, "switch client-go's inconsistency detectors on in the writes runs (KUBE_WATCHLIST_INCONSISTENCY_DETECTOR, KUBE_LIST_FROM_CACHE_INCONSISTENCY_DETECTOR): each informer then LISTs from etcd once more before it syncs, which the sync time, CPU and memory include")
	fs.StringVar(&v.ks, "k", "1,4,8,16", "informers started at once, comma-separated (each 1 to 26)")
	fs.IntVar(&o.repeats, "repeats", 3, "runs per mode and point; the modes alternate run after run")
	fs.DurationVar(&o.interval, "interval", 20*time.Millisecond, "VmRSS sampling interval")
	fs.DurationVar(&o.syncTimeout, "sync-timeout", 5*time.Minute, "how long one run's informers may take to sync")
	fs.DurationVar(&o.settle, "settle", 30*time.Second, "at most this long waiting for the apiserver's memory to settle before a run")
	fs.Float64Var(&o.memFactor, "mem-factor", 4.5, "memory guard: refuse when count × (size + 2 KiB) × max K × this exceeds MemAvailable (measured: apiserver and lab together peak at about 4× for LIST→WATCH)")
	fs.IntVar(&o.workers, "workers", 16, "concurrent creates while seeding")
	fs.BoolVar(&o.overhead, "overhead", true, "also measure the harness's overhead: the largest K of the small case, streaming, with and without wire logging")
	fs.BoolVar(&o.overheadOnly, "overhead-only", false, "measure only the overhead point (the small case at the largest K, streaming, -quiet against wire logging, on the first server), to see what wire logging costs in a few minutes; with -docs, it replaces docs/bench.md's overhead point and leaves the rest of the page as it is")
	fs.BoolVar(&o.fresh, "fresh", true, "start each run on a fresh kube-apiserver process (killed and restarted on the same etcd, port and certificates); -fresh=false measures every run on one process")
	fs.StringVar(&o.from, "from", "", "measure nothing: re-render the tables and plots (and docs/bench.md with -docs) from this run directory's results.json")
	fs.BoolVar(&o.docs, "docs", false, "also write this run's page, its results and plots in docs/: docs/bench.md for -cases all, docs/bench-servers.md for the plain shapes, docs/<dimension>.md for one dimension alone")
	fs.BoolVar(&o.quick, "quick", false, "a run of about a minute: 50 × 512 KiB and 4000 × 1 KiB, K 1 and 8, 1 repeat (flags given explicitly still win)")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "measure on this kubeconfig's cluster instead of envtest (make bench KUBECONFIG=path): each case in a namespace of its own, deleted after it, on an error and on Ctrl-C; kube-apiserver's memory and CPU from its /metrics where the user may read them")
	fs.StringVar(&o.kubeContext, "context", "", "with -kubeconfig: the kubeconfig's context to use (default: its current-context)")
	fs.IntVar(&o.maxObjects, "max-objects", 2000, "with -kubeconfig: the most objects a case creates in the cluster; counts not given are lowered to it, larger ones given are refused")
	fs.BoolVar(&o.dryRun, "dry-run", false, "create and measure nothing: print the namespaces, what each case would create (counts × sizes, bytes), and the runs and lab processes; with -kubeconfig, also check the permissions and whether kube-apiserver's /metrics is readable")
}

// quickDefaults is -quick: a smaller run, in every value the user did not give.
func quickDefaults(fs *flag.FlagSet, o *options, v *flagValues) {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	quick := map[string]func(){
		"large-count":   func() { o.large.Objects = 50 },
		"small-count":   func() { o.small.Objects = 4000 },
		"k":             func() { v.ks = "1,8" },
		"repeats":       func() { o.repeats = 1 },
		"secrets-count": func() { o.secrets.Objects = 40 },
		"cbor-count":    func() { v.cborCount = 2000 },
		"writes-count":  func() { v.writesCount = 2000 },
		"links-count":   func() { v.links.count = 2000 },
		"pods-counts":   func() { v.podCounts = "500,1000,2000,4000" },
		"servers":       func() { v.servers = envtestbin.DefaultVersion },
	}
	for name, apply := range quick {
		if !set[name] {
			apply()
		}
	}
}

// overheadOnlyDefaults is -overhead-only: the small case alone, whose largest K the overhead
// point runs at (on the first server: parseFlags keeps only it). With -docs, writeReport puts
// the point into docs/bench.md in place of the one measured with the rest (mergeOverhead).
func overheadOnlyDefaults(fs *flag.FlagSet, o *options) error {
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	switch {
	case !o.overhead:
		return errors.New("-overhead-only with -overhead=false measures nothing: drop one of them")
	case set["cases"] && strings.TrimSpace(o.cases) != overheadBase:
		return fmt.Errorf("-overhead-only measures the small case, got -cases %s: drop -cases", o.cases)
	}
	o.cases = overheadBase
	return nil
}

// read sets the sizes, the secrets case's K, the servers and the K from the flags' values.
func (o *options) read(v flagValues) error {
	o.large.Size, o.small.Size = int64(v.largeKiB)<<10, int64(v.smallKiB)<<10
	if v.secretsK < 1 || v.secretsK > 26 {
		return fmt.Errorf("-secrets-k: %d is not a number of informers from 1 to 26", v.secretsK)
	}
	o.secrets.Ks = []int{v.secretsK}
	if v.cborK < 1 || v.cborK > 26 {
		return fmt.Errorf("-cbor-k: %d is not a number of informers from 1 to 26", v.cborK)
	}
	o.encodings = encodingCases(v.cborCount, int64(v.cborKiB)<<10, v.cborK)
	if v.writesK < 1 || v.writesK > 26 {
		return fmt.Errorf("-writes-k: %d is not a number of informers from 1 to 26", v.writesK)
	}
	var rates []int
	for _, f := range strings.Split(v.writeRates, ",") {
		r, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || r < 1 || r > 5000 {
			return fmt.Errorf("-write-rates: %q is not a rate from 1 to 5000 writes per second", f)
		}
		rates = append(rates, r)
	}
	o.writes = writeCases(v.writesCount, 1<<10, v.writesK, rates)
	if v.podK < 1 || v.podK > 26 {
		return fmt.Errorf("-pods-k: %d is not a number of informers from 1 to 26", v.podK)
	}
	if v.podKiB < 4 || v.podKiB > 1000 {
		return fmt.Errorf("-pods-kib must be 4 to 1000 (the Pod's own fields take about 3 KiB; an object is at most about 1.5 MiB in etcd), got %d", v.podKiB)
	}
	counts, err := parsePodCounts(v.podCounts)
	if err != nil {
		return err
	}
	o.pods = podCases(counts, int64(v.podKiB)<<10, v.podK)
	if o.links, o.linkWatch, err = v.links.cases(); err != nil {
		return err
	}
	if o.servers, err = servers.ParseList(v.servers); err != nil {
		return fmt.Errorf("-servers: %w", err)
	}
	if len(o.servers) == 0 {
		return errors.New("-servers: no server given")
	}
	for _, sv := range o.servers {
		if err := sv.Alone(); err != nil {
			return fmt.Errorf("-servers: %w", err)
		}
	}
	for _, f := range strings.Split(v.ks, ",") {
		k, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || k < 1 || k > 26 {
			return fmt.Errorf("-k: %q is not a number of informers from 1 to 26", f)
		}
		o.ks = append(o.ks, k)
	}
	return nil
}

// check refuses values out of range, and cases that -cases does not know.
func (o *options) check(v flagValues) error {
	switch {
	case o.repeats < 1:
		return fmt.Errorf("-repeats must be at least 1, got %d", o.repeats)
	case o.large.Objects < 1 || o.small.Objects < 1 || o.secrets.Objects < 1:
		return fmt.Errorf("-large-count, -small-count and -secrets-count must be at least 1")
	case o.secrets.Size < 1 || o.secrets.Size > 1000000:
		return fmt.Errorf("-secrets-bytes must be 1 to 1000000 (a Secret holds at most 1 MiB), got %d", o.secrets.Size)
	case v.largeKiB < 1 || v.largeKiB > 1000 || v.smallKiB < 1 || v.smallKiB > 1000:
		return fmt.Errorf("-large-kib and -small-kib must be 1 to 1000 (a ConfigMap holds at most 1 MiB)")
	case v.writesCount < 1 || o.aloneFor <= 0:
		return fmt.Errorf("-writes-count and -writes-alone must be positive")
	case v.cborCount < 1 || v.cborKiB < 1 || v.cborKiB > 1000:
		return fmt.Errorf("-cbor-count must be at least 1 and -cbor-kib 1 to 1000 (an object is at most about 1.5 MiB in etcd)")
	case o.interval <= 0 || o.workers < 1 || o.memFactor <= 0:
		return fmt.Errorf("-interval, -workers and -mem-factor must be positive")
	}
	cases, err := o.selected()
	if err != nil {
		return err
	}
	if o.lab == "" {
		o.lab = labModule
		if slices.ContainsFunc(cases, func(c Case) bool { return c.Encoding == mediaCBOR }) {
			o.lab = cborLabModule
		}
	}
	minor, ok := labMinor(o.lab)
	switch {
	case !ok:
		return fmt.Errorf("-lab must be a lab module, client-v031 to client-v037, got %q", o.lab)
	case minor < 36 && v.cborCount > cborArrayLimit && slices.ContainsFunc(cases, func(c Case) bool { return c.Encoding == mediaCBOR }):
		return fmt.Errorf("-lab %s cannot decode a CBOR LIST of more than %d objects (apimachinery before v0.36), got -cbor-count %d: use -lab %s, or -cbor-count %d or less", o.lab, cborArrayLimit, v.cborCount, cborLabModule, cborArrayLimit)
	}
	for _, c := range cases {
		if o.kubeconfig == "" && !slices.ContainsFunc(o.servers, c.On) {
			return fmt.Errorf("-cases: the %s case needs a kube-apiserver with %s, and -servers has none: add one, e.g. -servers %s:%s", c.Name, c.Gate, o.servers[0].Version, c.Gate)
		}
	}
	return nil
}

// locate finds the repository root and the runs' parent directory, and -from in the root when
// it is not where it was given (make runs in harness/: "out/…" is the root's).
func (o *options) locate() error {
	var err error
	o.root, o.out, err = rundir.Defaults(o.root, o.out)
	if err == nil && o.from != "" && !filepath.IsAbs(o.from) {
		if _, serr := os.Stat(o.from); serr != nil {
			o.from = filepath.Join(o.root, o.from)
		}
	}
	return err
}

// selected returns the cases -cases names, in that order.
func (o options) selected() ([]Case, error) {
	var cs []Case
	for _, name := range strings.Split(o.cases, ",") {
		switch strings.TrimSpace(name) {
		case "large":
			cs = append(cs, o.large)
		case "small":
			cs = append(cs, o.small)
		case "secrets":
			cs = append(cs, o.secrets)
		case "cbor":
			cs = append(cs, o.encodings...)
		case "writes":
			cs = append(cs, o.writes...)
		case "links":
			cs = append(cs, o.links...)
		case "pods":
			cs = append(cs, o.pods...)
		default:
			return nil, fmt.Errorf("-cases: unknown case %q (large, small, secrets, writes, links, pods, cbor)", name)
		}
	}
	return cs, nil
}

// Runs returns the K the case runs at, in increasing order: its own, or else every K of the run.
func (c Case) Runs(all []int) []int {
	if c.Ks != nil {
		return sortedKs(c.Ks)
	}
	return sortedKs(all)
}

// seedingKey is a Report.Seeding key: one server's seeding of one case.
func seedingKey(server, caseName string) string { return server + " " + caseName }

func (o options) maxK() int {
	m := 0
	for _, k := range o.ks {
		m = max(m, k)
	}
	return m
}

// labMinor is a lab module's client-go minor version: 37 for client-v037.
func labMinor(lab string) (int, bool) {
	n, err := strconv.Atoi(strings.TrimPrefix(lab, "client-v0"))
	return n, strings.HasPrefix(lab, "client-v0") && err == nil && n >= 31 && n <= 37
}
