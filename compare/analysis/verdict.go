package analysis

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"informer-lab/record"
)

// LabVerdict is the one judgement of a lab, made once (analyzeLab, then Analyze for what takes
// the whole run) by the rule of its scenario's Check. The terminal table and compare.txt
// (Verdict, Table), report.html and the matrix's cells render it; none judges again. Its facts
// are gathered whatever the Check, so that a renderer may show them by another scenario's rule
// (a matrix cell of a run that recorded no scenario).
type LabVerdict struct {
	Informers []InformerVerdict // in the lab's Tags order
	// SteadyExcuse is why the lab's steady events need not be the harness's writes
	// (ExcuseFault, ExcuseReread), "" when they must (labExcuse).
	SteadyExcuse string
	// SequenceDiffers says how the lab's steady event sequences differ from the one most
	// watchers of the run saw, or that no sequence is shared by most; "" when they do not.
	SequenceDiffers string
	// Recovered is, after an injected fault, the time from the run's recovery (its injection,
	// when it recorded none) to the lab's slowest informer back in sync, at least 0; nil when
	// no informer synced or one never came back.
	Recovered *time.Duration
	// Findings are what happened that the verdict names without failing it: an initial
	// stream cut before its end bookmark (cutFinding).
	Findings []string
}

// InformerVerdict is one informer's part of its lab's verdict.
type InformerVerdict struct {
	Tag    string
	Synced bool // it reported synced
	// Agrees says its handshake is the one the gates imply and it synced; true when nothing is
	// expected (a fault scenario, no gate record).
	Agrees bool
	Steady string // its steady events against the writes: "3/3 writes, same rvs", or how they differ
	Excuse string // why Steady need not be the writes (steadyExcuse), "" when it must
	After  []Step // what it did on the wire after its sync
	// Recovery is what it did from the injected fault until it was back in sync (all of it when
	// it never was); Back says it was. Empty without an injected fault.
	Recovery []Step
	Back     bool
	// Kept names the server that kept its watch through the injected fault, behind a balancer
	// in front of two (the fault took down the other one): it had nothing to recover (Back,
	// Recovery empty).
	Kept string `json:",omitempty"`
}

// Agrees says every informer of the lab agrees with what its gates imply.
func (v LabVerdict) Agrees() bool {
	return !slices.ContainsFunc(v.Informers, func(iv InformerVerdict) bool { return !iv.Agrees })
}

// The excuses for steady events that are not the harness's writes.
const (
	ExcuseFault  = "after a fault"
	ExcuseReread = "after a relist or a new stream"
)

// steadyExcuse says why an informer's steady events need not be the harness's writes, "" when
// they must. After a fault the harness injected, a reflector may relist and see writes again:
// the claim that holds then is recovery (a new watch, a cache equal to the server's), not the
// sequence. So it is where watches are ended on purpose (the scenario's Rewatches) for a
// watcher that read its state again (a relist, or a stream's initial events once more); one
// that only watched again from its last rv must still have seen every write.
func (rep *Report) steadyExcuse(reread bool) string {
	switch {
	case rep.Injected != "":
		return ExcuseFault
	case rep.scenario().Rewatches && reread:
		return ExcuseReread
	}
	return ""
}

// labExcuse is the excuse every difference of the lab's steady phase from the writes
// (steadyProblems) has, "" when one has none: an informer that never synced has one only after
// a fault, which excuses everything.
func (rep *Report) labExcuse(l *LabReport) string {
	if rep.Injected != "" {
		return ExcuseFault
	}
	if len(l.Unsynced) > 0 {
		return ""
	}
	excuse := ""
	for _, iv := range l.Verdict.Informers {
		if l.Watchers[iv.Tag].Mismatch == "" {
			continue
		}
		if iv.Excuse == "" {
			return ""
		}
		excuse = iv.Excuse
	}
	return excuse
}

