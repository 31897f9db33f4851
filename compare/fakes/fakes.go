// Package fakes renders docs/fakes.md from the records of lab -fakes runs, one per lab module:
// how long each test double's informer takes until HasSynced, per client-go version and
// WatchListClient gate, what client-go logged meanwhile, and the one line that fixes it.
package fakes

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"time"

	"informer-lab/record"
)

// Lab is one lab module's -fakes run.
type Lab struct {
	Name              string // the records' source: client-v031, ...
	ClientGo          string
	ControllerRuntime string
	Results           map[string]record.Record // by record.FakeTag: its SETUP fake record
	Klog              map[string][]string      // by record.FakeTag: what client-go logged, in order
	Start, End        time.Time
}

// Load reads every *.jsonl in dir as one lab's -fakes run, in name order.
func Load(dir string) ([]Lab, error) {
	files, err := record.Files(filepath.Join(dir, "*.jsonl"), "make fakes")
	if err != nil {
		return nil, err
	}
	var labs []Lab
	for _, f := range files {
		recs, err := record.ReadFile(f)
		if err != nil {
			return nil, err
		}
		l := Lab{Results: map[string]record.Record{}, Klog: map[string][]string{}}
		for _, r := range recs {
			if l.Start.IsZero() {
				l.Start, l.Name = r.Time, r.Source
			}
			l.End = r.Time
			if r.Kind != record.Setup {
				continue
			}
			switch r.Step {
			case record.StepClientGo:
				l.ClientGo = r.Value
			case record.StepControllerRuntime:
				l.ControllerRuntime = r.Value
			case record.StepFake:
				l.Results[r.Tag] = r
			case record.StepKlog:
				l.Klog[r.Tag] = append(l.Klog[r.Tag], r.Value)
			}
		}
		if len(l.Results) == 0 {
			return nil, fmt.Errorf("%s: no %s records: not a lab -fakes run", f, record.StepFake)
		}
		labs = append(labs, l)
	}
	return labs, nil
}

// Render is docs/fakes.md.
func Render(labs []Lab) (string, error) {
	if len(labs) == 0 {
		return "", errors.New("no labs")
	}
	var b strings.Builder
	start, end := labs[0].Start, labs[0].End
	for _, l := range labs {
		if l.Start.Before(start) {
			start = l.Start
		}
		if l.End.After(end) {
			end = l.End
		}
	}
	fmt.Fprintf(&b, "# informer-lab: fakes and test doubles\n\n%s · %s on %s/%s, %d cores · %s in total\n\n",
		start.UTC().Format("2006-01-02 15:04 UTC"), runtime.Version(), runtime.GOOS, runtime.GOARCH, runtime.NumCPU(), end.Sub(start).Round(time.Second))
	b.WriteString("Made by `make fakes`, from the run's own records: each lab module run as `go run ./client-v0XX -fakes`, which needs no server. ")
	b.WriteString("Each stand-in's informer runs in a process of its own, once with the WatchListClient gate off and once on, ")
	b.WriteString("seeded with two ConfigMaps and given " + wait(labs) + " to sync; the time is from building the fake to `HasSynced`.\n\n")
	b.WriteString(intro)

	b.WriteString("## Time until HasSynced\n\n")
	for _, gate := range []string{"off", "on"} {
		fmt.Fprintf(&b, "WatchListClient **%s**:\n\n", gate)
		b.WriteString(header(labs))
		for _, s := range record.FakeStandIns {
			cells := []string{"`" + s.Name + "`"}
			for _, l := range labs {
				cells = append(cells, cell(l.Results[record.FakeTag(s.Name, gate)]))
			}
			b.WriteString("| " + strings.Join(cells, " | ") + " |\n")
		}
		b.WriteString("\n")
	}

	loggedSection(&b, labs)
	b.WriteString("\n## The one-line fix\n\n| stand-in | where it does not sync by itself |\n| --- | --- |\n")
	for _, s := range record.FakeStandIns {
		fmt.Fprintf(&b, "| `%s` | %s |\n", s.Name, strings.ReplaceAll(s.Fix, "|", "\\|"))
	}
	b.WriteString("\n## The stand-ins\n\n| stand-in | what the unit test builds |\n| --- | --- |\n")
	for _, s := range record.FakeStandIns {
		fmt.Fprintf(&b, "| `%s` | %s |\n", s.Name, s.Doc)
	}
	b.WriteString(sources)
	return b.String(), nil
}

