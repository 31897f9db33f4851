package analysis

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"informer-lab/record"
)

// ExitCode is 0 when every relation holds, 1 otherwise.
func (r *Report) ExitCode() int {
	if len(r.Failures) > 0 {
		return 1
	}
	return 0
}

// WriteText writes the report a person reads at a terminal (what make compare and go run
// ./compare print): the run, the phase diffs, the verdict with labs as rows and footnotes,
// the fan-out skew, the conclusion and the VERDICT line. The verdict and the lines around it
// keep to TermWidth columns; the diffs quote normalized wire lines and the conclusion is one
// sentence (docs quote it), so those are left as they are.
func (r *Report) WriteText(w io.Writer) { r.write(w, false) }

// WriteDetail writes what WriteText writes, and after the verdict every fact in full: the
// table with one column per lab (Table), as wide as its longest fact. It is the report kept
// in the run directory (compare.txt), read in a file, not in a terminal.
func (r *Report) WriteDetail(w io.Writer) { r.write(w, true) }

func (r *Report) write(w io.Writer, detail bool) {
	if !r.writeHeader(w) {
		fmt.Fprintf(w, "no labs\nVERDICT: fails\n")
		return
	}
	if len(r.Diffs) == 0 {
		fmt.Fprintf(w, "\nonly one lab: nothing to diff\n")
	}
	for _, d := range r.Diffs {
		fmt.Fprintf(w, "\n== %s: %s vs %s ==\n", d.Phase, d.Lab, d.Base)
		if d.Text == "" {
			fmt.Fprintf(w, "identical (%d lines)\n", d.Lines)
		} else {
			io.WriteString(w, d.Text)
		}
	}
	fmt.Fprintf(w, "\n== verdict ==\n")
	for _, line := range r.TerminalVerdict(TermWidth).Lines(TermWidth) {
		fmt.Fprintln(w, line)
	}
	if detail {
		fmt.Fprintf(w, "\n== verdict, every fact (one column per lab) ==\n")
		writeTable(w, r.Table())
	}
	r.writeEnd(w)
}

// writeHeader writes what the run was: its server, scenario, proxy, kind, labs and writes. It
// reports whether the run had labs; without any there is nothing more to say.
func (r *Report) writeHeader(w io.Writer) bool {
	gates := r.ServerGates
	if gates == "" {
		gates = "defaults"
	}
	names := make([]string, len(r.Labs))
	for i, l := range r.Labs {
		names[i] = l.Name
	}
	say := sayer(w)
	fmt.Fprintf(w, "informer-lab compare: %s\n", r.Dir)
	say("server: %s (settings: %s)", r.Server, gates)
	if r.Scenario != "" {
		say("scenario: %s (%s)", r.Scenario, r.ScenarioDoc)
	}
	if r.Proxy != "" {
		say("proxy: %s", r.Proxy)
	}
	if k := r.Kind(); k != "" {
		say("informer kind: %s", k)
	}
	if len(names) == 0 {
		return false
	}
	say("labs: %s (baseline: %s)", strings.Join(names, ", "), names[0])
	fmt.Fprintf(w, "harness writes: %d\n", len(r.Writes))
	if r.DeleteRVs > 0 {
		say("(%d DELETE rvs taken from the watchers' DELETED events: kube-apiserver answers a DELETE with a Status, which has no rv, so every watcher must agree on the one most of them report)", r.DeleteRVs)
	}
	return true
}

// writeEnd writes what follows the verdict: the fan-out skew, the faults, the conclusion and
// the VERDICT line with the failures.
func (r *Report) writeEnd(w io.Writer) {
	say := sayer(w)
	if r.Skew.Writes > 0 {
		fmt.Fprintf(w, "fan-out skew over %d writes × %d watchers: min %s, median %s, max %s\n",
			r.Skew.Writes, r.Skew.Watchers, ms(r.Skew.Min), ms(r.Skew.Median), ms(r.Skew.Max))
	} else {
		fmt.Fprintf(w, "fan-out skew: no write was seen by two watchers\n")
	}
	for _, f := range r.Faults {
		say("fault: %s", f)
	}
	if r.Injected != "" {
		say("fault injected by the harness: %s", r.Injected)
	}
	fmt.Fprintf(w, "\n%s\n", r.Conclusion())
	if len(r.Failures) == 0 {
		fmt.Fprintf(w, "VERDICT: holds\n")
		return
	}
	fmt.Fprintf(w, "VERDICT: fails (%d)\n", len(r.Failures))
	for _, f := range r.Failures {
		say("- %s", f)
	}
}

