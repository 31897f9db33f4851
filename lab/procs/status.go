package procs

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

func parseStatus(r io.Reader) (Mem, error) {
	var m Mem
	var seen int
	sc := bufio.NewScanner(r)
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok || (name != "VmRSS" && name != "VmHWM") {
			continue
		}
		f := strings.Fields(rest)
		if len(f) != 2 || f[1] != "kB" {
			return Mem{}, fmt.Errorf("status %s: unexpected value %q", name, rest)
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return Mem{}, fmt.Errorf("status %s: %w", name, err)
		}
		if name == "VmRSS" {
			m.RSS = kb << 10
		} else {
			m.HWM = kb << 10
		}
		seen++
	}
	if err := sc.Err(); err != nil {
		return Mem{}, err
	}
	if seen != 2 {
		return Mem{}, fmt.Errorf("status without VmRSS and VmHWM (a kernel thread, or a zombie)")
	}
	return m, nil
}
