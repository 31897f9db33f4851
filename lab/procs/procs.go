// Package procs reads what the system knows of processes: whether one is alive, its command
// line, its memory and CPU time, and the children of this process, so that an etcd,
// kube-apiserver or lab left behind is found. Linux reads /proc (procs_linux.go); macOS has no
// /proc and asks ps and sysctl instead (procs_darwin.go, ps.go).
package procs

import (
	"errors"
	"time"
)

// Mem is a process's resident memory, in bytes.
type Mem struct {
	RSS int64 // resident now (VmRSS)
	// HWM is the kernel's high-water mark of RSS since start or the last reset (VmHWM); only
	// Linux keeps one, elsewhere it is -1: not measured, never 0.
	HWM int64
}

// ErrNoSubreaper is BecomeSubreaper's error where the system has no child subreapers: orphans
// of this process's descendants go to launchd, and Children cannot see them.
var ErrNoSubreaper = errors.New("this system has no child subreaper (Linux only): processes that outlive their parent are not adopted, so a check for leftovers sees direct children only")

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
