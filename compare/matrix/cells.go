package matrix

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"informer-lab/compare/analysis"
	"informer-lab/record"
)

// Cells returns one cell per lab of one analyzed run of scenario. Log and Run are left for the
// caller (Result.Add fills them).
func Cells(scenario string, rep *analysis.Report) []Cell { return cells(scenario, rep, "") }

// kindCells are the cells of a run of one informer kind in a grid with a kind axis: each cell
// names its kind, and says whether its informers synced (as a fault scenario's do), since an
// informer that never syncs is what such a grid shows, not a failed run.
func kindCells(scenario, kind string, rep *analysis.Report) []Cell { return cells(scenario, rep, kind) }

func cells(scenario string, rep *analysis.Report, kind string) []Cell {
	var out []Cell
	for _, l := range rep.Labs {
		out = append(out, labCell(scenario, rep, l, kind))
	}
	return out
}

// labCell is one lab's cell: its verdict (analysis.LabVerdict) as the scenario's Check shows it,
// what the verdict found, its lost data and its problems.
func labCell(scenario string, rep *analysis.Report, l *analysis.LabReport, kind string) Cell {
	check := record.ScenarioOf(scenario).Check
	// A run that gave its informers a limited wait (a fault scenario, an informer kind other
	// than typed-configmaps) went on with what synced: an informer that did not is the
	// verdict, its empty cache no lost data.
	waited := rep.SyncWait > 0
	c := Cell{Scenario: scenario, Server: ServerOf(rep).Name, Client: l.Name, Kind: kind, Agrees: true, SyncMillis: syncMillis(l)}
	if waited {
		c.SyncWait = rep.SyncWait.String()
	}
	if c.syncRecorded() {
		c.Synced = len(l.Unsynced) == 0
	}
	c.render(check, rep, l)
	if f := l.Verdict.Findings; len(f) > 0 {
		c.Verdict += "; " + strings.Join(f, "; ")
	}
	c.Lost = lost(l, waited)
	c.Problems = problems(rep, l, waited)
	if rep.FreshList == nil {
		c.Problems = append(c.Problems, "no fresh LIST in the run: caches not checked against the server")
	}
	if rep.Scenario != "" && rep.Scenario != scenario {
		c.Problems = append(c.Problems, fmt.Sprintf("the run recorded scenario %s, not %s", rep.Scenario, scenario))
	}
	if kind != "" && l.Kind != kind && (l.Kind != "" || kind != record.KindTypedConfigMaps) {
		c.Problems = append(c.Problems, fmt.Sprintf("the lab recorded informer kind %q, not %s", l.Kind, kind))
	}
	return c
}

// render writes the cell's verdict as the rule check shows a lab's verdict.
func (c *Cell) render(check record.Check, rep *analysis.Report, l *analysis.LabReport) {
	switch check {
	case record.CheckFault:
		c.Verdict = faultVerdict(rep, l)
	case record.CheckHandshake:
		c.Verdict, c.Expected, c.Agrees = startupVerdict(rep, l, c.Kind != "")
	case record.CheckDirectList:
		c.Verdict = "no direct List() recorded"
		if l.Direct != nil {
			c.Verdict = l.Direct.Label
		}
	case record.CheckDelivery:
		c.Verdict = perInformer(l, func(iv analysis.InformerVerdict) string { return iv.Steady })
		if d := l.Verdict.SequenceDiffers; d != "" {
			c.SeqDiffers = true
			c.Verdict += "; " + d
		}
	case record.CheckRewatch:
		c.Verdict = reconnectVerdict(l)
	case record.CheckRecovery:
		c.Verdict, c.RecoverMillis = recoveryVerdict(rep, l)
	default:
		c.Verdict = fmt.Sprintf("unknown scenario %q", c.Scenario)
	}
}

// syncMillis is the initial sync of the lab's slowest informer: first request to synced.
func syncMillis(l *analysis.LabReport) int64 {
	var d time.Duration
	for _, tag := range l.Tags {
		d = max(d, l.SyncTime[tag])
	}
	return d.Milliseconds()
}

// perTag shows one text when every informer has it, else "A: …; B: …".
func perTag(l *analysis.LabReport, text func(tag string) string) string {
	if len(l.Tags) == 0 {
		return "no requests"
	}
	var parts []string
	same := true
	for _, tag := range l.Tags {
		t := text(tag)
		same = same && t == text(l.Tags[0])
		parts = append(parts, tag+": "+t)
	}
	if same {
		return text(l.Tags[0])
	}
	return strings.Join(parts, "; ")
}

