package analysis

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"informer-lab/record"
)

// Report is the comparison of one run: per-lab facts, phase diffs against the baseline lab,
// fan-out skew and the relations that failed.
type Report struct {
	Dir         string
	Server      string
	ServerGates string
	Writes      []record.Record // the harness's successful writes, in order
	DeleteRVs   int             // DELETE writes whose rv was taken from the watchers (resolveDeleteRVs)
	Labs        []*LabReport    // in Run.Labs order; Labs[0] is the baseline
	Diffs       []PhaseDiff     // one per non-baseline lab and phase
	Skew        Skew
	Faults      []string       // SETUP fault records of any log
	FreshList   *record.Record // the harness's LIST just before the labs stopped, if any
	Injected    string         // a fault the harness injected on purpose ("" = none), and its recovery
	InjectedAt  time.Time      // when the harness injected it (SETUP injected)
	RecoveredAt time.Time      // when the harness saw the run back (SETUP recovered), zero if never
	Scenario    string         // the matrix scenario the harness ran (SETUP scenario), "" outside the matrix
	ScenarioDoc string         // its description
	Proxy       string         // what the proxy between labs and apiserver did (SETUP proxy), "" without one
	SyncWait    time.Duration  // fault scenarios: how long the informers were given to sync (SETUP sync-wait)
	Failures    []string       // relations that do not hold, in words; empty when the verdict holds
}

// LabReport is what one lab did.
type LabReport struct {
	Name     string
	ClientGo string // linked version, from SETUP client-go
	Gate     string // WatchListClient on|off, from SETUP gate
	Kind     string // the informer kind (record.Kinds), from SETUP kind; "" in logs from before kinds
	GateHow  string // who set it, from SETUP gate's detail, e.g. "client-go default"
	Want     string // the handshake shape its gate implies
	Tags     []string
	Unsynced []string                   // informers that never reported HasSynced
	Caches   map[string]string          // per tag: how its cache at stop differs from the fresh LIST ("" = equal)
	Rewatch  map[string]int             // per tag: watch requests after an injected fault (CheckRewatch: after its sync)
	Broken   map[string]int             // per tag: watch streams that broke mid-stream
	Sync     map[string]Handshake       // per tag
	SyncTime map[string]time.Duration   // per tag: its first request to its sync point on the wire (0 if it never synced)
	Received map[string]record.Stats    // per tag: what its client had read when it reported synced (its first SETUP synced's stats); no entry if it never synced or its log predates stats
	After    map[string][]record.Record // per tag: its records after its own SETUP synced, handler calls left out
	Reread   map[string]bool            // per tag: it listed or streamed again after its sync
	Watchers map[string]*Watcher        // per tag: the steady phase
	Direct   *DirectList                // the lab's direct typed List(), nil when it made none
	Klog     []string                   // what client-go logged through klog, normalized (its reasons to fall back or retry)
	Initial  []string                   // normalized lines of the initial phase
	Steady   []string                   // normalized lines of the steady phase
	Verdict  LabVerdict                 // the judgement every renderer shows
	// Per tag: the server that accepted its last watch before an injected fault, where a
	// balancer named it (record.Record.Server)
	watchedOn map[string]string
}

// Watcher is one informer's steady phase.
type Watcher struct {
	Events    []record.Record // WATCH-EVENTs except periodic bookmarks
	Bookmarks int             // periodic bookmarks, left out of the comparison
	Handlers  int             // HANDLER calls
	Expected  int             // harness writes it should have seen
	Mismatch  string          // first difference from the harness's writes, "" when none
}

// A run's two phases: until every informer synced, and after (what the steady scenario is alone).
const (
	PhaseInitial = "initial sync"
	PhaseSteady  = record.ScenarioSteady
)

// PhaseDiff is the unified diff of one lab's phase against the baseline's; Text is "" when equal.
type PhaseDiff struct {
	Phase, Base, Lab string
	Lines            int // lines in the lab's phase
	Text             string
}

