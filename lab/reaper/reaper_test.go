package reaper

import (
	"fmt"
	"os"
	"os/exec"
	"syscall"
	"testing"
	"time"
)

func TestMain(m *testing.M) {
	if IsReaper() { // Start runs this test binary again as the reaper
		os.Exit(Run())
	}
	os.Exit(m.Run())
}

func sleeper(t *testing.T) *exec.Cmd {
	cmd := exec.Command("sleep", "60")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd
}

func exited(cmd *exec.Cmd, within time.Duration) bool {
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(within):
		return false
	}
}

// The parent "dies": its end of the pipe closes without a goodbye. Every watched process must
// be killed. (The reliability suite kills a real harness, whose stderr pipe is closed by then.)
func TestKillsEverythingWhenParentDies(t *testing.T) {
	a, b := sleeper(t), sleeper(t)
	r, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	r.Watch(a.Process.Pid, "sleep a")
	r.Watch(b.Process.Pid, "sleep b")
	r.in.Close() // no "done": the parent died
	r.cmd.Wait()
	if !exited(a, 5*time.Second) || !exited(b, 5*time.Second) {
		t.Fatal("the reaper did not kill every watched process")
	}
}

// A parent that stops what it started says goodbye: the reaper kills nothing.
func TestGoodbyeKillsNothing(t *testing.T) {
	a := sleeper(t)
	r, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	r.Watch(a.Process.Pid, "sleep")
	r.Close()
	if exited(a, time.Second) {
		t.Fatal("the reaper killed a process after its parent said goodbye")
	}
}

// A watched process group dies whole, its leader's children too, even after the leader left:
// `sh -c 'sleep 60 & wait'` is the shape of a user's command that starts its own child.
func TestKillsGroupWhenParentDies(t *testing.T) {
	cmd := exec.Command("sh", "-c", "sleep 60 & echo $!; wait")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL); cmd.Wait() })
	var child int
	if _, err := fmt.Fscan(out, &child); err != nil {
		t.Fatal(err)
	}
	r, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	r.Watch(-cmd.Process.Pid, "sh and its sleep")
	r.in.Close() // no "done": the parent died
	r.cmd.Wait()
	if !exited(cmd, 5*time.Second) {
		t.Fatal("the reaper did not kill the group's leader")
	}
	deadline := time.Now().Add(5 * time.Second)
	for syscall.Kill(child, 0) == nil {
		if time.Now().After(deadline) {
			t.Fatalf("the leader's child %d outlived the reaper's kill", child)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// A directory handed over goes when the parent dies without a goodbye, after the processes
// that may write into it; with a goodbye it stays, the parent's to remove.
func TestRemovesDirsWhenParentDies(t *testing.T) {
	for _, goodbye := range []bool{false, true} {
		dir := t.TempDir()
		if err := os.WriteFile(dir+"/kubeconfig", []byte("secret"), 0o600); err != nil {
			t.Fatal(err)
		}
		a := sleeper(t)
		r, err := Start()
		if err != nil {
			t.Fatal(err)
		}
		r.Watch(a.Process.Pid, "sleep")
		r.Watch(0, dirEntry(dir, "a test's dir"))
		if goodbye {
			r.Close()
		} else {
			r.in.Close()
			r.cmd.Wait()
		}
		_, err = os.Stat(dir)
		if gone := os.IsNotExist(err); gone == goodbye {
			t.Errorf("goodbye=%v: directory gone=%v (stat: %v)", goodbye, gone, err)
		}
	}
}
