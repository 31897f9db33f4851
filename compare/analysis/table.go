package analysis

import (
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"informer-lab/record"
)

// TermWidth is the width the terminal report keeps to: a verdict for seven labs (fourteen
// cells in a matrix run) must be read at a terminal, not scrolled sideways.
const TermWidth = 120

// Verdict is the verdict with labs as rows: one short cell per fact, and whatever is long
// (mismatch details, fallback reasons, differences between a lab's informers) in footnotes.
type Verdict struct {
	Columns []string // titles; a "\n" splits one over two header lines, to keep narrow columns narrow
	Means   []string // what each column says, for the legend under the table ("": nothing to explain)
	Rows    [][]Cell // one per lab, in Report.Labs order, one cell per column
	Notes   []Note   // numbered from 1, in the order the cells first refer to them
}

// Cell is one cell of the verdict: its short text and the footnotes it refers to.
type Cell struct {
	Text  string
	Notes []int // footnote numbers, ascending
}

// Mark is how the cell refers to its footnotes, e.g. "[1,3]"; "" when it has none.
func (c Cell) Mark() string {
	if len(c.Notes) == 0 {
		return ""
	}
	n := make([]string, len(c.Notes))
	for i, v := range c.Notes {
		n[i] = strconv.Itoa(v)
	}
	return "[" + strings.Join(n, ",") + "]"
}

// String is the cell as the terminal shows it, footnote mark included.
func (c Cell) String() string {
	if m := c.Mark(); m != "" {
		return c.Text + m
	}
	return c.Text
}

// Note is one footnote: the same text for several labs is one note naming them all.
type Note struct {
	Number int
	Labs   []string // the labs whose cells refer to it, in table order
	Every  bool     // every lab of the run (and more than one) refers to it
	Text   string
}

// Who names the labs a note is about.
func (n Note) Who() string {
	if n.Every {
		return "every lab"
	}
	return strings.Join(n.Labs, ", ")
}

// String is the note as the terminal shows it: "[1] client-v032: ...".
func (n Note) String() string {
	return fmt.Sprintf("[%d] %s: %s", n.Number, n.Who(), n.Text)
}

// verdictColumn is one column: its title and how a lab's cell reads (short text, and the long
// facts it leaves to footnotes).
type verdictColumn struct {
	title string
	cell  func(l *LabReport) (text string, notes []string)
	means string // the legend's words for it
}

// receivedTitle is the one extra column: a fact that only adds to the others, which the
// terminal leaves out before it would cut the cells that carry the verdict (TerminalVerdict).
const receivedTitle = "received\nto sync"

// Verdict builds the verdict table. Which columns it has depends on the run: the steady
// columns only when there was something to see, the direct List(), watches-again and fault
// columns only in the scenarios that have them.
func (r *Report) Verdict() Verdict { return r.verdict(true) }

// TerminalVerdict is the verdict for a terminal of width columns: without its extra columns
// when they would make the others too wide to show whole. compare.txt's full table and
// report.html keep every fact.
func (r *Report) TerminalVerdict(width int) Verdict {
	if v := r.verdict(true); v.Width() <= width {
		return v
	}
	return r.verdict(false)
}

func (r *Report) verdict(extras bool) Verdict {
	cols := r.verdictColumns()
	if !extras {
		cols = slices.DeleteFunc(cols, func(c verdictColumn) bool { return c.title == receivedTitle })
	}
	v := Verdict{}
	for _, c := range cols {
		v.Columns = append(v.Columns, c.title)
		v.Means = append(v.Means, c.means)
	}
	for _, l := range r.Labs {
		row := make([]Cell, len(cols))
		for i, c := range cols {
			text, notes := c.cell(l)
			row[i].Text = text
			for _, n := range notes {
				row[i].Notes = v.AddNote(l.Name, n, row[i].Notes)
			}
		}
		v.Rows = append(v.Rows, row)
	}
	for i := range v.Notes {
		v.Notes[i].Every = len(r.Labs) > 1 && len(v.Notes[i].Labs) == len(r.Labs)
	}
	return v
}

