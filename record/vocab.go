package record

import (
	"fmt"
	"slices"
	"strings"
)

// The vocabulary of the records: the names every producer writes and every reader matches on.
// A name is defined here once; labs, the harness and compare use these constants, never the
// string.

// Steps of Setup records.
const (
	StepClientGo   = "client-go"     // Value: linked client-go version; Detail: the pin
	StepReexec     = "reexec"        // the lab rebuilt itself outside go.work to link its pin; Value says how
	StepGate       = "gate"          // Value: WatchListClient on|off; Detail: who set it
	StepServer     = "server"        // Value: kube-apiserver version; Detail: feature gates (harness) or how attached (lab)
	StepPeer       = "peer"          // harness, upgrade=: Value: the second kube-apiserver's version; Detail: how the labs reach both
	StepSynced     = "synced"        // Tag: the informer that reported HasSynced
	StepFault      = "fault"         // something went wrong; Detail says what
	StepStopped    = "stopped"       // the writer of this log stopped cleanly
	StepWriteDone  = "writes-done"   // the mutator made its last write
	StepStore      = "store"         // Tag: an informer's cache at stop, in Items; Tag TagFreshList: the harness's LIST
	StepHealth     = "health"        // the writer's own process: Health
	StepInjected   = "injected"      // the harness injected a fault on purpose; Value names it
	StepRecovered  = "recovered"     // the run came back from an injected fault; Detail says how
	StepBroken     = "stream-broken" // Tag: a watch stream ended mid-frame (server gone); Detail: error
	StepScenario   = "scenario"      // harness: Value: one of Scenarios; Detail: what it does
	StepProxy      = "proxy"         // harness: Value: what the proxy between labs and apiserver does, e.g. "watch timeout 4s"
	StepLab        = "lab"           // harness: Value: a lab it started; Detail: client-go and flags
	StepKubeconfig = "kubeconfig"    // harness: Value: the path of the labs' kubeconfig (never its content)
	StepSyncWait   = "sync-wait"     // harness, fault scenarios: Value: how long the informers were given to sync (a duration)
	StepDirect     = ScenarioDirect  // Tag TagDirect: the lab's one typed List() outside its informers; Value: what it returned, or "failed" and Detail the error
	StepKlog       = "klog"          // Tag: whose call it was, if known; Value: one line client-go logged through klog
	StepKind       = "kind"          // Value: the informer kind (one of Kinds); Detail: what the lab set up for it
	StepOptOut     = "opt-out"       // lab -opt-out: Value: WatchListClient on|off as client-go reports it after the switch; Detail: the mode, when, what it did
)

// Faults the harness injects on purpose (its -fault, and the restart scenarios' own): the Value
// of its SETUP injected record. harness/internal/app's Injections say what each does.
const (
	InjectKillAPIServer    = "kill-apiserver"
	InjectKillAPIServerGap = "kill-apiserver-gap"
	InjectKillEtcd         = "kill-etcd"
	InjectCrashLab         = "crash-lab"
	InjectHangLab          = "hang-lab"
)

// Faults of the proxy that plays a server that does not follow the streaming-list protocol: the
// fault scenarios are ScenarioFaultPrefix and one of these (with its parameter, if any).
// harness/internal/proxy's fault table says what each does; compare names their causes.
const (
	FaultNoEndBookmark           = "no-end-bookmark"
	FaultStripAnnotations        = "strip-annotations"
	FaultIgnoreSendInitialEvents = "ignore-send-initial-events"
	FaultCutInitialStream        = "cut-initial-stream"
	FaultTooLargeRV              = "too-large-rv"
	FaultRefuseWatchList         = "refuse-watch-list"
)

// InformerTag tags a lab's informer i (from 0): A, B, ... Z, the letters its records and the
// prefixes of its log lines carry.
func InformerTag(i int) string { return string(rune('A' + i)) }

// InformerTags are the tags of a lab's first k informers.
func InformerTags(k int) []string {
	tags := make([]string, k)
	for i := range tags {
		tags[i] = InformerTag(i)
	}
	return tags
}

// Tags that are not informers.
const (
	// TagDirect tags a lab's direct typed List() call (-direct-list): its requests are not an
	// informer's, so readers keep them apart from the informers' tags (A, B, ...).
	TagDirect = "DIRECT"
	// TagWriter tags the single writer's requests and writes.
	TagWriter = "MUT"
	// TagFreshList tags the harness's own LIST after a scenario, which every cache is checked against.
	TagFreshList = "LIST"
	// TagServer tags the requests a lab makes to learn about its server rather than to watch:
	// its GET /version, and the requests of the envtest it boots alone.
	TagServer = "SERVER"
)

