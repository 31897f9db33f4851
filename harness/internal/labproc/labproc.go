// Package labproc builds a lab module outside the workspace, checks it links its pinned
// client-go, and runs it as a child process whose records the harness collects.
package labproc

import (
	"bufio"
	"context"
	"debug/buildinfo"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"informer-lab/lab/gobuild"
	"informer-lab/lab/pin"
	"informer-lab/lab/process"
	"informer-lab/record"
)

// Build compiles the lab module in dir with GOWORK=off (so its own go.mod's build list holds),
// and refuses a binary whose linked client-go is not the module's pin. The binary is kept
// between runs, in the user's cache directory (one folder per checkout), and built again only
// when a file it is built from changed (lab/gobuild).
func Build(ctx context.Context, dir string) (bin, clientGo string, err error) {
	name := filepath.Base(dir)
	bin, err = gobuild.Cached(ctx, dir)
	if err != nil {
		return "", "", err
	}
	gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	if err != nil {
		return "", "", err
	}
	pinned, err := pin.Pinned(gomod)
	if err != nil {
		return "", "", fmt.Errorf("%s: %w", name, err)
	}
	bi, err := buildinfo.ReadFile(bin)
	if err != nil {
		return "", "", fmt.Errorf("read build info of %s: %w", bin, err)
	}
	linked, err := pin.LinkedIn(bi)
	if err != nil {
		return "", "", err
	}
	if linked != pinned {
		return "", "", fmt.Errorf("%s links client-go %s but pins %s: refusing to run it", name, linked, pinned)
	}
	return bin, linked, nil
}

// Proc is a running lab. Its records are copied line by line, as they come, to its log file.
type Proc struct {
	Name   string
	proc   *process.Process
	mu     sync.Mutex
	synced map[string]bool // tag -> synced
	// tag -> namespace/name -> the watch events of that object, each as much as record.Delivers
	// reads of it beside its object: a lab logging a large initial sync sends hundreds of
	// thousands, and the harness keeps them all.
	events map[string]map[string][]event
	fault  string
	stderr string
	setups []record.Record // every SETUP record, in order (few: versions, gate, server, synced)
	// Per tag, the latest watch that the server accepted (HTTP 200) and the latest sign of a
	// watch that failed (a refused watch, an ERROR event such as 410 Gone, a broken stream).
	watchOK  map[string]time.Time
	watchBad map[string]watchFailure
	// Per tag, the server that accepted its latest watch, where a balancer named it.
	watchServer map[string]string
	// Per tag, whether its latest request was a LIST: the reflector's watch after it has not
	// been answered yet. An informer reports synced once it holds the LIST's items, which can be
	// before that watch's response arrives.
	listedLast map[string]bool
}

// Start runs bin with args; its JSON records (stdout) go to logPath, its stderr to errPath.
func Start(name, bin string, args []string, logPath, errPath string) (*Proc, error) {
	return start(name, bin, args, nil, logPath, errPath, noted)
}

// StartEnv is Start with env added to the harness's environment: client-go's switches that
// only an environment variable turns on (its inconsistency detectors).
func StartEnv(name, bin string, args, env []string, logPath, errPath string) (*Proc, error) {
	return start(name, bin, args, env, logPath, errPath, noted)
}

// StartSetups is Start for a caller that waits on the lab's SETUP records only (Synced, Setups,
// Exited: a benchmark): its other lines go to logPath undecoded. Decoding the 320,000 watch
// events of 16 informers syncing 20,000 objects cost the harness seconds of CPU on the cores the
// lab being measured runs on.
func StartSetups(name, bin string, args []string, logPath, errPath string) (*Proc, error) {
	return start(name, bin, args, nil, logPath, errPath, map[record.Kind]bool{record.Setup: true})
}

