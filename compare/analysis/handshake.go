package analysis

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	"informer-lab/record"
)

// The three initial-sync shapes the gates produce (FACTS.md, "Wire shapes observed").
const (
	ShapeListWatch = "LIST→WATCH"            // gate off
	ShapeStream    = "STREAM"                // gate on, server streams
	ShapeFallback  = "STREAM→422→LIST→WATCH" // gate on, server WatchList=false: refused, falls back
)

// Handshake is what one informer did to sync.
type Handshake struct {
	Requests []record.Record // HTTP records of the initial phase
	Shape    string          // one of the Shape constants, or the literal sequence
	Label    string          // Shape and request count, e.g. "LIST→WATCH (2 req)"
	Objects  string          // how the initial objects arrived, e.g. "LIST body: 3 items"
	Wire     string          // Accept → response content type of the successful requests
	SyncRV   string          // the rv the informer synced at: LIST collection rv or end bookmark rv
	Fallback string          // why a stream that got through was given up for a LIST, when the log shows it
	Problems []string        // handshake relations that do not hold, in words
}

// requestToken names one request for a shape: LIST, WATCH or STREAM (a watch asking for
// initial events), with its status when the server did not answer 2xx.
func requestToken(r record.Record) string {
	q, _ := url.ParseQuery(r.Query)
	tok := "LIST"
	if q.Get("watch") == "true" || q.Get("watch") == "1" {
		tok = "WATCH"
		if q.Get("sendInitialEvents") == "true" {
			tok = "STREAM"
		}
	}
	switch {
	case r.Error != "":
		tok += "(error)"
	case !ok2xx(r.Status):
		tok += fmt.Sprintf("(%d)", r.Status)
	}
	return tok
}

func ok2xx(status int) bool { return status >= 200 && status < 300 }

// classify names the shape of a request sequence, or spells it out when it is none of the three.
func classify(reqs []record.Record) (shape, label string) {
	toks := make([]string, len(reqs))
	for i, r := range reqs {
		toks[i] = requestToken(r)
	}
	seq := strings.Join(toks, "→")
	refused := 0
	for refused < len(toks) && toks[refused] == "STREAM(422)" {
		refused++
	}
	switch {
	case seq == "LIST→WATCH":
		shape = ShapeListWatch
	case seq == "STREAM":
		shape = ShapeStream
	case refused > 0 && strings.Join(toks[refused:], "→") == "LIST→WATCH":
		shape = ShapeFallback
	case seq == "":
		shape = "no request"
	default:
		shape = seq
	}
	return shape, fmt.Sprintf("%s (%d req)", shape, len(reqs))
}

// expectedShape is the handshake the gates imply: the client gate decides whether the
// reflector asks to stream, the server's WatchList gate whether it may.
func expectedShape(gate, serverGates, serverVersion string) string {
	switch gate {
	case "off":
		return ShapeListWatch
	case "on":
		if !serverStreams(serverGates, serverVersion) {
			return ShapeFallback
		}
		return ShapeStream
	}
	return ""
}

// serverStreams says whether kube-apiserver's WatchList gate is on: as set in --feature-gates,
// else its default for the version (../shared/FACTS.md, read in the tagged sources: alpha and
// off up to 1.31, beta and on in 1.32, off again in 1.33, on from 1.34).
func serverStreams(serverGates, serverVersion string) bool {
	switch {
	case strings.Contains(serverGates, "WatchList=false"):
		return false
	case strings.Contains(serverGates, "WatchList=true"):
		return true
	}
	var major, minor int
	if _, err := fmt.Sscanf(strings.TrimPrefix(serverVersion, "v"), "%d.%d", &major, &minor); err != nil || major != 1 {
		return true // unknown: assume a current server
	}
	return minor == 32 || minor >= 34
}

// handshake reads one informer's initial phase and checks it against want (an expected shape, or
// "" when the gate is unknown).
func handshake(tag string, initial []record.Record, want string) Handshake {
	var h Handshake
	var list *record.Record
	var watch *record.Record // the last watch request that succeeded
	added, endBookmark, noBlueprint := 0, false, false
	var wires []string
	for i := range initial {
		r := initial[i]
		if r.Tag != tag {
			continue
		}
		switch {
		case r.Kind == record.HTTP:
			h.Requests = append(h.Requests, r)
			if noBlueprint && requestToken(r) == "LIST" && h.Fallback == "" {
				h.Fallback = "blueprint annotation missing"
			}
			if ok2xx(r.Status) && r.Error == "" {
				if w := r.Accept + " → " + r.ContentType; !slices.Contains(wires, w) {
					wires = append(wires, w)
				}
				if strings.HasPrefix(requestToken(r), "WATCH") || strings.HasPrefix(requestToken(r), "STREAM") {
					watch = &initial[i]
				}
			}
		case r.Kind == record.List:
			list = &initial[i]
		case r.Kind == record.WatchEvent && r.Event == "ADDED":
			added++
		case isEndBookmark(r):
			endBookmark = true
			h.SyncRV = r.RV
			noBlueprint = noBlueprint || blueprintMissing(r)
		}
	}
	h.Shape, h.Label = classify(h.Requests)
	if h.Fallback != "" {
		// client-go v0.32/v0.33 refuse an initial-events-end bookmark without the list blueprint
		// ("annotation is missing content") and list instead (kubernetes/kubernetes#138167).
		h.Label = fmt.Sprintf("STREAM→fallback: %s (%d req)", h.Fallback, len(h.Requests))
	}
	h.Wire = strings.Join(wires, "; ")
	switch {
	case list != nil:
		h.SyncRV = list.RV
		h.Objects = fmt.Sprintf("LIST body: %d items", len(list.Items))
		if added > 0 {
			h.Objects += fmt.Sprintf(", then %d ADDED", added)
		}
	case endBookmark:
		h.Objects = fmt.Sprintf("%d ADDED + BOOKMARK initial-events-end", added)
	default:
		h.Objects = fmt.Sprintf("%d ADDED, no LIST, no initial-events-end BOOKMARK", added)
	}

	if want == "" {
		h.Problems = append(h.Problems, tag+": no SETUP gate record: cannot tell which handshake to expect")
		return h
	}
	if h.Shape != want {
		h.Problems = append(h.Problems, fmt.Sprintf("%s: expected %s, saw %s", tag, want, h.Label))
		return h
	}
	switch want {
	case ShapeListWatch, ShapeFallback:
		// The watch must resume exactly where the LIST's snapshot ends, or events fall in the gap.
		from := url.Values{}
		if watch != nil {
			from, _ = url.ParseQuery(watch.Query)
		}
		if list == nil {
			h.Problems = append(h.Problems, fmt.Sprintf("%s: no LIST record for the LIST request", tag))
		} else if got := from.Get("resourceVersion"); got != list.RV {
			h.Problems = append(h.Problems, fmt.Sprintf("%s: WATCH resumed from rv=%s, LIST returned rv=%s", tag, got, list.RV))
		}
	case ShapeStream:
		if !endBookmark {
			h.Problems = append(h.Problems, fmt.Sprintf("%s: stream without a BOOKMARK %s=true", tag, initialEventsEnd))
		}
		if list != nil {
			h.Problems = append(h.Problems, fmt.Sprintf("%s: stream but a LIST record too", tag))
		}
	}
	return h
}
