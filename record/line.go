package record

import (
	"fmt"
	"maps"
	"net/url"
	"regexp"
	"slices"
	"strings"
)

// A record has two renderings, both defined here:
//   - Text, the lab's own line, the one the original informer-lab printed
//     ("[WATCH-EVENT][A] type=MODIFIED name=lab-cm-1 rv=521");
//   - Normalized, the line two labs on one server print alike when they did the same thing:
//     no time, no host or port, no random timeouts, rvs mapped as the caller says
//     ("[WATCH-EVENT][A] MODIFIED default/lab-cm-1 rv=<RV>"). Diffs, goldens and the matrix's
//     cell logs are made of these.

// Text renders the human line.
func (r Record) Text() string {
	var b strings.Builder
	writePrefix(&b, r)
	switch r.Kind {
	case HTTP:
		writeHTTP(&b, r, r.Query, r.Error, r.Detail)
	case List:
		fmt.Fprintf(&b, "initial LIST returned collection resourceVersion=%s items=%d", r.RV, len(r.Items))
		names := make([]string, 0, len(r.Items))
		for _, it := range r.Items {
			names = append(names, it.Name)
		}
		if len(names) > 0 {
			if len(names) > 8 {
				names = append(names[:8], "...")
			}
			b.WriteString(" [" + strings.Join(names, " ") + "]")
		}
	case WatchEvent:
		fmt.Fprintf(&b, "type=%s name=%s rv=%s", r.Event, r.Name, r.RV)
		for _, k := range slices.Sorted(maps.Keys(r.Annotations)) {
			fmt.Fprintf(&b, " %s=%q", k, r.Annotations[k])
		}
		if r.Detail != "" {
			b.WriteString(" " + r.Detail)
		}
	case Mutator:
		fmt.Fprintf(&b, "writing: %s %s", r.Event, r.Name)
		if r.Event == WriteUpdate || r.Event == WriteCreate {
			fmt.Fprintf(&b, " (tick=%d)", r.Tick)
		}
		if r.RV != "" {
			b.WriteString(" -> rv=" + r.RV)
		}
		if r.Error != "" {
			b.WriteString(" -> error: " + r.Error)
		}
	case Handler:
		fmt.Fprintf(&b, "informer handler fired: event=%s name=%s rv=%s", r.Event, r.Name, r.RV)
	default:
		b.WriteString(r.Step)
		if r.Value != "" {
			b.WriteString(": " + r.Value)
		}
		if r.Detail != "" {
			b.WriteString(" (" + r.Detail + ")")
		}
		if r.Health != nil {
			fmt.Fprintf(&b, " rss=%dKiB goroutines=%d fds=%d", r.Health.RSSKiB, r.Health.Goroutines, r.Health.FDs)
		}
		if r.Step == StepStore {
			fmt.Fprintf(&b, " items=%d", len(r.Items))
		}
		if r.Stats != nil {
			fmt.Fprintf(&b, " requests=%d bytes=%d events=%d", r.Stats.Requests, r.Stats.Bytes, r.Stats.Events)
			if w := r.Stats.Wire(); w != r.Stats.Bytes {
				fmt.Fprintf(&b, " wire=%d", w)
			}
		}
	}
	return b.String()
}

// KeepRV is the RVMapper of a line whose rvs are the subject (the steady phase).
func KeepRV(rv string) string { return rv }

// Normalized renders the comparable line; rv maps each resourceVersion (KeepRV keeps them).
func (r Record) Normalized(rv func(string) string) string {
	var b strings.Builder
	writePrefix(&b, r)
	switch r.Kind {
	case HTTP:
		writeHTTP(&b, r, NormalizeQuery(r.Query, rv), Scrub(r.Error), Scrub(r.Detail))
	case List:
		fmt.Fprintf(&b, "rv=%s items=%d", rv(r.RV), len(r.Items))
		for _, it := range r.Items {
			b.WriteString(" " + objectName(it.Namespace, it.Name))
		}
	case WatchEvent:
		b.WriteString(EventLine(r.Event, r.Namespace, r.Name, rv(r.RV)))
		for _, k := range slices.Sorted(maps.Keys(r.Annotations)) {
			fmt.Fprintf(&b, " %s=%s", k, r.Annotations[k])
		}
		if r.Detail != "" {
			b.WriteString(" " + Scrub(r.Detail))
		}
	case Handler, Mutator:
		b.WriteString(EventLine(r.Event, r.Namespace, r.Name, rv(r.RV)))
		if r.Error != "" {
			b.WriteString(" error: " + Scrub(r.Error))
		}
	default:
		b.WriteString(r.Step)
		if r.Value != "" {
			b.WriteString(" " + Scrub(r.Value))
		}
		if r.Detail != "" {
			b.WriteString(" (" + Scrub(r.Detail) + ")")
		}
	}
	return strings.TrimRight(b.String(), " ")
}

