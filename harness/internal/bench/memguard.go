package bench

import (
	"informer-lab/compare/analysis"

	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// perObjectOverhead is what one ConfigMap costs beyond its data, in the apiserver's cache and
// in each informer's: metadata, the decoded Go structs, the store's index entry. It matters
// for many small objects only.
const perObjectOverhead = 2 << 10

// Load is one case at its largest K: what the memory guard sizes.
type Load struct {
	Case    string
	Noun    string // what the objects are: ConfigMaps, Secrets, Pods (nounOf)
	Objects int
	Size    int64 // data bytes per object
	K       int   // informers started at once
}

// Estimate is the memory a LIST→WATCH start-up of l may take at its peak, apiserver and lab
// together: every informer receives the whole collection at once (the apiserver builds each
// response, the client holds the body, decodes it and fills its cache), factor times the data.
func Estimate(l Load, factor float64) int64 {
	return int64(float64(l.Objects) * float64(l.Size+perObjectOverhead) * float64(l.K) * factor)
}

// Guard refuses loads whose estimate exceeds the memory available, so that the kernel's OOM
// killer never picks a victim in the middle of a run.
func Guard(loads []Load, factor float64, memAvailable int64) error {
	for _, l := range loads {
		if est := Estimate(l, factor); est > memAvailable {
			return fmt.Errorf("case %s would need about %s (%d %s × %s × %d informers × factor %g), more than the %s available (MemAvailable): lower the count, the size or -k",
				l.Case, FormatBytes(est), l.Objects, l.Noun, FormatBytes(l.Size), l.K, factor, FormatBytes(memAvailable))
		}
	}
	return nil
}

// MemAvailable reads MemAvailable, in bytes, from a /proc/meminfo.
func MemAvailable(meminfo io.Reader) (int64, error) {
	return meminfoField(meminfo, "MemAvailable")
}

func meminfoField(meminfo io.Reader, field string) (int64, error) {
	sc := bufio.NewScanner(meminfo)
	for sc.Scan() {
		name, rest, ok := strings.Cut(sc.Text(), ":")
		if !ok || name != field {
			continue
		}
		f := strings.Fields(rest) // "23526440 kB"
		if len(f) != 2 || f[1] != "kB" {
			return 0, fmt.Errorf("meminfo %s: unexpected value %q", field, rest)
		}
		kb, err := strconv.ParseInt(f[0], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("meminfo %s: %w", field, err)
		}
		return kb << 10, nil
	}
	if err := sc.Err(); err != nil {
		return 0, err
	}
	return 0, fmt.Errorf("meminfo has no %s line", field)
}

// FormatBytes renders n in binary units, e.g. "512 KiB", "9.6 GiB": compare's own rendering.
var FormatBytes = analysis.FormatBytes
