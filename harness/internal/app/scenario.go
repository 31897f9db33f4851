package app

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"informer-lab/harness/internal/labproc"
	"informer-lab/harness/internal/proxy"
	"informer-lab/lab/mutator"
	"informer-lab/record"
)

// A scenario is a named, seeded script the harness plays once every lab has synced: an entry of
// the record's table (record.ScenarioTable: its doc and what is true of it) with the harness's
// implementation of it. Every scenario ends the same way: the harness's fresh LIST, against
// which compare checks each informer's cache.
type scenario struct {
	record.Scenario
	impl
	fault *proxy.Fault // the fault family's: what the proxy does wrong on purpose; nil for none
}

// impl is the harness's implementation of a scenario.
type impl struct {
	run     func(*env) error
	proxy   bool // the labs connect through the watch proxy
	injects bool // it injects -fault half-way through its writes
}

// impls are the harness's implementations of record.ScenarioTable's scenarios, by name.
var impls = map[string]impl{
	record.ScenarioStartup: {run: func(*env) error { return nil }},
	record.ScenarioDirect:  {run: directListed},
	record.ScenarioSteady: {injects: true,
		run: func(e *env) error { return e.write(e.script(), e.Interval, e.halfway(e.injection)) }},
	record.ScenarioSyncWrites: {run: writesDuringSync},
	record.ScenarioReconnect:  {proxy: true, run: reconnect},
	record.ScenarioRestart: {
		run: func(e *env) error { return e.write(e.script(), e.Interval, e.halfway(&KillAPIServer)) }},
	record.ScenarioRestartGap: {
		run: func(e *env) error { return e.write(e.script(), e.Interval, e.halfway(&KillAPIServerGap)) }},
	record.ScenarioExpired: {proxy: true, run: expire},
}

// faultFamilyImpl is every fault scenario's implementation: the proxy plays the fault.
var faultFamilyImpl = impl{proxy: true, run: faulted}

// lookup finds a scenario by name: one of Scenarios, or "fault:" and a proxy fault, with its
// parameter if it takes one ("fault:cut-initial-stream=3"), whose doc is the scenario's.
func lookup(name string) (scenario, error) {
	sc, ok := record.LookupScenario(name)
	if !ok {
		return scenario{}, fmt.Errorf("unknown scenario %q: the scenarios are %s, and %sNAME for a server that does not play along (NAME one of %s)",
			name, strings.Join(Scenarios, ", "), record.ScenarioFaultPrefix, strings.Join(proxyFaults(), ", "))
	}
	if f, ok := strings.CutPrefix(name, record.ScenarioFaultPrefix); ok {
		fault, err := proxy.ParseFault(f)
		if err != nil {
			return scenario{}, fmt.Errorf("%s: %w", name, err)
		}
		sc.Doc = fault.Doc()
		return scenario{Scenario: sc, impl: faultFamilyImpl, fault: &fault}, nil
	}
	im, ok := impls[name]
	if !ok {
		return scenario{}, fmt.Errorf("scenario %s has no implementation in the harness", name)
	}
	return scenario{Scenario: sc, impl: im}, nil
}

// labArgs are the flags the scenario gives every lab: -direct-list when the labs make their one
// typed List(); against a faulty server at once, as they start, since their informers may never
// sync.
func (sc scenario) labArgs() []string {
	switch {
	case sc.DirectList && sc.fault != nil:
		return []string{"-" + record.ScenarioDirect, "-direct-list-at", "start"}
	case sc.DirectList:
		return []string{"-" + record.ScenarioDirect}
	}
	return nil
}

// proxyFaults are the names of the proxy's faults, the fault family's scenarios.
func proxyFaults() []string {
	var names []string
	for _, f := range proxy.Faults() {
		names = append(names, f.Name)
	}
	return names
}

// ValidateScenario says what is wrong with a scenario name, nil if nothing is.
func ValidateScenario(name string) error {
	_, err := lookup(name)
	return err
}

// Scenarios, in the order make matrix shows them: the record contract's names, which compare
// reads back from the harness's SETUP scenario record.
var Scenarios = record.Scenarios

// injecting are the scenarios that inject -fault, in the table's order.
func injecting() []string { return scenariosWhere(func(im impl) bool { return im.injects }) }

// Proxied are the scenarios whose labs connect through the watch proxy, which ends their watches
// after -watch-timeout, in the table's order.
func Proxied() []string { return scenariosWhere(func(im impl) bool { return im.proxy }) }

func scenariosWhere(cond func(impl) bool) []string {
	var names []string
	for _, name := range Scenarios {
		if cond(impls[name]) {
			names = append(names, name)
		}
	}
	return names
}

// restartedServer names the kube-apiserver a restart kills, as the balancer names it in its
// answers: the control plane's own, the first of the target's servers; "" without a balancer.
func (e *env) restartedServer() string {
	if len(e.t.servers) == 0 {
		return ""
	}
	return e.t.servers[0].Name
}

func (e *env) script() []mutator.Step { return mutator.Script(e.Seed, e.MinWrites) }

// halfway returns the step-count hook that injects f half-way through the writes (none when
// nil).
func (e *env) halfway(f *Injection) func(i, n int) error {
	return func(i, n int) error {
		if f == nil || i != n/2 {
			return nil
		}
		injected := time.Now()
		if err := e.inject(f); err != nil {
			return e.failed("injecting "+f.Name, err)
		}
		if f.Rewatch {
			return e.rewatched(injected, e.restartedServer())
		}
		return nil
	}
}

