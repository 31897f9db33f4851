package controlplane

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"os/exec"
	"strings"
	"syscall"
	"time"

	"informer-lab/lab/process"
	"informer-lab/lab/procs"
)

// EtcdPID returns the process id of this control plane's etcd.
func (cp *ControlPlane) EtcdPID() (int, error) {
	if cp == nil || cp.env == nil {
		return 0, fmt.Errorf("control plane not running")
	}
	etcd := cp.env.ControlPlane.Etcd
	return procs.FindOne(etcd.Path, "--listen-client-urls="+etcd.URL.String())
}

// KillAPIServer kills kube-apiserver with SIGKILL, the way a crash or an OOM kill ends it,
// and returns once it is gone. etcd keeps running; RestartAPIServer brings the apiserver back.
func (cp *ControlPlane) KillAPIServer() error {
	pid, err := cp.apiserverPID()
	if err != nil {
		return err
	}
	if cp.restartArgs == nil {
		raw := procs.Cmdline(pid)
		if raw == "" {
			return fmt.Errorf("read kube-apiserver's command line (pid %d): gone", pid)
		}
		cp.restartArgs = strings.Split(raw, "\x00")
	}
	if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
		return fmt.Errorf("kill kube-apiserver (pid %d): %w", pid, err)
	}
	if cp.restarted != nil && cp.restarted.PID() == pid {
		cp.restarted = nil // its Wait goroutine reaps it
	}
	for deadline := time.Now().Add(10 * time.Second); procs.Alive(pid); {
		if time.Now().After(deadline) {
			return fmt.Errorf("kube-apiserver (pid %d) still running 10s after SIGKILL", pid)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return nil
}

// RestartAPIServer starts kube-apiserver again with the arguments it had (same port, same
// certificates, same etcd), so clients reconnect to the same address with the same
// credentials, and waits until it answers.
func (cp *ControlPlane) RestartAPIServer(ctx context.Context) error {
	if cp.restartArgs == nil {
		return fmt.Errorf("kube-apiserver was not killed: nothing to restart")
	}
	// The killed server's connections linger (FIN_WAIT2) until their clients close them, and
	// hold its port meanwhile: wait until the port can be bound again.
	u, err := url.Parse(cp.Config.Host)
	if err != nil {
		return fmt.Errorf("kube-apiserver address %q: %w", cp.Config.Host, err)
	}
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		l, err := net.Listen("tcp", u.Host)
		if err == nil {
			l.Close()
			break
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("kube-apiserver's port still busy 30s after it was killed: %w", err)
		}
	}
	log := &tail{}
	p, err := process.Start(exec.Command(cp.restartArgs[0], cp.restartArgs[1:]...),
		process.Options{What: "kube-apiserver (restarted)", StopSignal: syscall.SIGTERM, Stdout: log.add, Stderr: log.add})
	if err != nil {
		return err
	}
	cp.restarted = p
	if _, err := waitReady(ctx, cp.Config, p, log); err != nil {
		select {
		case <-p.Done(): // it exited: nothing left to stop
			cp.restarted = nil
		default:
		}
		return fmt.Errorf("restarted kube-apiserver: %w", err)
	}
	return nil
}

// CrashAPIServer kills kube-apiserver with SIGKILL, keeps it down for down (clients see their
// connections refused meanwhile), calls whileDown if set, and starts it again over the same
// etcd (RestartAPIServer).
func (cp *ControlPlane) CrashAPIServer(ctx context.Context, down time.Duration, whileDown func() error) error {
	if err := cp.KillAPIServer(); err != nil {
		return err
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(down):
	}
	if whileDown != nil {
		if err := whileDown(); err != nil {
			return err
		}
	}
	return cp.RestartAPIServer(ctx)
}

// APIServerAlive reports whether the control plane's kube-apiserver process is running.
func (cp *ControlPlane) APIServerAlive() bool {
	pid, err := cp.apiserverPID()
	return err == nil && procs.Alive(pid)
}

func (cp *ControlPlane) apiserverPID() (int, error) {
	if cp.restarted != nil {
		return cp.restarted.PID(), nil
	}
	return cp.APIServerPID()
}

// stopRestarted stops a kube-apiserver this package restarted: SIGTERM, then SIGKILL.
func (cp *ControlPlane) stopRestarted() {
	if cp.restarted == nil {
		return
	}
	p := cp.restarted
	cp.restarted = nil
	p.Stop(10 * time.Second)
}
