package procs

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"
)

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's times: 100 on every Linux
// architecture Go supports (the kernel fixes it for user space whatever its own HZ).
const clockTicks = 100

// ReadCPU returns the CPU time process pid has used so far, user and system together, from
// /proc/<pid>/stat (utime and stime; its children's are not counted).
func ReadCPU(pid int) (time.Duration, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0, err
	}
	return parseCPU(string(b))
}

func parseCPU(stat string) (time.Duration, error) {
	// pid (comm) state ppid ... : comm may hold spaces, so count fields after the last ')'.
	// utime and stime are fields 14 and 15 of the line, 12 and 13 after it (0-based 11, 12).
	f := strings.Fields(stat[strings.LastIndex(stat, ")")+1:])
	if len(f) < 13 {
		return 0, fmt.Errorf("stat has %d fields after the command, want at least 13", len(f))
	}
	var ticks int64
	for _, s := range f[11:13] {
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return 0, fmt.Errorf("stat utime/stime %q: %w", s, err)
		}
		ticks += n
	}
	return time.Duration(ticks) * time.Second / clockTicks, nil
}
