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
	server := ServerOf(rep).Name
	seqs := steadySequences(rep)
	// A run that gave its informers a limited wait (a fault scenario, an informer kind other
	// than typed-configmaps) went on with what synced: an informer that did not is the
	// verdict, its empty cache no lost data.
	waited := rep.SyncWait > 0
	var cells []Cell
	for _, l := range rep.Labs {
		c := Cell{Scenario: scenario, Server: server, Client: l.Name, Kind: kind, Agrees: true, SyncMillis: syncMillis(l)}
		if waited {
			c.SyncWait = rep.SyncWait.String()
		}
		if kind != "" || record.IsFaultScenario(scenario) {
			c.Synced = len(l.Unsynced) == 0
		}
		switch {
		case record.IsFaultScenario(scenario):
			c.Verdict = faultVerdict(rep, l)
		case scenario == record.ScenarioStartup:
			c.Verdict, c.Expected, c.Agrees = startupVerdict(rep, l, kind != "")
		case scenario == record.ScenarioDirect:
			c.Verdict = "no direct List() recorded"
			if l.Direct != nil {
				c.Verdict = l.Direct.Label
			}
		case scenario == record.ScenarioSteady:
			c.Verdict = steadyVerdict(rep, l)
			if d := seqs.differs(l); d != "" {
				c.SeqDiffers = true
				c.Verdict += "; " + d
			}
		case scenario == record.ScenarioReconnect:
			c.Verdict = reconnectVerdict(l)
		case record.IsRecovery(scenario):
			c.Verdict, c.RecoverMillis = recoveryVerdict(rep, l)
		default:
			c.Verdict = fmt.Sprintf("unknown scenario %q", scenario)
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
		cells = append(cells, c)
	}
	return cells
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

func unsynced(l *analysis.LabReport, tag string) bool { return slices.Contains(l.Unsynced, tag) }

// faultVerdict answers what a user asks when a tool hangs against a server that does not play
// along: did each informer sync, after how long, with which requests; and what the lab's direct
// List() did. "not synced after T" is a hang to the user, whatever would come later.
func faultVerdict(rep *analysis.Report, l *analysis.LabReport) string {
	v := perTag(l, func(tag string) string { return syncedText(rep, l, tag, Sequence(l.Sync[tag].Requests)) })
	switch d := l.Direct; {
	case d == nil:
	case !d.Returned || strings.Contains(d.Result, "context canceled"): // still waiting when the lab stopped
		v += fmt.Sprintf("; List(): no answer after %s: %s", orWait(rep.SyncWait), d.Label)
	default:
		v += "; List(): " + d.Label
	}
	return v
}

// syncedText says whether an informer synced, before what it did: "synced: TEXT", or "not
// synced after T: TEXT" (T: the run's sync wait). How long a sync took is the cell's
// SyncMillis, so that cells alike read alike.
func syncedText(rep *analysis.Report, l *analysis.LabReport, tag, text string) string {
	if unsynced(l, tag) {
		return fmt.Sprintf("not synced after %s: %s", orWait(rep.SyncWait), text)
	}
	return "synced: " + text
}

// Sequence spells an informer's requests in order, a run of the same request once with its
// count: "STREAM×3→LIST→WATCH (5 req)".
func Sequence(reqs []record.Record) string {
	var parts []string
	for i := 0; i < len(reqs); {
		tok, n := record.Token(reqs[i]), 1
		for i+n < len(reqs) && record.Token(reqs[i+n]) == tok {
			n++
		}
		if n > 1 {
			tok += fmt.Sprintf("×%d", n)
		}
		parts = append(parts, tok)
		i += n
	}
	if len(parts) == 0 {
		return "no request"
	}
	return fmt.Sprintf("%s (%d req)", strings.Join(parts, "→"), len(reqs))
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
	agrees = true
	verdict = perTag(l, func(tag string) string {
		h := l.Sync[tag]
		if l.Want != "" && (h.Shape != l.Want || unsynced(l, tag)) {
			agrees = false
		}
		switch {
		case synced:
			return syncedText(rep, l, tag, h.Label)
		case unsynced(l, tag):
			return h.Label + ", never synced"
		}
		return h.Label
	})
	return verdict, l.Want, agrees
}

// steadyVerdict compares each informer's steady events with the harness's writes.
func steadyVerdict(rep *analysis.Report, l *analysis.LabReport) string {
	return perTag(l, func(tag string) string {
		w := l.Watchers[tag]
		switch {
		case unsynced(l, tag) && rep.SyncWait > 0:
			return fmt.Sprintf("not synced after %s", rep.SyncWait)
		case unsynced(l, tag):
			return "never synced"
		case w.Mismatch != "":
			return w.Mismatch
		}
		return fmt.Sprintf("%d/%d writes, same rvs", len(w.Events), w.Expected)
	})
}

// reconnectVerdict says what each re-established watch sent, compressed.
func reconnectVerdict(l *analysis.LabReport) string {
	name := func(s analysis.Step) string {
		switch {
		case s.Token == "WATCH" && s.FromRV:
			return "WATCH from rv"
		case s.Token == "STREAM":
			return "STREAM again"
		}
		return s.Token
	}
	pats := map[string]pattern{}
	for _, tag := range l.Tags {
		if unsynced(l, tag) {
			continue
		}
		pats[tag] = compress(analysis.Steps(l.After[tag], time.Time{}), name)
	}
	return mergePatterns(l, pats, "no watch re-established", false)
}

// recoveryVerdict is, per informer, its request sequence from the injected fault until it was
// back in sync, and the time from the harness's "recovered" to the slowest informer back.
func recoveryVerdict(rep *analysis.Report, l *analysis.LabReport) (string, *int64) {
	if rep.InjectedAt.IsZero() {
		return "no fault injected", nil
	}
	from := rep.RecoveredAt
	if from.IsZero() {
		from = rep.InjectedAt
	}
	pats := map[string]pattern{}
	var slowest time.Duration
	back := true
	for _, tag := range l.Tags {
		if unsynced(l, tag) {
			continue
		}
		steps := analysis.Steps(l.After[tag], rep.InjectedAt)
		i := analysis.FirstResync(steps)
		if i < 0 {
			back = false
		} else {
			slowest = max(slowest, steps[i].Resync.Sub(from))
			steps = steps[:i+1]
		}
		p := compress(steps, func(s analysis.Step) string { return s.Token })
		p.back = i >= 0
		pats[tag] = p
	}
	verdict := mergePatterns(l, pats, "no request after the fault", true)
	if !back || len(pats) == 0 {
		return verdict, nil
	}
	ms := slowest.Milliseconds()
	return verdict, &ms
}

// unit is one request with the ERROR events its stream carried ("WATCH→410"), repeated n times.
type unit struct {
	text   string
	lo, hi int // how many times in a row: lo == hi for one informer, a range when merged
}

// pattern is an informer's compressed steps.
type pattern struct {
	units        []unit
	reqLo, reqHi int  // requests
	back         bool // recovery: ended back in sync
}

// compress turns steps into units: a request with its ERROR events, consecutive equal units
// counted.
func compress(steps []analysis.Step, name func(analysis.Step) string) pattern {
	var texts []string
	p := pattern{}
	for _, s := range steps {
		switch {
		case s.Request:
			p.reqLo++
			texts = append(texts, name(s))
		case len(texts) > 0:
			texts[len(texts)-1] += "→" + s.Token
		default:
			texts = append(texts, s.Token)
		}
	}
	p.reqHi = p.reqLo
	for _, t := range texts {
		if n := len(p.units); n > 0 && p.units[n-1].text == t {
			p.units[n-1].lo++
			p.units[n-1].hi++
			continue
		}
		p.units = append(p.units, unit{text: t, lo: 1, hi: 1})
	}
	return p
}

func (p pattern) shape() string {
	var parts []string
	for _, u := range p.units {
		parts = append(parts, u.text)
	}
	return strings.Join(parts, "→")
}

// render writes the pattern, e.g. "WATCH(error)×2→WATCH (3 req)" or "WATCH from rv ×3".
func (p pattern) render(withReqs bool) string {
	var parts []string
	for _, u := range p.units {
		s := u.text
		if u.hi > 1 {
			if !strings.HasSuffix(s, ")") {
				s += " "
			}
			s += "×" + span(u.lo, u.hi)
		}
		parts = append(parts, s)
	}
	s := strings.Join(parts, "→")
	if withReqs {
		s += " (" + span(p.reqLo, p.reqHi) + " req)"
	}
	return s
}

func span(lo, hi int) string {
	if lo == hi {
		return fmt.Sprint(lo)
	}
	return fmt.Sprintf("%d–%d", lo, hi)
}

// mergePatterns shows one pattern when every informer did the same things (counts may differ:
// they become ranges), else each informer's.
func mergePatterns(l *analysis.LabReport, pats map[string]pattern, none string, recovery bool) string {
	text := func(p pattern) string {
		if len(p.units) == 0 {
			return none
		}
		s := p.render(recovery)
		if recovery && !p.back {
			s += ", not back in sync"
		}
		return s
	}
	var tags []string
	for _, tag := range l.Tags {
		if _, ok := pats[tag]; ok {
			tags = append(tags, tag)
		}
	}
	var never []string
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
	merged.units = slices.Clone(merged.units)
	for _, tag := range tags[1:] {
		p := pats[tag]
		if p.shape() != merged.shape() || p.back != merged.back {
			same = false
			break
		}
		for i := range merged.units {
			merged.units[i].lo = min(merged.units[i].lo, p.units[i].lo)
			merged.units[i].hi = max(merged.units[i].hi, p.units[i].hi)
		}
		merged.reqLo, merged.reqHi = min(merged.reqLo, p.reqLo), max(merged.reqHi, p.reqHi)
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

// sequences are the steady event sequences of a run's watchers, for finding the odd ones out.
type sequences struct {
	byWatcher map[string][]string // "lab/tag" -> events
	reference []string            // the sequence a strict majority of the watchers saw, if hasRef
	hasRef    bool                // some sequence has a strict majority
}

func watcherKey(lab, tag string) string { return lab + "/" + tag }

func steadySequences(rep *analysis.Report) sequences {
	s := sequences{byWatcher: map[string][]string{}}
	count := map[string]int{}
	total := 0
	for _, l := range rep.Labs {
		for _, tag := range l.Tags {
			if unsynced(l, tag) {
				continue // no steady phase: it saw none of the writes, which its verdict says
			}
			var evs []string
			for _, e := range l.Watchers[tag].Events {
				evs = append(evs, record.EventLine(e.Event, e.Namespace, e.Name, e.RV))
			}
			s.byWatcher[watcherKey(l.Name, tag)] = evs
			count[strings.Join(evs, "\n")]++
			total++
		}
	}
	for seq, n := range count {
		if 2*n > total && seq != "" {
			s.hasRef, s.reference = true, strings.Split(seq, "\n")
		} else if 2*n > total {
			s.hasRef = true // the majority saw no event at all
		}
	}
	return s
}

// differs says how the lab's sequences differ from the run's reference sequence, "" when not.
func (s sequences) differs(l *analysis.LabReport) string {
	for _, tag := range l.Tags {
		if unsynced(l, tag) {
			continue
		}
		evs := s.byWatcher[watcherKey(l.Name, tag)]
		if !s.hasRef {
			return "no event sequence shared by most watchers of the run"
		}
		if slices.Equal(evs, s.reference) {
			continue
		}
		for i := 0; ; i++ {
			switch {
			case i >= len(evs):
				return fmt.Sprintf("%s's sequence differs from the other cells': it ends at #%d, others go on with %s", tag, i+1, s.reference[i])
			case i >= len(s.reference):
				return fmt.Sprintf("%s's sequence differs from the other cells': #%d %s is extra", tag, i+1, evs[i])
			case evs[i] != s.reference[i]:
				return fmt.Sprintf("%s's sequence differs from the other cells' at #%d: %s, others %s", tag, i+1, evs[i], s.reference[i])
			}
		}
	}
	return ""
}