// perInformer is perTag over the informers' verdicts.
func perInformer(l *analysis.LabReport, text func(analysis.InformerVerdict) string) string {
	ivs := map[string]analysis.InformerVerdict{}
	for _, iv := range l.Verdict.Informers {
		ivs[iv.Tag] = iv
	}
	return perTag(l, func(tag string) string { return text(ivs[tag]) })
}

func unsynced(l *analysis.LabReport, tag string) bool { return slices.Contains(l.Unsynced, tag) }

// faultVerdict answers what a user asks when a tool hangs against a server that does not play
// along: did each informer sync, after how long, with which requests; and what the lab's direct
// List() did. "not synced after T" is a hang to the user, whatever would come later.
func faultVerdict(rep *analysis.Report, l *analysis.LabReport) string {
	v := perTag(l, func(tag string) string { return syncedText(rep, l, tag, Sequence(l.Sync[tag].Requests)) })
	switch d := l.Direct; {
	case d == nil:
	case !d.Returned || strings.Contains(d.Result, "context canceled"): // still waiting when the lab stopped
		v += fmt.Sprintf("%s%s%s: %s", directPart, directNoAnswer, orWait(rep.SyncWait), d.Label)
	default:
		v += directPart + d.Label
	}
	return v
}

// What a verdict says of an informer that did not sync in the run's wait (Cell.syncWait reads
// the wait back), and, in a fault verdict, of the lab's direct List() after its informers' part
// (Cell.parts reads them back).
const (
	notSyncedAfter = "not synced after "
	directPart     = "; List(): "
	directNoAnswer = "no answer after "
)

// syncedText says whether an informer synced, before what it did: "synced: TEXT", or "not
// synced after T: TEXT" (T: the run's sync wait). How long a sync took is the cell's
// SyncMillis, so that cells alike read alike.
func syncedText(rep *analysis.Report, l *analysis.LabReport, tag, text string) string {
	if unsynced(l, tag) {
		return fmt.Sprintf("%s%s: %s", notSyncedAfter, orWait(rep.SyncWait), text)
	}
	return "synced: " + text
}

// Sequence spells an informer's requests in order, a run of the same request once with its
// count: "STREAM×3→LIST→WATCH (5 req)".
func Sequence(reqs []record.Record) string {
	return analysis.Sequence(analysis.Steps(reqs, time.Time{}), "no request")
}

func orWait(d time.Duration) string {
	if d <= 0 {
		return "the run"
	}
	return d.String()
}

// startupVerdict is the handshake label, the shape the gates imply and whether they agree; with
// synced, each informer's label says whether it synced, as a fault scenario's do.
func startupVerdict(rep *analysis.Report, l *analysis.LabReport, synced bool) (verdict, expected string, agrees bool) {
	verdict = perTag(l, func(tag string) string {
		h := l.Sync[tag]
		switch {
		case synced:
			return syncedText(rep, l, tag, h.Label)
		case unsynced(l, tag):
			return h.Label + ", never synced"
		}
		return h.Label
	})
	return verdict, l.Want, l.Verdict.Agrees()
}

// reconnectVerdict says what each re-established watch sent, compressed.
func reconnectVerdict(l *analysis.LabReport) string {
	name := func(s analysis.Step) string {
		switch {
		case s.Token == record.TokenWatch && s.FromRV:
			return "WATCH from rv"
		case s.Token == record.TokenStream:
			return "STREAM again"
		}
		return s.Token
	}
	pats := map[string]pattern{}
	for _, iv := range l.Verdict.Informers {
		if iv.Synced {
			pats[iv.Tag] = compress(iv.After, name)
		}
	}
	return mergePatterns(l, pats, "no watch re-established", false)
}

// recoveryVerdict is, per informer, its request sequence from the injected fault until it was
// back in sync, and the time from the harness's "recovered" to the slowest informer back.
func recoveryVerdict(rep *analysis.Report, l *analysis.LabReport) (string, *int64) {
	if rep.InjectedAt.IsZero() {
		return "no fault injected", nil
	}
	pats := map[string]pattern{}
	for _, iv := range l.Verdict.Informers {
		if iv.Synced {
			p := compress(iv.Recovery, analysis.Token)
			p.back, p.kept = iv.Back, iv.Kept
			pats[iv.Tag] = p
		}
	}
	verdict := mergePatterns(l, pats, "no request after the fault", true)
	if d := l.Verdict.Recovered; d != nil {
		ms := d.Milliseconds()
		return verdict, &ms
	}
	return verdict, nil
}

// pattern is an informer's compressed steps and, in recovery, whether it ended back in sync.
type pattern struct {
	analysis.Pattern
	back bool
	kept string // the server that kept the informer's watch through the fault (InformerVerdict.Kept)
}

