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
	gates := r.ServerGates
	if gates == "" {
		gates = "defaults"
	}
	names := make([]string, len(r.Labs))
	for i, l := range r.Labs {
		names[i] = l.Name
	}
	say := func(format string, args ...any) { writeWrapped(w, fmt.Sprintf(format, args...), "  ") }
	fmt.Fprintf(w, "informer-lab compare: %s\n", r.Dir)
	say("server: %s (feature gates: %s)", r.Server, gates)
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
		fmt.Fprintf(w, "no labs\nVERDICT: fails\n")
		return
	}
	say("labs: %s (baseline: %s)", strings.Join(names, ", "), names[0])
	fmt.Fprintf(w, "harness writes: %d\n", len(r.Writes))
	if r.DeleteRVs > 0 {
		say("(%d DELETE rvs taken from the watchers' DELETED events: the apiserver answers a DELETE with a Status, so every watcher must agree on it)", r.DeleteRVs)
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

// writeWrapped writes s as lines of at most TermWidth columns.
func writeWrapped(w io.Writer, s, indent string) {
	for _, line := range Wrap(s, TermWidth, indent) {
		fmt.Fprintln(w, line)
	}
}

// Table is every fact of the verdict in full: one row per fact, one column per lab; row 0
// holds the lab names. WriteDetail writes it; the terminal shows Verdict instead.
func (r *Report) Table() [][]string {
	rows := [][]string{{""}}
	add := func(title string, cell func(l *LabReport) string) {
		row := []string{title}
		for _, l := range r.Labs {
			row = append(row, cell(l))
		}
		rows = append(rows, row)
	}
	for _, l := range r.Labs {
		rows[0] = append(rows[0], l.Name)
	}
	add("client-go", func(l *LabReport) string { return orUnknown(l.ClientGo) })
	add("WatchListClient gate", func(l *LabReport) string { return orUnknown(l.Gate) })
	add("initial-sync requests", func(l *LabReport) string {
		return perInformer(l, func(h Handshake) string { return h.Label })
	})
	add("expected by gates", func(l *LabReport) string {
		if l.Want == "" {
			return "unknown (no gate record)"
		}
		problems := 0
		for _, tag := range l.Tags {
			problems += len(l.Sync[tag].Problems)
		}
		if problems > 0 {
			return l.Want + ": NO, see below"
		}
		return l.Want + ": yes"
	})
	add("objects delivered", func(l *LabReport) string {
		return perInformer(l, func(h Handshake) string { return h.Objects })
	})
	add("Accept → content type", func(l *LabReport) string {
		return perInformer(l, func(h Handshake) string { return h.Wire })
	})
	if slices.ContainsFunc(r.Labs, hasStats) {
		add("received until sync", func(l *LabReport) string {
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
		})
	}
	if slices.ContainsFunc(r.Labs, anyEncoded) {
		add("Content-Encoding until sync", func(l *LabReport) string {
			return perInformer(l, func(h Handshake) string {
				text, _ := encodings(h)
				return text
			})
		})
	}
	add("steady events seen", func(l *LabReport) string {
		return perWatcher(l, func(w *Watcher) string {
			s := fmt.Sprint(len(w.Events))
			if w.Bookmarks > 0 {
				s += fmt.Sprintf(" (+%d periodic BOOKMARK)", w.Bookmarks)
			}
			return s
		})
	})
	add("steady handler calls", func(l *LabReport) string {
		return perWatcher(l, func(w *Watcher) string { return fmt.Sprint(w.Handlers) })
	})
	add("steady rvs = harness writes", func(l *LabReport) string {
		bad := l.steadyProblems()
		if len(bad) == 0 {
			return "yes"
		}
		if r.Injected != "" {
			return "not required after a fault: " + strings.Join(bad, "; ")
		}
		if r.Scenario == record.ScenarioReconnect && len(l.Unsynced) == 0 && allReread(l) {
			return "not required after a relist or a new stream: " + strings.Join(bad, "; ")
		}
		return "NO: " + strings.Join(bad, "; ")
	})
	if r.FreshList != nil {
		add("cache at stop = fresh LIST", func(l *LabReport) string {
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
		add("direct List() requests", func(l *LabReport) string {
			if l.Direct == nil {
				return "-"
			}
			return l.Direct.Label
		})
		add("direct List() result", func(l *LabReport) string {
			if l.Direct == nil {
				return "-"
			}
			return l.Direct.Result
		})
	}
	if r.Scenario == record.ScenarioReconnect {
		add("watches re-established", func(l *LabReport) string {
			return perTag(l, func(tag string) string { return fmt.Sprint(l.Rewatch[tag]) })
		})
	}
	if r.Injected != "" {
		add("streams broken by the fault", func(l *LabReport) string {
			return perTag(l, func(tag string) string { return fmt.Sprint(l.Broken[tag]) })
		})
		add("watches after the fault", func(l *LabReport) string {
			return perTag(l, func(tag string) string { return fmt.Sprint(l.Rewatch[tag]) })
		})
	}
	return rows
}

// allReread reports whether every informer of l whose events differ from the writes listed or
// streamed again after its sync (which excuses the difference in the reconnect scenario).
func allReread(l *LabReport) bool {
	for _, tag := range l.Tags {
		if l.Watchers[tag].Mismatch != "" && !l.Reread[tag] {
			return false
		}
	}
	return true
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
	if record.IsFaultScenario(r.Scenario) {
		return r.faultConclusion()
	}
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
	var steady string
	if bad == "" {
		writes := "the harness's writes after their sync"
		if len(expected) == 1 {
			for n := range expected {
				writes = fmt.Sprintf("the same %d writes", n)
			}
		}
		steady = fmt.Sprintf("Steady phase identical: all %d watchers saw %s with the same rvs", watchers, writes)
		if r.Skew.Writes > 0 {
			steady += fmt.Sprintf(" (fan-out skew median %s)", ms(r.Skew.Median))
		}
		steady += "."
	} else {
		steady = "Steady phase differs: " + bad + "."
		if r.Scenario == record.ScenarioReconnect && len(r.Failures) == 0 {
			steady = "Steady events differ from the writes after a relist or a new stream, as the reconnect scenario allows: " + bad + "."
		}
	}
	if r.Injected != "" {
		steady = "After the injected fault " + r.Injected + ", "
		if len(r.Failures) == 0 {
			steady += fmt.Sprintf("all %d watchers watched again and ended with caches equal to a fresh LIST.", watchers)
		} else {
			steady += "not every watcher recovered (see below)."
		}
	}

	var shapes []string
	same := true
	for _, l := range r.Labs {
		s := perInformer(l, func(h Handshake) string { return h.Label })
		shapes = append(shapes, l.Name+" "+s)
		same = same && s == perInformer(r.Labs[0], func(h Handshake) string { return h.Label })
	}
	initial := "Initial sync differs: " + strings.Join(shapes, ", ") + "."
	if same {
		initial = "Initial sync alike: all labs " + perInformer(r.Labs[0], func(h Handshake) string { return h.Label }) + "."
	}

	gates := "Every handshake is the one its gate implies."
	if l, p := r.firstHandshakeProblem(); p != "" {
		gates = fmt.Sprintf("Handshake not the one the gates imply: %s (gate %s) %s.", l.Name, orUnknown(l.Gate), p)
	}
	return steady + " " + initial + " " + gates
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