// Skew is the fan-out skew: per write, the spread of the times all watchers saw its event.
type Skew struct {
	Writes, Watchers int // writes measured, watchers in the run
	Min, Median, Max time.Duration
}

// Analyze compares the labs of a run with each other and with the harness's writes.
func Analyze(run *Run) *Report {
	rep := &Report{Dir: run.Dir, Server: run.Server, ServerGates: run.ServerGates}
	for _, r := range run.Harness {
		rep.readHarness(r)
	}
	rep.checkScenario()
	rep.DeleteRVs = resolveDeleteRVs(rep.Writes, run.Labs)
	for _, lab := range run.Labs {
		rep.Labs = append(rep.Labs, rep.analyzeLab(lab))
	}
	if len(rep.Labs) == 0 { // LoadRun refuses such a run; a Run built in code may still have none
		rep.Failures = append(rep.Failures, "no labs in the run")
		return rep
	}
	base := rep.Labs[0]
	for _, l := range rep.Labs[1:] {
		rep.Diffs = append(rep.Diffs,
			PhaseDiff{PhaseInitial, base.Name, l.Name, len(l.Initial), unifiedDiff(base.Name, l.Name, base.Initial, l.Initial)},
			PhaseDiff{PhaseSteady, base.Name, l.Name, len(l.Steady), unifiedDiff(base.Name, l.Name, base.Steady, l.Steady)})
	}
	rep.Skew = fanOutSkew(rep)
	rep.compareSequences()
	for _, f := range rep.Faults {
		// A fault means a log is incomplete: whatever it shows cannot vouch for the verdict.
		rep.Failures = append(rep.Failures, "fault recorded: "+f)
	}
	return rep
}

// readHarness takes what the run is from one record of the harness's log.
func (rep *Report) readHarness(r record.Record) {
	switch {
	case r.Kind == record.Mutator && r.Error == "" && (r.RV != "" || r.Event == record.WriteDelete):
		// A DELETE without an rv is a write all the same: resolveDeleteRVs finds its rv.
		rep.Writes = append(rep.Writes, r)
	case r.Kind != record.Setup:
	case r.Step == record.StepFault:
		rep.Faults = append(rep.Faults, fmt.Sprintf("harness: %s %s", r.Value, record.Scrub(r.Detail)))
	case r.Step == record.StepStore && r.Tag == record.TagFreshList:
		rep.FreshList = &r
	case r.Step == record.StepInjected:
		rep.Injected, rep.InjectedAt = r.Value, r.Time
	case r.Step == record.StepRecovered:
		rep.Injected += " (" + r.Value + ", " + r.Detail + ")"
		rep.RecoveredAt = r.Time
	case r.Step == record.StepScenario:
		rep.Scenario, rep.ScenarioDoc = r.Value, r.Detail
	case r.Step == record.StepProxy:
		rep.Proxy = r.Value
	case r.Step == record.StepSyncWait:
		rep.SyncWait, _ = time.ParseDuration(r.Value)
	}
}

// scenario is the run's entry of record.ScenarioTable: the zero Scenario (no check, no
// property) outside the matrix or for a name that is none.
func (rep *Report) scenario() record.Scenario { return record.ScenarioOf(rep.Scenario) }

// checkScenario checks the harness recorded what its scenario needs: a proxy playing the fault
// (CheckFault), an injected fault (Recovery).
func (rep *Report) checkScenario() {
	s, known := record.LookupScenario(rep.Scenario)
	switch {
	case rep.Scenario != "" && !known:
		rep.Failures = append(rep.Failures, fmt.Sprintf("unknown scenario %q: none of %s", rep.Scenario, strings.Join(record.Scenarios, ", ")))
	case s.Check == record.CheckFault && rep.Proxy == "":
		rep.Failures = append(rep.Failures, fmt.Sprintf("scenario %s, but the harness recorded no proxy playing the fault", rep.Scenario))
	case s.Recovery && rep.Injected == "":
		rep.Failures = append(rep.Failures, fmt.Sprintf("scenario %s, but the harness recorded no injected fault", rep.Scenario))
	}
}