// AddNote files text as a footnote of lab (once per text, however many cells refer to it) and
// adds its number to marks, which stay ascending. A verdict has a few dozen notes at most, so
// they are searched rather than indexed beside it.
func (v *Verdict) AddNote(lab, text string, marks []int) []int {
	i := slices.IndexFunc(v.Notes, func(n Note) bool { return n.Text == text })
	if i < 0 {
		i = len(v.Notes)
		v.Notes = append(v.Notes, Note{Number: i + 1, Text: text})
	}
	if !slices.Contains(v.Notes[i].Labs, lab) {
		v.Notes[i].Labs = append(v.Notes[i].Labs, lab)
	}
	if !slices.Contains(marks, i+1) {
		marks = append(marks, i+1)
		slices.Sort(marks)
	}
	return marks
}

// plain is a cell that never needs a footnote.
func plain(f func(l *LabReport) string) func(l *LabReport) (string, []string) {
	return func(l *LabReport) (string, []string) { return f(l), nil }
}

func (r *Report) verdictColumns() []verdictColumn {
	cols := []verdictColumn{
		{"lab", plain(func(l *LabReport) string { return l.Name }), ""},
		{"client-go", plain(func(l *LabReport) string { return orUnknown(l.ClientGo) }), ""},
	}
	if !gatesInNames(r.Labs) {
		cols = append(cols, verdictColumn{"gate", plain(func(l *LabReport) string { return orUnknown(l.Gate) }), "WatchListClient gate"})
	}
	cols = append(cols,
		verdictColumn{"initial\nsync", syncCell, "requests until synced (STREAM: one streaming list)"},
		verdictColumn{"objects\ndelivered", objectsCell, "objects the initial sync brought"})
	if slices.ContainsFunc(r.Labs, hasStats) {
		cols = append(cols, verdictColumn{receivedTitle, receivedCell, "bytes read until synced"})
	}
	fault := r.scenario().Check == record.CheckFault
	cols = append(cols, r.syncColumns(fault)...)
	if r.hasSteady() && !fault {
		cols = append(cols,
			verdictColumn{"events\n/calls", eventsCell, "watch events after the sync / handler calls"},
			verdictColumn{"rvs =\nwrites", rvsCell, "are they the writes, same rvs, in order?"})
	}
	if r.FreshList != nil {
		cols = append(cols, verdictColumn{"cache\n= LIST", cacheCell, "final cache = a fresh LIST?"})
	}
	if slices.ContainsFunc(r.Labs, func(l *LabReport) bool { return l.Direct != nil }) {
		cols = append(cols,
			verdictColumn{"direct\nList()", directCell, "requests of the lab's typed List()"},
			verdictColumn{"direct\nitems", directItemsCell, "items it returned"})
	}
	if r.scenario().Check == record.CheckRewatch {
		cols = append(cols, verdictColumn{"watches\nagain", plain(func(l *LabReport) string {
			return same(l, func(tag string) string { return strconv.Itoa(l.Rewatch[tag]) })
		}), "watches opened again after the proxy ended one"})
	}
	if r.Injected != "" {
		cols = append(cols, verdictColumn{"broken\n/after", plain(func(l *LabReport) string {
			return same(l, func(tag string) string { return fmt.Sprintf("%d/%d", l.Broken[tag], l.Rewatch[tag]) })
		}), "streams the fault broke / watches after it"})
	}
	return cols
}

