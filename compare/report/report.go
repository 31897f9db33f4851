// Package report renders a compared run as one self-contained HTML page: the verdict first (labs
// as rows, as the terminal shows it, every fact in full behind it), then one sequence diagram per
// distinct initial sync with the labs that share it, the steady phase as a fan-out timeline, and
// the normalized diffs. The page loads nothing at view time: CSS, SVG and its one line of JS are inline.
package report

import (
	"fmt"
	"html/template"
	"io"
	"sort"
	"strings"
	"time"

	"informer-lab/compare/analysis"
	"informer-lab/record"
)

// Write renders the page for run and its analysis rep.
func Write(w io.Writer, run *analysis.Run, rep *analysis.Report) error {
	p := page{Rep: rep, Holds: len(rep.Failures) == 0, Conclusion: "no labs"}
	if len(rep.Labs) > 0 {
		p.Conclusion = rep.Conclusion()
		p.Verdict = rep.Verdict()
		p.Table = rep.Table()
	}
	if p.Gates = rep.ServerGates; p.Gates == "" {
		p.Gates = "defaults"
	}
	if sk := rep.Skew; sk.Writes > 0 {
		p.Skew = fmt.Sprintf("fan-out skew over %d writes × %d watchers: min %s, median %s, max %s",
			sk.Writes, sk.Watchers, ms(sk.Min), ms(sk.Median), ms(sk.Max))
	}
	p.Sequences = sequences(run, rep)
	p.Timeline = timelineSVG(rep)
	for _, d := range rep.Diffs {
		p.Diffs = append(p.Diffs, diffView{PhaseDiff: d, Lines: diffLines(d.Text)})
	}
	return executePage(w, pageTmpl, p, "report.html")
}

// executePage executes the page template t with p into w, for Write and WriteObserved; name says
// in the error which page it was.
func executePage(w io.Writer, t *template.Template, p any, name string) error {
	if err := t.Execute(w, p); err != nil {
		return fmt.Errorf("render %s: %w", name, err)
	}
	return nil
}

type page struct {
	Rep        *analysis.Report
	Holds      bool
	Conclusion string
	Gates      string
	Verdict    analysis.Verdict
	Table      [][]string // every fact, one column per lab
	Skew       string
	Sequences  []sequence
	Timeline   template.HTML
	Diffs      []diffView
}

// sequence is one diagram: the labs whose initial syncs draw the same arrows, drawn from the
// first one's log.
type sequence struct {
	Labs    []string
	Shape   string
	SVG     template.HTML
	initial []record.Record // the first lab's initial phase, until it is drawn
}

// sequences draws one diagram per distinct initial sync: seven labs make two or three shapes,
// and seven diagrams of the same two would bury the difference.
func sequences(run *analysis.Run, rep *analysis.Report) []sequence {
	var out []sequence
	index := map[string]int{} // drawn key -> its diagram in out
	for _, lab := range run.Labs {
		initial, _ := analysis.SplitPhases(lab.Records)
		key := drawnKey(messages(initial))
		if i, ok := index[key]; ok {
			out[i].Labs = append(out[i].Labs, lab.Name)
			continue
		}
		index[key] = len(out)
		out = append(out, sequence{Labs: []string{lab.Name}, Shape: shapeOf(rep, lab.Name), initial: initial})
	}
	for i := range out {
		out[i].SVG = sequenceSVG(out[i].Labs, out[i].initial)
		out[i].initial = nil
	}
	return out
}

// drawnKey is what a diagram shows, informer by informer: labs whose informers made the same
// requests and got the same answers share a diagram, whichever informer happened to go first.
func drawnKey(msgs []message) string {
	per := map[string][]string{}
	for _, m := range msgs {
		per[m.tag] = append(per[m.tag], fmt.Sprintf("%s|%t|%s", m.class, m.up, m.label))
	}
	tags := make([]string, 0, len(per))
	for t := range per {
		tags = append(tags, t)
	}
	sort.Strings(tags)
	var b strings.Builder
	for _, t := range tags {
		b.WriteString(t + "\n" + strings.Join(per[t], "\n") + "\n\n")
	}
	return b.String()
}

type diffView struct {
	analysis.PhaseDiff
	Lines []diffLine
}

type diffLine struct{ Class, Text string }

// diffLines classifies the lines of a unified diff for highlighting.
func diffLines(text string) []diffLine {
	var out []diffLine
	for _, l := range strings.Split(strings.TrimSuffix(text, "\n"), "\n") {
		class := "ctx"
		switch {
		case strings.HasPrefix(l, "+++"), strings.HasPrefix(l, "---"):
			class = "file"
		case strings.HasPrefix(l, "@@"):
			class = "hunk"
		case strings.HasPrefix(l, "+"):
			class = "add"
		case strings.HasPrefix(l, "-"):
			class = "del"
		}
		out = append(out, diffLine{class, l})
	}
	return out
}

