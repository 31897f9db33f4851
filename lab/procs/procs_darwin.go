package procs

import (
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// BecomeSubreaper fails: macOS has no child subreapers.
func BecomeSubreaper() error { return ErrNoSubreaper }

// Alive reports whether process pid exists and is not a zombie.
func Alive(pid int) bool { return psAlive(pid) }

// Cmdline returns a process's command line, its arguments separated by NUL ("" when gone),
// from sysctl kern.procargs2: exact, where ps would join arguments that hold spaces (the
// envtest store's "Application Support").
func Cmdline(pid int) string {
	buf, err := unix.SysctlRaw("kern.procargs2", pid)
	if err != nil {
		return ""
	}
	args, err := parseProcArgs2(buf)
	if err != nil {
		return ""
	}
	return strings.Join(args, "\x00")
}

// Children lists the live children of this process as "pid cmdline", except the pids in
// except. Without a subreaper, orphans of its children are not among them.
func Children(except ...int) []string {
	var out []string
	for _, c := range psChildren(os.Getpid()) {
		if slices.Contains(except, c.pid) {
			continue
		}
		if c.zombie {
			reapZombie(c.pid)
			continue
		}
		out = append(out, childLine(c.pid, Cmdline(c.pid)))
	}
	return out
}

// ChildrenOf lists the pids of process parent's children, zombies included and none reaped:
// the code that started them may still wait for them.
func ChildrenOf(parent int) []int {
	var out []int
	for _, c := range psChildren(parent) {
		out = append(out, c.pid)
	}
	return out
}

// Find returns the processes whose command line starts with bin and holds the argument arg.
func Find(bin, arg string) ([]int, error) {
	pids, err := psPids()
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	var found []int
	for _, pid := range pids {
		if matches(strings.Split(Cmdline(pid), "\x00"), bin, arg) {
			found = append(found, pid)
		}
	}
	return found, nil
}

// ReadMem reads the resident memory from ps; macOS keeps no high-water mark (HWM is -1).
func ReadMem(pid int) (Mem, error) { return psMem(pid) }

// ReadCPU returns the CPU time process pid has used so far, user and system together, from ps.
func ReadCPU(pid int) (time.Duration, error) { return psCPU(pid) }
