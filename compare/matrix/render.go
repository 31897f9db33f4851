package matrix

import (
	"fmt"
	"io"
	"net/url"
	"slices"
	"strings"

	"informer-lab/compare/analysis"
)

// scenarioDoc says what a scenario's table shows.
var scenarioDoc = map[string]string{
	analysis.ScenarioStartup:   "Initial sync only, no writes: the requests each informer made to sync, and the slowest informer's sync time. ⚠ marks a handshake that is not the one the gates imply.",
	analysis.ScenarioDirect:    "Initial sync, then each lab's one typed `List()` of ConfigMaps, the call a controller makes outside its informers (tag DIRECT): the requests it sent. A fallback names client-go's reason.",
	analysis.ScenarioSteady:    "Writes fan out: each informer's events against the harness's writes (same objects, same rvs), and against the other cells of the run.",
	analysis.ScenarioReconnect: "A proxy ends every watch after a few seconds: what each re-established watch sent (×N: how many rounds).",
	analysis.ScenarioRestart:   "kube-apiserver killed and restarted: each informer's requests from the kill until it is back in sync, and the time from the restart to the slowest informer back.",
	analysis.ScenarioExpired:   "Labs cut off while the server moves past their rv (restart, etcd compaction): the 410 and how each informer re-syncs, and the time from their release to the slowest informer back.",
}

// extra is one annotation of a cell beside its verdict.
type extra struct {
	text  string
	alert bool   // lost data or a disagreement: red in a terminal
	icon  string // its Markdown marker
}

