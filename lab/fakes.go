package lab

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"informer-lab/lab/fakes"
	"informer-lab/lab/process"
	"informer-lab/record"
)

// fakesAll is -fakes set alone: every stand-in, with the gate off and on.
const fakesAll = "all"

// fakesWait is how long a stand-in is given to sync when -duration does not say: past the
// second tick of the 10 s ticker with which a reflector that waits for the end of a streaming
// list says so in klog (tools/cache/reflector.go, newInitialEventsEndBookmarkTicker), the line a
// stall is known by. Not the first: a reflector that received the fake's objects warns only once
// the last of them is 10 s old (produceWarningIfExpired: elapsedTime >= tickInterval), and they
// arrive just after the ticker starts, so the first tick, 10 s in, may find them a few
// milliseconds younger than that (it did under make test's load: not synced after 12 s, and
// nothing logged).
const fakesWait = 21 * time.Second

// fakesFlag is -fakes, set alone (every stand-in of lab/fakes, gate off and on, each in a
// process of its own, since the gate and klog are process-wide) or with one stand-in's name
// (that one, in this process, at the -watch-list gate).
type fakesFlag struct{ v *string }

func (f fakesFlag) String() string {
	if f.v == nil {
		return ""
	}
	return *f.v
}

func (f fakesFlag) Set(s string) error {
	switch s {
	case "true":
		*f.v = fakesAll
	case "false":
		*f.v = ""
	default:
		*f.v = s
	}
	return nil
}

func (fakesFlag) IsBoolFlag() bool { return true }

var fakesUsage = "time client-go's and controller-runtime's test doubles until HasSynced, with no server: alone, every stand-in with the gate off and on, each given -duration (default " + fakesWait.String() + "); =NAME, one of them at the -watch-list gate"

// runFakes is the lab's -fakes: no server, no writer; each stand-in's informer started the way
// a unit test starts it, timed until HasSynced, with what client-go logged meanwhile.
func runFakes(ctx context.Context, opts options, out *record.Writer) error {
	if opts.kubeconfig != "" {
		return usageError{errors.New("-fakes runs client-go's test doubles, which need no server: drop -kubeconfig")}
	}
	wait := opts.duration
	if wait == 0 {
		wait = fakesWait
	}
	if opts.fakes == fakesAll {
		return runEveryFake(ctx, opts, wait, out)
	}
	s, ok := fakes.Lookup(opts.fakes)
	if !ok {
		return usageError{fmt.Errorf("-fakes is set alone (every stand-in) or to one of %s, got %q", strings.Join(record.FakeStandInNames(), ", "), opts.fakes)}
	}
	gate, how, err := setWatchListGate(opts.gate)
	if err != nil {
		return err
	}
	tag := record.FakeTag(s.Name, gate)
	out.Setup(tag, record.StepGate, gate, how)
	klogs := &klogRecorder{stop: func() {}}
	if opts.klogV >= 0 {
		klogs = recordKlog(out, opts.klogV)
	}
	res, err := s.Run(ctx, wait)
	klogs.Stop() // what client-go logged comes before the verdict
	if err != nil {
		return err
	}
	rec := record.Record{Kind: record.Setup, Tag: tag, Step: record.StepFake, Millis: res.Took.Milliseconds(), Items: res.Items}
	if res.Synced {
		rec.Value, rec.Detail = record.FakeSynced, "in "+res.Took.Round(10*time.Microsecond).String()
	} else {
		rec.Value, rec.Detail = record.FakeNotSynced, "waited "+res.Took.Round(time.Millisecond).String()
	}
	out.Write(rec)
	if !res.Synced {
		out.Stop("informers stopped", "not synced: "+tag)
		return fmt.Errorf("informer not synced when the lab stopped: %s", tag)
	}
	out.Stop("informers stopped", "")
	return nil
}

// runEveryFake runs this binary once per stand-in and gate, all at once, and passes on their
// records under their tag: the whole run takes one wait, however many stand-ins stall. It exits
// 0 when every one reported, synced or not: a stall is what it measures, not its failure.
func runEveryFake(ctx context.Context, opts options, wait time.Duration, out *record.Writer) error {
	self, err := os.Executable()
	if err != nil {
		return fmt.Errorf("-fakes: find this binary to run each stand-in: %w", err)
	}
	out.Setup("", record.StepControllerRuntime, fakes.ControllerRuntime(), "the controller-runtime stand-ins'")
	var (
		mu       sync.Mutex
		reported = map[string]bool{}
		unsynced []string
		children []*process.Process
		stderrs  []*strings.Builder
		tags     []string
	)
	for _, s := range fakes.StandIns {
		for _, gate := range []string{GateOff, GateOn} {
			tag := record.FakeTag(s.Name, gate)
			cmd := exec.Command(self, "-fakes="+s.Name, "-watch-list="+gate, "-records=-", "-duration="+wait.String(),
				"-klog-v="+strconv.Itoa(opts.klogV), "-name="+opts.name)
			stderr := &strings.Builder{}
			cmd.Stderr = stderr
			p, err := process.Start(cmd, process.Options{What: "lab -fakes=" + s.Name + " -watch-list=" + gate, Stdout: func(line []byte) {
				r, err := record.Parse(line)
				if err != nil {
					out.Setup(tag, record.StepFault, "not a record", strings.TrimSpace(string(line)))
					return
				}
				switch r.Step {
				case record.StepClientGo, record.StepStopped: // this process writes its own
					return
				case record.StepFake:
					mu.Lock()
					reported[tag] = true
					if r.Value != record.FakeSynced {
						unsynced = append(unsynced, tag)
					}
					mu.Unlock()
				}
				if r.Tag == "" { // klog's lines: the child's alone
					r.Tag = tag
				}
				out.Write(r)
			}})
			if err != nil {
				for _, c := range children {
					c.Stop(time.Second)
				}
				return err
			}
			children, stderrs, tags = append(children, p), append(stderrs, stderr), append(tags, tag)
		}
	}
	limit := time.After(wait + 30*time.Second) // a child that outlives its own wait by far is stuck
	for _, c := range children {
		select {
		case <-c.Done():
		case <-ctx.Done():
		case <-limit:
		}
	}
	var missing []string
	for i, c := range children {
		c.Stop(5 * time.Second)
		if !reported[tags[i]] {
			missing = append(missing, tags[i])
			out.Setup(tags[i], record.StepFault, "no result", record.OneLine(errors.New(stderrs[i].String())))
		}
	}
	detail := ""
	if len(unsynced) > 0 {
		sort.Strings(unsynced)
		detail = "not synced: " + strings.Join(unsynced, ", ")
	}
	out.Stop("informers stopped", detail)
	if ctx.Err() != nil {
		return nil // Ctrl-C: what was measured so far is written
	}
	if len(missing) > 0 {
		return fmt.Errorf("-fakes: no result from %s", strings.Join(missing, ", "))
	}
	return nil
}
