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

// FallbackBlueprint is why client-go v0.32/v0.33 give up a stream that got through for a LIST:
// its initial-events-end bookmark lacks the list blueprint ("annotation is missing content",
// kubernetes/kubernetes#138167).
const FallbackBlueprint = "blueprint annotation missing"

// fallbackLabel names requests whose stream was given up for a LIST, with why and how many.
func fallbackLabel(reason string, requests int) string {
	return fmt.Sprintf("STREAM→fallback: %s (%d req)", reason, requests)
}

// GivenUp is the footnote of a stream given up for a LIST: what (the initial sync, the direct
// List()) and why.
func GivenUp(what, reason string) string {
	return what + ": the stream was given up for a LIST: " + reason
}

// Initial is how an informer's initial records read, before anything is expected of them:
// compare reads a lab's informer up to its own sync with it, observe a client's resource up to
// its inferred sync point.
type Initial struct {
	Requests []record.Record // the HTTP records
	Shape    string          // one of the Shape constants, or the literal sequence
	Label    string          // Shape and request count, e.g. "LIST→WATCH (2 req)"
	Objects  string          // how the initial objects arrived, e.g. "LIST body: 3 items"
	SyncRV   string          // the rv of the sync: LIST collection rv, else end bookmark rv
	Fallback string          // why a stream that got through was given up for a LIST, when the records show it

	list        *record.Record // the LIST record, if any
	watch       *record.Record // the last watch request that succeeded
	endBookmark bool           // an initial-events-end bookmark came
	wires       []string       // Accept → content type of the successful requests, once each
}

// DescribeInitial reads one informer's (or one observed resource's) initial records.
func DescribeInitial(recs []record.Record) Initial {
	var in Initial
	added, noBlueprint := 0, false
	for i, r := range recs {
		switch {
		case r.Kind == record.HTTP:
			in.request(&recs[i], noBlueprint)
		case r.Kind == record.List:
			in.list = &recs[i]
		case r.Kind == record.WatchEvent && r.Event == record.EventAdded:
			added++
		case record.IsEndBookmark(r):
			in.endBookmark, in.SyncRV = true, r.RV
			noBlueprint = noBlueprint || record.BlueprintMissing(r)
		}
	}
	in.Shape, in.Label = record.Classify(in.Requests)
	in.describeObjects(added)
	return in
}

// request reads one request of the initial records; noBlueprint says an end bookmark without
// the list blueprint came before it, which makes a LIST the fallback client-go takes.
func (in *Initial) request(r *record.Record, noBlueprint bool) {
	in.Requests = append(in.Requests, *r)
	if noBlueprint && record.Token(*r) == record.TokenList && in.Fallback == "" {
		in.Fallback = FallbackBlueprint
	}
	if !record.OK(r.Status) || r.Error != "" {
		return
	}
	if w := r.Accept + " → " + r.ContentType; !slices.Contains(in.wires, w) {
		in.wires = append(in.wires, w)
	}
	if record.IsWatch(*r) {
		in.watch = r
	}
}

// describeObjects says how the objects arrived, and takes the LIST's rv as the sync's.
func (in *Initial) describeObjects(added int) {
	switch {
	case in.list != nil:
		in.SyncRV = in.list.RV
		in.Objects = fmt.Sprintf("LIST body: %d items", len(in.list.Items))
		if added > 0 {
			in.Objects += fmt.Sprintf(", then %d ADDED", added)
		}
	case in.endBookmark:
		in.Objects = fmt.Sprintf("%d ADDED + BOOKMARK initial-events-end", added)
	default:
		in.Objects = fmt.Sprintf("%d ADDED, no LIST, no initial-events-end BOOKMARK", added)
	}
}

// Handshake is what one informer did to sync, and how it compares with what its gates imply.
type Handshake struct {
	Initial
	Wire string // Accept → response content type of the successful requests
	// Cut counts its initial streams that ended before their initial-events-end bookmark, after
	// which it asked to stream again (initialCuts): the same handshake, restarted.
	Cut      int
	Problems []string // handshake relations that do not hold, in words
}

