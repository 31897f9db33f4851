package record

import "strings"

// The vocabulary of the records: the names every producer writes and every reader matches on.
// A name is defined here once; labs, the harness and compare use these constants, never the
// string.

// Steps of Setup records.
const (
	StepClientGo   = "client-go"     // Value: linked client-go version; Detail: the pin
	StepReexec     = "reexec"        // the lab rebuilt itself outside go.work to link its pin; Value says how
	StepGate       = "gate"          // Value: WatchListClient on|off; Detail: who set it
	StepServer     = "server"        // Value: kube-apiserver version; Detail: feature gates (harness) or how attached (lab)
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
	StepDirect     = "direct-list"   // Tag TagDirect: the lab's one typed List() outside its informers; Value: what it returned, or "failed" and Detail the error
	StepKlog       = "klog"          // Tag: whose call it was, if known; Value: one line client-go logged through klog
)

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

// Scenarios of a run, as the harness names them in its SETUP scenario record.
const (
	ScenarioStartup   = "startup"     // the initial sync only, no writes
	ScenarioDirect    = "direct-list" // the initial sync, then each lab's one typed List() outside its informers
	ScenarioSteady    = "steady"      // writes fan out to every watcher
	ScenarioReconnect = "reconnect"   // a proxy ends every watch after a few seconds; reflectors watch again
	ScenarioRestart   = "restart"     // kube-apiserver killed and restarted mid-run
	// ScenarioRestartGap is restart with a write to etcd while kube-apiserver is down: the
	// restarted watch cache starts above every rv the clients had.
	ScenarioRestartGap = "restart-gap"
	ScenarioExpired    = "expired" // labs cut off while the server forgets their rv: 410, then a relist
)

// Scenarios lists the scenarios in the order a matrix shows them.
var Scenarios = []string{ScenarioStartup, ScenarioDirect, ScenarioSteady, ScenarioReconnect, ScenarioRestart, ScenarioRestartGap, ScenarioExpired}

// ScenarioFaultPrefix starts the name of a fault scenario: "fault:no-end-bookmark" is the
// startup of every lab through a proxy that plays that fault (harness/internal/proxy), with each
// lab's direct List() made at once.
const ScenarioFaultPrefix = "fault:"

// IsRecovery reports a scenario whose fault the harness injects mid-run: its informers must
// come back in sync after it.
func IsRecovery(name string) bool {
	return name == ScenarioRestart || name == ScenarioRestartGap || name == ScenarioExpired
}

// IsFaultScenario reports a scenario of the fault family.
func IsFaultScenario(name string) bool { return strings.HasPrefix(name, ScenarioFaultPrefix) }

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