// Writes (Mutator records' Event) and the watch events (WatchEvent records' Event) they cause.
const (
	WriteCreate = "CREATE"
	WriteUpdate = "UPDATE"
	WriteDelete = "DELETE"

	EventAdded    = "ADDED"
	EventModified = "MODIFIED"
	EventDeleted  = "DELETED"
	EventBookmark = "BOOKMARK"
	EventError    = "ERROR"
)

// EventFor is the watch event a write causes on every watcher: ADDED for a CREATE, and so on.
func EventFor(write string) string {
	switch write {
	case WriteCreate:
		return EventAdded
	case WriteUpdate:
		return EventModified
	case WriteDelete:
		return EventDeleted
	}
	return ""
}

// Annotations of the bookmark that ends a streaming list's initial events.
const (
	// AnnotationInitialEventsEnd marks the end of a stream's initial events: the sync point.
	AnnotationInitialEventsEnd = "k8s.io/initial-events-end"
	// AnnotationBlueprint carries the list's type (an empty list, base64), which client-go
	// v0.32/v0.33's List() requires (see docs/upstream.md).
	AnnotationBlueprint = "kubernetes.io/initial-events-list-blueprint"
)

// Informer kinds: how a lab's informers are built (its -kind flag), each what a kind of
// controller runs. KindTypedConfigMaps is the lab's original and make compare's default.
const (
	KindTypedConfigMaps = "typed-configmaps"   // a typed SharedInformerFactory on core/v1 ConfigMaps
	KindSelector        = "selector"           // the same, with a label selector (SelectorLabel=SelectorValue)
	KindMetadata        = "metadata"           // metadatainformer: PartialObjectMetadata of ConfigMaps
	KindDynamicCRD      = "dynamic-crd"        // dynamicinformer on the lab's own custom resource (unstructured JSON)
	KindCBOR            = "cbor"               // dynamic-crd with client-go's ClientsAllowCBOR and ClientsPreferCBOR gates on
	KindCR              = "controller-runtime" // controller-runtime's cache (the manager's), the module's paired version
	// KindCustomListWatch is a hand-written cache.ListWatch whose WatchFunc passes on only the
	// options it knows (resourceVersion, timeoutSeconds), as many do.
	KindCustomListWatch = "custom-listwatch"
	// KindCustomListWatchOptOut is KindCustomListWatch that says it does not support watch-list
	// semantics (IsWatchListSemanticsUnSupported, read by client-go v0.35+ reflectors): the fix.
	KindCustomListWatchOptOut = "custom-listwatch-optout"
	// KindAggregated is a dynamicinformer on an aggregated apiserver's resource (Aggregated*):
	// k8s.io/sample-apiserver's flunders, which kube-apiserver's aggregator proxies. It needs a
	// server with one registered (the setting aggregated=VERSION, SettingAggregated).
	KindAggregated = "aggregated"
)

// Kinds lists the informer kinds in the order a matrix shows them.
var Kinds = []string{KindTypedConfigMaps, KindSelector, KindMetadata, KindDynamicCRD, KindCR, KindCustomListWatch, KindCustomListWatchOptOut, KindCBOR, KindAggregated}

// What KindTypedConfigMaps's informers watch (the lab's -resource): ConfigMaps, on which the
// writer writes, or Secrets, which make bench seeds in KEP-3157's shape, or Pods, which it
// seeds in the shape of perf-tests' watch-list job; nobody writes those two.
const (
	ResourceConfigMaps = "configmaps"
	ResourceSecrets    = "secrets"
	ResourcePods       = "pods"
)

// The label every object the writer creates carries, and KindSelector's informers select on.
const (
	SelectorLabel = "app"
	SelectorValue = "informer-lab"
)

// RunLabel is the label the harness puts, on a user's cluster, on the namespace it creates and on
// every object it makes there (seeds and writes), the namespace's name its value: what a run
// made is found by that selector, and only that is deleted. It is not SelectorLabel, which only
// the odd seeds may carry (the selector kind's informers select on it).
const RunLabel = "informer-lab.dev/run"

// The lab's own custom resource, which KindDynamicCRD and KindCBOR watch (lab/crd defines it).
const (
	CRDGroup    = "informer-lab.dev"
	CRDVersion  = "v1"
	CRDResource = "widgets"
	CRDKind     = "Widget"
)

// The aggregated apiserver's resource, which KindAggregated watches: k8s.io/sample-apiserver's
// Flunders, in the group version the harness registers it for (lab/aggregated).
const (
	AggregatedGroup    = "wardle.example.com"
	AggregatedVersion  = "v1beta1"
	AggregatedResource = "flunders"
	AggregatedKind     = "Flunder"
)

