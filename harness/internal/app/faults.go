package app

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"syscall"
	"time"

	"informer-lab/harness/internal/labproc"
	"informer-lab/lab/controlplane"
	"informer-lab/lab/procs"
	"informer-lab/record"
)

// Injection is a fault the harness injects on purpose, half-way through the writes: -fault in a
// scenario that plays it (steady), or a restart scenario's own. A new one is an entry of
// Injections, its do, and its test.
type Injection struct {
	Name string
	Doc  string // what happens and what the run must do then: -fault's usage, its SETUP injected record's Detail
	// ServerProcesses: it kills kube-apiserver or etcd, which the harness cannot do to a user's
	// cluster (-kubeconfig).
	ServerProcesses bool
	// Rewatch: the server comes back, and every watcher must watch it again before the writes
	// go on (what came before may then arrive in a relist rather than as events).
	Rewatch bool
	do      func(*env) error // makes it happen and, when the run goes on, recovers from it
}

// The faults the harness injects.
var (
	KillAPIServer = Injection{Name: record.InjectKillAPIServer, ServerProcesses: true, Rewatch: true,
		Doc: "SIGKILL kube-apiserver, restart it over the same etcd; every lab must reconnect and end with its caches equal to a fresh LIST",
		do:  func(e *env) error { return e.restartAPIServer(false) }}
	KillAPIServerGap = Injection{Name: record.InjectKillAPIServerGap, ServerProcesses: true, Rewatch: true,
		Doc: "SIGKILL kube-apiserver, write to etcd while it is down (etcd's revision moves on), restart it: its watch cache starts above every lab's rv, so every resumed watch gets 410 and must relist or stream again",
		do:  func(e *env) error { return e.restartAPIServer(true) }}
	KillEtcd = Injection{Name: record.InjectKillEtcd, ServerProcesses: true,
		Doc: "SIGKILL etcd; the run must stop with an error that names etcd",
		do:  (*env).killEtcd}
	CrashLab = Injection{Name: record.InjectCrashLab,
		Doc: "SIGKILL the first lab; the run must stop naming it, keeping every log",
		do:  func(e *env) error { return e.procs[0].Signal(syscall.SIGKILL) }}
	HangLab = Injection{Name: record.InjectHangLab,
		Doc: "SIGSTOP the first lab; the harness must give up on it after -sync-timeout, name it, and kill it",
		do:  func(e *env) error { return e.procs[0].Signal(syscall.SIGSTOP) }}
)

// Injections lists the faults -fault takes, in the order of their names.
var Injections = []Injection{CrashLab, HangLab, KillAPIServer, KillAPIServerGap, KillEtcd}

// injectionOf finds -fault's Injection: nil for "" (none).
func injectionOf(name string) (*Injection, error) {
	if name == "" {
		return nil, nil
	}
	for _, f := range Injections {
		if f.Name == name {
			return &f, nil
		}
	}
	return nil, fmt.Errorf("unknown -fault %q: the faults are %s", name, strings.Join(injectionNames(), ", "))
}

func injectionNames() []string {
	names := make([]string, 0, len(Injections))
	for _, f := range Injections {
		names = append(names, f.Name)
	}
	return names
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
		if err := m.cp.PeerExited(); err != nil {
			m.cancel(err)
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

// inject records the fault and makes it happen.
func (e *env) inject(f *Injection) error {
	e.out.Setup("", record.StepInjected, f.Name, f.Doc)
	e.Say("injecting fault %s: %s", f.Name, f.Doc)
	return f.do(e)
}

// restartAPIServer SIGKILLs kube-apiserver and starts it again over the same etcd; with gap,
// etcd is written while it is down, so that its revision moves on.
func (e *env) restartAPIServer(gap bool) error {
	start := time.Now()
	var whileDown func() error
	meanwhile := ""
	if gap {
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
	return nil
}

// killEtcd SIGKILLs etcd and waits for the monitor to end the run with a cause that names
// etcd, so the error says that rather than whichever request failed first.
func (e *env) killEtcd() error {
	if err := syscall.Kill(e.mon.etcdPID, syscall.SIGKILL); err != nil {
		return err
	}
	select {
	case <-e.ctx.Done():
		return context.Cause(e.ctx)
	case <-time.After(5 * time.Second):
		return errors.New("etcd was killed but the monitor did not notice within 5s")
	}
}

// crashAPIServer SIGKILLs kube-apiserver, keeps it down for down (calling whileDown then, if
// set) and starts it again over the same etcd, with the monitor told that it is down on purpose.
func (e *env) crashAPIServer(down time.Duration, whileDown func() error) error {
	e.mon.setExpectDown(true)
	defer e.mon.setExpectDown(false)
	return e.t.cp.CrashAPIServer(e.ctx, down, whileDown)
}
