// Package procs finds processes left behind: a process that becomes a child subreaper adopts
// the orphans of its descendants, so an etcd, kube-apiserver or lab that outlived whatever
// started it shows up as its child.
package procs

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// BecomeSubreaper makes orphans of this process's descendants its children (Linux).
func BecomeSubreaper() error {
	const prSetChildSubreaper = 36
	if _, _, errno := syscall.RawSyscall(syscall.SYS_PRCTL, prSetChildSubreaper, 1, 0); errno != 0 {
		return fmt.Errorf("cannot become a child subreaper: %v", errno)
	}
	return nil
}

// stat returns a process's state and parent pid from /proc/<pid>/stat.
func stat(pid string) (state, ppid string, ok bool) {
	b, err := os.ReadFile(filepath.Join("/proc", pid, "stat"))
	if err != nil {
		return "", "", false
	}
	// pid (comm) state ppid ...: comm may hold spaces, so split after the last ')'.
	s := string(b)
	f := strings.Fields(s[strings.LastIndex(s, ")")+1:])
	if len(f) < 2 {
		return "", "", false
	}
	return f[0], f[1], true
}

// Alive reports whether process pid exists and is not a zombie.
func Alive(pid int) bool {
	state, _, ok := stat(strconv.Itoa(pid))
	return ok && state != "Z" && state != "X"
}

// Cmdline returns a process's command line, its arguments separated by NUL ("" when gone).
func Cmdline(pid int) string {
	b, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "cmdline"))
	if err != nil {
		return ""
	}
	return strings.TrimRight(string(b), "\x00")
}

// Children lists the live children of this process as "pid cmdline", reaping zombies it
// adopted, except the pids in except.
func Children(except ...int) []string {
	me := strconv.Itoa(os.Getpid())
	entries, _ := os.ReadDir("/proc")
	var out []string
	for _, e := range entries {
		state, ppid, ok := stat(e.Name())
		if !ok || ppid != me {
			continue
		}
		pid, err := strconv.Atoi(e.Name())
		if err != nil || slices.Contains(except, pid) {
			continue
		}
		if state == "Z" {
			var ws syscall.WaitStatus
			syscall.Wait4(pid, &ws, syscall.WNOHANG, nil) // an adopted orphan: reap it
			continue
		}
		cmdline, _ := os.ReadFile(filepath.Join("/proc", e.Name(), "cmdline"))
		out = append(out, e.Name()+" "+strings.TrimSpace(strings.ReplaceAll(string(cmdline), "\x00", " ")))
	}
	return out
}

// WaitNoChildren waits up to timeout for every child but those in except to be gone, and
// returns those left.
func WaitNoChildren(timeout time.Duration, except ...int) []string {
	deadline := time.Now().Add(timeout)
	for {
		left := Children(except...)
		if len(left) == 0 || time.Now().After(deadline) {
			return left
		}
		time.Sleep(100 * time.Millisecond)
	}
}