// write plays steps one every interval (mutator.Play); before step i it calls hook(i, len(steps)).
func (e *env) write(steps []mutator.Step, interval time.Duration, hook func(i, n int) error) error {
	e.Say("writing %d changes (seed %d, one every %s)", len(steps), e.Seed, interval)
	var before func(int, mutator.Step) error
	if hook != nil {
		before = func(i int, _ mutator.Step) error { return hook(i, len(steps)) }
	}
	err := mutator.Play(e.ctx, e.writer, e.t.namespace, slices.Values(steps), interval, before, e.wrote(true))
	if err != nil && err == e.ctx.Err() { // not the hook's or a write's: the run ended between writes
		return e.failed("during the writes", err)
	}
	return err
}

// wrote records a write's MUTATOR record, the one record of it, and counts the write; when
// delivered, every watcher must report its event (labproc.Proc.Missing).
func (e *env) wrote(delivered bool) func(record.Record, error) error {
	return func(rec record.Record, err error) error {
		e.out.Write(rec)
		if err != nil {
			return e.failed("write", err)
		}
		e.writes++
		if delivered {
			e.expect = append(e.expect, rec)
		}
		return nil
	}
}

// rewatched waits until every watcher has a watch accepted after since (by the restarted
// server) and kept, so the writes after it reach every watcher as events. Behind a balancer,
// a watch the other server kept (down names the one that went away) holds too.
func (e *env) rewatched(since time.Time, down string) error {
	e.expect = nil // what came before the fault may arrive in a relist instead of as events
	watching := func(lp *labproc.Proc) bool { return lp.Watching(since, time.Second, down, watchers...) }
	if err := waitFor(e.ctx, e.procs, e.SyncTimeout, watching); err != nil {
		var state []string // from the fault on: which watch came back, and what the others met
		for _, lp := range e.procs {
			if !watching(lp) {
				state = append(state, lp.Name+" "+lp.WatchState(since, watchers...))
			}
		}
		return e.failed("waiting for every watcher to watch again", fmt.Errorf("%w; %s", err, strings.Join(state, "; ")))
	}
	e.Say("every watcher watches again, %s after the fault", time.Since(since).Round(time.Millisecond))
	return nil
}

// reconnect spreads the writes over a few watch timeouts, so every watcher re-establishes its
// watch at least twice while the writes go on.
func reconnect(e *env) error {
	steps := e.script()
	span := 3*e.WatchTimeout + e.WatchTimeout/2
	interval := max(e.Interval, span/time.Duration(len(steps)))
	return e.write(steps, interval, nil)
}

// expire cuts the labs off at the proxy (held, not refused), writes while they cannot see it,
// restarts kube-apiserver so its watch cache starts at the current rv, compacts etcd there, and
// lets the labs' held watches through: each asks for an rv the server no longer has.
func expire(e *env) error {
	steps := e.script()
	third := len(steps) / 3
	if err := e.write(steps[:third], e.Interval, nil); err != nil {
		return err
	}
	e.out.Setup("", record.StepInjected, "expire", "proxy holds the labs' requests; writes they cannot see; kube-apiserver restarted; etcd compacted")
	e.Say("cutting the labs off: the proxy holds their requests until every watch has ended")
	e.px.Pause()
	idle, cancel := context.WithTimeout(e.ctx, e.WatchTimeout+e.SyncTimeout)
	err := e.px.WaitIdle(idle)
	cancel()
	if err != nil {
		return e.failed("waiting for the labs' watches to end at the proxy", err)
	}
	// Not delivered: no watcher sees these as events; they reach each cache in its relist.
	err = mutator.Play(e.ctx, e.writer, e.t.namespace, slices.Values(steps[third:2*third]), e.Interval, nil, e.wrote(false))
	if err != nil {
		return err
	}
	if err := e.crashAPIServer(0, nil); err != nil {
		return e.failed("restart kube-apiserver", err)
	}
	rev, err := e.t.cp.CompactEtcd(e.ctx)
	if err != nil {
		return e.failed("compact etcd", err)
	}
	e.out.Setup("", record.StepRecovered, "proxy resumed", fmt.Sprintf("kube-apiserver restarted; etcd compacted at rev %d", rev))
	e.Say("kube-apiserver restarted, etcd compacted at rev %d: letting the labs' requests through", rev)
	resumed := time.Now()
	e.px.Resume()
	if err := e.rewatched(resumed, ""); err != nil {
		return err
	}
	return e.write(steps[2*third:], e.Interval, nil)
}

// faulted is the fault family's script: no writes; it waits until every lab's direct List()
// has returned, or the informers' time to sync (Spec.SyncWait) is up. What each cell did in
// that time is the result.
func faulted(e *env) error {
	left := time.Until(e.syncDeadline)
	if left <= 0 {
		return nil
	}
	err := waitFor(e.ctx, e.procs, left, func(lp *labproc.Proc) bool {
		return slices.ContainsFunc(lp.Setups(), func(r record.Record) bool { return r.Step == record.StepDirect })
	})
	if err != nil && e.ctx.Err() != nil {
		return e.failed("waiting for every lab's direct List()", err)
	}
	return nil
}

// directListed waits until every lab's direct List() has returned (the labs make it once their
// informers are synced, from their -direct-list flag).
func directListed(e *env) error {
	err := waitFor(e.ctx, e.procs, e.SyncTimeout, func(lp *labproc.Proc) bool {
		return slices.ContainsFunc(lp.Setups(), func(r record.Record) bool { return r.Step == record.StepDirect })
	})
	if err != nil {
		return e.failed("waiting for every lab's direct List()", err)
	}
	e.Say("every lab's direct List() returned")
	return nil
}
