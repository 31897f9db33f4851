package controlplane

import (
	"context"
	"fmt"
	"io"
	"net"
	"os/exec"
	"strings"
	"sync"
	"syscall"
	"time"

	"informer-lab/envtestbin"
	"informer-lab/lab/process"
	"informer-lab/lab/procs"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Peer is a second kube-apiserver on the control plane's etcd: a control plane in the middle of
// an upgrade, where two versions serve the same objects.
type Peer struct {
	Config        *rest.Config // the control plane's admin credentials, this server's address
	ServerVersion string       // what its /version reports
	proc          *process.Process
	log           *tail
}

// StartPeer starts kube-apiserver version (its binaries from the store, built the first time)
// with the command line of the control plane's own (same etcd and prefix, certificates, service
// account keys and flags) on a port of its own, and waits until it is ready. The control plane's
// Stop stops it.
func (cp *ControlPlane) StartPeer(ctx context.Context, version string, progress io.Writer) (*Peer, error) {
	if progress == nil {
		progress = io.Discard
	}
	dir, err := envtestbin.Lookup(ctx, envtestbin.Options{Version: version, Progress: progress})
	if err != nil {
		return nil, err
	}
	pid, err := cp.apiserverPID()
	if err != nil {
		return nil, err
	}
	raw := procs.Cmdline(pid)
	if raw == "" {
		return nil, fmt.Errorf("read kube-apiserver's command line (pid %d): gone", pid)
	}
	port, err := FreePort()
	if err != nil {
		return nil, err
	}
	args, err := peerArgs(strings.Split(raw, "\x00"), dir+"/kube-apiserver", port)
	if err != nil {
		return nil, err
	}
	log := &tail{}
	start := time.Now()
	fmt.Fprintf(progress, "booting a second kube-apiserver %s on the same etcd (binaries: %s)\n", version, dir)
	p, err := process.Start(exec.Command(args[0], args[1:]...), process.Options{What: "kube-apiserver " + version + " (second server)",
		StopSignal: syscall.SIGTERM, Stdout: log.add, Stderr: log.add})
	if err != nil {
		return nil, err
	}
	peer := &Peer{Config: rest.CopyConfig(cp.Config), proc: p, log: log}
	peer.Config.Host = fmt.Sprintf("https://127.0.0.1:%d", port)
	if peer.ServerVersion, err = waitReady(ctx, peer.Config, p, log); err != nil {
		p.Stop(10 * time.Second)
		return nil, fmt.Errorf("second kube-apiserver %s: %w", version, err)
	}
	cp.peers = append(cp.peers, peer)
	fmt.Fprintf(progress, "second kube-apiserver %s up at %s in %s\n", peer.ServerVersion, peer.Config.Host, time.Since(start).Round(time.Millisecond))
	return peer, nil
}

// Alive reports whether the peer's process is running.
func (p *Peer) Alive() bool {
	select {
	case <-p.proc.Done():
		return false
	default:
		return true
	}
}

// PeerExited names the first second kube-apiserver (StartPeer) that is no longer running; nil
// while all run, or when there is none.
func (cp *ControlPlane) PeerExited() error {
	if cp == nil {
		return nil
	}
	for _, p := range cp.peers {
		if !p.Alive() {
			return fmt.Errorf("the second kube-apiserver %s exited during the run", p.ServerVersion)
		}
	}
	return nil
}

// peerArgs is the control plane's kube-apiserver command line for binary on port: the same
// flags but --secure-port (a second listener on the same port would fail).
func peerArgs(args []string, binary string, port int) ([]string, error) {
	out := append([]string{binary}, args[1:]...)
	for i, a := range out {
		if strings.HasPrefix(a, "--secure-port=") {
			out[i] = fmt.Sprintf("--secure-port=%d", port)
			return out, nil
		}
	}
	return nil, fmt.Errorf("kube-apiserver's command line has no --secure-port=: %q", strings.Join(args, " "))
}

// FreePort is a TCP port on 127.0.0.1 that nothing listens on now: for a server started beside
// the control plane.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// waitReady waits until the server at cfg answers /readyz with ok, and returns its version; it
// fails when p exits first (with the end of its log) or after two minutes (a loaded 2-core
// machine: environment's ControlPlaneStartTimeout).
func waitReady(ctx context.Context, cfg *rest.Config, p *process.Process, log *tail) (string, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return "", err
	}
	tick := time.NewTicker(100 * time.Millisecond)
	defer tick.Stop()
	deadline := time.After(2 * time.Minute)
	for {
		select {
		case <-p.Done():
			_, err := p.Exited()
			return "", fmt.Errorf("exited (%v); its last lines: %s", err, log.String())
		case <-ctx.Done():
			return "", ctx.Err()
		case <-deadline:
			return "", fmt.Errorf("not ready within 2m; its last lines: %s", log.String())
		case <-tick.C:
			body, err := cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
			if err != nil || string(body) != "ok" {
				continue
			}
			v, err := cs.Discovery().ServerVersion()
			if err != nil {
				return "", fmt.Errorf("read its version: %w", err)
			}
			return v.GitVersion, nil
		}
	}
}

// stopPeers stops the second kube-apiservers, before etcd goes.
func (cp *ControlPlane) stopPeers() {
	for _, p := range cp.peers {
		p.proc.Stop(10 * time.Second)
	}
	cp.peers = nil
}

// tail keeps a process's last lines of output, for an error that says why it failed.
type tail struct {
	mu    sync.Mutex
	lines []string
}

func (t *tail) add(line []byte) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.lines = append(t.lines, strings.TrimRight(string(line), "\n"))
	if len(t.lines) > 5 {
		t.lines = t.lines[len(t.lines)-5:]
	}
}

func (t *tail) String() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	return strings.Join(t.lines, " | ")
}