// syncColumns say whether the handshakes are the ones the gates imply and, where informers may
// not sync, whether and when they did. Nothing is expected of a server that does not play
// along (fault): whether and when each informer synced is the answer.
func (r *Report) syncColumns(fault bool) []verdictColumn {
	if fault {
		return []verdictColumn{{"synced", plain(func(l *LabReport) string {
			return same(l, func(tag string) string { return r.syncedIn(l, tag) })
		}), "whether and when each synced (from its first request)"}}
	}
	cols := []verdictColumn{{"expected\nby gates", expectedCell, "is it the handshake the gate and server imply?"}}
	if r.Kind() != "" {
		// An informer kind may not follow the protocol: say whether and when each synced.
		cols = append(cols, verdictColumn{"synced", plain(func(l *LabReport) string {
			return same(l, func(tag string) string {
				if slices.Contains(l.Unsynced, tag) {
					return r.syncedIn(l, tag)
				}
				return "yes"
			})
		}), "synced within the sync wait?"})
	}
	return cols
}

// gatesInNames says whether every lab's name ends in its gate, as a matrix run's cells do
// ("client-v031-off"): a gate column would only repeat it.
func gatesInNames(labs []*LabReport) bool {
	for _, l := range labs {
		if l.Gate == "" || !strings.HasSuffix(l.Name, "-"+l.Gate) {
			return false
		}
	}
	return len(labs) > 0
}

// hasSteady says whether the steady columns have anything to say: a run without writes (the
// startup and direct-list scenarios) would show a column of zeros and a column of "yes".
func (r *Report) hasSteady() bool {
	if len(r.Writes) > 0 {
		return true
	}
	for _, l := range r.Labs {
		if len(l.Unsynced) > 0 {
			return true
		}
		for _, w := range l.Watchers {
			if len(w.Events) > 0 || w.Mismatch != "" {
				return true
			}
		}
	}
	return false
}

// shortLabel is the handshake's label without a fallback's reason (a footnote gives it): the
// requests alone, e.g. "STREAM→LIST→WATCH (3 req)".
func shortLabel(h Handshake) string {
	if h.Fallback != "" {
		return fmt.Sprintf("%s (%d req)", h.Shape, len(h.Requests))
	}
	return h.Label
}

// shortObjects says how the objects arrived in a few words: "5 items" (a LIST body),
// "5 ADDED + end BOOKMARK" (a stream up to its initial-events-end bookmark).
var shortObjects = strings.NewReplacer(
	"LIST body: ", "",
	", no LIST, no initial-events-end BOOKMARK", ", no end BOOKMARK",
	"BOOKMARK initial-events-end", "end BOOKMARK",
	", then ", " + ",
)

// syncCell is the first informer's handshake; its footnotes say where another informer's
// differs, why a stream was given up, and what the verdict found (LabVerdict.Findings).
func syncCell(l *LabReport) (string, []string) {
	text, notes := informerCell(l, PhaseInitial, shortLabel, func(h Handshake) string { return h.Label })
	for _, tag := range l.Tags {
		if f := l.Sync[tag].Fallback; f != "" {
			notes = append(notes, GivenUp(PhaseInitial, f))
		}
	}
	return text, append(notes, l.Verdict.Findings...)
}

func objectsCell(l *LabReport) (string, []string) {
	short := func(h Handshake) string { return shortObjects.Replace(h.Objects) }
	return informerCell(l, "objects", short, func(h Handshake) string { return h.Objects })
}

// informerCell shows the first informer's value; an informer whose value differs gets a
// footnote, in full.
func informerCell(l *LabReport, what string, short, full func(Handshake) string) (string, []string) {
	if len(l.Tags) == 0 {
		return "-", nil
	}
	first := l.Sync[l.Tags[0]]
	var notes []string
	for _, tag := range l.Tags[1:] {
		if h := l.Sync[tag]; full(h) != full(first) {
			notes = append(notes, fmt.Sprintf("informer %s: %s %s, not %s's %s", tag, what, full(h), l.Tags[0], full(first)))
		}
	}
	return short(first), notes
}