// failFunc adds one failure of a lab, in words.
type failFunc func(format string, args ...any)

func (rep *Report) failer(lab string) failFunc {
	return func(format string, args ...any) {
		rep.Failures = append(rep.Failures, lab+": "+fmt.Sprintf(format, args...))
	}
}

// analyzeLab reads one lab's log and judges it (LabReport.Verdict) by its scenario's Check.
func (rep *Report) analyzeLab(lab *Lab) *LabReport {
	lr := &LabReport{Name: lab.Name, Sync: map[string]Handshake{}, Watchers: map[string]*Watcher{}, Caches: map[string]string{},
		Rewatch: map[string]int{}, watchedOn: map[string]string{}, Broken: map[string]int{}, Reread: map[string]bool{}, Received: map[string]record.Stats{}}
	caches := rep.readLab(lr, lab.Records)
	initial, steady, unsynced := splitPhases(lab.Records)
	lr.Unsynced = unsynced
	var before map[string][]record.Record
	before, lr.After, lr.SyncTime = tagPhases(lab.Records)
	lr.Initial, lr.Steady = initialLines(initial), steadyLines(steady)
	for _, r := range lab.Klog {
		lr.Klog = append(lr.Klog, NormalizeRecord(r))
	}
	lr.Direct = directList(lab.Direct)
	// Against a server that does not play along nothing is expected: what happened is the result.
	// Each informer expects what the server its first request met implies (a balancer in front
	// of two versions may send A's to one and B's to the other).
	wantOf := func(server string) string {
		if rep.scenario().Check == record.CheckFault {
			return anyShape
		}
		return record.KindExpectedShape(lr.Kind, lr.ClientGo, lr.Gate, rep.ServerGates, server)
	}
	wants := map[string]string{}
	for _, tag := range lr.Tags {
		server, mixed := answeredBy(before[tag], rep.Server)
		wants[tag] = wantOf(server)
		if mixed && wants[tag] != anyShape {
			wants[tag] = wantMixed
		}
	}
	lr.Want = wantText(lr.Tags, wants, wantOf(rep.Server))
	fail := rep.failer(lab.Name)
	rep.checkLab(lr, fail)
	for _, tag := range lr.Tags {
		rep.judgeInformer(lr, informerLog{tag, before[tag], steady, caches[tag]}, wants[tag], fail)
	}
	lr.Verdict.SteadyExcuse = rep.labExcuse(lr)
	lr.Verdict.Recovered = rep.recovered(lr.Verdict)
	return lr
}

// answeredBy is the version of the kube-apiserver that answered an informer's first request,
// where a balancer in front of several named it (record.ServerHeader), else server: the one the
// informer's first request meets decides what its initial sync can be.
//
// mixed says its streaming requests were answered by more than one server: client-go v0.31 to
// v0.33's fallback LIST is the typed List(), which streams first, and a balancer may send that
// stream to the other server. The gates then imply no one shape (wantMixed).
func answeredBy(reqs []record.Record, server string) (first string, mixed bool) {
	streamedOn := map[string]bool{}
	for _, r := range reqs {
		if r.Kind != record.HTTP {
			continue
		}
		if first == "" {
			first = cmp.Or(r.Server, server)
		}
		if record.ClassifyRequest(r.Path, r.Query).Stream && r.Server != "" {
			streamedOn[r.Server] = true
		}
	}
	return cmp.Or(first, server), len(streamedOn) > 1
}

// wantMixed is the expectation of an informer whose streaming requests met two servers behind a
// balancer: none, said so (nothing is checked against it, as with anyShape).
const wantMixed = "none: its streams met both servers"