// start is Start, with env added, decoding the records of the kinds in decode.
func start(name, bin string, args, env []string, logPath, errPath string, decode map[record.Kind]bool) (*Proc, error) {
	logFile, err := os.OpenFile(logPath, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	errFile, err := os.OpenFile(errPath, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		logFile.Close()
		return nil, err
	}
	p := newProc(name, errPath)
	cmd := exec.Command(bin, args...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	cmd.Stderr = errFile
	// The lines go to the file in one write per read from the pipe (StdoutDrained): a lab logging
	// every watch event writes hundreds of thousands of lines, and what was read is on disk
	// before the harness waits for more. Only the records note follows are decoded.
	log := bufio.NewWriterSize(logFile, 1<<20)
	p.proc, err = process.Start(cmd, process.Options{What: "lab " + name, Stdout: func(line []byte) {
		log.Write(line)
		if kind, ok := record.KindOf(line); ok && !decode[kind] {
			return
		}
		if rec, perr := record.Parse(line); perr == nil {
			p.note(rec)
		}
	}, StdoutDrained: func() { log.Flush() }})
	if err != nil {
		logFile.Close()
		errFile.Close()
		return nil, err
	}
	go func() {
		<-p.proc.Done()
		logFile.Close()
		errFile.Close()
	}()
	return p, nil
}

func newProc(name, stderr string) *Proc {
	return &Proc{Name: name, stderr: stderr, synced: map[string]bool{}, events: map[string]map[string][]event{},
		watchOK: map[string]time.Time{}, watchBad: map[string]watchFailure{}, watchServer: map[string]string{}, listedLast: map[string]bool{}}
}

// watchFailure is the latest sign that a watch failed: when, and what it was (a status, an
// error, a broken stream's reason).
type watchFailure struct {
	at  time.Time
	why string
}

// noted are the kinds of record note reads; the harness only copies the others (the lab's
// HANDLER, LIST and MUTATOR records) to the log.
var noted = map[record.Kind]bool{record.Setup: true, record.HTTP: true, record.WatchEvent: true}

// note keeps what the harness waits on from one of the lab's records.
func (p *Proc) note(r record.Record) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if r.Kind == record.Setup {
		p.setups = append(p.setups, r)
	}
	if r.Kind == record.HTTP {
		p.listedLast[r.Tag] = !record.IsWatch(r)
	}
	switch {
	case r.Kind == record.Setup && r.Step == record.StepSynced:
		p.synced[r.Tag] = true
	case r.Kind == record.Setup && r.Step == record.StepFault && p.fault == "":
		p.fault = r.Value + ": " + r.Detail
	case r.Kind == record.WatchEvent && r.Name != "":
		if p.events[r.Tag] == nil {
			p.events[r.Tag] = map[string][]event{}
		}
		obj := object(r)
		p.events[r.Tag][obj] = append(p.events[r.Tag][obj], event{r.Event, r.RV})
	case record.IsWatch(r):
		if r.Status == 200 && r.Error == "" {
			p.watchOK[r.Tag] = r.Time
			p.watchServer[r.Tag] = r.Server
		} else {
			p.watchBad[r.Tag] = watchFailure{r.Time, strings.TrimSpace(fmt.Sprintf("watch answered %d %s", r.Status, r.Error))}
		}
	case r.Kind == record.WatchEvent && r.Event == record.EventError:
		p.watchBad[r.Tag] = watchFailure{r.Time, strings.TrimSpace("an ERROR event " + r.Detail)}
	case r.Kind == record.Setup && r.Step == record.StepBroken:
		p.watchBad[r.Tag] = watchFailure{r.Time, strings.TrimSpace("stream broken " + r.Detail)}
	}
}

// Watching reports whether every one of tags has a watch the server accepted after since,
// with no failure after it for at least stable: a 410 arrives as an ERROR event just after
// the 200, so a watch counts as re-established only once it has held for a moment. With down
// (behind a balancer: the server that went down at since, as Record.Server names it), a watch
// another server accepted before since, and that has not failed since, holds too: its server
// never went away.
func (p *Proc) Watching(since time.Time, stable time.Duration, down string, tags ...string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, t := range tags {
		ok := p.watchOK[t]
		if down != "" && p.watchServer[t] != "" && p.watchServer[t] != down && ok.After(p.watchBad[t].at) {
			continue
		}
		if !ok.After(since) || !ok.After(p.watchBad[t].at) || time.Since(ok) < stable {
			return false
		}
	}
	return true
}

// WatchState says, for each of tags, when its latest accepted watch began and which server
// accepted it, and when and how a watch of it last failed, in seconds from since: what a wait
// for re-established watches (Watching) reports when it runs out.
func (p *Proc) WatchState(since time.Time, tags ...string) string {
	p.mu.Lock()
	defer p.mu.Unlock()
	at := func(t time.Time) string { return fmt.Sprintf("%+.1fs", t.Sub(since).Seconds()) }
	var parts []string
	for _, t := range tags {
		s := t + ": no watch accepted"
		if ok := p.watchOK[t]; !ok.IsZero() {
			s = t + ": watch accepted at " + at(ok)
			if p.watchServer[t] != "" {
				s += " by " + p.watchServer[t]
			}
		}
		if bad := p.watchBad[t]; !bad.at.IsZero() {
			s += ", failed at " + at(bad.at) + " (" + bad.why + ")"
		}
		parts = append(parts, s)
	}
	return strings.Join(parts, "; ")
}

// WatchAnswered reports whether every one of tags has had its latest request answered as a
// watch: a run that stops a lab just after its informers synced would otherwise cut the watch
// that completes a LIST→WATCH handshake before the server answered it (WATCH(error)).
func (p *Proc) WatchAnswered(tags ...string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, t := range tags {
		if p.listedLast[t] {
			return false
		}
	}
	return true
}

// Synced reports whether every one of tags has reported its informer synced.
func (p *Proc) Synced(tags ...string) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, t := range tags {
		if !p.synced[t] {
			return false
		}
	}
	return true
}