func compress(steps []analysis.Step, name func(analysis.Step) string) pattern {
	return pattern{Pattern: analysis.Compress(steps, name)}
}

// mergePatterns shows one pattern when every informer did the same things (counts may differ:
// they become ranges), else each informer's.
func mergePatterns(l *analysis.LabReport, pats map[string]pattern, none string, recovery bool) string {
	text := func(p pattern) string {
		switch {
		case p.kept != "":
			return "watch kept on " + p.kept
		case len(p.Units) == 0:
			return none
		}
		s := p.Spell(recovery)
		if recovery && !p.back {
			s += ", not back in sync"
		}
		return s
	}
	var tags, never []string
	for _, tag := range l.Tags {
		if _, ok := pats[tag]; ok {
			tags = append(tags, tag)
		}
	}
	for _, tag := range l.Unsynced {
		never = append(never, tag+": never synced")
	}
	if len(tags) == 0 {
		if len(never) > 0 {
			return strings.Join(never, "; ")
		}
		return none
	}
	merged, same := pats[tags[0]], true
	for _, tag := range tags[1:] {
		p := pats[tag]
		if merged.Pattern, same = merged.Merge(p.Pattern); !same || p.back != merged.back || p.kept != merged.kept {
			same = false
			break
		}
	}
	var out []string
	if same {
		out = []string{text(merged)}
		if len(never) > 0 {
			out[0] = strings.Join(tags, ", ") + ": " + out[0]
		}
	} else {
		for _, tag := range tags {
			out = append(out, tag+": "+text(pats[tag]))
		}
	}
	return strings.Join(append(out, never...), "; ")
}

// lost gathers the informers' cache differences from the fresh LIST. After a limited wait
// (waited) the cache of an informer that never synced is not checked: it is empty because it
// never synced, which the verdict says, not because it lost data.
func lost(l *analysis.LabReport, waited bool) string {
	var parts []string
	for _, tag := range l.Tags {
		if waited && unsynced(l, tag) {
			continue
		}
		if d := l.Caches[tag]; d != "" {
			parts = append(parts, tag+": "+d)
		}
	}
	return strings.Join(parts, "; ")
}

// problems are the report's failures about this lab, without the lab's name, a harness fault
// that names this lab alone (whole), and those about the whole run (no lab named), marked "run:". After a limited wait (waited) an informer that did
// not sync is the verdict: what compare says about it (never synced, its handshake against the
// gates, its steady events, its cache) is left out, as compare leaves it out in a fault
// scenario; a startup cell still says the handshake is not the one the gates imply (Agrees).
func problems(rep *analysis.Report, l *analysis.LabReport, waited bool) []string {
	var out []string
	for _, f := range rep.Failures {
		owner := ""
		for _, other := range rep.Labs {
			if strings.HasPrefix(f, other.Name+": ") || strings.HasPrefix(f, "fault recorded: "+other.Name+": ") {
				owner = other.Name
				break
			}
		}
		harness := ""
		if owner == "" {
			harness = namedLab(rep, f) // e.g. the harness's "lab stop client-v031-on did not stop …"
		}
		switch {
		case harness == l.Name:
			out = append(out, f)
		case harness != "":
		case owner == l.Name:
			f = strings.Replace(f, l.Name+": ", "", 1)
			if waited && slices.ContainsFunc(l.Unsynced, func(tag string) bool {
				return f == tag+" never synced" || strings.HasPrefix(f, tag+": ")
			}) {
				continue // its handshake is the startup verdict, its steady events and cache none
			}
			out = append(out, f)
		case owner == "":
			out = append(out, "run: "+f)
		}
	}
	return out
}

// namedLab is the one lab of the run a harness fault names (as a whole word), "" when it names
// none or several: such a fault concerns that lab, not the whole run.
func namedLab(rep *analysis.Report, f string) string {
	if !strings.HasPrefix(f, "fault recorded: harness: ") {
		return ""
	}
	named := ""
	for _, l := range rep.Labs {
		for rest := f; ; {
			i := strings.Index(rest, l.Name)
			if i < 0 {
				break
			}
			end := i + len(l.Name)
			if (i == 0 || !isNameByte(rest[i-1])) && (end == len(rest) || !isNameByte(rest[end])) {
				if named != "" && named != l.Name {
					return ""
				}
				named = l.Name
				break
			}
			rest = rest[end:]
		}
	}
	return named
}

func isNameByte(b byte) bool {
	return b == '-' || 'a' <= b && b <= 'z' || 'A' <= b && b <= 'Z' || '0' <= b && b <= '9'
}
