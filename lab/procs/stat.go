package procs

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// The formats of Linux's /proc/<pid>/stat and /proc/<pid>/status, parsed apart from reading
// them so that the tests run on every system.

// clockTicks is USER_HZ, the unit of /proc/<pid>/stat's times: 100 on every Linux
// architecture Go supports (the kernel fixes it for user space whatever its own HZ).
const clockTicks = 100

// statFields returns a /proc/<pid>/stat line's fields after the command, state first:
// "pid (comm) state ppid ...", where comm may hold spaces, so split after the last ')'.
func statFields(stat string) ([]string, bool) {
	i := strings.LastIndex(stat, ")")
	if i < 0 {
		return nil, false
	}
	return strings.Fields(stat[i+1:]), true
}

func parseCPU(stat string) (time.Duration, error) {
	// utime and stime are fields 14 and 15 of the line, 12 and 13 after the command (0-based 11, 12).
	f, _ := statFields(stat)
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