// wantText is the shape each informer's gates imply, once when they all imply the same (def
// when the lab has no informer), else per informer: "A: STREAM; B: LIST→WATCH". A fault
// scenario expects nothing: "".
func wantText(tags []string, wants map[string]string, def string) string {
	var parts []string
	for _, tag := range tags {
		if wants[tag] != wants[tags[0]] {
			for _, tag := range tags {
				parts = append(parts, tag+": "+wants[tag])
			}
			return strings.Join(parts, "; ")
		}
	}
	if len(tags) > 0 {
		def = wants[tags[0]]
	}
	if def == anyShape {
		return ""
	}
	return def
}

// readLab takes the lab's facts from its records: its SETUP records, its informers' tags and
// the watches they made after an injected fault; it returns each informer's cache at stop.
func (rep *Report) readLab(lr *LabReport, recs []record.Record) map[string]*record.Record {
	caches := map[string]*record.Record{}
	tags := map[string]bool{}
	for _, r := range recs {
		switch {
		case r.Kind == record.HTTP && r.Tag != "":
			tags[r.Tag] = true
			if !rep.InjectedAt.IsZero() && r.Time.After(rep.InjectedAt) && record.IsWatch(r) && r.Status == 200 {
				lr.Rewatch[r.Tag]++
			}
			if !rep.InjectedAt.IsZero() && r.Time.Before(rep.InjectedAt) && record.IsWatch(r) && r.Status == 200 {
				lr.watchedOn[r.Tag] = r.Server
			}
		case r.Kind != record.Setup:
		case r.Step == record.StepClientGo:
			lr.ClientGo = r.Value
		case r.Step == record.StepGate:
			lr.Gate, lr.GateHow = r.Value, r.Detail
		case r.Step == record.StepKind:
			lr.Kind = r.Value
		case r.Step == record.StepFault:
			rep.Faults = append(rep.Faults, strings.TrimSpace(fmt.Sprintf("%s: %s %s %s", lr.Name, r.Tag, r.Value, record.Scrub(r.Detail))))
		case r.Step == record.StepStore:
			caches[r.Tag] = &r
		case r.Step == record.StepBroken:
			lr.Broken[r.Tag]++
		case r.Step == record.StepSynced && r.Stats != nil:
			// A lab reports synced once per informer; were there a second, it would count
			// steady-phase traffic too.
			if _, ok := lr.Received[r.Tag]; !ok {
				lr.Received[r.Tag] = *r.Stats
			}
		}
	}
	lr.Tags = sortedSet(tags)
	return caches
}

// checkLab checks what concerns the lab as a whole: its informers made requests and synced,
// its direct List() was made where the scenario asks for one and returned.
func (rep *Report) checkLab(lr *LabReport, fail failFunc) {
	fault := rep.scenario().Check == record.CheckFault
	if len(lr.Tags) == 0 {
		fail("no HTTP records: the informers made no requests")
	}
	switch {
	case rep.scenario().Check == record.CheckDirectList && lr.Direct == nil:
		fail("no direct List() recorded (was the lab started with -direct-list?)")
	case !fault && lr.Direct != nil && (!lr.Direct.Returned || strings.HasPrefix(lr.Direct.Result, "failed")):
		fail("direct List() %s", lr.Direct.Result)
	}
	for _, t := range lr.Unsynced {
		if !fault {
			fail("%s never synced", t)
		}
	}
}

// informerLog is what one informer's judgement reads: its handshake (its records up to its own
// sync), the lab's steady phase and its cache at stop.
type informerLog struct {
	tag    string
	before []record.Record
	steady []record.Record
	cache  *record.Record
}

// judgeInformer judges one informer: its handshake against want, its steady events against the
// writes, its watches again and its recovery as the scenario's Check asks, its cache against
// the fresh LIST; it adds its part to the lab's verdict.
func (rep *Report) judgeInformer(lr *LabReport, in informerLog, want string, fail failFunc) {
	iv := InformerVerdict{Tag: in.tag, Synced: !slices.Contains(lr.Unsynced, in.tag)}
	rep.judgeHandshake(lr, &iv, in.before, want, fail)
	rep.judgeSteady(lr, &iv, in, fail)
	rep.judgeRewatch(lr, &iv, fail)
	rep.judgeCache(lr, iv, in.cache, fail)
	lr.Verdict.Informers = append(lr.Verdict.Informers, iv)
}