// shapeOf is the lab's initial-sync label as the verdict table shows it, e.g. "STREAM (1 req)".
func shapeOf(rep *analysis.Report, lab string) string {
	for _, l := range rep.Labs {
		if l.Name == lab && len(l.Tags) > 0 {
			return l.Sync[l.Tags[0]].Label
		}
	}
	return ""
}

func ms(d time.Duration) string {
	return fmt.Sprintf("%.1f ms", float64(d)/float64(time.Millisecond))
}

// The script records uncaught errors on <html data-js-errors>, where a headless browser's
// --dump-dom shows them to a test.
var pageTmpl = template.Must(template.New("report").Funcs(template.FuncMap{
	"title": columnTitle,
	"join":  strings.Join,
}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8"/>
<title>informer-lab: {{if .Holds}}VERDICT holds{{else}}VERDICT fails{{end}} ({{.Rep.Dir}})</title>
<script>
window.onerror = function (msg) {
	var root = document.documentElement;
	root.setAttribute("data-js-errors", (root.getAttribute("data-js-errors") || "") + msg + "\n");
};
</script>
<style>
` + pageCSS + `</style>
</head>
<body>
<h1>informer-lab compare</h1>
<p class="meta">run {{.Rep.Dir}} · server {{.Rep.Server}} (settings: {{.Gates}}) · {{with .Rep.Kind}}informer kind {{.}} · {{end}}{{len .Rep.Writes}} harness writes</p>
<p class="verdict {{if .Holds}}holds{{else}}fails{{end}}">VERDICT: {{if .Holds}}holds{{else}}fails ({{len .Rep.Failures}}){{end}}</p>
<p class="conclusion">{{.Conclusion}}</p>
{{with .Rep.Failures}}<ul class="failures">{{range .}}<li>{{.}}</li>{{end}}</ul>{{end}}
{{with .Verdict.Rows}}<table class="verdict-table">
<thead><tr>{{range $.Verdict.Columns}}<th>{{title .}}</th>{{end}}</tr></thead>
<tbody>{{range .}}<tr>{{range $i, $c := .}}{{if eq $i 0}}<th>{{$c.Text}}</th>{{else}}<td{{if eq $c.Text "NO"}} class="no"{{end}}>{{$c.Text}}{{with $c.Mark}}<sup>{{.}}</sup>{{end}}</td>{{end}}{{end}}</tr>
{{end}}</tbody>
</table>{{end}}
{{with .Verdict.Notes}}<ul class="notes">{{range .}}<li><sup>[{{.Number}}]</sup> <span class="who">{{.Who}}:</span> {{.Text}}</li>{{end}}</ul>{{end}}
{{with .Table}}<details class="facts"><summary>Every fact in full, one column per lab (as in compare.txt)</summary>
<div class="wide"><table class="fact-table">
<thead><tr>{{range index . 0}}<th>{{.}}</th>{{end}}</tr></thead>
<tbody>{{range slice . 1}}<tr>{{range $i, $c := .}}{{if eq $i 0}}<th>{{$c}}</th>{{else}}<td>{{$c}}</td>{{end}}{{end}}</tr>
{{end}}</tbody>
</table></div></details>{{end}}
<p class="note">{{with .Skew}}{{.}}{{else}}fan-out skew: no write was seen by two watchers{{end}}</p>
{{range .Rep.Faults}}<p class="note">fault: {{.}}</p>{{end}}

<h2>Initial sync, as it went over the wire</h2>
<p class="note">One diagram per distinct initial sync: labs whose informers made the same requests and got the same answers share one, drawn from the first one's log. One arrow per request (blue), LIST body (green) and watch event (grey; the initial-events-end bookmark purple), in the order the lab logged them; rvs as in the diff: &lt;RV0&gt; is the rv the informer synced at. Hover an arrow for the full line (content types differ between labs: the table above has them in full).</p>
{{range .Sequences}}<h3>{{with .Shape}}{{.}}: {{end}}{{join .Labs ", "}}</h3>
{{if gt (len .Labs) 1}}<p class="note">drawn from {{index .Labs 0}}'s log</p>
{{end}}{{.SVG}}
{{end}}

<h2>Steady phase: one write, every watcher</h2>
<p class="note">One row per harness write, one lane per watcher. A dot is the time the watcher received the write's event, relative to the moment the harness logged the write (the dashed line: after the apiserver answered, so an event may come first). Right: the fan-out skew of the write, last watcher minus first.</p>
{{.Timeline}}

<h2>Normalized diffs against {{with .Rep.Labs}}{{(index . 0).Name}}{{end}}</h2>
{{range .Diffs}}<h3>{{.Phase}}: {{.Lab}} vs {{.Base}}</h3>
{{if .Text}}<pre class="diff">{{range .Lines}}<span class="{{.Class}}">{{.Text}}</span>{{end}}</pre>{{else}}<p class="note">identical ({{.PhaseDiff.Lines}} lines)</p>{{end}}
{{else}}<p class="note">only one lab: nothing to diff</p>
{{end}}
</body>
</html>
`))

// columnTitle breaks a table column's title where the terminal does.
func columnTitle(s string) template.HTML {
	return template.HTML(strings.ReplaceAll(template.HTMLEscapeString(s), "\n", "<br/>"))
}

// pageCSS styles the page and its diagrams; the observed page (WriteObserved) shares it.
const pageCSS = `body { font: 14px/1.45 system-ui, sans-serif; margin: 24px 32px; color: #1b1f24; max-width: 1340px; }
h1 { font-size: 20px; margin: 0 0 4px; }
h2 { font-size: 17px; margin: 32px 0 6px; border-bottom: 1px solid #d0d7de; padding-bottom: 4px; }
h3 { font-size: 15px; margin: 18px 0 4px; }
.meta, .note { color: #57606a; margin: 2px 0; }
.verdict { font-size: 22px; font-weight: 700; padding: 8px 14px; border-radius: 6px; display: inline-block; margin: 12px 0 6px; }
.holds { background: #dafbe1; color: #116329; border: 1px solid #4ac26b; }
.fails { background: #ffebe9; color: #a40e26; border: 1px solid #ff8182; }
.conclusion { font-size: 15px; margin: 4px 0 12px; }
table { border-collapse: collapse; margin: 8px 0; }
th, td { border: 1px solid #d0d7de; padding: 4px 10px; text-align: left; vertical-align: top; }
thead th { background: #f6f8fa; }
tbody th { font-weight: 600; white-space: nowrap; }
.verdict-table td { white-space: nowrap; }
.verdict-table td.no { color: #a40e26; font-weight: 700; }
.verdict-table thead th { vertical-align: bottom; }
sup { color: #57606a; margin-left: 1px; }
ul.notes { margin: 4px 0 8px; padding-left: 0; list-style: none; }
ul.notes .who { font-weight: 600; }
details.facts { margin: 8px 0; }
details.facts summary { cursor: pointer; color: #0969da; }
.wide { overflow-x: auto; }
.fact-table td { min-width: 9em; }
pre { font: 12px/1.4 ui-monospace, monospace; background: #f6f8fa; padding: 8px; overflow-x: auto; }
pre span { display: block; white-space: pre; }
.add { background: #dafbe1; color: #116329; }
.del { background: #ffebe9; color: #a40e26; }
.hunk { color: #8250df; }
.file { color: #57606a; font-weight: 600; }
svg { display: block; font: 11px ui-monospace, monospace; }
svg.sequence, svg.timeline { max-width: 100%; height: auto; } /* scale down rather than overflow a narrower window */
svg .head rect { fill: #f6f8fa; stroke: #57606a; }
svg .head text { font: 600 12px system-ui, sans-serif; }
svg .lifeline { stroke: #8c959f; stroke-dasharray: 4 4; }
svg .arrow line { stroke-width: 1.4; }
svg .arrow.HTTP line, svg .arrow.HTTP polygon { stroke: #0969da; fill: #0969da; }
svg .arrow.HTTP text { fill: #0550ae; font-weight: 600; }
svg .arrow.LIST line, svg .arrow.LIST polygon { stroke: #1a7f37; fill: #1a7f37; }
svg .arrow.LIST text { fill: #116329; font-weight: 600; }
svg .arrow.WATCH-EVENT line, svg .arrow.WATCH-EVENT polygon { stroke: #6e7781; fill: #6e7781; }
svg .arrow.bookmark line, svg .arrow.bookmark polygon { stroke: #8250df; fill: #8250df; }
svg .arrow.bookmark text { fill: #6639ba; font-weight: 600; }
svg .arrow.failed text { fill: #cf222e; }
svg .synced rect { fill: #dafbe1; stroke: #1a7f37; }
svg .synced text { fill: #116329; font-weight: 600; }
svg .grid { stroke: #d0d7de; }
svg .zero { stroke: #cf222e; stroke-dasharray: 3 3; }
svg .band { fill: #f6f8fa; }
svg .missing { fill: #cf222e; font-weight: 600; }
svg .lab0 { fill: #0969da; } svg .lab1 { fill: #bf3989; } svg .lab2 { fill: #1a7f37; } svg .lab3 { fill: #bc4c00; }
svg .lab4 { fill: #8250df; } svg .lab5 { fill: #0a7b83; } svg .lab6 { fill: #cf222e; } svg .lab7 { fill: #6e7781; }
`
