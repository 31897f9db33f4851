package report

import (
	"fmt"
	"html"
	"html/template"
	"sort"
	"strings"

	"informer-lab/compare/analysis"
	"informer-lab/record"
)

// Sequence diagram geometry, in SVG units (the page shows them 1:1 up to its width).
const (
	seqWidth = 1320
	seqRow   = 22  // height of one message
	seqTop   = 44  // below the lifeline heads
	charW    = 6.7 // width of one 11px monospace character
)

// message is one arrow of a sequence diagram: a request to the apiserver or what came back.
type message struct {
	tag, class string
	up         bool   // informer → apiserver
	label      string // what the arrow says, shortened to fit
	title      string // the whole record, shown on hover
}

// messages turns an initial phase into arrows: one per HTTP, LIST and WATCH-EVENT record, in log
// order, and a synced mark (class "synced", no arrow) per SETUP synced record.
func messages(initial []record.Record) []message {
	var out []message
	status := map[string]int{} // per tag, the status of its last response
	for _, r := range initial {
		m := message{tag: r.Tag, class: string(r.Kind), title: r.Text()}
		if r.Body != nil {
			// On hover only: in the label, labs whose bodies differ by a few bytes would no
			// longer share a diagram.
			what := "body" // a LIST's
			if r.Kind == record.WatchEvent {
				what = "stream up to here" // the initial-events-end bookmark's
			}
			m.title += " (" + what + " " + analysis.Size(r.Body.Wire, r.Body.Decoded) + ")"
		}
		switch {
		case r.Kind == record.HTTP:
			status[r.Tag] = r.Status
			m.up, m.label = true, requestLabel(r, initial)
			if r.Error != "" || r.Status < 200 || r.Status > 299 {
				m.class += " failed"
			}
		case r.Kind == record.List:
			m.label = fmt.Sprintf("%d LIST rv=%s %d items", status[r.Tag], analysis.InitialRV(r, initial), len(r.Items))
		case r.Kind == record.WatchEvent && r.Event == "BOOKMARK":
			m.class += " bookmark"
			m.label = "BOOKMARK rv=" + analysis.InitialRV(r, initial)
			if r.Annotations["k8s.io/initial-events-end"] == "true" {
				m.label = "BOOKMARK initial-events-end rv=" + analysis.InitialRV(r, initial)
			}
		case r.Kind == record.WatchEvent:
			m.label = strings.TrimSpace(r.Event + " " + r.Name)
		case r.Kind == record.Setup && r.Step == record.StepSynced:
			m.class, m.label = "synced", "synced"
		default:
			continue
		}
		out = append(out, m)
	}
	return out
}

// requestLabel is "GET ?limit=500&resourceVersion=0" or "WATCH ?allowWatchBookmarks=true&…",
// with the response status when it was not 2xx and its Content-Encoding when it had one
// ("→ gzip": a compressed LIST, or 1.37's compressed watch-list stream).
func requestLabel(r record.Record, initial []record.Record) string {
	verb, query := r.Method, analysis.InitialQuery(r, initial)
	if r.Method == "GET" && record.ClassifyRequest(r.Path, r.Query).Watch {
		verb, query = "WATCH", strings.TrimSuffix(strings.ReplaceAll(query+"&", "watch=true&", ""), "&")
	}
	s := verb + " ?" + query
	switch {
	case r.Error != "":
		s += " → error"
	case r.Status < 200 || r.Status > 299:
		s += fmt.Sprintf(" → %d", r.Status)
	}
	if r.Encoding != "" {
		s += " → " + r.Encoding
	}
	return s
}

// sequenceSVG draws the initial sync of labs[0] (which the other labs share): the informers'
// lifelines split left and right of the apiserver's, one row per message. Its arrows name
// labs[0], whose log they are; the svg names every lab it stands for (data-labs).
func sequenceSVG(labs []string, initial []record.Record) template.HTML {
	return drawSequence(labs, messages(initial), informerHead)
}

// informerHead names a lab's lifeline by its informer's tag.
func informerHead(tag string) string {
	if tag == "" {
		return "(no tag)"
	}
	return "informer " + tag
}

