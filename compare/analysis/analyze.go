package analysis

import (
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
	DeleteRVs   int             // DELETE writes whose rv was taken from the watchers (see resolveDeleteRVs)
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
	Rewatch  map[string]int             // per tag: watch requests after an injected fault (reconnect scenario: after its sync)
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
}

// Watcher is one informer's steady phase.
type Watcher struct {
	Events    []record.Record // WATCH-EVENTs except periodic bookmarks
	Bookmarks int             // periodic bookmarks, left out of the comparison
	Handlers  int             // HANDLER calls
	Expected  int             // harness writes it should have seen
	Mismatch  string          // first difference from the harness's writes, "" when none
}

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
		switch {
		case r.Kind == record.Mutator && r.Error == "" && (r.RV != "" || r.Event == record.WriteDelete):
			rep.Writes = append(rep.Writes, r)
		case r.Kind == record.Setup && r.Step == record.StepFault:
			rep.Faults = append(rep.Faults, fmt.Sprintf("harness: %s %s", r.Value, record.Scrub(r.Detail)))
		case r.Kind == record.Setup && r.Step == record.StepStore && r.Tag == record.TagFreshList:
			rr := r
			rep.FreshList = &rr
		case r.Kind == record.Setup && r.Step == record.StepInjected:
			rep.Injected, rep.InjectedAt = r.Value, r.Time
		case r.Kind == record.Setup && r.Step == record.StepRecovered:
			rep.Injected += " (" + r.Value + ", " + r.Detail + ")"
			rep.RecoveredAt = r.Time
		case r.Kind == record.Setup && r.Step == record.StepScenario:
			rep.Scenario, rep.ScenarioDoc = r.Value, r.Detail
		case r.Kind == record.Setup && r.Step == record.StepProxy:
			rep.Proxy = r.Value
		case r.Kind == record.Setup && r.Step == record.StepSyncWait:
			rep.SyncWait, _ = time.ParseDuration(r.Value)
		}
	}
	switch {
	case record.IsFaultScenario(rep.Scenario):
		if rep.Proxy == "" {
			rep.Failures = append(rep.Failures, fmt.Sprintf("scenario %s, but the harness recorded no proxy playing the fault", rep.Scenario))
		}
	case rep.Scenario == "", slices.Contains(record.Scenarios, rep.Scenario):
		if record.IsRecovery(rep.Scenario) && rep.Injected == "" {
			rep.Failures = append(rep.Failures, fmt.Sprintf("scenario %s, but the harness recorded no injected fault", rep.Scenario))
		}
	default:
		rep.Failures = append(rep.Failures, fmt.Sprintf("unknown scenario %q: none of %s", rep.Scenario, strings.Join(record.Scenarios, ", ")))
	}
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
			PhaseDiff{"initial sync", base.Name, l.Name, len(l.Initial), unifiedDiff(base.Name, l.Name, base.Initial, l.Initial)},
			PhaseDiff{"steady", base.Name, l.Name, len(l.Steady), unifiedDiff(base.Name, l.Name, base.Steady, l.Steady)})
	}
	rep.Skew = fanOutSkew(rep)
	for _, f := range rep.Faults {
		// A fault means a log is incomplete: whatever it shows cannot vouch for the verdict.
		rep.Failures = append(rep.Failures, "fault recorded: "+f)
	}
	return rep
}