// sayer writes a formatted line to w, wrapped (writeWrapped), its later lines indented.
func sayer(w io.Writer) func(format string, args ...any) {
	return func(format string, args ...any) { writeWrapped(w, fmt.Sprintf(format, args...), "  ") }
}

// writeWrapped writes s as lines of at most TermWidth columns.
func writeWrapped(w io.Writer, s, indent string) {
	for _, line := range Wrap(s, TermWidth, indent) {
		fmt.Fprintln(w, line)
	}
}

// Table is every fact of the verdict in full: one row per fact, one column per lab; row 0
// holds the lab names. WriteDetail writes it; the terminal shows Verdict instead.
func (r *Report) Table() [][]string {
	t := factTable{labs: r.Labs, rows: [][]string{{""}}}
	for _, l := range r.Labs {
		t.rows[0] = append(t.rows[0], l.Name)
	}
	t.add("client-go", func(l *LabReport) string { return orUnknown(l.ClientGo) })
	t.add("WatchListClient gate", func(l *LabReport) string { return orUnknown(l.Gate) })
	r.handshakeFacts(&t)
	r.steadyFacts(&t)
	r.endFacts(&t)
	return t.rows
}

// factTable is Table being built: one row per fact.
type factTable struct {
	labs []*LabReport
	rows [][]string
}

// add adds the row of one fact: its title, then one cell per lab.
func (t *factTable) add(title string, cell func(l *LabReport) string) {
	row := []string{title}
	for _, l := range t.labs {
		row = append(row, cell(l))
	}
	t.rows = append(t.rows, row)
}

// handshakeFacts are the rows of the initial sync: the requests, against the gates, what they
// brought, and what the verdict found in them.
func (r *Report) handshakeFacts(t *factTable) {
	t.add("initial-sync requests", func(l *LabReport) string {
		return perInformer(l, func(h Handshake) string { return h.Label })
	})
	t.add("expected by gates", func(l *LabReport) string {
		switch {
		case l.Want == "":
			return "unknown (no gate record)"
		case len(handshakeProblems(l)) > 0:
			return l.Want + ": NO, see below"
		}
		return l.Want + ": yes"
	})
	if slices.ContainsFunc(r.Labs, func(l *LabReport) bool { return len(l.Verdict.Findings) > 0 }) {
		t.add("findings", func(l *LabReport) string { return orNone(strings.Join(l.Verdict.Findings, "; ")) })
	}
	t.add("objects delivered", func(l *LabReport) string {
		return perInformer(l, func(h Handshake) string { return h.Objects })
	})
	t.add("Accept → content type", func(l *LabReport) string {
		return perInformer(l, func(h Handshake) string { return h.Wire })
	})
	if slices.ContainsFunc(r.Labs, hasStats) {
		t.add("received until sync", receivedFact)
	}
	if slices.ContainsFunc(r.Labs, anyEncoded) {
		t.add("Content-Encoding until sync", func(l *LabReport) string {
			return perInformer(l, func(h Handshake) string {
				text, _ := encodings(h)
				return text
			})
		})
	}
}

// receivedFact is what each informer's client read until it synced, in full.
func receivedFact(l *LabReport) string {
	return same(l, func(tag string) string {
		s, ok := l.Received[tag]
		switch {
		case slices.Contains(l.Unsynced, tag):
			return "never synced"
		case !ok:
			return "? (no stats in its SETUP synced record)"
		}
		text := fmt.Sprintf("%d B decoded", s.Bytes)
		if s.Wire() != s.Bytes {
			text += fmt.Sprintf(", %d B on the wire", s.Wire())
		}
		return text + fmt.Sprintf(" (%d req)", s.Requests)
	})
}

// steadyFacts are the rows of the steady phase: what each watcher saw, against the writes.
func (r *Report) steadyFacts(t *factTable) {
	t.add("steady events seen", func(l *LabReport) string {
		return perWatcher(l, func(w *Watcher) string {
			s := fmt.Sprint(len(w.Events))
			if w.Bookmarks > 0 {
				s += fmt.Sprintf(" (+%d periodic BOOKMARK)", w.Bookmarks)
			}
			return s
		})
	})
	t.add("steady handler calls", func(l *LabReport) string {
		return perWatcher(l, func(w *Watcher) string { return fmt.Sprint(w.Handlers) })
	})
	t.add("steady rvs = harness writes", func(l *LabReport) string {
		bad := strings.Join(l.steadyProblems(), "; ")
		switch {
		case bad == "":
			return "yes"
		case l.Verdict.SteadyExcuse != "":
			return "not required " + l.Verdict.SteadyExcuse + ": " + bad
		}
		return "NO: " + bad
	})
}

