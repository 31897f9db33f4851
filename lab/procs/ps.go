package procs

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// What macOS reads through ps(1), whose -A, -p and -o pid=,ppid=,stat=,rss=,time= mean the
// same on Linux's procps: the tests run these on Linux, where /proc is read instead.

// ps runs ps with args and returns its output's fields, line by line.
func ps(args ...string) ([][]string, error) {
	out, err := exec.Command("ps", args...).Output()
	if err != nil {
		return nil, fmt.Errorf("ps %s: %w", strings.Join(args, " "), err)
	}
	var rows [][]string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			rows = append(rows, f)
		}
	}
	return rows, nil
}

// psOne returns ps's one value of column col for process pid.
func psOne(pid int, col string) (string, error) {
	rows, err := ps("-o", col+"=", "-p", strconv.Itoa(pid))
	if err != nil {
		return "", fmt.Errorf("process %d: %w", pid, err) // ps exits 1 for a pid that is gone
	}
	if len(rows) != 1 || len(rows[0]) != 1 {
		return "", fmt.Errorf("process %d: ps -o %s= printed %v", pid, col, rows)
	}
	return rows[0][0], nil
}

// psAlive reports whether process pid exists and is not a zombie (state Z).
func psAlive(pid int) bool {
	state, err := psOne(pid, "stat")
	return err == nil && !strings.HasPrefix(state, "Z")
}

type psChild struct {
	pid    int
	zombie bool
}

// psChildren lists the children of process parent.
func psChildren(parent int) []psChild {
	rows, _ := ps("-A", "-o", "pid=,ppid=,stat=")
	var out []psChild
	for _, f := range rows {
		if len(f) != 3 || f[1] != strconv.Itoa(parent) {
			continue
		}
		if pid, err := strconv.Atoi(f[0]); err == nil {
			out = append(out, psChild{pid: pid, zombie: strings.HasPrefix(f[2], "Z")})
		}
	}
	return out
}

// psPids lists every process.
func psPids() ([]int, error) {
	rows, err := ps("-A", "-o", "pid=")
	if err != nil {
		return nil, err
	}
	var pids []int
	for _, f := range rows {
		if pid, err := strconv.Atoi(f[0]); err == nil {
			pids = append(pids, pid)
		}
	}
	return pids, nil
}

// psMem reads the resident memory (ps's rss, in KiB). ps knows no high-water mark: HWM is -1.
func psMem(pid int) (Mem, error) {
	v, err := psOne(pid, "rss")
	if err != nil {
		return Mem{}, err
	}
	kb, err := strconv.ParseInt(v, 10, 64)
	if err != nil {
		return Mem{}, fmt.Errorf("process %d: rss %q: %w", pid, v, err)
	}
	return Mem{RSS: kb << 10, HWM: -1}, nil
}

// psCPU reads the CPU time used, user and system together (ps's time).
func psCPU(pid int) (time.Duration, error) {
	v, err := psOne(pid, "time")
	if err != nil {
		return 0, err
	}
	return parsePsTime(v)
}

// parsePsTime reads ps's time column: [DD-]HH:MM:SS from procps, [HH:]MM:SS.cc from macOS.
func parsePsTime(s string) (time.Duration, error) {
	var d time.Duration
	rest := s
	if days, r, ok := strings.Cut(s, "-"); ok {
		n, err := strconv.Atoi(days)
		if err != nil {
			return 0, fmt.Errorf("ps time %q: %w", s, err)
		}
		d, rest = time.Duration(n)*24*time.Hour, r
	}
	parts := strings.Split(rest, ":")
	if len(parts) < 2 || len(parts) > 3 {
		return 0, fmt.Errorf("ps time %q: want [DD-]HH:MM:SS or MM:SS.cc", s)
	}
	secs, err := strconv.ParseFloat(parts[len(parts)-1], 64)
	if err != nil {
		return 0, fmt.Errorf("ps time %q: %w", s, err)
	}
	d += time.Duration(secs * float64(time.Second))
	unit := time.Minute
	for i := len(parts) - 2; i >= 0; i-- {
		n, err := strconv.Atoi(parts[i])
		if err != nil {
			return 0, fmt.Errorf("ps time %q: %w", s, err)
		}
		d += time.Duration(n) * unit
		unit *= 60
	}
	return d, nil
}

// parseProcArgs2 reads the arguments from sysctl kern.procargs2's answer: argc (a 32-bit
// integer), the executable's path, NUL padding, then argc NUL-terminated arguments (the
// environment follows).
func parseProcArgs2(buf []byte) ([]string, error) {
	if len(buf) < 4 {
		return nil, errors.New("procargs2: too short")
	}
	argc := int(binary.NativeEndian.Uint32(buf))
	rest := buf[4:]
	i := bytes.IndexByte(rest, 0)
	if i < 0 {
		return nil, errors.New("procargs2: no executable path")
	}
	rest = bytes.TrimLeft(rest[i:], "\x00")
	args := make([]string, 0, argc)
	for len(args) < argc {
		i := bytes.IndexByte(rest, 0)
		if i < 0 {
			return nil, fmt.Errorf("procargs2: %d of %d arguments", len(args), argc)
		}
		args = append(args, string(rest[:i]))
		rest = rest[i+1:]
	}
	return args, nil
}

// reapZombie collects an exited child that nobody waits for (an orphan this process adopted).
func reapZombie(pid int) {
	var ws syscall.WaitStatus
	syscall.Wait4(pid, &ws, syscall.WNOHANG, nil)
}

// childLine is how Children names a process: "pid cmdline", arguments separated by spaces.
func childLine(pid int, cmdline string) string {
	return strconv.Itoa(pid) + " " + strings.TrimSpace(strings.ReplaceAll(cmdline, "\x00", " "))
}

// matches reports whether args start with bin and hold arg.
func matches(args []string, bin, arg string) bool {
	if len(args) < 2 || args[0] != bin {
		return false
	}
	for _, a := range args[1:] {
		if a == arg {
			return true
		}
	}
	return false
}

// FindOne is Find for exactly one process.
func FindOne(bin, arg string) (int, error) {
	found, err := Find(bin, arg)
	if err != nil {
		return 0, err
	}
	return one(found, bin, arg)
}

func one(found []int, bin, arg string) (int, error) {
	switch len(found) {
	case 0:
		return 0, fmt.Errorf("no process %s with %s", bin, arg)
	case 1:
		return found[0], nil
	}
	return 0, fmt.Errorf("%d processes %s with %s: %v", len(found), bin, arg, found)
}

// findIn is Find over a /proc laid out at procDir (a test's fake one).
func findIn(procDir, bin, arg string) ([]int, error) {
	entries, err := os.ReadDir(procDir)
	if err != nil {
		return nil, fmt.Errorf("list processes: %w", err)
	}
	var found []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join(procDir, e.Name(), "cmdline"))
		if err != nil {
			continue // gone, or not ours to read
		}
		if matches(strings.Split(strings.TrimRight(string(b), "\x00"), "\x00"), bin, arg) {
			found = append(found, pid)
		}
	}
	return found, nil
}
