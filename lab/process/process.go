// Package process is the one way the project runs a child process that it must stop: a lab,
// a command under observation, a kube-apiserver started again after a crash, a harness under
// the reliability suite. Like controller-runtime's pkg/internal/testing/process (which starts
// envtest's etcd and kube-apiserver), a Process is started, asked to stop with a grace period,
// and killed after it; and here, whatever kills this process first, the child dies with it.
package process

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"informer-lab/lab/reaper"
)

// Options say how to run a child.
type Options struct {
	// What names the process in errors and in the reaper's report, e.g. "lab client-v031".
	What string
	// Group makes the reaper and Stop end the child's whole process group: a command that starts
	// children of its own (go run, a script).
	Group bool
	// Stdout and Stderr, when set, get the child's output line by line as it comes, each line
	// with its newline (the last one may have none). Unset, the cmd's own Stdout and Stderr hold.
	Stdout, Stderr func(line []byte)
	// StdoutDrained, when set, is called each time the lines read so far have all gone to Stdout
	// and no more output has arrived: a caller that buffers what it does with each line (writes
	// to a file) flushes there, once per read from the pipe rather than once per line, and has
	// nothing left unflushed while the child is silent.
	StdoutDrained func()
	// StopSignal is what Stop sends first: SIGINT (what Ctrl-C sends) when 0.
	StopSignal syscall.Signal
}

// Process is a running child.
type Process struct {
	opts Options
	cmd  *exec.Cmd
	done chan struct{} // closed once the child exited and its output was read to the end
	err  error
	once sync.Once
}

// Start starts cmd in a process group of its own, so that a Ctrl-C at the terminal reaches
// only this process, which stops its children in order. If this process dies first, the child
// dies too: through its reaper (lab/reaper) everywhere, and on Linux also by its parent-death
// signal (sysProcAttr).
func Start(cmd *exec.Cmd, opts Options) (*Process, error) {
	if opts.StopSignal == 0 {
		opts.StopSignal = syscall.SIGINT
	}
	p := &Process{opts: opts, cmd: cmd, done: make(chan struct{})}
	var readers sync.WaitGroup
	for _, out := range []struct {
		line    func([]byte)
		drained func()
		pipe    func() (io.ReadCloser, error)
	}{{opts.Stdout, opts.StdoutDrained, cmd.StdoutPipe}, {opts.Stderr, nil, cmd.StderrPipe}} {
		if out.line == nil {
			continue
		}
		r, err := out.pipe()
		if err != nil {
			return nil, fmt.Errorf("start %s: %w", opts.What, err)
		}
		readers.Add(1)
		go func() {
			defer readers.Done()
			readLines(r, out.line, out.drained)
		}()
	}
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s: %w", opts.What, err)
	}
	watch := reaper.Watch
	if opts.Group {
		watch = reaper.WatchGroup
	}
	if err := watch(cmd.Process.Pid, opts.What); err != nil {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		readers.Wait()
		cmd.Wait()
		return nil, fmt.Errorf("start %s: %w", opts.What, err)
	}
	go func() {
		readers.Wait() // the pipes must be read to the end before Wait closes them
		p.err = cmd.Wait()
		close(p.done)
	}()
	return p, nil
}

// readLines calls line for each line of r, as it comes, until r ends; and drained (if not nil)
// whenever the lines read so far are done and the next one needs a read from r, which may
// wait, and at r's end.
func readLines(r io.Reader, line func([]byte), drained func()) {
	br := bufio.NewReaderSize(r, 1<<20)
	for {
		l, err := br.ReadBytes('\n')
		if len(l) > 0 {
			line(l)
		}
		if drained != nil && (err != nil || !lineBuffered(br)) {
			drained()
		}
		if err != nil {
			return
		}
	}
}

// lineBuffered reports whether br holds a whole line already, which it reads without r.
func lineBuffered(br *bufio.Reader) bool {
	b, _ := br.Peek(br.Buffered())
	return bytes.IndexByte(b, '\n') >= 0
}

// PID is the child's process id.
func (p *Process) PID() int { return p.cmd.Process.Pid }

// Done is closed once the child exited and its output was read.
func (p *Process) Done() <-chan struct{} { return p.done }

// Exited reports whether the child exited, and how: its Wait error (nil for exit 0).
func (p *Process) Exited() (bool, error) {
	select {
	case <-p.done:
		return true, p.err
	default:
		return false, nil
	}
}

// Signal sends sig to the child alone (a fault: SIGKILL, SIGSTOP).
func (p *Process) Signal(sig syscall.Signal) error {
	return syscall.Kill(p.cmd.Process.Pid, sig)
}

// ErrKilled is Stop's error when the child had to be killed after its grace period.
var ErrKilled = errors.New("killed")

// Stop sends the child StopSignal (its whole group with Options.Group), waits up to grace for
// it to exit, then kills its process group. What a group child left (a grandchild that ignored
// the signal) is killed too. Once stopped, Stop returns nil and does nothing more.
func (p *Process) Stop(grace time.Duration) error {
	var err error
	p.once.Do(func() {
		pid := p.cmd.Process.Pid
		if p.opts.Group {
			pid = -pid
		}
		select {
		case <-p.done:
		default:
			syscall.Kill(pid, p.opts.StopSignal)
			select {
			case <-p.done:
			case <-time.After(grace):
				syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
				<-p.done
				err = fmt.Errorf("%s did not stop within %s after %v: %w", p.opts.What, grace, p.opts.StopSignal, ErrKilled)
			}
		}
		if p.opts.Group {
			syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
		}
	})
	return err
}
