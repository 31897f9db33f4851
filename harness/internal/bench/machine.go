package bench

import (
	"bufio"
	"io"
	"os"
	"runtime"
	"strings"
)

// Machine is what the doc's header says about where a run ran.
type Machine struct {
	CPUs       int
	CPUModel   string
	MemTotal   int64
	LoadBefore string // /proc/loadavg's 1, 5 and 15 minute averages
	LoadAfter  string
}

// ReadMachine reads /proc/cpuinfo, /proc/meminfo and /proc/loadavg; what it cannot read stays empty.
func ReadMachine() Machine {
	m := Machine{CPUs: runtime.NumCPU(), LoadBefore: loadAverage()}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		m.CPUModel = cpuModel(f)
		f.Close()
	}
	if f, err := os.Open("/proc/meminfo"); err == nil {
		m.MemTotal, _ = meminfoField(f, "MemTotal")
		f.Close()
	}
	return m
}

func cpuModel(cpuinfo io.Reader) string {
	sc := bufio.NewScanner(cpuinfo)
	for sc.Scan() {
		if name, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(name) == "model name" {
			return strings.TrimSpace(v)
		}
	}
	return "unknown"
}

func loadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "unknown"
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "unknown"
	}
	return strings.Join(f[:3], " ")
}
