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

// BecomeSubreaper makes orphans of this process's descendants its children.
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
	f, ok := statFields(string(b))
	if !ok || len(f) < 2 {
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
	var out []string
	for _, pid := range ChildrenOf(os.Getpid()) {
		if slices.Contains(except, pid) {
			continue
		}
		if state, _, _ := stat(strconv.Itoa(pid)); state == "Z" {
			reapZombie(pid)
			continue
		}
		out = append(out, childLine(pid, Cmdline(pid)))
	}
	return out
}

// ChildrenOf lists the pids of process parent's children, zombies included and none reaped:
// the code that started them may still wait for them.
func ChildrenOf(parent int) []int {
	me := strconv.Itoa(parent)
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		if _, ppid, ok := stat(e.Name()); ok && ppid == me {
			if pid, err := strconv.Atoi(e.Name()); err == nil {
				out = append(out, pid)
			}
		}
	}
	return out
}

// Find returns the processes whose command line starts with bin and holds the argument arg.
func Find(bin, arg string) ([]int, error) { return findIn("/proc", bin, arg) }

// ReadMem reads VmRSS and VmHWM from /proc/<pid>/status.
func ReadMem(pid int) (Mem, error) {
	f, err := os.Open(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return Mem{}, err
	}
	defer f.Close()
	return parseStatus(f)
}

// ReadCPU returns the CPU time process pid has used so far, user and system together, from
// /proc/<pid>/stat (utime and stime; its children's are not counted).
func ReadCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return parseCPU(string(b))
}
