package record

import "strings"

// Scenarios: the one table of what make matrix can play. Every consumer (the harness that plays
// a scenario, compare's analysis and verdicts, the matrix pages) branches on a Scenario's
// properties, never on its name. A new scenario is one entry here, its implementation in the
// harness (harness/internal/app: its run function, by name) and its test.

// Check is what a scenario's cells are judged on: the one verdict rule each scenario follows.
type Check int

const (
	// CheckHandshake: the requests each informer made to sync, against the handshake the gates
	// imply, and the slowest informer's time to sync.
	CheckHandshake Check = iota + 1
	// CheckDirectList: what the lab's one typed List() outside its informers sent and returned.
	CheckDirectList
	// CheckDelivery: every write reached every watcher as its event, in order, with the write's
	// rv, and every cell of the run saw the same sequence.
	CheckDelivery
	// CheckRewatch: how each watcher re-established its watch, every round, while writes go on.
	CheckRewatch
	// CheckRecovery: each informer back in sync after the fault injected mid-run, and how long
	// that took.
	CheckRecovery
	// CheckFault: against a server that does not play along (the fault family), whether each
	// informer synced, after how long, and what its requests were.
	CheckFault
)

// Scenario is one entry of the table: a name and what is true of it.
type Scenario struct {
	Name string
	// Doc is what the harness does, one line: the Detail of its SETUP scenario record.
	Doc string
	// Shows is what the scenario's table in the matrix shows, one paragraph.
	Shows string
	// Check is the rule its cells' verdicts follow.
	Check Check
	// Writes: the harness's writer writes during it, and each write must reach every watcher.
	Writes bool
	// DuringSync: the writer writes from before the labs start until every informer has synced,
	// so each informer's sync point falls among the writes: the writes before it must be in its
	// initial state, the ones after it must come as events, and each informer is held to the
	// writes after its own sync point (compare's analysis.Delivered), not to the other cells'.
	DuringSync bool
	// Recovery: the harness injects a fault mid-run, after which every informer must come back
	// in sync; its time column is how long that took.
	Recovery bool
	// ServerProcesses: it kills and restarts kube-apiserver or writes to etcd, so it needs the
	// server's processes and cannot run against a user's cluster (-kubeconfig).
	ServerProcesses bool
	// Rewatches: watches are ended on purpose, so a watcher that reads its state again (a
	// relist, or a stream's initial events once more) is what is expected, not a mismatch.
	Rewatches bool
	// DirectList: each lab makes its one typed List() outside its informers.
	DirectList bool
	// Proxy: the labs reach kube-apiserver through the harness's proxy, which ends, holds or
	// rewrites what passes (its SETUP proxy record says how).
	Proxy bool
	// Timed says what the scenario's time column measures, "" when it has none.
	Timed string
}

// OnCluster reports whether the scenario can run against a user's cluster (a -kubeconfig
// column), where the harness works in one namespace and has none of the server's processes.
func (s Scenario) OnCluster() bool { return !s.ServerProcesses }

// The scenarios' names, for the harness's implementations and for tests.
const (
	ScenarioStartup    = "startup"
	ScenarioDirect     = "direct-list"
	ScenarioSteady     = "steady"
	ScenarioSyncWrites = "writes-during-sync"
	ScenarioReconnect  = "reconnect"
	ScenarioRestart    = "restart"
	ScenarioRestartGap = "restart-gap"
	ScenarioExpired    = "expired"
)

// ScenarioFaultPrefix starts the name of a fault scenario: "fault:no-end-bookmark" is the
// startup of every lab through a proxy that plays that fault (harness/internal/proxy, whose
// fault table is the one list of faults), with each lab's direct List() made at once.
const ScenarioFaultPrefix = "fault:"

// recoveryTime is restart's and restart-gap's time column.
const recoveryTime = "the time: from kube-apiserver back to the slowest informer back in sync (0s: at once)"

