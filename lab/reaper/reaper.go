// Package reaper stops what a lab or the harness started when it is itself killed: SIGKILL
// skips every defer, and envtest's etcd and kube-apiserver run in process groups of their own.
// A small child process (the same binary again) holds the list of processes and kills them
// when its pipe from its parent closes without a goodbye.
//
// A process has one reaper, started on the first Watch. Only a binary that calls Serve first
// in main (or TestMain) can be its own reaper; lab/lifecycle does that for every command.
package reaper

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"informer-lab/lab/procs"
)

const envVar = "INFORMER_LAB_REAPER"

// IsReaper reports whether this process was started as a reaper.
func IsReaper() bool { return os.Getenv(envVar) != "" }

var (
	serving atomic.Bool
	mu      sync.Mutex
	own     *Reaper // this process's reaper, once started
)

// ErrNotServing is Watch's error in a binary that did not call Serve: it cannot start itself
// again as a reaper, so what it would start could outlive it.
var ErrNotServing = errors.New("reaper: this binary does not serve as its own reaper (call reaper.Serve, or lifecycle.Main, first in main or TestMain)")

// Serve must come first in main and TestMain: started as a reaper, the process runs as one
// and exits here; otherwise Watch may start this binary again as its reaper.
func Serve() {
	if IsReaper() {
		os.Exit(Run())
	}
	serving.Store(true)
}

// Watch hands a process to this process's reaper, starting the reaper on first use: if this
// process dies without calling Done, the reaper kills pid.
func Watch(pid int, what string) error {
	mu.Lock()
	defer mu.Unlock()
	if own == nil {
		if !serving.Load() {
			return ErrNotServing
		}
		r, err := Start()
		if err != nil {
			return err
		}
		own = r
	}
	own.Watch(pid, what)
	return nil
}

// WatchGroup is Watch for the process group that pid leads (it was started with Setpgid): a
// command the user gave, like `go run ./x` or a script, whose own children must not outlive it
// either. The reaper kills the whole group, also when its leader already exited: Linux does not
// give a new process a pid that is still some group's id, so the group is still the user's.
func WatchGroup(pid int, what string) error { return Watch(-pid, what) }

// WatchDir hands a temporary directory to this process's reaper: if this process dies without
// calling Done, the reaper removes it, once it has killed what it watches (the processes that
// wrote into it). Credentials (kubeconfigs, client keys) and etcd's data live in such
// directories, and must not be left in the system's temp directory.
func WatchDir(dir, what string) error {
	if !filepath.IsAbs(dir) {
		return fmt.Errorf("reaper: %s: directory %q is not an absolute path", what, dir)
	}
	return Watch(0, dirEntry(dir, what))
}

// dirEntry is how a directory is watched: pid 0, and the path after what and a NUL.
func dirEntry(dir, what string) string { return what + "\x00" + dir }

// PID is the process id of this process's reaper, 0 while it has none: a check for leftover
// children leaves it out, since it lives as long as its parent.
func PID() int {
	mu.Lock()
	defer mu.Unlock()
	if own == nil {
		return 0
	}
	return own.cmd.Process.Pid
}

// Done says goodbye to this process's reaper, once everything it watches was stopped; a later
// Watch starts a new one.
func Done() {
	mu.Lock()
	r := own
	own = nil
	mu.Unlock()
	r.Close()
}

// Reaper is a process's handle on its reaper.
type Reaper struct {
	mu  sync.Mutex
	cmd *exec.Cmd
	in  io.WriteCloser
}

// Start runs this executable again as a reaper of its own (Watch shares one per process).
func Start() (*Reaper, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("start reaper: %w", err)
	}
	cmd := exec.Command(exe)
	cmd.Env = append(os.Environ(), envVar+"=1")
	cmd.Stderr = os.Stderr
	// Its own process group: a Ctrl-C meant for its parent must not end the reaper first.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start reaper: %w", err)
	}
	return &Reaper{cmd: cmd, in: in}, nil
}

// Watch adds a process to kill if its parent dies. Its command line is remembered, so that a
// pid reused by an unrelated process is never killed.
func (r *Reaper) Watch(pid int, what string) {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	leader := pid
	if leader < 0 {
		leader = -pid
	}
	cmdline := ""
	if pid != 0 { // 0: a directory (WatchDir), its path after what's NUL
		cmdline = procs.Cmdline(leader)
	}
	fmt.Fprintf(r.in, "%d %s %s\n", pid, strconv.Quote(cmdline), strconv.Quote(what))
}

// Close tells the reaper its parent stopped everything itself, and waits for it to exit.
func (r *Reaper) Close() {
	if r == nil {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	io.WriteString(r.in, "done\n")
	r.in.Close()
	r.cmd.Wait()
}

// Run is the reaper's main: it returns when its parent said goodbye, or after killing what
// its parent left when its pipe closed without one.
func Run() int {
	type proc struct {
		pid           int
		cmdline, what string
	}
	var watched []proc
	sc := bufio.NewScanner(os.Stdin)
	for sc.Scan() {
		line := sc.Text()
		if line == "done" {
			return 0
		}
		var p proc
		var cl, what string
		if _, err := fmt.Sscanf(line, "%d %q %q", &p.pid, &cl, &what); err == nil {
			p.cmdline, p.what = cl, what
			watched = append(watched, p)
		}
	}
	// The parent is gone without a goodbye: it was killed. Kill everything first, report after:
	// the stderr it shared with its parent may be a pipe nobody reads any more.
	signal.Ignore(syscall.SIGPIPE)
	var killed []proc
	var dirs []string
	for _, p := range watched {
		if p.pid == 0 { // a directory (WatchDir): removed once its writers are dead
			dirs = append(dirs, p.what)
			continue
		}
		if p.pid < 0 { // a process group (WatchGroup): whatever is left of it
			if syscall.Kill(p.pid, syscall.SIGKILL) == nil {
				killed = append(killed, p)
			}
			continue
		}
		if procs.Cmdline(p.pid) != p.cmdline || p.cmdline == "" {
			continue // already gone (or the pid now belongs to someone else)
		}
		if syscall.Kill(p.pid, syscall.SIGKILL) == nil {
			killed = append(killed, p)
		}
	}
	for _, d := range dirs {
		what, dir, _ := strings.Cut(d, "\x00")
		if err := removeAll(dir); err != nil {
			fmt.Fprintf(os.Stderr, "[reaper] removing %s (%s): %v\n", what, dir, err)
		}
	}
	for _, p := range killed {
		what := fmt.Sprintf("pid %d", p.pid)
		if p.pid < 0 {
			what = fmt.Sprintf("process group %d", -p.pid)
		}
		fmt.Fprintf(os.Stderr, "[reaper] the process that started %s (%s) died without stopping it: killed it\n", p.what, what)
	}
	return 0
}

// removeAll removes dir, trying again for a while: a process just killed may still be writing
// into it (SIGKILL is delivered, not yet acted on, when Kill returns).
func removeAll(dir string) error {
	var err error
	for try := 0; try < 20; try++ {
		if err = os.RemoveAll(dir); err == nil {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return err
}
