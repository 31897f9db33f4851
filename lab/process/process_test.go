package process

import (
	"errors"
	"os/exec"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"informer-lab/lab/lifecycle"
)

func TestMain(m *testing.M) { lifecycle.TestMain(m) }

type lines struct {
	mu  sync.Mutex
	all []string
}

func (l *lines) add(b []byte) { l.mu.Lock(); l.all = append(l.all, string(b)); l.mu.Unlock() }

func TestOutputLineByLineAndExit(t *testing.T) {
	var out, errs lines
	p, err := Start(exec.Command("sh", "-c", "echo one; echo two >&2; printf three; exit 3"),
		Options{What: "sh", Stdout: out.add, Stderr: errs.add})
	if err != nil {
		t.Fatal(err)
	}
	<-p.Done()
	exited, werr := p.Exited()
	var ee *exec.ExitError
	if !exited || !errors.As(werr, &ee) || ee.ExitCode() != 3 {
		t.Errorf("Exited = %v, %v; want true, exit status 3", exited, werr)
	}
	if got := strings.Join(out.all, "|"); got != "one\n|three" {
		t.Errorf("stdout lines %q, want one, then three without a newline", got)
	}
	if got := strings.Join(errs.all, "|"); got != "two\n" {
		t.Errorf("stderr lines %q", got)
	}
	if err := p.Stop(time.Second); err != nil {
		t.Errorf("Stop after exit: %v", err)
	}
}

func TestStopAsksThenKills(t *testing.T) {
	polite, err := Start(exec.Command("sleep", "60"), Options{What: "sleep"})
	if err != nil {
		t.Fatal(err)
	}
	if err := polite.Stop(5 * time.Second); err != nil {
		t.Errorf("sleep ends on SIGINT: Stop = %v", err)
	}
	// Ignores SIGINT: killed after its grace, and Stop says so.
	deaf, err := Start(exec.Command("sh", "-c", "trap '' INT; sleep 60 & wait"), Options{What: "deaf sh"})
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // the trap is set
	if err := deaf.Stop(300 * time.Millisecond); !errors.Is(err, ErrKilled) {
		t.Errorf("Stop of a child that ignores SIGINT = %v, want ErrKilled", err)
	}
}

// A group's grandchild goes with it, even when the leader exits on the signal and leaves it.
func TestStopEndsTheGroup(t *testing.T) {
	var out lines
	p, err := Start(exec.Command("sh", "-c", "(trap '' INT TERM; sleep 60) & echo $!; wait"), Options{What: "sh and its sleep", Group: true, Stdout: out.add})
	if err != nil {
		t.Fatal(err)
	}
	var child int
	for deadline := time.Now().Add(5 * time.Second); child == 0 && time.Now().Before(deadline); time.Sleep(20 * time.Millisecond) {
		out.mu.Lock()
		if len(out.all) > 0 {
			child, _ = strconv.Atoi(strings.TrimSpace(out.all[0]))
		}
		out.mu.Unlock()
	}
	if child == 0 {
		t.Fatal("sh did not say its child's pid")
	}
	p.Stop(time.Second)
	for deadline := time.Now().Add(5 * time.Second); syscall.Kill(child, 0) == nil; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the group's grandchild %d outlived Stop", child)
		}
	}
}
