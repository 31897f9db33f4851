package analysis

import (
	"net/url"
	"strings"
	"time"

	"informer-lab/record"
)

// Step is one thing an informer did on the wire after its initial sync: a request, or the ERROR
// event a watch stream carried (a 410 Expired that makes the reflector relist).
type Step struct {
	Time    time.Time
	Token   string // request: requestToken (LIST, WATCH, STREAM, "WATCH(error)", "WATCH(410)"); event: "410" or "ERROR"
	Request bool   // an HTTP request, not an ERROR event
	FromRV  bool   // a WATCH that resumes from a resourceVersion (neither "" nor "0")
	// Resync is when this request brought the informer back in sync, zero if it did not: a plain
	// 2xx WATCH whose first event is not an ERROR, at its own time; a 2xx STREAM at the time of
	// its initial-events-end bookmark.
	Resync time.Time
}

// Steps reads one informer's records after its sync (LabReport.After[tag]) from since on (zero:
// all of them) and returns its requests and ERROR events in order.
func Steps(after []record.Record, since time.Time) []Step {
	var steps []Step
	for i, r := range after {
		if !since.IsZero() && r.Time.Before(since) {
			continue
		}
		switch {
		case r.Kind == record.HTTP:
			s := Step{Time: r.Time, Token: record.Token(r), Request: true}
			q, _ := url.ParseQuery(r.Query)
			rv := q.Get("resourceVersion")
			s.FromRV = s.Token == record.TokenWatch && rv != "" && rv != "0"
			switch s.Token {
			case record.TokenWatch:
				if first, ok := firstEvent(after[i+1:]); !ok || first.Event != record.EventError {
					s.Resync = r.Time
				}
			case record.TokenStream:
				for _, e := range streamEvents(after[i+1:]) {
					if record.IsEndBookmark(e) {
						s.Resync = e.Time
						break
					}
				}
			}
			steps = append(steps, s)
		case r.Kind == record.WatchEvent && r.Event == record.EventError:
			tok := "ERROR"
			if record.IsExpired(r) {
				tok = "410"
			}
			steps = append(steps, Step{Time: r.Time, Token: tok})
		}
	}
	return steps
}

// streamEvents are the watch events that follow a request, up to the informer's next request.
func streamEvents(recs []record.Record) []record.Record {
	var out []record.Record
	for _, r := range recs {
		if r.Kind == record.HTTP {
			break
		}
		if r.Kind == record.WatchEvent {
			out = append(out, r)
		}
	}
	return out
}

// firstEvent is the first watch event a request's stream carried.
func firstEvent(recs []record.Record) (record.Record, bool) {
	ev := streamEvents(recs)
	if len(ev) == 0 {
		return record.Record{}, false
	}
	return ev[0], true
}

// FirstResync is the first step that brought the informer back in sync, -1 when none did.
func FirstResync(steps []Step) int {
	for i, s := range steps {
		if !s.Resync.IsZero() {
			return i
		}
	}
	return -1
}

// reread reports whether the informer read its state again after its sync (a 2xx LIST or
// STREAM): its later events are then no longer the writes one by one (a relist absorbs the
// writes it missed, a stream repeats the objects as ADDED), and only its cache can be checked.
func reread(steps []Step) bool {
	for _, s := range steps {
		if s.Request && (s.Token == record.TokenList || s.Token == record.TokenStream) {
			return true
		}
	}
	return false
}

// rewatches counts the 2xx watches (plain or streaming) among steps.
func rewatches(steps []Step) int {
	n := 0
	for _, s := range steps {
		if s.Request && (s.Token == record.TokenWatch || s.Token == record.TokenStream) {
			n++
		}
	}
	return n
}

// tagPhases cuts one lab's records per informer at that informer's own SETUP synced record:
// before (inclusive) its handshake, after it what it did later, handler calls left out. It also
// returns, per informer, the time from its first request to its sync point on the wire.
func tagPhases(recs []record.Record) (before, after map[string][]record.Record, syncTime map[string]time.Duration) {
	before, after, syncTime = map[string][]record.Record{}, map[string][]record.Record{}, map[string]time.Duration{}
	synced := map[string]bool{}
	first, point := map[string]time.Time{}, map[string]time.Time{}
	for _, r := range recs {
		if r.Tag == "" {
			continue
		}
		switch {
		case synced[r.Tag]:
			if r.Kind != record.Handler {
				after[r.Tag] = append(after[r.Tag], r)
			}
		default:
			before[r.Tag] = append(before[r.Tag], r)
			if r.Kind == record.HTTP && first[r.Tag].IsZero() {
				// An HTTP record is written when the response headers arrive, Millis after the request.
				first[r.Tag] = r.Time.Add(-time.Duration(r.Millis) * time.Millisecond)
			}
			if r.Kind == record.List || record.IsEndBookmark(r) {
				point[r.Tag] = r.Time
			}
			if r.Kind == record.Setup && r.Step == record.StepSynced {
				synced[r.Tag] = true
				// The sync point on the wire: the LIST body read, or the end-of-initial-events
				// bookmark. The synced record itself comes up to 100 ms later (client-go's
				// WaitForCacheSync polls), so it would measure the poll, not the handshake.
				end := point[r.Tag]
				if end.IsZero() {
					end = r.Time
				}
				if !first[r.Tag].IsZero() {
					syncTime[r.Tag] = end.Sub(first[r.Tag])
				}
			}
		}
	}
	// A LIST→WATCH informer reports synced once the LIST is in its store, which may be just
	// before its WATCH request is logged: that WATCH still belongs to its handshake.
	for tag, recs := range before {
		last := lastHTTP(recs)
		if last == nil || record.Token(*last) != "LIST" {
			continue
		}
		for i, r := range after[tag] {
			if r.Kind != record.HTTP {
				continue
			}
			if strings.HasPrefix(record.Token(r), record.TokenWatch) {
				before[tag] = append(before[tag], r)
				after[tag] = append(after[tag][:i:i], after[tag][i+1:]...)
			}
			break
		}
	}
	return before, after, syncTime
}

func lastHTTP(recs []record.Record) *record.Record {
	for i := len(recs) - 1; i >= 0; i-- {
		if recs[i].Kind == record.HTTP {
			return &recs[i]
		}
	}
	return nil
}
