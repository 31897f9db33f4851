package observed

import (
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"informer-lab/compare/analysis"
	"informer-lab/record"
)

// InferredNote says what the table's sync points are: the proxy sees the wire, not the client.
const InferredNote = "The sync point is inferred from the wire, not reported by the client: " +
	"for a LIST→WATCH handshake " + SyncListWatch + ", for a streaming list " + SyncStream +
	", for a watch with no LIST before it the watch itself. Requests after it are re-establishments."

// BytesNote says what the bytes column counts.
const BytesNote = "Bytes count what the log has sizes for: LIST bodies and streams up to their " +
	"initial-events-end BOOKMARK (compressed on the wire, then decoded); what plain watch streams " +
	"carried is not in the log and not counted. Events: A ADDED, M MODIFIED, D DELETED, B BOOKMARK, E ERROR, in the whole log."

// WriteText writes the terminal report: one row per client and resource, no wider than
// analysis.TermWidth, then what each client is and its requests that are not a resource's.
func (r *Report) WriteText(w io.Writer) { r.write(w, false) }

// WriteDetail writes what WriteText writes, then per client and resource how it synced and why
// it asked again, and every request line.
func (r *Report) WriteDetail(w io.Writer) { r.write(w, true) }

func (r *Report) write(w io.Writer, detail bool) {
	say := func(format string, args ...any) { writeWrapped(w, "", fmt.Sprintf(format, args...)) }
	names := make([]string, len(r.Clients))
	for i, c := range r.Clients {
		names[i] = c.Name
	}
	fmt.Fprintf(w, "informer-lab observe: %s\n", r.Path)
	say("clients: %s", strings.Join(names, ", "))
	for _, s := range r.Setup {
		say("also in the log: %s", s)
	}
	fmt.Fprintln(w)
	for _, line := range r.TerminalTable(analysis.TermWidth).Lines(analysis.TermWidth) {
		fmt.Fprintln(w, line)
	}
	for _, f := range r.Findings() {
		say("finding: %s", f)
	}
	fmt.Fprintln(w)
	for _, c := range r.Clients {
		say("%s: User-Agent %s; %s", c.Name, orUnknown(c.UserAgent), orUnknown(c.Conn))
		if s := c.NonResourceSummary(); s != "" {
			writeWrapped(w, "  ", s)
		}
		for _, res := range c.Resources {
			if s := res.OtherSummary(); s != "" {
				writeWrapped(w, "  ", res.Name+": "+s)
			}
		}
	}
	fmt.Fprintln(w)
	say("%s", InferredNote)
	say("%s", BytesNote)
	say("%s", r.Relation())
	if !detail {
		return
	}
	for _, c := range r.Clients {
		fmt.Fprintf(w, "\n== %s ==\n", c.Name)
		for _, res := range c.Resources {
			res.writeDetail(w)
		}
		fmt.Fprintf(w, "every request line:\n")
		for _, line := range c.RequestLines() {
			fmt.Fprintf(w, "  %s\n", line)
		}
	}
}

func (res *Resource) writeDetail(w io.Writer) {
	say := func(indent, format string, args ...any) { writeWrapped(w, indent, fmt.Sprintf(format, args...)) }
	h := res.Handshake
	fmt.Fprintf(w, "%s:\n", res.Name)
	say("  ", "initial sync: %s; sync point: %s", h.Label, h.SyncBy)
	if h.Synced {
		say("    ", "synced at rv=%s, %s after the first request was sent; objects: %s", orUnknown(h.SyncRV), h.SyncTime.Round(100*time.Microsecond), h.Objects)
	}
	for _, p := range res.Problems {
		say("    ", "problem: %s", p)
	}
	for _, p := range res.Wire {
		say("  ", "wire: %s", p)
	}
	if len(res.Gzip) > 0 {
		say("  ", "encoded: %s", strings.Join(res.Gzip, ", "))
	}
	say("  ", "bytes to sync: %s; after: %s", res.Synced, res.Later)
	say("  ", "after sync: %s", Sequence(res.Steps))
	i := 0
	for _, s := range res.Steps {
		if !s.Request {
			continue
		}
		say("    ", "%s %s: %s", s.Time.Format("15:04:05.000"), s.Token, res.Causes[i])
		i++
	}
}

// writeWrapped writes s indented, in lines no wider than analysis.TermWidth.
func writeWrapped(w io.Writer, indent, s string) {
	for _, line := range analysis.Wrap(s, analysis.TermWidth-len(indent), "    ") {
		fmt.Fprintln(w, indent+line)
	}
}

// String says what b counted: "2.0 KiB in 1 body", "3 bodies, sizes not in the log".
func (b Bytes) String() string {
	switch {
	case b.Bodies == 0 && b.Unsized == 0:
		return "nothing counted"
	case b.Bodies == 0:
		return fmt.Sprintf("%d %s, no size in the log", b.Unsized, plural(b.Unsized, "body", "bodies"))
	case !b.Known():
		return fmt.Sprintf("%d bodies, %d without a size in the log", b.Bodies+b.Unsized, b.Unsized)
	}
	return fmt.Sprintf("%s in %d %s", analysis.Size(b.Wire, b.Decoded), b.Bodies, plural(b.Bodies, "body", "bodies"))
}