// IsKind reports one of Kinds.
func IsKind(name string) bool {
	for _, k := range Kinds {
		if k == name {
			return true
		}
	}
	return false
}

// KindWatchesCRD reports a kind whose informers watch the lab's custom resource, not ConfigMaps.
func KindWatchesCRD(kind string) bool { return kind == KindDynamicCRD || kind == KindCBOR }

// KindNotApplicable says why a kind cannot run with a client-go minor version (31 for v0.31)
// against a kube-apiserver minor version (32 for 1.32), or "" when it can. Decided by the
// gates of docs/upstream.md: ClientsAllowCBOR is in client-go from v0.32, and
// CBORServingAndStorage in kube-apiserver from 1.32.
func KindNotApplicable(kind string, clientMinor, serverMinor int) string {
	if kind != KindCBOR {
		return ""
	}
	switch {
	case clientMinor > 0 && clientMinor < 32:
		return fmt.Sprintf("n/a: client-go v0.%d has no ClientsAllowCBOR gate (from v0.32)", clientMinor)
	case serverMinor > 0 && serverMinor < 32:
		return fmt.Sprintf("n/a: kube-apiserver 1.%d has no CBORServingAndStorage gate (from 1.32)", serverMinor)
	}
	return ""
}

// DefaultKind is the informer kind a run on a server with these settings uses when none is
// asked for: the aggregated kind where an aggregated apiserver is registered (what such a server
// is there for), else the typed default.
func DefaultKind(settings string) string {
	if AggregatedOf(settings) != "" {
		return KindAggregated
	}
	return KindTypedConfigMaps
}

// KindNotApplicableOn says why a kind cannot run on a server with these settings
// (SplitServerSettings), or "" when it can: the aggregated kind needs an aggregated apiserver.
func KindNotApplicableOn(kind, settings string) string {
	if kind == KindAggregated && AggregatedOf(settings) == "" {
		return "n/a: needs an aggregated apiserver (the server setting " + SettingAggregated + "=VERSION)"
	}
	return ""
}

// ScenarioNotApplicable says why a scenario cannot run with a kind, or "" when it can: the direct
// List() is the typed clientset's, of ConfigMaps, which says nothing of a kind whose informers
// watch another resource (the lab's CRD, an aggregated apiserver's).
func ScenarioNotApplicable(scenario, kind string) string {
	if ScenarioOf(scenario).DirectList && (KindWatchesCRD(kind) || kind == KindAggregated) {
		return "n/a: the direct List() lists ConfigMaps, which the " + kind + " kind does not watch"
	}
	return ""
}

// NotApplicableServerProcesses is the cell of a scenario that kills and restarts kube-apiserver
// or writes to etcd (restart, restart-gap, expired) on a user's cluster, where the harness
// has neither process.
const NotApplicableServerProcesses = "n/a: needs the server's processes"

// ClusterNotApplicable says why a scenario or an informer kind cannot run on a user's cluster,
// where the harness works in one namespace and has no process of the server, or "" when it can.
func ClusterNotApplicable(scenario, kind string) string {
	switch {
	case !ScenarioOf(scenario).OnCluster():
		return NotApplicableServerProcesses
	case kind == KindCBOR:
		return "n/a: needs a CustomResourceDefinition (cluster-scoped) and kube-apiserver started with " + KindServerGates(KindCBOR)
	case KindWatchesCRD(kind):
		return "n/a: needs a CustomResourceDefinition (cluster-scoped)"
	case kind == KindAggregated:
		return "n/a: needs an aggregated apiserver the harness registers (an APIService, cluster-scoped)"
	}
	return ""
}

// KindServerGates are the kube-apiserver feature gates a kind needs on: CBOR serving is alpha
// and off in every version this project runs (docs/upstream.md).
func KindServerGates(kind string) string {
	if kind == KindCBOR {
		return "CBORServingAndStorage=true"
	}
	return ""
}

// What make observe records: the traffic of a client it did not build, seen from a proxy.
// Its log holds, per client (a User-Agent on one connection), a SETUP StepClient record and
// that client's HTTP, LIST and WATCH-EVENT records, Source the client's name and Tag the
// resource each request was for (ResourceOf): on the wire, one informer per resource.
const (
	// StepClient: Source: the client's name; Value: its User-Agent; Detail: its connection.
	StepClient = "client"
	// TagNoResource tags a client's requests that name no resource: discovery (/api, /apis,
	// /openapi), /version, /healthz.
	TagNoResource = "-"
)

