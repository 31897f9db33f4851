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

// A scenario is a named, seeded script the harness plays once every lab has synced. Every
// scenario ends the same way: the harness's fresh LIST, against which compare checks each
// informer's cache.
type scenario struct {
	doc     string
	proxy   bool         // the labs connect through the watch proxy
	fault   *proxy.Fault // what the proxy does wrong on purpose (the fault family), nil for none
	labArgs []string     // more flags for every lab
	run     func(*env) error
}

// lookup finds a scenario by name: one of Scenarios, or "fault:" and a proxy fault, with its
// parameter if it takes one ("fault:cut-initial-stream=3").
func lookup(name string) (scenario, error) {
	if f, ok := strings.CutPrefix(name, record.ScenarioFaultPrefix); ok {
		fault, err := proxy.ParseFault(f)
		if err != nil {
			return scenario{}, fmt.Errorf("%s: %w", name, err)
		}
		return scenario{doc: fault.Doc(), proxy: true, fault: &fault,
			labArgs: []string{"-direct-list", "-direct-list-at", "start"}, run: faulted}, nil
	}
	sc, ok := scenarios[name]
	if !ok {
		return scenario{}, fmt.Errorf("unknown scenario %q: the scenarios are %s, and %sNAME for a server that does not play along (NAME one of %s)",
			name, strings.Join(Scenarios, ", "), record.ScenarioFaultPrefix, strings.Join(proxyFaults(), ", "))
	}
	return sc, nil
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

var scenarios = map[string]scenario{
	record.ScenarioStartup: {doc: "the initial sync only: request shapes, 422s, fallbacks, time to sync; no writes",
		run: func(*env) error { return nil }},
	record.ScenarioDirect: {doc: "the initial sync, then each lab makes one typed List() of ConfigMaps outside its informers, as a controller does: with the gate on, client-go v0.31-v0.33 try to stream it",
		labArgs: []string{"-direct-list"}, run: directListed},
	record.ScenarioSteady: {doc: "the seeded creates, updates and deletes fan out to every watcher",
		run: func(e *env) error { return e.write(e.script(), e.Interval, e.halfway(e.Fault)) }},
	record.ScenarioReconnect: {doc: "kube-apiserver ends every watch after a few seconds, as it does at the client's timeoutSeconds; each reflector re-establishes while the writes go on",
		proxy: true, run: reconnect},
	record.ScenarioRestart: {doc: "kube-apiserver is killed half-way through the writes and started again over the same etcd",
		run: func(e *env) error { return e.write(e.script(), e.Interval, e.halfway("kill-apiserver")) }},
	record.ScenarioRestartGap: {doc: "kube-apiserver is killed half-way through the writes, etcd is written while it is down (its revision moves on), and it is started again: its watch cache starts above every lab's rv",
		run: func(e *env) error { return e.write(e.script(), e.Interval, e.halfway("kill-apiserver-gap")) }},
	record.ScenarioExpired: {doc: "the labs are cut off while the writer goes on, kube-apiserver restarts (its watch cache starts afresh) and etcd is compacted: every watch resumes from an rv the server no longer has",
		proxy: true, run: expire},
}

func (e *env) script() []mutator.Step { return mutator.Script(e.Seed, e.MinWrites) }

// halfway returns the step-count hook that injects fault (none when "").
func (e *env) halfway(fault string) func(i, n int) error {
	return func(i, n int) error {
		if fault == "" || i != n/2 {
			return nil
		}
		killed := time.Now()
		if err := e.inject(fault); err != nil {
			return e.failed("injecting "+fault, err)
		}
		if fault == "kill-apiserver" || fault == "kill-apiserver-gap" {
			return e.rewatched(killed)
		}
		return nil
	}
}

// write plays steps one every interval; before step i it calls hook(i, len(steps)).
func (e *env) write(steps []mutator.Step, interval time.Duration, hook func(i, n int) error) error {
	e.Say("writing %d changes (seed %d, one every %s)", len(steps), e.Seed, interval)
	for i, s := range steps {
		if i > 0 {
			select {
			case <-e.ctx.Done():
				return e.failed("during the writes", e.ctx.Err())
			case <-time.After(interval):
			}
		}
		if hook != nil {
			if err := hook(i, len(steps)); err != nil {
				return err
			}
		}
		if err := e.apply(s, true); err != nil {
			return err
		}
	}
	return nil
}

// apply makes one write; when delivered, every watcher must report its event.
func (e *env) apply(s mutator.Step, delivered bool) error {
	rv, err := e.writer.Apply(e.ctx, e.t.namespace, s)
	e.out.Write(mutator.Record(e.t.namespace, s, rv, err))
	if err != nil {
		return e.failed("write", err)
	}
	e.writes++
	if delivered {
		e.expect = append(e.expect, record.WriteKey(mutator.Record(e.t.namespace, s, rv, nil)))
	}
	return nil
}

// rewatched waits until every watcher has a watch accepted after since (by the restarted
// server) and kept, so the writes after it reach every watcher as events.
func (e *env) rewatched(since time.Time) error {
	e.expect = nil // what came before the fault may arrive in a relist instead of as events
	err := waitFor(e.ctx, e.procs, e.SyncTimeout, func(lp *labproc.Proc) bool { return lp.Watching(since, time.Second, watchers...) })
	if err != nil {
		return e.failed("waiting for every watcher to watch again", err)
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
	for i, s := range steps[third : 2*third] {
		if i > 0 {
			time.Sleep(e.Interval)
		}
		if err := e.apply(s, false); err != nil {
			return err
		}
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
	if err := e.rewatched(resumed); err != nil {
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