// hasStats reports whether an informer of l reported stats at its sync: logs from before the
// labs counted bytes have none, and a column of "?" would say nothing.
func hasStats(l *LabReport) bool { return len(l.Received) > 0 }

// receivedCell is the decoded bytes the informers' clients read until they synced. Where a
// response came compressed, a footnote says which and the bytes off the connection: the cell
// stays short (seven labs keep to TermWidth) and labs whose LIST (1.32, above 128 KiB) or
// stream (1.37's WatchListCompression) was gzipped alike share one note.
func receivedCell(l *LabReport) (string, []string) {
	text := same(l, func(tag string) string {
		s, ok := l.Received[tag]
		switch {
		case slices.Contains(l.Unsynced, tag):
			return "-"
		case !ok:
			return "?" // synced, but its SETUP synced record has no stats
		}
		return FormatBytes(s.Bytes)
	})
	if !anyEncoded(l) {
		return text, nil
	}
	return text, []string{"Content-Encoding until sync: " + same(l, func(tag string) string {
		text, _ := encodings(l.Sync[tag])
		if s, ok := l.Received[tag]; ok && s.Wire() != s.Bytes {
			text += " (" + Size(s.Wire(), s.Bytes) + ")"
		}
		return text
	})}
}

// anyEncoded reports whether one of l's informers got an encoded response before its sync.
func anyEncoded(l *LabReport) bool {
	return slices.ContainsFunc(l.Tags, func(tag string) bool {
		_, encoded := encodings(l.Sync[tag])
		return encoded
	})
}

// encodings says which Content-Encoding each of an informer's initial responses came with,
// encoded ones first: "gzip for the LIST; none for the WATCH". encoded reports whether one
// was at all (never, in logs from before the labs recorded it).
func encodings(h Handshake) (text string, encoded bool) {
	by := map[string][]string{} // encoding, "" for none -> the requests' tokens, once each
	for _, r := range h.Requests {
		if r.Error != "" {
			continue // no response
		}
		if t := record.Token(r); !slices.Contains(by[r.Encoding], t) {
			by[r.Encoding] = append(by[r.Encoding], t)
		}
		encoded = encoded || r.Encoding != ""
	}
	var parts []string
	for _, e := range slices.Sorted(maps.Keys(by)) {
		if e != "" {
			parts = append(parts, e+" for the "+strings.Join(by[e], ", "))
		}
	}
	if none := by[""]; len(none) > 0 {
		parts = append(parts, "none for the "+strings.Join(none, ", "))
	}
	return strings.Join(parts, "; "), encoded
}

// Size renders bytes received: "2.0 KiB", or, where they came compressed, both counts
// ("1.1 KiB on the wire, 2.0 KiB decoded").
func Size(wire, decoded int64) string {
	if wire == decoded {
		return FormatBytes(decoded)
	}
	return FormatBytes(wire) + " on the wire, " + FormatBytes(decoded) + " decoded"
}

// FormatBytes renders n in binary units with two or three significant digits: "870 B",
// "2.6 KiB", "310 KiB", "1.2 MiB".
func FormatBytes(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB"}
	v, u := float64(n), 0
	for v >= 1024 && u < len(units)-1 {
		v /= 1024
		u++
	}
	switch {
	case u == 0:
		return fmt.Sprintf("%d B", n)
	case v < 10:
		return fmt.Sprintf("%.1f %s", v, units[u])
	}
	return fmt.Sprintf("%.0f %s", v, units[u])
}

func expectedCell(l *LabReport) (string, []string) {
	problems := handshakeProblems(l)
	switch {
	case l.Want == "":
		return "?", []string{"no SETUP gate record: cannot tell which handshake to expect"}
	case len(problems) > 0:
		return "NO", []string{"not the handshake the gates imply: " + strings.Join(problems, "; ")}
	}
	return "yes", nil
}

func eventsCell(l *LabReport) (string, []string) {
	return same(l, func(tag string) string {
		w := l.Watchers[tag]
		return fmt.Sprintf("%d/%d", len(w.Events), w.Handlers)
	}), nil
}