// steadyText says how an informer's steady events compare with the writes.
func (rep *Report) steadyText(w *Watcher, synced bool) string {
	switch {
	case !synced && rep.SyncWait > 0:
		return fmt.Sprintf("not synced after %s", rep.SyncWait)
	case !synced:
		return "never synced"
	case w.Mismatch != "":
		return w.Mismatch
	}
	return fmt.Sprintf("%d/%d writes, same rvs", len(w.Events), w.Expected)
}

// recovery is what an informer did from the injected fault at on until it was back in sync.
func recovery(after []record.Record, at time.Time) (steps []Step, back bool) {
	steps = Steps(after, at)
	if i := FirstResync(steps); i >= 0 {
		return steps[:i+1], true
	}
	return steps, false
}

// recovered is the time from the run's recovery to the lab's slowest synced informer back in
// sync (see LabVerdict.Recovered).
func (rep *Report) recovered(v LabVerdict) *time.Duration {
	if rep.InjectedAt.IsZero() {
		return nil
	}
	from := rep.RecoveredAt
	if from.IsZero() {
		from = rep.InjectedAt
	}
	var slowest time.Duration
	synced := 0
	for _, iv := range v.Informers {
		switch {
		case !iv.Synced, iv.Kept != "":
			continue
		case !iv.Back:
			return nil
		}
		synced++
		slowest = max(slowest, iv.Recovery[len(iv.Recovery)-1].Resync.Sub(from))
	}
	if synced == 0 {
		return nil
	}
	return &slowest
}

// compareSequences sets each lab's SequenceDiffers: how its synced watchers' steady events
// differ from the sequence a strict majority of the run's synced watchers saw; none where the
// writes fall during the sync (DuringSync): each watcher's events start at its own sync point.
func (rep *Report) compareSequences() {
	if rep.scenario().DuringSync {
		return // each informer's events start at its own sync point, among the writes
	}
	seqs := map[string][]string{} // "lab/tag" -> events
	count := map[string]int{}
	for _, l := range rep.Labs {
		for _, iv := range l.Verdict.Informers {
			if !iv.Synced {
				continue // no steady phase: it saw none of the writes, which its verdict says
			}
			var evs []string
			for _, e := range l.Watchers[iv.Tag].Events {
				evs = append(evs, record.EventLine(e.Event, e.Namespace, e.Name, e.RV))
			}
			seqs[l.Name+"/"+iv.Tag] = evs
			count[strings.Join(evs, "\n")]++
		}
	}
	reference, hasRef := majority(count, len(seqs))
	for _, l := range rep.Labs {
		l.Verdict.SequenceDiffers = sequenceDiffers(l, seqs, reference, hasRef)
	}
}

// majority is the sequence a strict majority of total watchers saw (nil when it is no event).
func majority(count map[string]int, total int) (reference []string, ok bool) {
	for seq, n := range count {
		if 2*n <= total {
			continue
		}
		if seq != "" {
			reference = strings.Split(seq, "\n")
		}
		return reference, true
	}
	return nil, false
}

// sequenceDiffers says how the lab's first synced watcher that differs from the reference does.
func sequenceDiffers(l *LabReport, seqs map[string][]string, ref []string, hasRef bool) string {
	for _, iv := range l.Verdict.Informers {
		evs, ok := seqs[l.Name+"/"+iv.Tag]
		switch {
		case !ok:
			continue
		case !hasRef:
			return "no event sequence shared by most watchers of the run"
		case slices.Equal(evs, ref):
			continue
		}
		return iv.Tag + "'s sequence differs from the other cells'" + firstDifference(evs, ref)
	}
	return ""
}

// firstDifference says where evs first differ from ref, which they do.
func firstDifference(evs, ref []string) string {
	for i := 0; ; i++ {
		switch {
		case i >= len(evs):
			return fmt.Sprintf(": it ends at #%d, others go on with %s", i+1, ref[i])
		case i >= len(ref):
			return fmt.Sprintf(": #%d %s is extra", i+1, evs[i])
		case evs[i] != ref[i]:
			return fmt.Sprintf(" at #%d: %s, others %s", i+1, evs[i], ref[i])
		}
	}
}