// A server's settings: what follows its version on make matrix's command line
// ("1.34.4:WatchList=true,watch-cache=false") and, the same, its SETUP server record's Detail.
// They are kube-apiserver feature gates (Name=bool, a capital first) and the kube-apiserver
// flags of ServerFlags (name=value), comma-separated.

// ServerFlag is a setting of the form name=value a server's settings may hold: a kube-apiserver
// flag, or (Beside) a server the harness starts beside kube-apiserver.
type ServerFlag struct {
	Name, Doc string
	Beside    bool // not a kube-apiserver flag: kube-apiserver does not get it
}

// SettingAggregated runs k8s.io/sample-apiserver of the version it names beside kube-apiserver,
// registered with its aggregator: "aggregated=0.33.5".
const SettingAggregated = "aggregated"

// SettingUpgrade runs a second kube-apiserver, of the version it names, on the same etcd, and
// puts both behind one round-robin balancer (the harness's proxy): a control plane in the middle
// of an upgrade, "1.34.4:upgrade=1.33.13".
const SettingUpgrade = "upgrade"

// ServerHeader is the response header in which the harness's balancer names the kube-apiserver
// that answered a request (its version); the labs' wire records it (Record.Server).
const ServerHeader = "X-Informer-Lab-Server"

// ServerFlags are the flags a server's settings may set.
var ServerFlags = []ServerFlag{
	{Name: "watch-cache", Doc: "`watch-cache=false`: kube-apiserver without its watch cache (the Cacher): every list and watch is served by the etcd storage, and a streaming list is a consistent read from etcd followed by the end bookmark."},
	{Name: SettingUpgrade, Beside: true, Doc: "`upgrade=1.33.13`: a second kube-apiserver, v1.33.13, on the same etcd with the same flags and certificates, and both behind a round-robin balancer the harness runs (its proxy: each request to the next server, the answering one named in the " + ServerHeader + " response header): a control plane in the middle of an upgrade. The labs connect to the balancer; the writer writes to the first server."},
	{Name: SettingAggregated, Beside: true, Doc: "`aggregated=0.33.5`: k8s.io/sample-apiserver v0.33.5, built from the Go module proxy, runs beside kube-apiserver on its etcd and is registered with kube-apiserver's aggregator (an APIService for " + AggregatedGroup + "/" + AggregatedVersion + "); the `aggregated` kind's informers watch its " + AggregatedResource + " through kube-apiserver."},
}

// AggregatedOf is the sample-apiserver version settings register (aggregated=VERSION), "" when
// they register none.
func AggregatedOf(settings string) string { return settingOf(settings, SettingAggregated) }

// UpgradeOf is the version of the second kube-apiserver settings start (upgrade=VERSION), ""
// when they start none.
func UpgradeOf(settings string) string { return settingOf(settings, SettingUpgrade) }

// settingOf is the value of flag name in settings, "" when they do not set it.
func settingOf(settings, name string) string {
	for _, item := range strings.Split(settings, ",") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(item), name+"="); ok {
			return v
		}
	}
	return ""
}

// ServerFlagOf is the flag of ServerFlags with that name, false when there is none.
func ServerFlagOf(name string) (ServerFlag, bool) {
	i := slices.IndexFunc(ServerFlags, func(f ServerFlag) bool { return f.Name == name })
	if i < 0 {
		return ServerFlag{}, false
	}
	return ServerFlags[i], true
}

// SplitServerSettings returns settings' feature gates and flags, each comma-separated; an error
// names an item that is neither, or a flag ServerFlags does not hold.
func SplitServerSettings(settings string) (gates, flags string, err error) {
	join := func(list, item string) string {
		if list == "" {
			return item
		}
		return list + "," + item
	}
	for _, item := range strings.Split(settings, ",") {
		if item = strings.TrimSpace(item); item == "" {
			continue
		}
		key, value, ok := strings.Cut(item, "=")
		switch {
		case !ok || key == "" || value == "":
			return "", "", fmt.Errorf("%q: want Gate=bool or flag=value", item)
		case key[0] >= 'A' && key[0] <= 'Z':
			gates = join(gates, item)
		default:
			if _, ok := ServerFlagOf(key); !ok {
				var names []string
				for _, f := range ServerFlags {
					names = append(names, f.Name)
				}
				return "", "", fmt.Errorf("%q: not a feature gate (those start with a capital) nor a kube-apiserver flag a server may set (%s)", item, strings.Join(names, ", "))
			}
			flags = join(flags, item)
		}
	}
	return gates, flags, nil
}