// judgeHandshake checks the informer's handshake against want. Each informer's handshake ends
// at its own sync: a watch it re-established before the other informer synced (a short watch
// timeout) is not part of it.
func (rep *Report) judgeHandshake(lr *LabReport, iv *InformerVerdict, before []record.Record, want string, fail failFunc) {
	h := handshake(iv.Tag, before, want, lr.After[iv.Tag]...)
	lr.Sync[iv.Tag] = h
	for _, p := range h.Problems {
		fail("%s", p)
	}
	if h.Cut > 0 {
		lr.Verdict.Findings = append(lr.Verdict.Findings, cutFinding(iv.Tag, h.Cut, rep.scenario().Rewatches))
	}
	iv.Agrees = want == anyShape || want == wantMixed || want == "" || (h.judgedShape() == want && iv.Synced)
}

// waitedFor says the run gave its informers a time to sync (fault scenarios, informer kinds)
// and this one did not: it is reported once, as not synced; its steady phase and its empty
// cache say nothing more.
func (rep *Report) waitedFor(iv InformerVerdict) bool { return rep.SyncWait > 0 && !iv.Synced }

// judgeSteady compares the informer's steady events with the writes, unless excused.
func (rep *Report) judgeSteady(lr *LabReport, iv *InformerVerdict, in informerLog, fail failFunc) {
	w := rep.steadyWatcher(iv.Tag, in.steady, lr.Sync[iv.Tag])
	if rep.scenario().DuringSync { // each informer from its own sync point, among the writes
		w = Delivered(iv.Tag, slices.Concat(in.before, lr.After[iv.Tag]), rep.Writes)
	}
	lr.Watchers[iv.Tag] = w
	iv.After = Steps(lr.After[iv.Tag], time.Time{})
	lr.Reread[iv.Tag] = reread(iv.After)
	iv.Excuse, iv.Steady = rep.steadyExcuse(lr.Reread[iv.Tag]), rep.steadyText(w, iv.Synced)
	if w.Mismatch != "" && iv.Excuse == "" && !rep.waitedFor(*iv) {
		fail("%s: %s", iv.Tag, w.Mismatch)
	}
}

// judgeRewatch checks the informer watched again: after an injected fault (and came back in
// sync, where the scenario is a Recovery), and where the scenario's Check is how watchers
// re-establish their watches.
func (rep *Report) judgeRewatch(lr *LabReport, iv *InformerVerdict, fail failFunc) {
	tag, s := iv.Tag, rep.scenario()
	if on := lr.watchedOn[tag]; rep.Injected != "" && lr.Rewatch[tag] == 0 && on != "" && !record.SameVersion(on, rep.Server) {
		iv.Kept, iv.Back = on, true // the restart took down the other server
		return
	}
	if rep.Injected != "" && lr.Rewatch[tag] == 0 {
		fail("%s: no new watch after the injected fault: it did not reconnect", tag)
	}
	if rep.Injected != "" || !rep.InjectedAt.IsZero() {
		iv.Recovery, iv.Back = recovery(lr.After[tag], rep.InjectedAt)
	}
	switch {
	case s.Check == record.CheckRewatch:
		lr.Rewatch[tag] = rewatches(iv.After)
		if lr.Rewatch[tag] == 0 && iv.Synced {
			fail("%s: no watch re-established in the %s scenario (did the proxy end the watches?)", tag, rep.Scenario)
		}
	case s.Recovery && rep.Injected != "" && iv.Synced && !iv.Back:
		fail("%s: not back in sync after the injected fault (no plain watch, no completed stream)", tag)
	}
}