// rvsCell says whether the steady events are the harness's writes, with their rvs; where the
// verdict excuses a difference (LabVerdict.SteadyExcuse), it is allowed ("n/a").
func rvsCell(l *LabReport) (string, []string) {
	why := strings.Join(l.steadyProblems(), "; ")
	switch {
	case why == "":
		return "yes", nil
	case l.Verdict.SteadyExcuse != "":
		return "n/a", []string{"steady rvs not required to be the writes " + l.Verdict.SteadyExcuse + ": " + why}
	}
	return "NO", []string{"steady events are not the harness's writes: " + why}
}

func cacheCell(l *LabReport) (string, []string) {
	var bad []string
	checked := 0
	for _, tag := range l.Tags {
		d, ok := l.Caches[tag]
		if ok {
			checked++
		}
		if d != "" {
			bad = append(bad, tag+": "+d)
		}
	}
	if checked == 0 {
		return "-", nil // no informer synced: nothing to check
	}
	if len(bad) == 0 {
		return "yes", nil
	}
	return "NO", []string{"cache at stop differs from a fresh LIST: " + strings.Join(bad, "; ")}
}

func directCell(l *LabReport) (string, []string) {
	d := l.Direct
	if d == nil {
		return "-", nil
	}
	if d.Fallback == "" {
		return d.Label, nil
	}
	return strings.Replace(d.Label, "fallback: "+d.Fallback, "LIST", 1),
		[]string{GivenUp("direct List()", d.Fallback)}
}

var returned = regexp.MustCompile(`^returned ([0-9]+) items?\b`)

// directItemsCell is how many items the direct List() returned, or NO when it did not return.
func directItemsCell(l *LabReport) (string, []string) {
	d := l.Direct
	if d == nil {
		return "-", nil
	}
	if m := returned.FindStringSubmatch(d.Result); m != nil && d.Returned {
		return m[1], nil
	}
	return "NO", []string{"direct List(): " + d.Result}
}

// same shows a per-informer value once when every informer has it, else "A=… B=…".
func same(l *LabReport, cell func(tag string) string) string {
	if len(l.Tags) == 0 {
		return "-"
	}
	first := cell(l.Tags[0])
	for _, tag := range l.Tags[1:] {
		if cell(tag) != first {
			return perTag(l, cell)
		}
	}
	return first
}

// Lines renders the verdict as aligned text no wider than width: a two-line header, a rule,
// one line per lab, then the footnotes, wrapped. When the columns do not fit, the widest is
// narrowed, one character at a time, and its cells cut with "…" (their marks kept).
func (v Verdict) Lines(width int) []string {
	widths := v.fit(width)
	head := [2][]string{}
	rule := make([]string, len(widths))
	for i, t := range v.Columns {
		top, bottom, ok := strings.Cut(t, "\n")
		if !ok {
			top, bottom = "", t
		}
		head[0] = append(head[0], cut(top, widths[i]))
		head[1] = append(head[1], cut(bottom, widths[i]))
		rule[i] = strings.Repeat("-", widths[i])
	}
	var out []string
	if strings.TrimSpace(strings.Join(head[0], "")) != "" {
		out = append(out, align(head[0], widths))
	}
	out = append(out, align(head[1], widths), align(rule, widths))
	for _, row := range v.Rows {
		cells := make([]string, len(row))
		for i, c := range row {
			cells[i] = fitCell(c, widths[i])
		}
		out = append(out, align(cells, widths))
	}
	if legend := v.legend(); legend != "" {
		out = append(out, Wrap(legend, width, "    ")...)
	}
	for _, n := range v.Notes {
		out = append(out, Wrap(n.String(), width, "    ")...)
	}
	return out
}

