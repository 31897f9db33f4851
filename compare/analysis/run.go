// Package analysis reads a harness run directory, splits each lab's wire log into its
// initial-sync and steady phases, diffs the labs against each other and checks them
// against the harness's writes and the gates that decide their handshake.
package analysis

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"informer-lab/record"
)

// HarnessFile is the log the harness writes beside the labs' logs.
const HarnessFile = "harness.jsonl"

// Run is one run directory as read from disk.
type Run struct {
	Dir         string
	Harness     []record.Record
	Server      string // kube-apiserver version, from the harness's SETUP server record
	ServerGates string // its feature-gates flag, "" for the defaults
	Labs        []*Lab // sorted by name; Labs[0] is the baseline of every diff
}

// Lab is one lab's log. Its name is its file name without .jsonl, which every record's Source must match.
type Lab struct {
	Name    string
	File    string
	Records []record.Record // the informers' records and the lab's SETUP facts: what compare diffs
	Direct  []record.Record // the lab's direct typed List() (tag record.TagDirect), kept apart: not an informer
	Server  []record.Record // the lab's requests about its server (tag record.TagServer): its GET /version
	Klog    []record.Record // what client-go logged through klog outside the direct List(): its own words, not the wire
}

// LoadRun reads harness.jsonl and every other *.jsonl in dir. It refuses a directory it cannot
// analyze honestly: a missing or empty log, a truncated or foreign line, a log copied under
// another lab's name, or a harness that recorded two different servers.
func LoadRun(dir string) (*Run, error) {
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("run directory: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("%s: not a directory", dir)
	}
	run := &Run{Dir: dir}
	hpath := filepath.Join(dir, HarnessFile)
	run.Harness, err = readLog(hpath, "harness")
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("%s: no %s: not a run directory written by the harness", dir, HarnessFile)
	}
	if err != nil {
		return nil, err
	}
	if err := run.readServer(hpath); err != nil {
		return nil, err
	}

	paths, err := filepath.Glob(filepath.Join(dir, "*.jsonl"))
	if err != nil {
		return nil, fmt.Errorf("%s: %w", dir, err)
	}
	sort.Strings(paths)
	for _, p := range paths {
		if filepath.Base(p) == HarnessFile {
			continue
		}
		name := strings.TrimSuffix(filepath.Base(p), ".jsonl")
		recs, err := readLog(p, name)
		if err != nil {
			return nil, err
		}
		lab := &Lab{Name: name, File: p}
		for _, r := range recs {
			switch {
			case r.Tag == record.TagDirect:
				lab.Direct = append(lab.Direct, r)
			case r.Tag == record.TagServer:
				lab.Server = append(lab.Server, r)
			case r.Kind == record.Setup && r.Step == record.StepKlog:
				lab.Klog = append(lab.Klog, r)
			default:
				lab.Records = append(lab.Records, r)
			}
		}
		run.Labs = append(run.Labs, lab)
	}
	if len(run.Labs) == 0 {
		return nil, fmt.Errorf("%s: no lab logs (<lab>.jsonl) beside %s", dir, HarnessFile)
	}
	return run, nil
}

// readLog reads one log and checks every record was written by source. A log whose records carry
// another source was copied or renamed: comparing it would compare a lab with itself.
func readLog(path, source string) ([]record.Record, error) {
	recs, err := record.ReadFile(path)
	if err != nil {
		return nil, err // a *record.ParseError or an os error: both name the file
	}
	for i, r := range recs {
		if r.Source != source {
			return nil, &record.ParseError{File: path, Line: lineOf(path, i),
				Err: fmt.Errorf("record source %q, but the file is named for %q (a log copied or renamed?)", r.Source, source)}
		}
	}
	return recs, nil
}

// readServer takes the server facts from the harness's SETUP server records. Two different
// ones mean logs of two servers were mixed into one directory.
func (run *Run) readServer(path string) error {
	seen := false
	for i, r := range run.Harness {
		if r.Kind != record.Setup || r.Step != record.StepServer {
			continue
		}
		if seen && (r.Value != run.Server || r.Detail != run.ServerGates) {
			return &record.ParseError{File: path, Line: lineOf(path, i),
				Err: fmt.Errorf("a second server %s (gates %q) after %s (gates %q): logs of two servers in one run", r.Value, r.Detail, run.Server, run.ServerGates)}
		}
		seen, run.Server, run.ServerGates = true, r.Value, r.Detail
	}
	if !seen {
		return &record.ParseError{File: path, Line: 1, Err: errors.New("no SETUP server record: which server was this?")}
	}
	return nil
}

// lineOf returns the line number of the i-th record of a log: record.Read skips blank lines,
// so the index alone may be off. Only called to word an error.
func lineOf(path string, i int) int {
	data, err := os.ReadFile(path)
	if err != nil {
		return i + 1
	}
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(nil, len(data)+1)
	for n := 1; sc.Scan(); n++ {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		if i == 0 {
			return n
		}
		i--
	}
	return i + 1
}
