package analysis

import (
	"fmt"
	"net/url"
	"slices"
	"strings"

	"informer-lab/record"
)

// anyShape is the expectation of a run where no shape is expected (a fault scenario): the
// handshake is described, not checked.
const anyShape = "*"

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
			if noBlueprint && record.Token(r) == record.TokenList && h.Fallback == "" {
				h.Fallback = "blueprint annotation missing"
			}
			if record.OK(r.Status) && r.Error == "" {
				if w := r.Accept + " → " + r.ContentType; !slices.Contains(wires, w) {
					wires = append(wires, w)
				}
				if record.IsWatch(r) {
					watch = &initial[i]
				}
			}
		case r.Kind == record.List:
			list = &initial[i]
		case r.Kind == record.WatchEvent && r.Event == record.EventAdded:
			added++
		case record.IsEndBookmark(r):
			endBookmark = true
			h.SyncRV = r.RV
			noBlueprint = noBlueprint || record.BlueprintMissing(r)
		}
	}
	h.Shape, h.Label = record.Classify(h.Requests)
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

	if want == anyShape {
		return h
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
	case record.ShapeListWatch, record.ShapeFallback:
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
	case record.ShapeStream:
		if !endBookmark {
			h.Problems = append(h.Problems, fmt.Sprintf("%s: stream without a BOOKMARK %s=true", tag, record.AnnotationInitialEventsEnd))
		}
		if list != nil {
			h.Problems = append(h.Problems, fmt.Sprintf("%s: stream but a LIST record too", tag))
		}
	}
	return h
}