// Table is the report as rows of cells and footnotes, as the HTML page shows it: one row per
// client and resource.
func (r *Report) Table() analysis.Verdict { return r.table(false) }

// TerminalTable is Table for a terminal of width columns: where its cells would make it wider,
// the re-establishments are counted and the content types are the responses' only, each in
// full in its footnote, so that the handshake, which no footnote repeats, is not cut.
func (r *Report) TerminalTable(width int) analysis.Verdict {
	if v := r.table(false); v.Width() <= width {
		return v
	}
	return r.table(true)
}

func (r *Report) table(compact bool) analysis.Verdict {
	v := analysis.Verdict{Columns: []string{"client", "resource", "initial sync\n(inferred)", "after sync\n(re-established)",
		"Accept →\ncontent type", "bytes\nto sync", "events"}}
	cells := []func(*Resource) (string, []string){syncCell, afterCell(compact), wireCell(compact), bytesCell, eventsCell}
	if compact {
		v.Columns[4] = "content\ntype"
	}
	for _, c := range r.Clients {
		rows := c.Resources
		if len(rows) == 0 {
			rows = []*Resource{nil} // a client of no resource still has its row
		}
		for _, res := range rows {
			row := []analysis.Cell{{Text: c.Name}, {Text: "(none)"}} // its requests are in its notes
			for _, cell := range cells {
				text, notes := "-", []string(nil)
				if res != nil {
					row[1].Text = res.Name
					text, notes = cell(res)
				}
				var marks []int
				for _, n := range notes {
					marks = v.AddNote(c.Name, n, marks)
				}
				row = append(row, analysis.Cell{Text: text, Notes: marks})
			}
			v.Rows = append(v.Rows, row)
		}
	}
	if len(r.Clients) > 1 {
		for i, n := range v.Notes {
			if len(n.Labs) == len(r.Clients) {
				v.Notes[i].Labs = []string{"every client"}
			}
		}
	}
	return v
}

func syncCell(res *Resource) (string, []string) {
	h := res.Handshake
	if len(h.Requests) == 0 {
		return "-", []string{"no LIST or watch of the resource, only other requests"}
	}
	var notes []string
	if h.SyncBy != SyncListWatch && h.SyncBy != SyncStream {
		notes = append(notes, h.SyncBy)
	}
	if h.Fallback != "" {
		notes = append(notes, analysis.GivenUp(analysis.PhaseInitial, h.Fallback))
	}
	return h.Label, append(notes, res.Problems...)
}

// afterCell spells the requests after the sync point, or in compact form counts them; its
// footnote spells them and says why each was made.
func afterCell(compact bool) func(*Resource) (string, []string) {
	return func(res *Resource) (string, []string) {
		seq := Sequence(res.Steps)
		if len(res.Steps) == 0 {
			return seq, nil
		}
		note := []string{"after sync " + seq + ": " + res.CauseSummary()}
		if compact {
			return fmt.Sprintf("%d req", len(res.Causes)), note
		}
		return seq, note
	}
}

// CauseSummary says why the client asked again after its sync point, a cause once with its
// count: "WATCH: the watch before it ended ×2; LIST: ERROR 410 Expired on the watch before it".
func (res *Resource) CauseSummary() string {
	var keys []string
	count := map[string]int{}
	i := 0
	for _, s := range res.Steps {
		if !s.Request {
			continue
		}
		k := s.Token + ": " + res.Causes[i].Why
		if count[k] == 0 {
			keys = append(keys, k)
		}
		count[k]++
		i++
	}
	for i, k := range keys {
		if count[k] > 1 {
			keys[i] += fmt.Sprintf(" ×%d", count[k])
		}
	}
	return strings.Join(keys, "; ")
}

// wireCell is the first Accept → content type pair, the media types shortened, or in compact
// form its response type alone; the footnote has every pair in full.
func wireCell(compact bool) func(*Resource) (string, []string) {
	return func(res *Resource) (string, []string) {
		if len(res.Wire) == 0 {
			return "-", nil
		}
		accept, ct, _ := strings.Cut(res.Wire[0], " → ")
		text := shortMedia(accept) + " → " + shortMedia(ct)
		if compact {
			text = shortMedia(ct)
		}
		if len(res.Gzip) > 0 {
			text += " gzip"
		}
		full := "Accept → content type: " + strings.Join(res.Wire, "; ")
		if len(res.Gzip) > 0 {
			full += "; encoded: " + strings.Join(res.Gzip, ", ")
		}
		return text, []string{full}
	}
}

