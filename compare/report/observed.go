package report

import (
	"fmt"
	"html/template"
	"io"

	"informer-lab/compare/analysis"
	"informer-lab/compare/observed"
	"informer-lab/record"
)

// maxDrawnEvents is how many watch events of one resource a client's diagram draws, besides its
// end bookmarks and ERRORs: a kubectl get -w of a namespace of thousands would otherwise draw
// thousands of rows. The table counts every one.
const maxDrawnEvents = 20

// headChars is what a lifeline's head holds of a resource's name.
const headChars = 17

// WriteObserved renders the page of an observed log (make observe): the table as the terminal
// shows it, every cell's footnote, each client's notes and a sequence diagram of its initial
// requests and what came back, one lifeline per resource. Like report.html it loads nothing.
func WriteObserved(w io.Writer, obs *observed.Observation, rep *observed.Report) error {
	p := observedPage{Rep: rep, Path: obs.Path, Table: rep.Table(), Relation: rep.Relation(),
		Inferred: observed.InferredNote, Bytes: observed.BytesNote, MaxEvents: maxDrawnEvents}
	for _, c := range obs.Clients {
		p.Records += len(c.Records)
	}
	for _, c := range rep.Clients {
		p.Clients = append(p.Clients, clientView(c))
	}
	return executePage(w, observedTmpl, p, "the observed page")
}

type observedPage struct {
	Rep                       *observed.Report
	Path                      string
	Records                   int
	Table                     analysis.Verdict
	Relation, Inferred, Bytes string
	MaxEvents                 int
	Clients                   []observedClient
}

type observedClient struct {
	*observed.ClientReport
	Lines   []string // its notes: non-resource and other requests, per resource what came after the sync
	Undrawn int      // watch events left out of the diagram
	SVG     template.HTML
}

func clientView(c *observed.ClientReport) observedClient {
	v := observedClient{ClientReport: c}
	if s := c.NonResourceSummary(); s != "" {
		v.Lines = append(v.Lines, s+" (not drawn)")
	}
	for _, res := range c.Resources {
		h := res.Handshake
		v.Lines = append(v.Lines, fmt.Sprintf("%s: %s; sync point: %s; objects: %s", res.Name, h.Label, h.SyncBy, h.Objects))
		for _, p := range res.Wire {
			v.Lines = append(v.Lines, res.Name+": Accept → content type: "+p)
		}
		if len(res.Steps) > 0 {
			v.Lines = append(v.Lines, res.Name+": after sync "+observed.Sequence(res.Steps)+": "+res.CauseSummary())
		}
		if s := res.OtherSummary(); s != "" {
			v.Lines = append(v.Lines, res.Name+": "+s+" (not drawn)")
		}
	}
	var recs []record.Record
	recs, v.Undrawn = drawn(c)
	if len(recs) > 0 {
		v.SVG = drawSequence([]string{c.Name}, messages(recs), func(tag string) string { return fitRunes(tag, headChars) })
	}
	return v
}

// drawn is what a client's diagram draws: its initial records, at most maxDrawnEvents plain
// events per resource, and after each resource's sync point a synced mark, which says it was
// inferred (SETUP synced records, as a lab's informer writes them, make the marks).
func drawn(c *observed.ClientReport) (recs []record.Record, undrawn int) {
	left := map[string]int{} // per resource: its initial records not yet drawn
	for _, r := range c.Initial {
		left[r.Tag]++
	}
	events := map[string]int{}
	for _, r := range c.Initial {
		left[r.Tag]--
		plain := r.Kind == record.WatchEvent && r.Event != record.EventError && !record.IsEndBookmark(r)
		switch {
		case plain && events[r.Tag] >= maxDrawnEvents:
			undrawn++
		case plain:
			events[r.Tag]++
			fallthrough
		default:
			recs = append(recs, r)
		}
		if left[r.Tag] == 0 {
			if res := resource(c, r.Tag); res != nil && res.Handshake.Synced {
				recs = append(recs, record.Record{Schema: record.Schema, Time: r.Time, Source: c.Name, Kind: record.Setup, Tag: r.Tag,
					Step: record.StepSynced, Value: "inferred from the wire: " + res.Handshake.SyncBy})
			}
		}
	}
	return recs, undrawn
}

func resource(c *observed.ClientReport, name string) *observed.Resource {
	for _, res := range c.Resources {
		if res.Name == name {
			return res
		}
	}
	return nil
}

var observedTmpl = template.Must(template.New("observed").Funcs(template.FuncMap{"title": columnTitle}).Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8"/>
<title>informer-lab observe ({{.Path}})</title>
<style>
` + pageCSS + `</style>
</head>
<body>
<h1>informer-lab observe</h1>
<p class="meta">log {{.Path}} · {{len .Clients}} clients · {{.Records}} records</p>
<p class="conclusion">{{.Inferred}}</p>
` + verdictTable + `<p class="note">{{.Bytes}}</p>
<p class="note">{{.Relation}}</p>
{{range .Rep.Setup}}<p class="note">also in the log: {{.}}</p>{{end}}

<h2>Each client's initial sync, as it went over the wire</h2>
<p class="note">One diagram per client, one lifeline per resource: its requests (blue), LIST bodies (green) and watch events (grey; the initial-events-end bookmark purple) up to each resource's sync point, in the order the proxy logged them, at most {{.MaxEvents}} events per resource. The synced marks are inferred from the wire, not reported by the client; hover one for how. rvs as in the lab report: &lt;RV0&gt; is the rv the resource synced at.</p>
{{range .Clients}}<h3>{{.Name}}</h3>
<p class="meta">User-Agent {{.UserAgent}} · {{.Conn}}</p>
<ul class="notes">{{range .Lines}}<li>{{.}}</li>{{end}}</ul>
{{if .Undrawn}}<p class="note">{{.Undrawn}} more watch events not drawn</p>
{{end}}{{with .SVG}}{{.}}{{else}}<p class="note">no LIST or watch to draw</p>{{end}}
{{end}}
</body>
</html>
`))