// Setups returns the SETUP records the lab wrote so far, in order: a benchmark reads the
// synced records' times and Stats from them.
func (p *Proc) Setups() []record.Record {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]record.Record(nil), p.setups...)
}

// PID returns the lab's process id, e.g. to read its memory.
func (p *Proc) PID() int { return p.proc.PID() }

// Signal sends the lab a signal of a fault (SIGKILL, SIGSTOP).
func (p *Proc) Signal(sig syscall.Signal) error { return p.proc.Signal(sig) }

// Missing returns how many of writes (their MUTATOR records) the watchers of tags have not
// delivered, by compare's rule (record.Delivers: the same event type, object and rv). Live, the
// events may have come in any order: the harness only waits until every write has arrived, and
// compare checks afterwards, from the logs, that each watcher delivered them in order.
func (p *Proc) Missing(writes []record.Record, tags ...string) int {
	p.mu.Lock()
	defer p.mu.Unlock()
	n := 0
	for _, t := range tags {
		for _, w := range writes {
			delivers := func(ev event) bool {
				return record.Delivers(w, record.Record{Kind: record.WatchEvent, Event: ev.typ, Namespace: w.Namespace, Name: w.Name, RV: ev.rv})
			}
			if !slices.ContainsFunc(p.events[t][object(w)], delivers) {
				n++
			}
		}
	}
	return n
}

// event is one watch event of an object: its type and rv.
type event struct{ typ, rv string }

// object names a write's or an event's object: Missing looks only at that object's events.
func object(r record.Record) string { return r.Namespace + "/" + r.Name }

// Exited returns a description of how the lab ended, or "" while it runs.
func (p *Proc) Exited() string {
	if exited, err := p.proc.Exited(); exited {
		return fmt.Sprintf("%s exited (%v); last stderr lines:\n%s", p.Name, err, tail(p.stderr, 10))
	}
	return ""
}

// Stop asks the lab to stop (SIGINT, what Ctrl-C sends), then kills it after grace: only that
// kill is an error, not the lab's exit status. A lab exits 1 when some of its informers had not
// synced by then, and its last record names them: against a server that does not play along,
// or with a kind that does not follow the protocol, that is the cell's finding, which compare
// reads from the records, not a failure of the run. (A lab that exits during the run fails it:
// Exited, which the harness polls until it stops the labs.)
func (p *Proc) Stop(grace time.Duration) error { return p.proc.Stop(grace) }

func tail(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