// shortMedia keeps what tells media types apart in a cell: "application/vnd.kubernetes.protobuf,
// application/json" is "protobuf,json", "application/json;as=Table;v=v1;g=meta.k8s.io" is
// "json;as=Table"; a watch's ";stream=watch" goes.
func shortMedia(s string) string {
	if s == "" {
		return "-" // none sent
	}
	var out []string
	for _, part := range strings.Split(s, ",") {
		typ, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		typ = strings.TrimPrefix(strings.TrimPrefix(typ, "application/"), "vnd.kubernetes.")
		for _, p := range strings.Split(params, ";") {
			if strings.HasPrefix(strings.TrimSpace(p), "as=") {
				typ += ";" + strings.TrimSpace(p)
			}
		}
		if !slices.Contains(out, typ) {
			out = append(out, typ)
		}
	}
	return strings.Join(out, ",")
}

func bytesCell(res *Resource) (string, []string) {
	b := res.Synced
	var notes []string
	if res.Later.Bodies > 0 {
		notes = append(notes, "after the sync point: "+res.Later.String())
	}
	switch {
	case !b.Known():
		return "?", append([]string{"no body sizes in the log (written before they were recorded)"}, notes...)
	case b.Bodies == 0:
		return "-", notes
	case b.Wire != b.Decoded:
		notes = append([]string{"to sync: " + b.String()}, notes...)
	}
	return analysis.FormatBytes(b.Decoded), notes
}

// eventTypes are the watch event types in the order the events cell counts them, by initial.
var eventTypes = []string{record.EventAdded, record.EventModified, record.EventDeleted, record.EventBookmark, record.EventError}

func eventsCell(res *Resource) (string, []string) {
	var parts []string
	for _, t := range eventTypes {
		if n := res.Events[t]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d%c", n, t[0]))
		}
	}
	var others []string
	for t, n := range res.Events {
		if !slices.Contains(eventTypes, t) {
			others = append(others, fmt.Sprintf("%s %d", t, n))
		}
	}
	if len(parts) == 0 && len(others) == 0 {
		return "-", nil
	}
	if len(others) > 0 {
		slices.Sort(others)
		parts = append(parts, "+"+fmt.Sprint(len(others)))
		return strings.Join(parts, " "), []string{"other event types: " + strings.Join(others, ", ")}
	}
	return strings.Join(parts, " "), nil
}

// NonResourceSummary is one line on the client's requests that named no resource: how many,
// and their paths, each once with its count and any status that was not 2xx.
func (c *ClientReport) NonResourceSummary() string {
	if len(c.NonResource) == 0 {
		return ""
	}
	return fmt.Sprintf("%d non-resource %s: %s", len(c.NonResource), plural(len(c.NonResource), "request", "requests"), requestList(c.NonResource))
}

// OtherSummary is one line on a resource's requests that are not collection GETs (writes,
// single-object GETs), "" without any.
func (res *Resource) OtherSummary() string {
	if len(res.Other) == 0 {
		return ""
	}
	return fmt.Sprintf("%d other %s: %s", len(res.Other), plural(len(res.Other), "request", "requests"), requestList(res.Other))
}

// requestList names requests by method, path and status, each once with its count:
// "GET /api, GET /apis ×2, GET /version → 403".
func requestList(reqs []record.Record) string {
	var keys []string
	count := map[string]int{}
	for _, r := range reqs {
		k := r.Method + " " + r.Path
		switch {
		case r.Error != "":
			k += " → error"
		case !record.OK(r.Status):
			k += fmt.Sprintf(" → %d", r.Status)
		}
		if count[k] == 0 {
			keys = append(keys, k)
		}
		count[k]++
	}
	for i, k := range keys {
		if count[k] > 1 {
			keys[i] += fmt.Sprintf(" ×%d", count[k])
		}
	}
	return strings.Join(keys, ", ")
}

// RequestLines are the client's HTTP records as the lab prints them, with the LIST bodies and
// the ERROR events and initial-events-end bookmarks its streams carried (the other events are
// counted, not listed), in log order.
func (c *ClientReport) RequestLines() []string {
	var lines []string
	for _, r := range c.Records {
		if r.Kind == record.HTTP || r.Kind == record.List || r.Event == record.EventError || record.IsEndBookmark(r) {
			lines = append(lines, r.Text())
		}
	}
	return lines
}

// Relation says whether every LIST→WATCH handshake and relist resumed from its LIST's rv, the
// one relation on which a client's cache depends.
func (r *Report) Relation() string {
	var problems []string
	checked := 0
	for _, c := range r.Clients {
		for _, res := range c.Resources {
			if res.Handshake.SyncBy == SyncListWatch {
				checked++
			}
			for _, p := range res.Problems {
				problems = append(problems, c.Name+" "+res.Name+": "+p)
			}
		}
	}
	switch {
	case len(problems) > 0:
		return "WATCH resumes from its LIST's rv: NO: " + strings.Join(problems, "; ")
	case checked == 0:
		return "WATCH resumes from its LIST's rv: no LIST→WATCH handshake to check"
	}
	return fmt.Sprintf("WATCH resumes from its LIST's rv: yes, in each of %d LIST→WATCH %s and every relist after",
		checked, plural(checked, "handshake", "handshakes"))
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func orUnknown(s string) string {
	if s == "" {
		return "?"
	}
	return s
}
