package report

import (
	"html/template"
	"io"

	"informer-lab/compare/analysis"
)

// verdictTable draws a page's .Table (an analysis.Verdict, as the terminal shows it) and its
// footnotes; the observed page and the table page share it.
const verdictTable = `{{with .Table.Rows}}<table class="verdict-table">
<thead><tr>{{range $.Table.Columns}}<th>{{title .}}</th>{{end}}</tr></thead>
<tbody>{{range .}}<tr>{{range $i, $c := .}}{{if eq $i 0}}<th>{{$c.Text}}</th>{{else}}<td>{{$c.Text}}{{with $c.Mark}}<sup>{{.}}</sup>{{end}}</td>{{end}}{{end}}</tr>
{{end}}</tbody>
</table>{{end}}
{{with .Table.Notes}}<ul class="notes">{{range .}}<li><sup>[{{.Number}}]</sup> <span class="who">{{.Who}}:</span> {{.Text}}</li>{{end}}</ul>{{end}}
`

// TablePage is the page of a command whose result is one table: make probe's grades.
type TablePage struct {
	Title   string           // the command, e.g. "informer-lab probe"
	Meta    string           // what it ran against, one line
	Summary string           // the result in one sentence
	Table   analysis.Verdict // the terminal's table, its footnotes in full
	Lines   []string         // what follows the table on the terminal
}

// WriteTablePage renders a TablePage; like report.html it loads nothing.
func WriteTablePage(w io.Writer, p TablePage) error {
	return executePage(w, tableTmpl, p, "the "+p.Title+" page")
}

var tableTmpl = template.Must(template.New("table").Funcs(template.FuncMap{"title": columnTitle}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8"/>
<title>{{.Title}}</title>
<style>
` + pageCSS + `</style>
</head>
<body>
<h1>{{.Title}}</h1>
<p class="meta">{{.Meta}}</p>
<p class="conclusion">{{.Summary}}</p>
` + verdictTable + `{{range .Lines}}<p class="note">{{.}}</p>
{{end}}</body>
</html>
`))
