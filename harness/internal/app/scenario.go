package app

import (
	"context"
	"fmt"
	"slices"
	"time"

	"informer-lab/compare/analysis"
	"informer-lab/harness/internal/labproc"
	"informer-lab/harness/internal/proxy"
	"informer-lab/lab/mutator"
	"informer-lab/lab/reaper"
	"informer-lab/record"

	"k8s.io/client-go/kubernetes"
)

// A scenario is a named, seeded script the harness plays once every lab has synced. Every
// scenario ends the same way: the harness's fresh LIST, against which compare checks each
// informer's cache.
type scenario struct {
	doc     string
	proxy   bool     // the labs connect through the watch proxy
	labArgs []string // more flags for every lab
	run     func(*play) error
}

// Scenarios, in the order make matrix shows them: compare's names, which it reads back from
// the harness's SETUP scenario record.
var Scenarios = analysis.Scenarios

var scenarios = map[string]scenario{
	analysis.ScenarioStartup: {doc: "the initial sync only: request shapes, 422s, fallbacks, time to sync; no writes",
		run: func(p *play) error { return nil }},
	analysis.ScenarioDirect: {doc: "the initial sync, then each lab makes one typed List() of ConfigMaps outside its informers, as a controller does: with the gate on, client-go v0.31-v0.33 try to stream it",
		labArgs: []string{"-direct-list"}, run: directListed},
	analysis.ScenarioSteady: {doc: "the seeded creates, updates and deletes fan out to every watcher",
		run: func(p *play) error { return p.write(p.script(), p.Interval, p.halfway(p.Fault)) }},
	analysis.ScenarioReconnect: {doc: "kube-apiserver ends every watch after a few seconds, as it does at the client's timeoutSeconds; each reflector re-establishes while the writes go on",
		proxy: true, run: reconnect},
	analysis.ScenarioRestart: {doc: "kube-apiserver is killed half-way through the writes and started again over the same etcd",
		run: func(p *play) error { return p.write(p.script(), p.Interval, p.halfway("kill-apiserver")) }},
	analysis.ScenarioExpired: {doc: "the labs are cut off while the writer goes on, kube-apiserver restarts (its watch cache starts afresh) and etcd is compacted: every watch resumes from an rv the server no longer has",
		proxy: true, run: expire},
}

// play is a scenario under way: what its script needs, and what it wrote.
type play struct {
	Spec
	ctx    context.Context
	t      *target
	cs     *kubernetes.Clientset
	out    *record.Writer
	mon    *monitor
	procs  []*labproc.Proc
	rp     *reaper.Reaper
	px     *proxy.Proxy
	failed func(string, error) error

	writes int      // successful writes
	expect []string // labproc keys of the events every watcher must deliver
}

func (p *play) script() []mutator.Step { return mutator.Script(p.Seed, p.MinWrites) }

// halfway returns the step-count hook that injects fault (none when "").
func (p *play) halfway(fault string) func(i, n int) error {
	return func(i, n int) error {
		if fault == "" || i != n/2 {
			return nil
		}
		killed := time.Now()
		if err := inject(p.ctx, fault, p.t, p.mon, p.procs, p.rp, p.out, p.Say); err != nil {
			return p.failed("injecting "+fault, err)
		}
		if fault == "kill-apiserver" {
			return p.rewatched(killed)
		}
		return nil
	}
}

// write plays steps one every interval; before step i it calls hook(i, len(steps)).
func (p *play) write(steps []mutator.Step, interval time.Duration, hook func(i, n int) error) error {
	p.Say("writing %d changes (seed %d, one every %s)", len(steps), p.Seed, interval)
	for i, s := range steps {
		if i > 0 {
			select {
			case <-p.ctx.Done():
				return p.failed("during the writes", p.ctx.Err())
			case <-time.After(interval):
			}
		}
		if hook != nil {
			if err := hook(i, len(steps)); err != nil {
				return err
			}
		}
		if err := p.apply(s, true); err != nil {
			return err
		}
	}
	return nil
}