// legend says what the columns that need it say: "initial sync: the requests ...; ...".
func (v Verdict) legend() string {
	var parts []string
	for i, m := range v.Means {
		if m != "" {
			parts = append(parts, strings.ReplaceAll(v.Columns[i], "\n", " ")+": "+m)
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return "columns: " + strings.Join(parts, "; ")
}

// columnGap is the space between two columns.
const columnGap = "  "

// fit returns the column widths: each as wide as its widest cell or title line, then the
// widest narrowed until the table fits width.
func (v Verdict) fit(width int) []int {
	widths := v.natural()
	const narrowest = 4 // below that a cell says nothing; the table is then allowed to be wider
	for total(widths) > width {
		widest := 0
		for i, w := range widths {
			if w > widths[widest] {
				widest = i
			}
		}
		if widths[widest] <= narrowest {
			break
		}
		widths[widest]--
	}
	return widths
}

// Width is how wide v's lines (Lines) are with no cell cut.
func (v Verdict) Width() int { return total(v.natural()) }

// natural is each column's width with nothing cut: its widest cell or title line.
func (v Verdict) natural() []int {
	widths := make([]int, len(v.Columns))
	for i, t := range v.Columns {
		for _, line := range strings.Split(t, "\n") {
			widths[i] = max(widths[i], runes(line))
		}
	}
	for _, row := range v.Rows {
		for i, c := range row {
			widths[i] = max(widths[i], runes(c.String()))
		}
	}
	return widths
}

func total(widths []int) int {
	n := len(columnGap) * max(len(widths)-1, 0)
	for _, w := range widths {
		n += w
	}
	return n
}

// align pads cells to their widths and joins them, without trailing blanks.
func align(cells []string, widths []int) string {
	var b strings.Builder
	for i, c := range cells {
		if i > 0 {
			b.WriteString(columnGap)
		}
		b.WriteString(c)
		b.WriteString(strings.Repeat(" ", max(widths[i]-runes(c), 0)))
	}
	return strings.TrimRight(b.String(), " ")
}

// fitCell cuts a cell's text to width, keeping its footnote mark whole: a cut cell still says
// where its full text is.
func fitCell(c Cell, width int) string {
	if runes(c.String()) <= width {
		return c.String()
	}
	m := c.Mark()
	if m == "" {
		return cut(c.Text, width)
	}
	return cut(c.Text, max(width-runes(m), 1)) + m
}

// cut shortens s to width runes, ending in "…" when it had to.
func cut(s string, width int) string {
	r := []rune(s)
	if len(r) <= width {
		return s
	}
	if width < 1 {
		return ""
	}
	return string(r[:width-1]) + "…"
}

func runes(s string) int { return utf8.RuneCountInString(s) }

// Wrap breaks s at spaces into lines no wider than width (a word longer than that stays whole
// on its own line); the lines after the first start with indent.
func Wrap(s string, width int, indent string) []string {
	var out []string
	line := ""
	for _, word := range strings.Fields(s) {
		switch {
		case line == "":
			line = word
		case runes(line)+1+runes(word) <= width:
			line += " " + word
		default:
			out = append(out, line)
			line = indent + word
		}
	}
	if line != "" || len(out) == 0 {
		out = append(out, line)
	}
	return out
}

// syncedIn says whether and when an informer synced in a fault scenario: its time on the wire,
// or "not after" the run's sync wait.
func (r *Report) syncedIn(l *LabReport, tag string) string {
	if slices.Contains(l.Unsynced, tag) {
		if r.SyncWait > 0 {
			return "not after " + r.SyncWait.String()
		}
		return "never"
	}
	return "in " + ms(l.SyncTime[tag])
}

// Kind is the labs' informer kind when it is not the typed default (all labs of a run share
// it), "" otherwise.
func (r *Report) Kind() string {
	for _, l := range r.Labs {
		if l.Kind != "" && l.Kind != record.KindTypedConfigMaps {
			return l.Kind
		}
	}
	return ""
}