// handshake reads one informer's initial phase and checks it against want (an expected shape,
// anyShape or wantMixed for none, or "" when the gate is unknown). later are its records after its sync: a stream
// cut before its end bookmark may be followed by the next one only there.
func handshake(tag string, initial []record.Record, want string, later ...record.Record) Handshake {
	own := slices.DeleteFunc(slices.Clone(initial), func(r record.Record) bool { return r.Tag != tag })
	h := Handshake{Initial: DescribeInitial(own)}
	if h.Fallback != "" {
		h.Label = fallbackLabel(h.Fallback, len(h.Requests))
	}
	h.Wire = strings.Join(h.wires, "; ")
	h.Cut = initialCuts(slices.Concat(own, later))
	// The wire log decodes a stream in a goroutine of its own (lab/wire), so on a loaded machine
	// the end bookmark of the stream the informer synced on can be logged after its synced record.
	h.endBookmark = h.endBookmark || lateEndBookmark(later)
	if want != anyShape && want != wantMixed {
		h.Problems = h.check(tag, want)
	}
	return h
}

// judgedShape is the shape the handshake is held to: streams the informer asked for again
// after a cut one are the one streaming handshake, restarted.
func (h Handshake) judgedShape() string {
	restreams := slices.IndexFunc(h.Requests, func(r record.Record) bool {
		return !strings.HasPrefix(record.Token(r), record.TokenStream)
	}) < 0
	if h.Cut > 0 && restreams {
		return record.ShapeStream
	}
	return h.Shape
}

// check says which handshake relations do not hold against want.
func (h Handshake) check(tag, want string) []string {
	if want == "" {
		return []string{tag + ": no SETUP gate record: cannot tell which handshake to expect"}
	}
	if h.judgedShape() != want {
		return []string{fmt.Sprintf("%s: expected %s, saw %s", tag, want, h.Label)}
	}
	var problems []string
	switch want {
	case record.ShapeListWatch, record.ShapeFallback:
		// The watch must resume exactly where the LIST's snapshot ends, or events fall in the gap.
		from := url.Values{}
		if h.watch != nil {
			from, _ = url.ParseQuery(h.watch.Query)
		}
		if h.list == nil {
			problems = append(problems, fmt.Sprintf("%s: no LIST record for the LIST request", tag))
		} else if got := from.Get("resourceVersion"); got != h.list.RV {
			problems = append(problems, fmt.Sprintf("%s: WATCH resumed from rv=%s, LIST returned rv=%s", tag, got, h.list.RV))
		}
	case record.ShapeStream:
		// A cut stream has no end bookmark by definition: the finding names it (cutFinding).
		if !h.endBookmark && h.Cut == 0 {
			problems = append(problems, fmt.Sprintf("%s: stream without a BOOKMARK %s=true", tag, record.AnnotationInitialEventsEnd))
		}
		if h.list != nil {
			problems = append(problems, fmt.Sprintf("%s: stream but a LIST record too", tag))
		}
	}
	return problems
}

// lateEndBookmark reports an end bookmark logged among an informer's records after its sync,
// before it made another request: the end of the stream it synced on.
func lateEndBookmark(later []record.Record) bool {
	for _, r := range later {
		switch {
		case record.IsEndBookmark(r):
			return true
		case r.Kind == record.HTTP:
			return false
		}
	}
	return false
}

// initialCuts counts an informer's initial streams cut before their end bookmark: 2xx STREAMs,
// before the first initial-events-end bookmark it received, whose stream carried none and
// after which it asked to stream again (client-go's reflector starts its watch-list over then).
// kubernetes/kubernetes#134837 is that shape: a watch's timeout running out while its initial
// events are still being sent.
func initialCuts(recs []record.Record) int {
	cuts, open := 0, false // open: a 2xx STREAM whose end bookmark has not come
	for _, r := range recs {
		switch {
		case record.IsEndBookmark(r):
			return cuts
		case r.Kind != record.HTTP:
		case strings.HasPrefix(record.Token(r), record.TokenStream):
			if open {
				cuts++
			}
			open = record.Token(r) == record.TokenStream
		default:
			open = false
		}
	}
	return cuts
}

// cutFinding names an informer's initial streams cut before their end bookmark. Where watches
// are ended on purpose (the scenario's Rewatches: a proxy sets every watch's timeoutSeconds),
// what cut them is their watch timeout.
func cutFinding(tag string, cuts int, timedOut bool) string {
	how := "ended"
	if timedOut {
		how = "cut by its watch timeout"
	}
	s := fmt.Sprintf("%s: initial stream %s before its end bookmark", tag, how)
	if cuts > 1 {
		s += fmt.Sprintf(" (%d times)", cuts)
	}
	return s + ", then streamed again"
}