// apply makes one write; when delivered, every watcher must report its event.
func (p *play) apply(s mutator.Step, delivered bool) error {
	rv, err := mutator.Apply(p.ctx, p.cs, p.t.namespace, s)
	p.out.Write(mutator.Record(p.t.namespace, s, rv, err))
	if err != nil {
		return p.failed("write", err)
	}
	p.writes++
	if delivered {
		key := labproc.Key(eventOf[s.Op], p.t.namespace, s.Name)
		if rv != "" { // a DELETE's rv is not known here (the apiserver answers with a Status)
			key = labproc.KeyRV(eventOf[s.Op], p.t.namespace, s.Name, rv)
		}
		p.expect = append(p.expect, key)
	}
	return nil
}

// rewatched waits until every watcher has a watch accepted after since (by the restarted
// server) and kept, so the writes after it reach every watcher as events.
func (p *play) rewatched(since time.Time) error {
	p.expect = nil // what came before the fault may arrive in a relist instead of as events
	err := waitFor(p.ctx, p.procs, p.SyncTimeout, func(lp *labproc.Proc) bool { return lp.Watching(since, time.Second, watchers...) })
	if err != nil {
		return p.failed("waiting for every watcher to watch again", err)
	}
	p.Say("every watcher watches again, %s after the fault", time.Since(since).Round(time.Millisecond))
	return nil
}

// reconnect spreads the writes over a few watch timeouts, so every watcher re-establishes its
// watch at least twice while the writes go on.
func reconnect(p *play) error {
	steps := p.script()
	span := 3*p.WatchTimeout + p.WatchTimeout/2
	interval := max(p.Interval, span/time.Duration(len(steps)))
	return p.write(steps, interval, nil)
}

// expire cuts the labs off at the proxy (held, not refused), writes while they cannot see it,
// restarts kube-apiserver so its watch cache starts at the current rv, compacts etcd there, and
// lets the labs' held watches through: each asks for an rv the server no longer has.
func expire(p *play) error {
	steps := p.script()
	third := len(steps) / 3
	if err := p.write(steps[:third], p.Interval, nil); err != nil {
		return err
	}
	p.out.Setup("", record.StepInjected, "expire", "proxy holds the labs' requests; writes they cannot see; kube-apiserver restarted; etcd compacted")
	p.Say("cutting the labs off: the proxy holds their requests until every watch has ended")
	p.px.Pause()
	idle, cancel := context.WithTimeout(p.ctx, p.WatchTimeout+p.SyncTimeout)
	err := p.px.WaitIdle(idle)
	cancel()
	if err != nil {
		return p.failed("waiting for the labs' watches to end at the proxy", err)
	}
	for i, s := range steps[third : 2*third] {
		if i > 0 {
			time.Sleep(p.Interval)
		}
		if err := p.apply(s, false); err != nil {
			return err
		}
	}
	p.mon.setExpectDown(true)
	if err := p.t.cp.KillAPIServer(); err != nil {
		return p.failed("kill kube-apiserver", err)
	}
	if err := p.t.cp.RestartAPIServer(p.ctx); err != nil {
		return p.failed("restart kube-apiserver", err)
	}
	if pid, err := p.t.cp.APIServerPID(); err == nil {
		p.rp.Watch(pid, "kube-apiserver (restarted)")
	}
	p.mon.setExpectDown(false)
	rev, err := p.t.cp.CompactEtcd(p.ctx)
	if err != nil {
		return p.failed("compact etcd", err)
	}
	p.out.Setup("", record.StepRecovered, "proxy resumed", fmt.Sprintf("kube-apiserver restarted; etcd compacted at rev %d", rev))
	p.Say("kube-apiserver restarted, etcd compacted at rev %d: letting the labs' requests through", rev)
	resumed := time.Now()
	p.px.Resume()
	if err := p.rewatched(resumed); err != nil {
		return err
	}
	return p.write(steps[2*third:], p.Interval, nil)
}

// directListed waits until every lab's direct List() has returned (the labs make it once their
// informers are synced, from their -direct-list flag).
func directListed(p *play) error {
	err := waitFor(p.ctx, p.procs, p.SyncTimeout, func(lp *labproc.Proc) bool {
		return slices.ContainsFunc(lp.Setups(), func(r record.Record) bool { return r.Step == record.StepDirect })
	})
	if err != nil {
		return p.failed("waiting for every lab's direct List()", err)
	}
	p.Say("every lab's direct List() returned")
	return nil
}