// judgeCache compares the informer's cache at stop with the fresh LIST: a difference is lost or
// stale data. An informer that never synced against a fault, or in the time it was given, has
// no cache to speak of.
func (rep *Report) judgeCache(lr *LabReport, iv InformerVerdict, cache *record.Record, fail failFunc) {
	if rep.FreshList == nil || (rep.scenario().Check == record.CheckFault && !iv.Synced) || rep.waitedFor(iv) {
		return
	}
	lr.Caches[iv.Tag] = CacheDiff(cache, rep.FreshList)
	if lr.Caches[iv.Tag] != "" {
		fail("%s: cache at stop differs from a fresh LIST: %s", iv.Tag, lr.Caches[iv.Tag])
	}
}

// steadyWatcher compares an informer's steady events with the writes made after its sync. An
// informer whose end bookmark is logged only after it reported synced (so its handshake has no
// sync rv) has its initial state at that bookmark: the events up to it are that state, not
// writes. That happens to a stream that was cut and streamed again, and to any stream on a
// loaded machine: the lab's wire log decodes a stream in a goroutine of its own, beside the
// client's reads (lab/wire's tap), and the synced record comes from another goroutine, once the
// reflector has taken the bookmark.
func (rep *Report) steadyWatcher(tag string, steady []record.Record, h Handshake) *Watcher {
	if h.SyncRV != "" {
		return watcher(tag, steady, rep.Writes, h.SyncRV)
	}
	end := slices.IndexFunc(steady, func(r record.Record) bool { return r.Tag == tag && record.IsEndBookmark(r) })
	if end < 0 {
		return watcher(tag, steady, rep.Writes, "")
	}
	rest := slices.Concat(slices.DeleteFunc(slices.Clone(steady[:end]), func(r record.Record) bool { return r.Tag == tag }), steady[end+1:])
	return watcher(tag, rest, rep.Writes, steady[end].RV)
}

// CacheDiff says how an informer's cache at stop differs from the server's LIST ("" = same
// objects with the same rvs): a difference is lost or stale data.
func CacheDiff(cache, list *record.Record) string {
	if cache == nil {
		return "the lab did not report its cache (it did not stop cleanly)"
	}
	want := map[string]string{}
	for _, it := range list.Items {
		want[it.Namespace+"/"+it.Name] = it.RV
	}
	var diffs []string
	for _, it := range cache.Items {
		key := it.Namespace + "/" + it.Name
		rv, ok := want[key]
		switch {
		case !ok:
			diffs = append(diffs, "extra "+key)
		case rv != it.RV:
			diffs = append(diffs, fmt.Sprintf("%s rv %s, server has %s", key, it.RV, rv))
		}
		delete(want, key)
	}
	for _, key := range sortedKeys(want) {
		diffs = append(diffs, "missing "+key)
	}
	return strings.Join(diffs, "; ")
}

// resolveDeleteRVs fills in the rv of each DELETE whose MUTATOR record has none: kube-apiserver
// answers a ConfigMap's or a custom resource's DELETE with a Status, not the deleted object, so
// the writer cannot know it (lab/mutator's Apply). The deletion's rv is then on the DELETED
// events alone: the rv most watchers report is taken; every watcher must then agree with it,
// which is the claim under test (one write, one rv, on every stream). Returns how many.
func resolveDeleteRVs(writes []record.Record, labs []*Lab) int {
	n := 0
	for i, wr := range writes {
		if wr.Event != record.WriteDelete || wr.RV != "" {
			continue
		}
		votes := map[string]int{}
		for _, lab := range labs {
			for _, r := range lab.Records {
				if r.Kind == record.WatchEvent && r.Event == record.EventDeleted && r.Name == wr.Name &&
					(wr.Namespace == "" || r.Namespace == wr.Namespace) && r.Time.After(wr.Time.Add(-time.Second)) {
					votes[r.RV]++
				}
			}
		}
		best := ""
		for rv, v := range votes {
			if v > votes[best] || (v == votes[best] && rv < best) {
				best = rv
			}
		}
		writes[i].RV = best
		n++
	}
	return n
}