func writePrefix(b *strings.Builder, r Record) {
	b.WriteString("[" + string(r.Kind) + "]")
	if r.Tag != "" {
		b.WriteString("[" + r.Tag + "]")
	}
	b.WriteByte(' ')
}

// writeHTTP writes "GET /path?query -> 200 type (accept ...): detail", or "-> error: ..." in
// place of the status when the request failed.
func writeHTTP(b *strings.Builder, r Record, query, errText, detail string) {
	b.WriteString(r.Method + " " + r.Path)
	if query != "" {
		b.WriteString("?" + query)
	}
	if r.Error != "" {
		b.WriteString(" -> error: " + errText)
	} else {
		fmt.Fprintf(b, " -> %d %s", r.Status, r.ContentType)
		if r.Encoding != "" {
			b.WriteString(" " + r.Encoding)
		}
		if r.Server != "" {
			b.WriteString(" from " + r.Server)
		}
	}
	if r.Accept != "" {
		b.WriteString(" (accept " + r.Accept + ")")
	}
	if detail != "" {
		b.WriteString(": " + detail)
	}
}

// Placeholders of a normalized line for values that differ from run to run.
const (
	PlaceholderSyncRV  = "<RV0>" // the collection rv a sync settled on
	PlaceholderRV      = "<RV>"  // any other rv of an initial phase
	PlaceholderTimeout = "<T>"   // timeout/timeoutSeconds: random per watch request
	PlaceholderHost    = "<host>"
	PlaceholderTime    = "<time>"
)

// NormalizeQuery sorts the parameters and replaces the values that differ per request: the
// random timeouts, and the resourceVersion as rv maps it. It does not re-escape values: the
// line is read by people, not sent.
func NormalizeQuery(raw string, rv func(string) string) string {
	q, err := url.ParseQuery(raw)
	if err != nil {
		return raw // keep what was sent rather than guess
	}
	var parts []string
	for _, k := range slices.Sorted(maps.Keys(q)) {
		for _, v := range q[k] {
			switch k {
			case "timeout", "timeoutSeconds":
				v = PlaceholderTimeout
			case "resourceVersion":
				v = rv(v)
			}
			parts = append(parts, k+"="+v)
		}
	}
	return strings.Join(parts, "&")
}

var (
	hostPort  = regexp.MustCompile(`(?:\[[0-9A-Fa-f.]*:[0-9A-Fa-f:.]*\]|(?:\d{1,3}\.){3}\d{1,3}|localhost)(?::\d+)?`)
	timestamp = regexp.MustCompile(`\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:?\d\d)?`)
)

// Scrub removes hosts, ports and timestamps from free text (errors, details).
func Scrub(s string) string {
	s = timestamp.ReplaceAllString(s, PlaceholderTime)
	return hostPort.ReplaceAllString(s, PlaceholderHost)
}

// EventLine renders "MODIFIED default/lab-cm-1 rv=521", leaving out what is empty.
func EventLine(event, ns, name, rv string) string {
	s := event
	if name != "" {
		s += " " + objectName(ns, name)
	}
	if rv != "" {
		s += " rv=" + rv
	}
	return s
}

func objectName(ns, name string) string {
	if ns == "" {
		return name
	}
	return ns + "/" + name
}

// OneLine is an error's text on one line, as every command prints it (bad input is one line):
// wrapped errors from client-go, exec and quoted log lines carry newlines.
func OneLine(err error) string { return strings.Join(strings.Fields(err.Error()), " ") }
