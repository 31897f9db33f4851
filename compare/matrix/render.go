package matrix

import (
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"
	"time"

	"informer-lab/compare/analysis"
	"informer-lab/record"
)

// extra is one annotation of a cell beside its verdict.
type extra struct {
	text  string
	alert bool   // lost data or a disagreement: red in a terminal
	icon  string // its Markdown marker
}

func extras(c *Cell) []extra {
	if c.NotApplicable {
		return nil
	}
	var out []extra
	switch c.time() {
	case recoveryTime:
		out = append(out, extra{text: backIn(*c.RecoverMillis)})
	case syncTime:
		text := fmt.Sprintf("%d ms", c.SyncMillis)
		if c.Synced {
			text = fmt.Sprintf("in %s", time.Duration(c.SyncMillis)*time.Millisecond)
		}
		out = append(out, extra{text: text})
	}
	if !c.Agrees {
		out = append(out, extra{text: "expected " + c.Expected, alert: true, icon: "⚠"})
	}
	if c.Lost != "" {
		out = append(out, extra{text: "LOST: " + c.Lost, alert: true, icon: "🔴"})
	}
	if c.Failed != "" {
		out = append(out, extra{text: "run failed: " + c.Failed, alert: true, icon: "⚠"})
	}
	if n := len(c.otherProblems()); n > 0 {
		out = append(out, extra{text: plural(n, "problem"), alert: true, icon: "⚠"})
	}
	return out
}

// cellTime is which time a cell shows beside its verdict.
type cellTime int

const (
	noTime       cellTime = iota
	syncTime              // its slowest informer's sync (SyncMillis)
	recoveryTime          // from the fault's end to its slowest informer back (RecoverMillis)
)

// time is the time the cell shows: its scenario's time column (Timed) measures recovery
// (Recovery) or the sync. A sync time is shown where every informer synced, and where the
// scenario's check is the handshake of a run that required every informer to sync (no sync
// wait); an informer not synced has none to show otherwise.
func (c *Cell) time() cellTime {
	s := record.ScenarioOf(c.Scenario)
	switch {
	case c.NotApplicable || s.Timed == "":
		return noTime
	case s.Recovery && c.RecoverMillis != nil:
		return recoveryTime
	case s.Recovery:
		return noTime
	case c.Synced || (s.Check == record.CheckHandshake && c.SyncWait == ""):
		return syncTime
	}
	return noTime
}

func backIn(ms int64) string {
	if ms < 100 {
		// as soon as the server was (negative: even before the harness had seen it ready)
		return "back at once"
	}
	return fmt.Sprintf("back in %.1fs", float64(ms)/1000)
}