// loggedSection is the page's "What client-go logs": per stand-in and gate, what client-go
// logged beyond every reflector's own lines, and on which lab modules.
func loggedSection(b *strings.Builder, labs []Lab) {
	b.WriteString("## What client-go logs\n\n")
	b.WriteString("What client-go logged through klog while each informer started, at `-klog-v 4`, " +
		"without the lines every reflector logs (starting, listing and watching, caches populated, stopping); " +
		"times and the reflector's name (its caller's file and line) are shown as `…`. " +
		"Gate on, every stand-in; gate off, those that logged more than those lines.\n\n")
	b.WriteString("| stand-in | gate | lab modules | client-go logged |\n| --- | --- | --- | --- |\n")
	quietOff := true
	for _, gate := range []string{"on", "off"} {
		for _, s := range record.FakeStandIns {
			for _, row := range logged(labs, record.FakeTag(s.Name, gate)) {
				if gate == "off" && row.lines == "nothing" {
					continue
				}
				quietOff = quietOff && gate == "on"
				fmt.Fprintf(b, "| `%s` | %s | %s | %s |\n", s.Name, gate, row.labs, row.lines)
			}
		}
	}
	if quietOff {
		b.WriteString("\nWith the gate off, no stand-in logged more than those lines, on any version.\n")
	}
}

func header(labs []Lab) string {
	cols := []string{"stand-in"}
	for _, l := range labs {
		cols = append(cols, fmt.Sprintf("%s<br>client-go %s<br>controller-runtime %s", l.Name, l.ClientGo, l.ControllerRuntime))
	}
	return "| " + strings.Join(cols, " | ") + " |\n|" + strings.Repeat(" --- |", len(cols)) + "\n"
}

// cell is a result as a table shows it: the time to HasSynced, or how long it was waited for.
func cell(r record.Record) string {
	switch r.Value {
	case record.FakeSynced:
		return strings.TrimPrefix(r.Detail, "in ")
	case record.FakeNotSynced:
		return "**never** (" + strings.TrimPrefix(r.Detail, "waited ") + ")"
	}
	return "no result"
}

// wait is how long the stand-ins were given: the longest a non-synced one waited, rounded.
func wait(labs []Lab) string {
	var longest time.Duration
	for _, l := range labs {
		for _, r := range l.Results {
			if d := time.Duration(r.Millis) * time.Millisecond; r.Value == record.FakeNotSynced && d > longest {
				longest = d
			}
		}
	}
	if longest == 0 {
		return "its wait"
	}
	return longest.Truncate(time.Second).String()
}

// routine are the lines every reflector logs, whatever happens.
var routine = []string{"Starting reflector", "Listing and watching", "Caches populated", "Stopping reflector", "Stopping fake watcher"}

var (
	durationRE = regexp.MustCompile(`\b[0-9]+(\.[0-9]+)?(ns|µs|ms|s)\b`)
	callerRE   = regexp.MustCompile(`pkg/mod/k8s\.io/client-go@v[^:]+:[0-9]+`)
)

type logRow struct{ labs, lines string }

// logged groups the labs by what tag logged there, beyond the routine lines, normalized.
func logged(labs []Lab, tag string) []logRow {
	var rows []logRow
	byLines := map[string]int{}
	for _, l := range labs {
		var lines []string
		for _, line := range l.Klog[tag] {
			if slices.ContainsFunc(routine, func(r string) bool { return strings.Contains(line, r) }) {
				continue
			}
			line = callerRE.ReplaceAllString(durationRE.ReplaceAllString(line, "…"), "…")
			if !slices.Contains(lines, line) {
				lines = append(lines, line)
			}
		}
		text := "nothing"
		if len(lines) > 0 {
			quoted := make([]string, len(lines))
			for i, line := range lines {
				quoted[i] = "`" + strings.ReplaceAll(strings.ReplaceAll(line, "`", "'"), "|", "\\|") + "`"
			}
			text = strings.Join(quoted, "<br>")
		}
		if i, ok := byLines[text]; ok {
			rows[i].labs += ", " + l.Name
			continue
		}
		byLines[text] = len(rows)
		rows = append(rows, logRow{labs: l.Name, lines: text})
	}
	return rows
}

// WriteFile writes the page of the runs in dir to path.
func WriteFile(dir, path string) error {
	labs, err := Load(dir)
	if err != nil {
		return err
	}
	page, err := Render(labs)
	if err != nil {
		return err
	}
	return os.WriteFile(path, []byte(page), 0o644)
}