// watcher reads one informer's steady phase and compares its events with the writes made after
// its sync rv: writes at or below it were already in the initial state it synced.
func watcher(tag string, steady, writes []record.Record, syncRV string) *Watcher {
	w := &Watcher{}
	for _, r := range steady {
		switch {
		case r.Tag != tag:
		case record.IsPeriodicBookmark(r):
			w.Bookmarks++
		case r.Kind == record.WatchEvent:
			w.Events = append(w.Events, r)
		case r.Kind == record.Handler:
			w.Handlers++
		}
	}
	var want []record.Record
	for _, wr := range writes {
		if rvAfter(wr.RV, syncRV) {
			want = append(want, wr)
		}
	}
	w.Expected = len(want)
	for i := 0; i < max(len(want), len(w.Events)); i++ {
		switch {
		case i >= len(w.Events):
			w.Mismatch = fmt.Sprintf("saw %d of %d writes, first missing: #%d %s", len(w.Events), len(want), i+1, writeText(want[i]))
		case i >= len(want):
			w.Mismatch = fmt.Sprintf("saw %d events for %d writes, first extra: #%d %s", len(w.Events), len(want), i+1, eventText(w.Events[i]))
		case !record.Delivers(want[i], w.Events[i]):
			w.Mismatch = fmt.Sprintf("#%d want %s, got %s", i+1, writeText(want[i]), eventText(w.Events[i]))
		default:
			continue
		}
		break
	}
	return w
}

// Delivery is the watcher's event that delivered write wr (record.Delivers), the first if
// several did.
func (w *Watcher) Delivery(wr record.Record) (record.Record, bool) {
	if w == nil {
		return record.Record{}, false
	}
	for _, ev := range w.Events {
		if record.Delivers(wr, ev) {
			return ev, true
		}
	}
	return record.Record{}, false
}

func writeText(wr record.Record) string {
	return record.EventLine(record.EventFor(wr.Event), wr.Namespace, wr.Name, wr.RV)
}

func eventText(ev record.Record) string {
	return record.EventLine(ev.Event, ev.Namespace, ev.Name, ev.RV)
}

// rvAfter reports whether rv is newer than sync. Comparing rvs as numbers is what the API says
// clients must not do; this harness reads etcd-backed rvs from one server, where it holds.
// An unknown sync rv keeps every write.
func rvAfter(rv, sync string) bool {
	a, err1 := strconv.ParseUint(rv, 10, 64)
	b, err2 := strconv.ParseUint(sync, 10, 64)
	if err1 != nil || err2 != nil {
		return true
	}
	return a > b
}

// fanOutSkew measures, for each write, the spread between the first and the last watcher
// (of any lab) to receive its event.
func fanOutSkew(rep *Report) Skew {
	var sk Skew
	var watchers []*Watcher
	for _, lab := range rep.Labs {
		for _, tag := range lab.Tags {
			watchers = append(watchers, lab.Watchers[tag])
		}
	}
	sk.Watchers = len(watchers)
	seen := make([][]time.Time, len(rep.Writes)) // per write, one time per watcher that saw it
	for i, wr := range rep.Writes {
		for _, w := range watchers {
			if ev, ok := w.Delivery(wr); ok {
				seen[i] = append(seen[i], ev.Time)
			}
		}
	}
	var spreads []time.Duration
	for _, ts := range seen {
		if len(ts) < 2 {
			continue
		}
		lo, hi := ts[0], ts[0]
		for _, t := range ts[1:] {
			if t.Before(lo) {
				lo = t
			}
			if t.After(hi) {
				hi = t
			}
		}
		spreads = append(spreads, hi.Sub(lo))
	}
	if len(spreads) == 0 {
		return sk
	}
	sort.Slice(spreads, func(i, j int) bool { return spreads[i] < spreads[j] })
	sk.Writes = len(spreads)
	sk.Min, sk.Max = spreads[0], spreads[len(spreads)-1]
	if n := len(spreads); n%2 == 1 {
		sk.Median = spreads[n/2]
	} else {
		sk.Median = (spreads[n/2-1] + spreads[n/2]) / 2
	}
	return sk
}