// ScenarioTable lists the scenarios in the order a matrix shows them.
var ScenarioTable = []Scenario{
	{Name: ScenarioStartup, Check: CheckHandshake,
		Doc:   "the initial sync only: request shapes, 422s, fallbacks, time to sync; no writes",
		Shows: "Initial sync only, no writes: the requests each informer made to sync, and the slowest informer's sync time. ⚠ marks a handshake that is not the one the gates imply.",
		Timed: "the time: the slowest informer's sync"},
	{Name: ScenarioDirect, Check: CheckDirectList, DirectList: true,
		Doc:   "the initial sync, then each lab makes one typed List() of ConfigMaps outside its informers, as a controller does: with the gate on, client-go v0.31-v0.33 try to stream it",
		Shows: "Initial sync, then each lab's one typed `List()` of ConfigMaps, the call a controller makes outside its informers (tag DIRECT): the requests it sent. A fallback names client-go's reason."},
	{Name: ScenarioSteady, Check: CheckDelivery, Writes: true,
		Doc:   "the seeded creates, updates and deletes fan out to every watcher",
		Shows: "Writes fan out: each informer's events against the harness's writes (same objects, same rvs), and against the other cells of the run."},
	{Name: ScenarioSyncWrites, Check: CheckDelivery, Writes: true, DuringSync: true,
		Doc:   "the writer creates, updates and deletes ConfigMaps from before the labs start until every informer has synced, then the seeded script: each informer must hold the writes before its sync point in its initial state and get every write after it as its event, in rv order",
		Shows: "Writes during the initial sync: each informer's events after its own sync point (its LIST's body or its stream's end bookmark) against the writes after it, and its cache at stop against a fresh LIST."},
	{Name: ScenarioReconnect, Check: CheckRewatch, Writes: true, Rewatches: true, Proxy: true,
		Doc:   "kube-apiserver ends every watch after a few seconds, as it does at the client's timeoutSeconds; each reflector re-establishes while the writes go on",
		Shows: "A proxy ends every watch after a few seconds: what each re-established watch sent (×N: how many rounds)."},
	{Name: ScenarioRestart, Check: CheckRecovery, Writes: true, Recovery: true, ServerProcesses: true, Timed: recoveryTime,
		Doc:   "kube-apiserver is killed half-way through the writes and started again over the same etcd",
		Shows: "kube-apiserver killed and restarted: each informer's requests from the kill until it is back in sync, and the time from the restart to the slowest informer back."},
	{Name: ScenarioRestartGap, Check: CheckRecovery, Writes: true, Recovery: true, ServerProcesses: true, Timed: recoveryTime,
		Doc:   "kube-apiserver is killed half-way through the writes, etcd is written while it is down (its revision moves on), and it is started again: its watch cache starts above every lab's rv",
		Shows: "kube-apiserver killed, etcd written while it is down, restarted: its watch cache starts above every informer's rv. Each informer's requests from the kill until it is back in sync, and the time from the restart to the slowest informer back."},
	{Name: ScenarioExpired, Check: CheckRecovery, Writes: true, Recovery: true, ServerProcesses: true, Proxy: true,
		Doc:   "the labs are cut off while the writer goes on, kube-apiserver restarts (its watch cache starts afresh) and etcd is compacted: every watch resumes from an rv the server no longer has",
		Shows: "Labs cut off while the server moves past their rv (restart, etcd compaction): the 410 and how each informer re-syncs, and the time from their release to the slowest informer back.",
		Timed: "the time: from the labs' release to the slowest informer back in sync (0s: at once)"},
}

// faultFamily is what every "fault:NAME" scenario is; its Doc is the fault's, which the harness
// records (compare reads it from the SETUP scenario record).
var faultFamily = Scenario{Check: CheckFault, DirectList: true, Proxy: true,
	Shows: "A proxy between every lab and kube-apiserver plays a server that does not follow the streaming-list protocol; each cell: did each informer sync and after how long (time on the wire from its first request), its requests in order, and what the lab's typed `List()`, made at once, did. \"not synced after T\" is a hang to a user.",
	Timed: "the time: the slowest informer's sync"}

// Scenarios lists the table's names in its order (the fault family is not in it: its names
// are ScenarioFaultPrefix and one of the proxy's faults).
var Scenarios = func() []string {
	var names []string
	for _, s := range ScenarioTable {
		names = append(names, s.Name)
	}
	return names
}()

// LookupScenario finds a scenario by name: an entry of ScenarioTable, or a name of the fault
// family (ScenarioFaultPrefix and anything; the harness checks the fault's name against the
// proxy's table).
func LookupScenario(name string) (Scenario, bool) {
	if IsFaultScenario(name) {
		s := faultFamily
		s.Name = name
		return s, true
	}
	for _, s := range ScenarioTable {
		if s.Name == name {
			return s, true
		}
	}
	return Scenario{}, false
}

// ScenarioOf is LookupScenario's Scenario: the zero Scenario (no check, no property) for ""
// (a run outside the matrix) or a name that is not one.
func ScenarioOf(name string) Scenario {
	s, _ := LookupScenario(name)
	return s
}

// IsFaultScenario reports a scenario of the fault family.
func IsFaultScenario(name string) bool { return strings.HasPrefix(name, ScenarioFaultPrefix) }