func (rep *Report) analyzeLab(lab *Lab) *LabReport {
	lr := &LabReport{Name: lab.Name, Sync: map[string]Handshake{}, Watchers: map[string]*Watcher{}, Caches: map[string]string{},
		Rewatch: map[string]int{}, Broken: map[string]int{}, Reread: map[string]bool{}, Received: map[string]record.Stats{}}
	caches := map[string]*record.Record{}
	tags := map[string]bool{}
	for _, r := range lab.Records {
		switch {
		case r.Kind == record.Setup && r.Step == record.StepClientGo:
			lr.ClientGo = r.Value
		case r.Kind == record.Setup && r.Step == record.StepGate:
			lr.Gate, lr.GateHow = r.Value, r.Detail
		case r.Kind == record.Setup && r.Step == record.StepKind:
			lr.Kind = r.Value
		case r.Kind == record.Setup && r.Step == record.StepFault:
			rep.Faults = append(rep.Faults, strings.TrimSpace(fmt.Sprintf("%s: %s %s %s", lab.Name, r.Tag, r.Value, record.Scrub(r.Detail))))
		case r.Kind == record.HTTP && r.Tag != "":
			tags[r.Tag] = true
			if !rep.InjectedAt.IsZero() && r.Time.After(rep.InjectedAt) && record.IsWatch(r) && r.Status == 200 {
				lr.Rewatch[r.Tag]++
			}
		case r.Kind == record.Setup && r.Step == record.StepStore:
			rr := r
			caches[r.Tag] = &rr
		case r.Kind == record.Setup && r.Step == record.StepBroken:
			lr.Broken[r.Tag]++
		case r.Kind == record.Setup && r.Step == record.StepSynced && r.Stats != nil:
			// A lab reports synced once per informer; were there a second, it would count
			// steady-phase traffic too.
			if _, ok := lr.Received[r.Tag]; !ok {
				lr.Received[r.Tag] = *r.Stats
			}
		}
	}
	lr.Tags = sortedSet(tags)
	// Against a server that does not play along nothing is expected: what happened is the result.
	fault := record.IsFaultScenario(rep.Scenario)
	want := record.KindExpectedShape(lr.Kind, lr.ClientGo, lr.Gate, rep.ServerGates, rep.Server)
	if fault {
		want = anyShape
	} else {
		lr.Want = want
	}
	initial, steady, unsynced := splitPhases(lab.Records)
	lr.Unsynced = unsynced
	var before map[string][]record.Record
	before, lr.After, lr.SyncTime = tagPhases(lab.Records)
	lr.Initial, lr.Steady = initialLines(initial), steadyLines(steady)
	for _, r := range lab.Klog {
		lr.Klog = append(lr.Klog, NormalizeRecord(r))
	}
	fail := func(format string, args ...any) {
		rep.Failures = append(rep.Failures, lab.Name+": "+fmt.Sprintf(format, args...))
	}
	if len(lr.Tags) == 0 {
		fail("no HTTP records: the informers made no requests")
	}
	lr.Direct = directList(lab.Direct)
	switch {
	case rep.Scenario == record.ScenarioDirect && lr.Direct == nil:
		fail("no direct List() recorded (was the lab started with -direct-list?)")
	case !fault && lr.Direct != nil && (!lr.Direct.Returned || strings.HasPrefix(lr.Direct.Result, "failed")):
		fail("direct List() %s", lr.Direct.Result)
	}
	for _, t := range unsynced {
		if !fault {
			fail("%s never synced", t)
		}
	}
	for _, tag := range lr.Tags {
		// Each informer's handshake ends at its own sync: a watch it re-established before the
		// other informer synced (a short watch timeout) is not part of it.
		h := handshake(tag, before[tag], want)
		lr.Sync[tag] = h
		for _, p := range h.Problems {
			fail("%s", p)
		}
		w := watcher(tag, steady, rep.Writes, h.SyncRV)
		lr.Watchers[tag] = w
		steps := Steps(lr.After[tag], time.Time{})
		lr.Reread[tag] = reread(steps)
		// After an injected fault a reflector may relist and see writes again: the claim that
		// holds then is recovery (a new watch, a cache equal to the server's), not the sequence.
		// So it is after a relist or a new stream when watches end on their own (reconnect); a
		// reflector that only watched again from its last rv must still have seen every write.
		rewatched := rep.Scenario == record.ScenarioReconnect && lr.Reread[tag]
		// Given a time to sync (fault scenarios, informer kinds), an informer that did not is
		// reported once, as not synced; its steady phase and its empty cache say nothing more.
		waitedFor := rep.SyncWait > 0 && slices.Contains(unsynced, tag)
		if w.Mismatch != "" && rep.Injected == "" && !rewatched && !waitedFor {
			fail("%s: %s", tag, w.Mismatch)
		}
		if rep.Injected != "" && lr.Rewatch[tag] == 0 {
			fail("%s: no new watch after the injected fault: it did not reconnect", tag)
		}
		switch synced := !slices.Contains(unsynced, tag); {
		case rep.Scenario == record.ScenarioReconnect:
			lr.Rewatch[tag] = rewatches(steps)
			if lr.Rewatch[tag] == 0 && synced {
				fail("%s: no watch re-established in the reconnect scenario (did the proxy end the watches?)", tag)
			}
		case record.IsRecovery(rep.Scenario):
			if rep.Injected != "" && synced && FirstResync(Steps(lr.After[tag], rep.InjectedAt)) < 0 {
				fail("%s: not back in sync after the injected fault (no plain watch, no completed stream)", tag)
			}
		}
		if rep.FreshList != nil && !(fault && slices.Contains(unsynced, tag)) && !waitedFor {
			lr.Caches[tag] = cacheDiff(caches[tag], rep.FreshList)
			if lr.Caches[tag] != "" {
				fail("%s: cache at stop differs from a fresh LIST: %s", tag, lr.Caches[tag])
			}
		}
	}
	return lr
}

// cacheDiff says how an informer's cache at stop differs from the server's LIST ("" = same
// objects with the same rvs): a difference is lost or stale data.
func cacheDiff(cache, list *record.Record) string {
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

// resolveDeleteRVs fills in the rv of each DELETE the harness could not learn: the apiserver
// answers a ConfigMap DELETE with a Status, not the object, so the deletion's rv exists only on
// the DELETED events. The rv most watchers report is taken; every watcher must then agree with
// it, which is the claim under test (one write, one rv, on every stream). Returns how many.
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
	seen := map[string][]time.Time{} // write rv -> event times, one per watcher
	var sk Skew
	for _, lab := range rep.Labs {
		for _, tag := range lab.Tags {
			sk.Watchers++
			for _, ev := range lab.Watchers[tag].Events {
				if ev.Event != record.EventBookmark && ev.Event != record.EventError {
					seen[ev.RV] = append(seen[ev.RV], ev.Time)
				}
			}
		}
	}
	var spreads []time.Duration
	for _, wr := range rep.Writes {
		ts := seen[wr.RV]
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
