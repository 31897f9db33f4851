package app

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"syscall"
	"time"

	"informer-lab/harness/internal/labproc"
	"informer-lab/lab/controlplane"
	"informer-lab/lab/procs"
	"informer-lab/record"
)

// Faults the harness injects on purpose (-fault), half-way through the writes.
var faults = map[string]string{
	"kill-apiserver":     "SIGKILL kube-apiserver, restart it over the same etcd; every lab must reconnect and end with its caches equal to a fresh LIST",
	"kill-apiserver-gap": "SIGKILL kube-apiserver, write to etcd while it is down (etcd's revision moves on), restart it: its watch cache starts above every lab's rv, so every resumed watch gets 410 and must relist or stream again",
	"kill-etcd":          "SIGKILL etcd; the run must stop with an error that names etcd",
	"crash-lab":          "SIGKILL the first lab; the run must stop naming it, keeping every log",
	"hang-lab":           "SIGSTOP the first lab; the harness must give up on it after -sync-timeout, name it, and kill it",
}

// needsProcesses reports a fault that kills kube-apiserver or etcd: not one to inject on a
// user's cluster, whose processes the harness does not have.
func needsProcesses(fault string) bool {
	return fault != "" && fault != "crash-lab" && fault != "hang-lab"
}

// monitor watches etcd, kube-apiserver and the labs while a run is under way: the first
// unexpected exit cancels the run with a cause that names the process.
type monitor struct {
	cancel  context.CancelCauseFunc
	cp      *controlplane.ControlPlane
	etcdPID int
	procs   []*labproc.Proc

	mu         sync.Mutex
	expectDown bool // kube-apiserver is down on purpose (an injected restart)
}

func (m *monitor) isExpectedDown() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.expectDown
}

func (m *monitor) setExpectDown(v bool) {
	m.mu.Lock()
	m.expectDown = v
	m.mu.Unlock()
}

// start watches until ctx ends or the returned func is called; that func returns once the
// monitor can cancel nothing more.
func (m *monitor) start(ctx context.Context) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	done := make(chan struct{})
	go func() { m.watch(ctx); close(done) }()
	return func() { cancel(); <-done }
}

func (m *monitor) watch(ctx context.Context) {
	t := time.NewTicker(100 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		if m.etcdPID > 0 && !procs.Alive(m.etcdPID) {
			m.cancel(fmt.Errorf("etcd (pid %d) exited during the run: kube-apiserver cannot serve without it", m.etcdPID))
			return
		}
		// Alive first, then whether it may be down: the other order reads "not expected down"
		// just before an injected kill, then finds it dead (the /proc scan takes a while on a
		// loaded machine) and calls the kill unexpected.
		if m.cp != nil && !m.cp.APIServerAlive() && !m.isExpectedDown() {
			m.cancel(errors.New("kube-apiserver exited during the run"))
			return
		}
		for _, p := range m.procs {
			if msg := p.Exited(); msg != "" {
				m.cancel(fmt.Errorf("lab %s", msg))
				return
			}
		}
	}
}

// inject makes the fault happen and, for kill-apiserver, recovers from it.
func (e *env) inject(fault string) error {
	e.out.Setup("", record.StepInjected, fault, faults[fault])
	e.Say("injecting fault %s: %s", fault, faults[fault])
	switch fault {
	case "kill-apiserver", "kill-apiserver-gap":
		start := time.Now()
		var whileDown func() error
		meanwhile := ""
		if fault == "kill-apiserver-gap" {
			whileDown = func() error {
				rev, err := e.t.cp.WriteEtcd(e.ctx, "/informer-lab/outage", start.String())
				meanwhile = fmt.Sprintf("; etcd written meanwhile (revision %d)", rev)
				return err
			}
		}
		// Down long enough for every reflector to notice its broken stream and retry.
		if err := e.crashAPIServer(2*time.Second, whileDown); err != nil {
			return err
		}
		down := time.Since(start).Round(time.Millisecond)
		e.out.Setup("", record.StepRecovered, "kube-apiserver restarted", fmt.Sprintf("down %s; same port, certificates and etcd%s", down, meanwhile))
		e.Say("kube-apiserver back after %s%s", down, meanwhile)
	case "kill-etcd":
		if err := syscall.Kill(e.mon.etcdPID, syscall.SIGKILL); err != nil {
			return err
		}
		// The monitor notices and ends the run with a cause that names etcd; wait for it, so
		// the error says that rather than whichever request failed first.
		select {
		case <-e.ctx.Done():
			return context.Cause(e.ctx)
		case <-time.After(5 * time.Second):
			return errors.New("etcd was killed but the monitor did not notice within 5s")
		}
	case "crash-lab":
		return e.procs[0].Signal(syscall.SIGKILL)
	case "hang-lab":
		return e.procs[0].Signal(syscall.SIGSTOP)
	}
	return nil
}

// crashAPIServer SIGKILLs kube-apiserver, keeps it down for down (calling whileDown then, if
// set) and starts it again over the same etcd, with the monitor told that it is down on purpose.
func (e *env) crashAPIServer(down time.Duration, whileDown func() error) error {
	e.mon.setExpectDown(true)
	defer e.mon.setExpectDown(false)
	return e.t.cp.CrashAPIServer(e.ctx, down, whileDown)
}