func extras(c *Cell) []extra {
	var out []extra
	switch c.Scenario {
	case analysis.ScenarioStartup:
		out = append(out, extra{text: fmt.Sprintf("%d ms", c.SyncMillis)})
	case analysis.ScenarioRestart, analysis.ScenarioExpired:
		if c.RecoverMillis != nil {
			out = append(out, extra{text: backIn(*c.RecoverMillis)})
		}
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
	return facts, "client-go " + strings.Join(gos, ", ") + "; kube-apiserver " + strings.Join(servers, ", ")
}

// Markdown writes the matrix as Markdown: a header, one table per scenario (rows: clients,
// columns: servers, each cell linked to its log) and the findings.
func (r *Result) Markdown(w io.Writer) error {
	ew := &errWriter{w: w}
	facts, versions := r.header()
	ew.printf("# informer-lab matrix\n\n%s\n\n%s\n\n", facts, versions)
	ew.printf("Rows: a lab module with its WatchListClient gate (\"default\": client-go's own default). Columns: kube-apiserver version and feature gates. Each cell links to its normalized log.\n")
	for _, sc := range r.Scenarios {
		ew.printf("\n## %s\n\n", sc)
		if doc := scenarioDoc[sc]; doc != "" {
			ew.printf("%s\n\n", doc)
		}
		row := []string{"client"}
		for _, s := range r.Servers {
			row = append(row, mdEscape(s.Name))
		}
		ew.printf("| %s |\n|%s\n", strings.Join(row, " | "), strings.Repeat(" --- |", len(row)))
		for _, cl := range r.Clients {
			row := []string{mdEscape(cl.Label())}
			for _, s := range r.Servers {
				row = append(row, mdCell(r.Cell(sc, s.Name, cl.Name)))
			}
			ew.printf("| %s |\n", strings.Join(row, " | "))
		}
	}
	ew.printf("\n## Findings\n\n")
	for _, f := range r.findings() {
		ew.printf("- %s%s\n", iconPrefix(f.icon), mdEscape(f.text))
	}
	return ew.err
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

// Terminal writes the same grid as aligned text tables; with color, lost data and disagreements
// are red.
func (r *Result) Terminal(w io.Writer, color bool) error {
	ew := &errWriter{w: w}
	red := func(s string) string {
		if !color {
			return s
		}
		return ansiRed + s + ansiReset
	}
	facts, versions := r.header()
	ew.printf("informer-lab matrix · %s\n%s\n", facts, versions)
	for _, sc := range r.Scenarios {
		ew.printf("\n== %s ==\n", sc)
		// Each cell is a plain text, for widths, and its rendering, maybe coloured.
		type cell struct{ plain, shown string }
		rows := [][]cell{{{plain: "client", shown: "client"}}}
		for _, s := range r.Servers {
			rows[0] = append(rows[0], cell{s.Name, s.Name})
		}
		for _, cl := range r.Clients {
			row := []cell{{cl.Label(), cl.Label()}}
			for _, s := range r.Servers {
				c := r.Cell(sc, s.Name, cl.Name)
				if c == nil {
					row = append(row, cell{"–", "–"})
					continue
				}
				plain, shown := c.Verdict, c.Verdict
				for _, e := range extras(c) {
					t := e.text
					if e.alert {
						t = "! " + t
					}
					plain += " · " + t
					if e.alert {
						t = red(t)
					}
					shown += " · " + t
				}
				row = append(row, cell{plain, shown})
			}
			rows = append(rows, row)
		}
		width := make([]int, len(rows[0]))
		for _, row := range rows {
			for i, c := range row {
				width[i] = max(width[i], len([]rune(c.plain)))
			}
		}
		for n, row := range rows {
			var parts []string
			for i, c := range row {
				parts = append(parts, c.shown+strings.Repeat(" ", width[i]-len([]rune(c.plain))))
			}
			ew.printf("%s\n", strings.TrimRight(strings.Join(parts, " | "), " "))
			if n == 0 {
				var rule []string
				for _, wd := range width {
					rule = append(rule, strings.Repeat("-", wd))
				}
				ew.printf("%s\n", strings.Join(rule, "-+-"))
			}
		}
	}
	ew.printf("\nFindings:\n")
	for _, f := range r.findings() {
		t := f.text
		if f.alert {
			t = red(t)
		}
		ew.printf("- %s\n", t)
	}
	return ew.err
}

// otherProblems are the cell's problems that its verdict, its disagreement or its lost data do
// not already show: compare's failures for a handshake the gates do not imply, a cache that
// differs from the LIST and steady events that differ from the writes say what the cell says.
func (c *Cell) otherProblems() []string {
	var out []string
	for _, p := range c.Problems {
		switch {
		case !c.Agrees && strings.Contains(p, ": expected "+c.Expected+", saw "):
		case c.Lost != "" && strings.Contains(p, "cache at stop differs from a fresh LIST"):
		case c.Scenario == analysis.ScenarioSteady && strings.Contains(c.Verdict, p):
		default:
			out = append(out, p)
		}
	}
	return out
}

// finding is one line of the findings list.
type finding struct {
	text  string
	alert bool
	icon  string
}

// findings are generated from the cells: disagreements with the gates, lost data, steady
// sequences that differ within a run, and the remaining failures compare reported.
func (r *Result) findings() []finding {
	var out []finding
	where := func(c *Cell) string { return c.Scenario + " · " + c.Server + " · " + c.Client }
	r.eachCell(func(c *Cell) {
		if !c.Agrees {
			out = append(out, finding{fmt.Sprintf("%s: expected %s, saw %s", where(c), c.Expected, c.Verdict), true, "⚠"})
		}
	})
	r.eachCell(func(c *Cell) {
		if c.Lost != "" {
			out = append(out, finding{fmt.Sprintf("%s: LOST data, the cache at stop differs from a fresh LIST: %s", where(c), c.Lost), true, "🔴"})
		}
	})
	r.eachCell(func(c *Cell) {
		if c.Failed != "" {
			out = append(out, finding{fmt.Sprintf("%s: the run failed, no observation: %s", where(c), c.Failed), true, "⚠"})
		}
	})
	r.eachCell(func(c *Cell) {
		if c.SeqDiffers {
			out = append(out, finding{fmt.Sprintf("%s: steady event sequence differs from the other cells on the same server: %s", where(c), c.Verdict), true, "⚠"})
		}
	})
	r.eachCell(func(c *Cell) {
		for _, p := range c.otherProblems() {
			out = append(out, finding{fmt.Sprintf("%s: %s", where(c), p), false, "•"})
		}
	})
	if len(out) == 0 {
		out = append(out, finding{text: fmt.Sprintf("None: all %d cells agree with what the gates imply, no data lost, every steady sequence alike, every run completed, no failure reported.", len(r.Cells))})
	}
	return out
}

// eachCell visits the cells in table order: scenario, client, server; then any cell outside it.
func (r *Result) eachCell(f func(*Cell)) {
	seen := map[string]bool{}
	for _, sc := range r.Scenarios {
		for _, cl := range r.Clients {
			for _, s := range r.Servers {
				if c := r.Cell(sc, s.Name, cl.Name); c != nil {
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