// drawSequence draws msgs, one lifeline per tag, each headed as head names it.
func drawSequence(labs []string, msgs []message, head func(tag string) string) template.HTML {
	lab := labs[0]
	tagSet := map[string]bool{}
	for _, m := range msgs {
		tagSet[m.tag] = true
	}
	tags := make([]string, 0, len(tagSet))
	for t := range tagSet {
		tags = append(tags, t)
	}
	sort.Strings(tags)
	server := float64(seqWidth / 2)
	x := map[string]float64{}
	left := (len(tags) + 1) / 2
	for i, t := range tags {
		if i < left {
			x[t] = 70 + float64(i)*110
		} else {
			x[t] = seqWidth - 70 - float64(i-left)*110
		}
	}
	height := seqTop + len(msgs)*seqRow + 16

	var b strings.Builder
	fmt.Fprintf(&b, `<svg class="sequence" data-lab="%s" data-labs="%s" width="%d" height="%d" viewBox="0 0 %d %d" role="img">`,
		esc(lab), esc(strings.Join(labs, " ")), seqWidth, height, seqWidth, height)
	b.WriteString("<title>" + esc(strings.Join(labs, ", ")+": initial sync") + "</title>")
	lifeline := func(cx float64, name string) {
		fmt.Fprintf(&b, `<g class="head"><rect x="%.0f" y="4" width="120" height="26" rx="4"/><text x="%.0f" y="21" text-anchor="middle">%s</text></g>`,
			cx-60, cx, esc(name))
		fmt.Fprintf(&b, `<line class="lifeline" x1="%.0f" y1="30" x2="%.0f" y2="%d"/>`, cx, cx, height-4)
	}
	lifeline(server, "kube-apiserver")
	for _, t := range tags {
		lifeline(x[t], head(t))
	}
	for i, m := range msgs {
		y := float64(seqTop + i*seqRow + seqRow/2)
		if m.class == "synced" {
			fmt.Fprintf(&b, `<g class="synced" data-lab="%s" data-tag="%s"><title>%s</title><rect x="%.0f" y="%.0f" width="64" height="16" rx="8"/><text x="%.0f" y="%.0f" text-anchor="middle">synced</text></g>`,
				esc(lab), esc(m.tag), esc(m.title), x[m.tag]-32, y-8, x[m.tag], y+4)
			continue
		}
		from, to := x[m.tag], server
		if !m.up {
			from, to = server, x[m.tag]
		}
		dir := 1.0
		if to < from {
			dir = -1
		}
		fmt.Fprintf(&b, `<g class="arrow %s" data-lab="%s" data-tag="%s"><title>%s</title>`, esc(m.class), esc(lab), esc(m.tag), esc(m.title))
		fmt.Fprintf(&b, `<line x1="%.0f" y1="%.0f" x2="%.0f" y2="%.0f"/>`, from, y+4, to-dir*7, y+4)
		fmt.Fprintf(&b, `<polygon points="%.0f,%.0f %.0f,%.0f %.0f,%.0f"/>`, to, y+4, to-dir*8, y, to-dir*8, y+8)
		fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" text-anchor="middle">%s</text></g>`,
			(from+to)/2, y, esc(fit(m.label, abs(to-from)-16)))
	}
	b.WriteString("</svg>")
	return template.HTML(b.String())
}

// fit shortens s with an ellipsis to what width units of monospace text hold. What follows
// " → " (a response's status or encoding, after a long query) is kept whole: it is the answer.
func fit(s string, width float64) string { return fitRunes(s, int(width/charW)) }

func fitRunes(s string, n int) string {
	r := []rune(s)
	if len(r) <= n || n < 2 {
		return s
	}
	if head, outcome, ok := strings.Cut(s, " → "); ok {
		if keep := n - len([]rune(outcome)) - len([]rune(" → ")); keep >= 2 {
			return fitRunes(head, keep) + " → " + outcome
		}
	}
	return string(r[:n-1]) + "…"
}

func abs(f float64) float64 {
	if f < 0 {
		return -f
	}
	return f
}

// esc escapes text for SVG markup built here (html/template does not see inside it).
func esc(s string) string { return html.EscapeString(s) }