func plural(n int, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

// doc says what a scenario's table shows: its Shows, and, for a scenario whose Doc the harness
// records (harnessDocumented: the fault family), what the harness recorded.
func (r *Result) doc(sc string) string {
	s := record.ScenarioOf(sc)
	if !harnessDocumented(s) || r.Docs[sc] == "" {
		return s.Shows
	}
	played := "The server the proxy plays " + r.Docs[sc] // a fault's Doc says what that server does
	if r.faultsOnly() {
		return played // the page's introduction says what every table shows
	}
	return s.Shows + " " + played
}

// faultsOnly reports a grid of fault scenarios only (docs/faults.md): one introduction says what
// their tables show, not each table.
func (r *Result) faultsOnly() bool {
	for _, sc := range r.Scenarios {
		if !record.IsFaultScenario(sc) {
			return false
		}
	}
	return len(r.Scenarios) > 0
}

// harnessDocumented reports a scenario of the table whose Doc is not the table's but what the
// harness records (the fault family's: each fault's own): a result keeps it (Result.Docs).
func harnessDocumented(s record.Scenario) bool { return s.Check != 0 && s.Doc == "" }

// header is the run's facts in one line, and the versions it covered.
func (r *Result) header() (facts, versions string) {
	host := r.GoVersion
	if r.OS != "" {
		host += " on " + r.OS
	}
	facts = fmt.Sprintf("%s · %s, %d cores · %s in total", r.Date.UTC().Format("2006-01-02 15:04 UTC"), host, r.CPUs, orQ(r.Duration))
	var gos []string
	for _, c := range r.Clients {
		if g := orQ(c.ClientGo) + " (" + c.Module + ")"; !slices.Contains(gos, g) {
			gos = append(gos, g)
		}
	}
	var servers []string
	for _, s := range r.Servers {
		servers = append(servers, s.Name)
	}
	versions = "client-go " + strings.Join(gos, ", ") + "; kube-apiserver " + strings.Join(servers, ", ")
	if len(r.Kinds) > 0 {
		versions += "; informer kinds " + strings.Join(r.Kinds, ", ")
	}
	return facts, versions
}

// table is one table of the grid: one scenario and its columns, the servers; in a grid with a
// kind axis, one table per scenario and server, its columns the kinds.
type table struct {
	scenario, title string
	cols            []column
}

// column is one column of a table: its head in Markdown and on a terminal, and its cells.
type column struct {
	md, term string
	cell     func(client string) *Cell
}

// tableTitle is the title of a scenario's table: with a kind axis, one per server.
func (r *Result) tableTitle(scenario, server string) string {
	if len(r.Kinds) == 0 {
		return scenario
	}
	return scenario + " · " + server
}

// TableAnchor is the fragment of the Markdown heading of the table that shows a cell.
func (r *Result) TableAnchor(c *Cell) string { return Slug(r.tableTitle(c.Scenario, c.Server)) }

func (r *Result) tables() []table {
	var out []table
	if len(r.Kinds) == 0 {
		heads, _ := serverHeads(r.Servers)
		for _, sc := range r.Scenarios {
			t := table{scenario: sc, title: r.tableTitle(sc, "")}
			for i, s := range r.Servers {
				t.cols = append(t.cols, column{md: s.Name, term: heads[i], cell: func(cl string) *Cell { return r.Cell(sc, s.Name, cl) }})
			}
			out = append(out, t)
		}
		return out
	}
	for _, sc := range r.Scenarios {
		for _, s := range r.Servers {
			t := table{scenario: sc, title: r.tableTitle(sc, s.Name)}
			for _, k := range r.Kinds {
				t.cols = append(t.cols, column{md: k, term: kindHead(k), cell: func(cl string) *Cell { return r.KindCell(sc, s.Name, k, cl) }})
			}
			out = append(out, t)
		}
	}
	return out
}

// Markdown writes the matrix as Markdown: a header, one table per scenario (rows: clients,
// columns: servers, each cell linked to its log) and the findings. A grid with a kind axis has
// one table per scenario and server, its columns the kinds, and says what each kind is.
func (r *Result) Markdown(w io.Writer) error {
	ew := &errWriter{w: w}
	facts, versions := r.header()
	title := "informer-lab matrix"
	switch {
	case len(r.Kinds) > 0:
		title += ": informer kinds"
	case r.faultsOnly():
		title = "informer-lab faults: servers that do not play along"
	case r.variantsOnly():
		title = "informer-lab servers: real servers that are not one plain kube-apiserver"
	}
	ew.printf("# %s\n\n%s\n\n", title, facts)
	if r.Command != "" {
		ew.printf("Made by `%s`, from the run's own logs.\n\n", r.Command)
	}
	ew.printf("%s\n\n", versions)
	if len(r.Kinds) == 0 {
		columns := "kube-apiserver version and feature gates"
		if r.variantsOnly() {
			columns = "kube-apiserver version and the flag it runs with"
		}
		ew.printf("Rows: a lab module with its WatchListClient gate (\"default\": client-go's own default). Columns: %s. Each cell links to its normalized log.\n", columns)
		if r.faultsOnly() {
			ew.printf("\n%s\n", record.ScenarioOf(r.Scenarios[0]).Shows)
		}
		for _, doc := range r.flagDocs() {
			ew.printf("\n%s\n", doc)
		}
	} else {
		ew.printf("%s\n\n", kindsIntro)
		ew.printf("| kind | the lab's two informers (A, B) |\n| --- | --- |\n")
		for _, k := range r.Kinds {
			ew.printf("| %s | %s |\n", k, mdEscape(orQ(KindDoc[k])))
		}
	}
	for _, t := range r.tables() {
		ew.printf("\n## %s\n\n", t.title)
		if doc := r.doc(t.scenario); doc != "" {
			ew.printf("%s\n\n", doc)
		}
		row := []string{"client"}
		for _, c := range t.cols {
			row = append(row, mdEscape(c.md))
		}
		ew.printf("| %s |\n|%s\n", strings.Join(row, " | "), strings.Repeat(" --- |", len(row)))
		for _, cl := range r.Clients {
			row := []string{mdEscape(cl.Label())}
			for _, c := range t.cols {
				row = append(row, mdCell(c.cell(cl.Name)))
			}
			ew.printf("| %s |\n", strings.Join(row, " | "))
		}
	}
	ew.printf("\n## Findings\n\n")
	for _, f := range r.findings() {
		ew.printf("- %s\n", f.markdown())
	}
	return ew.err
}

// findingsPage is where the causes of the symptoms and what to do about them are, beside the
// pages (compare -findings writes it).
const findingsPage = "findings.md"

// markdown is the finding as a line of the Markdown list (without its "- "): its icon, its text
// and, for a symptom, the link to its causes.
func (f finding) markdown() string {
	s := iconPrefix(f.icon) + mdEscape(f.text)
	if f.anchor != "" {
		s += fmt.Sprintf(". Causes and what to do: [%s](%s#%s)", findingsPage, findingsPage, f.anchor)
	}
	return s
}

func iconPrefix(icon string) string {
	if icon == "" {
		return ""
	}
	return icon + " "
}

func mdCell(c *Cell) string {
	if c == nil {
		return "–"
	}
	s := mdEscape(c.Verdict)
	if c.Log != "" {
		s = "[" + strings.NewReplacer("[", `\[`, "]", `\]`).Replace(s) + "](" + linkPath(c.Log) + ")"
	}
	for _, e := range extras(c) {
		if e.alert {
			s += "<br>" + e.icon + " " + mdEscape(e.text)
		} else {
			s += " · " + mdEscape(e.text)
		}
	}
	return s
}

// linkPath escapes a relative path for a Markdown link (spaces, parentheses).
func linkPath(p string) string {
	return (&url.URL{Path: p}).EscapedPath()
}

func mdEscape(s string) string {
	return strings.NewReplacer("|", `\|`, "<", "&lt;", ">", "&gt;", "\n", " ").Replace(s)
}

const (
	ansiRed   = "\x1b[31m"
	ansiReset = "\x1b[0m"
)

// termWidth is what the terminal grid keeps to: fourteen client cells by eight servers must be
// read at a terminal, not wrapped into noise (docs/matrix.md, read in a browser, may be wide).
const termWidth = analysis.TermWidth

// Terminal writes the grid as text no wider than termWidth: one table per scenario, clients as
// rows, servers as columns under their versions (a gated server gets a "*" and a legend). A cell
// is a letter for its verdict, spelled out in a legend under its table, then the sync or recovery
// time; "!" marks a cell the findings name. With color, "!" cells are red.
func (r *Result) Terminal(w io.Writer, color bool) error {
	ew := &errWriter{w: w}
	say := func(s string) {
		for _, line := range analysis.Wrap(s, termWidth, "  ") {
			ew.printf("%s\n", line)
		}
	}
	facts, versions := r.header()
	say("informer-lab matrix · " + facts)
	say(versions)
	if len(r.Kinds) == 0 {
		_, gated := serverHeads(r.Servers)
		for _, g := range gated {
			say(g)
		}
	} else if l := kindHeadLegend(r.Kinds); l != "" {
		say(l)
	}
	for _, t := range r.tables() {
		ew.printf("\n== %s ==\n", t.title)
		g := r.grid(t)
		for _, line := range g.lines(color) {
			ew.printf("%s\n", line)
		}
		for _, l := range g.legend() {
			say(l)
		}
	}
	ew.printf("\nFindings:\n")
	for _, f := range r.findings() {
		text := f.text
		if f.anchor != "" {
			text += " (causes and what to do: docs/" + findingsPage + ")"
		}
		for _, line := range analysis.Wrap("- "+text, termWidth, "  ") {
			if f.alert && color {
				line = ansiRed + line + ansiReset
			}
			ew.printf("%s\n", line)
		}
	}
	return ew.err
}

// serverHeads names the servers' columns by version; a server with feature gates gets "*" (or
// "*1", "*2", ... when several have them) and a legend line saying which gates.
func serverHeads(servers []Server) (heads, legend []string) {
	n := 0
	for _, s := range servers {
		if s.FeatureGates != "" {
			n++
		}
	}
	i := 0
	for _, s := range servers {
		head, _, _ := strings.Cut(s.Name, " ")
		if s.FeatureGates != "" {
			i++
			mark := "*"
			if n > 1 {
				mark += fmt.Sprint(i)
			}
			head += mark
			legend = append(legend, mark+" "+s.Name)
		}
		heads = append(heads, head)
	}
	return heads, legend
}

// grid is one scenario's table: a code per distinct verdict, in the order they first appear.
type grid struct {
	scenario string
	heads    []string // "client", then one per server
	rows     [][]gridCell
	codes    []string // the verdicts; verdict i is shown as code(i)
}

// gridCell is one cell: its text, and whether the findings name it (red with color).
type gridCell struct {
	text  string
	alert bool
}

func (r *Result) grid(t table) grid {
	g := grid{scenario: t.scenario, heads: []string{"client"}}
	for _, c := range t.cols {
		g.heads = append(g.heads, c.term)
	}
	index := map[string]int{}
	for _, cl := range r.Clients {
		row := []gridCell{{text: cl.Label()}}
		for _, col := range t.cols {
			c := col.cell(cl.Name)
			if c == nil {
				row = append(row, gridCell{text: "–"})
				continue
			}
			i, ok := index[c.Verdict]
			if !ok {
				i = len(g.codes)
				index[c.Verdict] = i
				g.codes = append(g.codes, c.Verdict)
			}
			row = append(row, termCell(c, code(i)))
		}
		g.rows = append(g.rows, row)
	}
	return g
}

// termCell is a cell's code, its time (Cell.time: the slowest informer's sync, or from the fault's
// end to the slowest informer back) and "!" when the findings name it.
func termCell(c *Cell, code string) gridCell {
	cell := gridCell{text: code}
	switch c.time() {
	case syncTime:
		cell.text += " " + shortSync(c.SyncMillis)
	case recoveryTime:
		cell.text += " " + shortBack(*c.RecoverMillis)
	}
	for _, e := range extras(c) {
		cell.alert = cell.alert || e.alert
	}
	if cell.alert {
		cell.text += "!"
	}
	return cell
}

// shortSync is a sync time in at most five characters: "20ms", "987ms", "1.2s".
func shortSync(ms int64) string {
	if ms < 1000 {
		return fmt.Sprintf("%dms", ms)
	}
	return fmt.Sprintf("%.1fs", float64(ms)/1000)
}

// shortBack is backIn in a few characters.
func shortBack(ms int64) string {
	if ms < 100 {
		return "0s"
	}
	return fmt.Sprintf("%.1fs", float64(ms)/1000)
}

// code names the i-th verdict of a table: a, b, ..., z, aa, ab, ...
func code(i int) string {
	s := ""
	for i++; i > 0; i = (i - 1) / 26 {
		s = string(rune('a'+(i-1)%26)) + s
	}
	return s
}

// lines renders the table; servers that do not fit termWidth beside the client column go to a
// second table below (and so on), each with the client column again.
func (g grid) lines(color bool) []string {
	width := make([]int, len(g.heads))
	for i, h := range g.heads {
		width[i] = runeLen(h)
	}
	for _, row := range g.rows {
		for i, c := range row {
			width[i] = max(width[i], runeLen(c.text))
		}
	}
	var out []string
	for _, cols := range chunks(width) {
		if len(out) > 0 {
			out = append(out, "")
		}
		out = append(out, g.block(cols, width, color)...)
	}
	return out
}

// chunks splits the server columns (1..) into runs that fit termWidth beside column 0.
func chunks(width []int) [][]int {
	var out [][]int
	var cur []int
	used := width[0]
	for i := 1; i < len(width); i++ {
		if len(cur) > 0 && used+3+width[i] > termWidth {
			out = append(out, cur)
			cur, used = nil, width[0]
		}
		cur = append(cur, i)
		used += 3 + width[i]
	}
	return append(out, cur)
}

// block renders the client column and the given server columns.
func (g grid) block(cols, width []int, color bool) []string {
	cols = append([]int{0}, cols...)
	line := func(cells []gridCell) string {
		var parts []string
		for _, i := range cols {
			c := cells[i]
			shown := c.text
			if c.alert && color {
				shown = ansiRed + shown + ansiReset
			}
			parts = append(parts, shown+strings.Repeat(" ", width[i]-runeLen(c.text)))
		}
		return strings.TrimRight(strings.Join(parts, " | "), " ")
	}
	head := make([]gridCell, len(g.heads))
	rule := make([]string, 0, len(cols))
	for i, h := range g.heads {
		head[i] = gridCell{text: h}
	}
	for _, i := range cols {
		rule = append(rule, strings.Repeat("-", width[i]))
	}
	out := []string{line(head), strings.Join(rule, "-+-")}
	for _, row := range g.rows {
		out = append(out, line(row))
	}
	return out
}

// legend spells out the table's codes and what its times and marks mean.
func (g grid) legend() []string {
	var codes []string
	for i, v := range g.codes {
		codes = append(codes, code(i)+" = "+v)
	}
	out := []string{strings.Join(codes, " · ")}
	var marks []string
	if t := record.ScenarioOf(g.scenario).Timed; t != "" {
		marks = append(marks, t)
	}
	if slices.ContainsFunc(g.rows, func(row []gridCell) bool {
		return slices.ContainsFunc(row, func(c gridCell) bool { return c.alert })
	}) {
		marks = append(marks, "!: named in the findings below")
	}
	if len(marks) > 0 {
		out = append(out, strings.Join(marks, "; "))
	}
	return out
}

func runeLen(s string) int { return len([]rune(s)) }

// otherProblems are the cell's problems that its verdict, its disagreement or its lost data do
// not already show: compare's failures for a handshake the gates do not imply, a cache that
// differs from the LIST and steady events that differ from the writes say what the cell says.
func (c *Cell) otherProblems() []string {
	var out []string
	for _, p := range c.Problems {
		switch {
		case !c.Agrees && strings.Contains(p, ": expected "+c.Expected+", saw "):
		case c.Lost != "" && strings.Contains(p, "cache at stop differs from a fresh LIST"):
		case record.ScenarioOf(c.Scenario).Check == record.CheckDelivery && strings.Contains(c.Verdict, p):
		default:
			out = append(out, p)
		}
	}
	return out
}

// finding is one line of the findings list.
type finding struct {
	text   string
	alert  bool
	icon   string
	anchor string // a symptom's: its section of docs/findings.md
}

// findings are generated from the cells: the symptoms they show (Hits, ranked as GroupHits
// ranks them), then disagreements with the gates, lost data, steady sequences that differ within
// a run, and the remaining failures compare reported.
func (r *Result) findings() []finding {
	var out []finding
	for _, g := range GroupHits(r.Hits()) {
		out = append(out, g.finding())
	}
	where := func(c *Cell) string {
		if c.Kind != "" {
			return c.Scenario + " · " + c.Server + " · " + c.Kind + " · " + c.Client
		}
		return c.Scenario + " · " + c.Server + " · " + c.Client
	}
	r.eachCell(func(c *Cell) {
		if !c.Agrees {
			out = append(out, finding{text: fmt.Sprintf("%s: expected %s, saw %s", where(c), c.Expected, c.Verdict), alert: true, icon: "⚠"})
		}
	})
	r.eachCell(func(c *Cell) {
		if c.Lost != "" {
			out = append(out, finding{text: fmt.Sprintf("%s: LOST data, the cache at stop differs from a fresh LIST: %s", where(c), c.Lost), alert: true, icon: "🔴"})
		}
	})
	r.eachCell(func(c *Cell) {
		if c.Failed != "" {
			out = append(out, finding{text: fmt.Sprintf("%s: the run failed, no observation: %s", where(c), c.Failed), alert: true, icon: "⚠"})
		}
	})
	r.eachCell(func(c *Cell) {
		if c.SeqDiffers {
			out = append(out, finding{text: fmt.Sprintf("%s: steady event sequence differs from the other cells on the same server: %s", where(c), c.Verdict), alert: true, icon: "⚠"})
		}
	})
	r.eachCell(func(c *Cell) {
		for _, p := range c.otherProblems() {
			out = append(out, finding{text: fmt.Sprintf("%s: %s", where(c), p), alert: false, icon: "•"})
		}
	})
	if len(out) == 0 {
		na := 0
		for _, c := range r.Cells {
			if c.NotApplicable {
				na++
			}
		}
		text := fmt.Sprintf("None: all %d cells agree with what the gates imply, no symptom (no hang, loop, late sync or extra request), no data lost, every steady sequence alike, every run completed, no failure reported.", len(r.Cells)-na)
		if na > 0 {
			text += fmt.Sprintf(" %s not applicable (n/a), not run.", plural(na, "more cell"))
		}
		out = append(out, finding{text: text})
	}
	return out
}

// eachCell visits the cells in table order: scenario, client, server (with a kind axis:
// scenario, server, client, kind); then any cell outside it.
func (r *Result) eachCell(f func(*Cell)) {
	seen := map[string]bool{}
	for _, t := range r.tables() {
		for _, cl := range r.Clients {
			for _, col := range t.cols {
				if c := col.cell(cl.Name); c != nil && !seen[c.Key()] {
					seen[c.Key()] = true
					f(c)
				}
			}
		}
	}
	for i := range r.Cells {
		if !seen[r.Cells[i].Key()] {
			f(&r.Cells[i])
		}
	}
}

// errWriter keeps the first write error.
type errWriter struct {
	w   io.Writer
	err error
}

func (e *errWriter) printf(format string, args ...any) {
	if e.err == nil {
		_, e.err = fmt.Fprintf(e.w, format, args...)
	}
}

// flagDocs say what each kube-apiserver flag the grid's servers run with changes, once each.
func (r *Result) flagDocs() []string {
	var out []string
	for _, sv := range r.Servers {
		_, flags, _ := record.SplitServerSettings(sv.FeatureGates)
		for _, item := range strings.Split(flags, ",") {
			name, _, _ := strings.Cut(item, "=")
			if f, ok := record.ServerFlagOf(name); ok && !slices.Contains(out, f.Doc) {
				out = append(out, f.Doc)
			}
		}
	}
	return out
}