// endFacts are the rows of what the run ends with: the caches against a fresh LIST, the direct
// List(), and the watches again (CheckRewatch) or after an injected fault.
func (r *Report) endFacts(t *factTable) {
	if r.FreshList != nil {
		t.add("cache at stop = fresh LIST", func(l *LabReport) string {
			var bad []string
			for _, tag := range l.Tags {
				if d := l.Caches[tag]; d != "" {
					bad = append(bad, tag+": "+d)
				}
			}
			if len(bad) == 0 {
				return fmt.Sprintf("yes (%d objects)", len(r.FreshList.Items))
			}
			return "NO: " + strings.Join(bad, "; ")
		})
	}
	if slices.ContainsFunc(r.Labs, func(l *LabReport) bool { return l.Direct != nil }) {
		t.add("direct List() requests", func(l *LabReport) string { return directFact(l, func(d *DirectList) string { return d.Label }) })
		t.add("direct List() result", func(l *LabReport) string { return directFact(l, func(d *DirectList) string { return d.Result }) })
	}
	if r.scenario().Check == record.CheckRewatch {
		t.add("watches re-established", func(l *LabReport) string {
			return perTag(l, func(tag string) string { return fmt.Sprint(l.Rewatch[tag]) })
		})
	}
	if r.Injected != "" {
		t.add("streams broken by the fault", func(l *LabReport) string {
			return perTag(l, func(tag string) string { return fmt.Sprint(l.Broken[tag]) })
		})
		t.add("watches after the fault", func(l *LabReport) string {
			return perTag(l, func(tag string) string { return fmt.Sprint(l.Rewatch[tag]) })
		})
	}
}

// directFact is one fact of the lab's direct List(), "-" without one.
func directFact(l *LabReport, fact func(*DirectList) string) string {
	if l.Direct == nil {
		return "-"
	}
	return fact(l.Direct)
}

// handshakeProblems are the problems of every informer's handshake of l.
func handshakeProblems(l *LabReport) []string {
	var problems []string
	for _, tag := range l.Tags {
		problems = append(problems, l.Sync[tag].Problems...)
	}
	return problems
}

func orNone(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// perInformer shows informer A's value, and B's only where it differs.
func perInformer(l *LabReport, cell func(Handshake) string) string {
	if len(l.Tags) == 0 {
		return "-"
	}
	first := cell(l.Sync[l.Tags[0]])
	out := first
	for _, tag := range l.Tags[1:] {
		if v := cell(l.Sync[tag]); v != first {
			out += fmt.Sprintf(" (%s differs: %s)", tag, v)
		}
	}
	return out
}

func perWatcher(l *LabReport, cell func(*Watcher) string) string {
	return perTag(l, func(tag string) string { return cell(l.Watchers[tag]) })
}

// Conclusion says in one line what a reader can check against the diffs and the table.
func (r *Report) Conclusion() string {
	if r.scenario().Check == record.CheckFault {
		return r.faultConclusion()
	}
	return r.steadyConclusion() + " " + r.initialConclusion() + " " + r.gatesConclusion()
}

// steadyConclusion says whether every watcher saw the writes, or, after an injected fault,
// whether every one recovered.
func (r *Report) steadyConclusion() string {
	watchers, bad := 0, ""
	expected := map[int]bool{} // writes after each watcher's sync: the same for all when they synced together
	for _, l := range r.Labs {
		watchers += len(l.Tags)
		for _, tag := range l.Tags {
			expected[l.Watchers[tag].Expected] = true
			if m := l.Watchers[tag].Mismatch; m != "" && bad == "" {
				bad = fmt.Sprintf("%s %s %s", l.Name, tag, m)
			}
		}
		if len(l.Unsynced) > 0 && bad == "" {
			bad = fmt.Sprintf("%s: %s never synced", l.Name, strings.Join(l.Unsynced, ", "))
		}
	}
	switch {
	case r.Injected != "" && len(r.Failures) == 0:
		return fmt.Sprintf("After the injected fault %s, all %d watchers watched again and ended with caches equal to a fresh LIST.", r.Injected, watchers)
	case r.Injected != "":
		return "After the injected fault " + r.Injected + ", not every watcher recovered (see below)."
	case bad != "" && r.scenario().Rewatches && len(r.Failures) == 0:
		// No failure: every difference had the excuse such a scenario allows (steadyExcuse).
		return "Steady events differ from the writes " + ExcuseReread + ", as the " + r.Scenario + " scenario allows: " + bad + "."
	case bad != "":
		return "Steady phase differs: " + bad + "."
	}
	writes := "the harness's writes after their sync"
	if len(expected) == 1 {
		for n := range expected {
			writes = fmt.Sprintf("the same %d writes", n)
		}
	}
	steady := fmt.Sprintf("Steady phase identical: all %d watchers saw %s with the same rvs", watchers, writes)
	if r.scenario().DuringSync {
		steady = fmt.Sprintf("Writes during the sync: all %d watchers saw every write after their own sync point with the same rvs, in order", watchers)
	}
	if r.Skew.Writes > 0 {
		steady += fmt.Sprintf(" (fan-out skew median %s)", ms(r.Skew.Median))
	}
	return steady + "."
}

// initialConclusion says whether the labs' initial syncs are alike.
func (r *Report) initialConclusion() string {
	label := func(h Handshake) string { return h.Label }
	var shapes []string
	same := true
	for _, l := range r.Labs {
		s := perInformer(l, label)
		shapes = append(shapes, l.Name+" "+s)
		same = same && s == perInformer(r.Labs[0], label)
	}
	if same {
		return "Initial sync alike: all labs " + perInformer(r.Labs[0], label) + "."
	}
	return "Initial sync differs: " + strings.Join(shapes, ", ") + "."
}

// gatesConclusion says whether every handshake is the one its gate implies.
func (r *Report) gatesConclusion() string {
	if l, p := r.firstHandshakeProblem(); p != "" {
		return fmt.Sprintf("Handshake not the one the gates imply: %s (gate %s) %s.", l.Name, orUnknown(l.Gate), p)
	}
	return "Every handshake is the one its gate implies."
}

func (r *Report) firstHandshakeProblem() (*LabReport, string) {
	for _, l := range r.Labs {
		for _, tag := range l.Tags {
			if p := l.Sync[tag].Problems; len(p) > 0 {
				return l, p[0]
			}
		}
	}
	return nil, ""
}

// writeTable writes rows as a Markdown table with padded columns.
func writeTable(w io.Writer, rows [][]string) {
	width := make([]int, len(rows[0]))
	for _, row := range rows {
		for i, c := range row {
			width[i] = max(width[i], len([]rune(c)))
		}
	}
	line := func(row []string) {
		for i, c := range row {
			fmt.Fprintf(w, "| %s%s ", c, strings.Repeat(" ", width[i]-len([]rune(c))))
		}
		fmt.Fprintln(w, "|")
	}
	line(rows[0])
	sep := make([]string, len(width))
	for i := range sep {
		sep[i] = strings.Repeat("-", width[i])
	}
	line(sep)
	for _, row := range rows[1:] {
		line(row)
	}
}

func orUnknown(s string) string {
	if s == "" {
		return "?"
	}
	return s
}

func ms(d time.Duration) string {
	return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
}

// perTag renders "A=… B=…" over a lab's informers.
func perTag(l *LabReport, cell func(tag string) string) string {
	var parts []string
	for _, tag := range l.Tags {
		parts = append(parts, tag+"="+cell(tag))
	}
	return orUnknown(strings.Join(parts, " "))
}

// steadyProblems says, per informer, how its steady events differ from the harness's writes,
// and which informers never synced.
func (l *LabReport) steadyProblems() []string {
	var bad []string
	for _, tag := range l.Tags {
		if m := l.Watchers[tag].Mismatch; m != "" {
			bad = append(bad, tag+": "+m)
		}
	}
	if len(l.Unsynced) > 0 {
		bad = append(bad, "never synced: "+strings.Join(l.Unsynced, ", "))
	}
	return bad
}

// faultConclusion says which labs synced against a server that does not play along.
func (r *Report) faultConclusion() string {
	var synced, not []string
	for _, l := range r.Labs {
		if len(l.Unsynced) == 0 {
			synced = append(synced, l.Name)
		} else {
			not = append(not, l.Name)
		}
	}
	s := fmt.Sprintf("Against %s: %d of %d labs synced", r.Proxy, len(synced), len(r.Labs))
	if r.SyncWait > 0 {
		s += " within " + r.SyncWait.String()
	}
	if len(not) > 0 {
		s += "; not synced: " + strings.Join(not, ", ")
	}
	return s + "."
}
