package observed

import (
	"fmt"
	"net/url"
	"strconv"
	"time"

	"informer-lab/compare/analysis"
	"informer-lab/record"
)

// Why a client asked again after its sync point, as far as its log shows: the proxy logs a
// request when its response headers arrive and each event as it passes, not when a stream ends,
// so a watch's end is known only by the request that follows it.
const (
	CauseWatchEnded = "the watch before it ended"
	CauseExpired    = "ERROR 410 Expired on the watch before it"
	CauseError      = "an ERROR event on the watch before it"
	CauseRetry      = "the request before it failed"
	CauseRelist     = "the watch of a relist, after its LIST"
	CauseUnknown    = "no request before it to tell"
)

// Cause is why one request after the sync point was made.
type Cause struct {
	Why    string // one of the Cause constants
	Detail string // what the log adds, e.g. "5.1s after it opened, before its timeoutSeconds=556"
}

func (c Cause) String() string {
	if c.Detail == "" {
		return c.Why
	}
	return c.Why + " (" + c.Detail + ")"
}

// causes says, for each request step of steps (analysis.Steps of after), why the client made
// it: what the step before it was, or the last request of the handshake for the first one.
func causes(h Handshake, after []record.Record, steps []analysis.Step) []Cause {
	var reqs []record.Record // after's requests, one per request step, in order
	for _, r := range after {
		if r.Kind == record.HTTP {
			reqs = append(reqs, r)
		}
	}
	var prev *record.Record
	if n := len(h.Requests); n > 0 {
		prev = &h.Requests[n-1]
	}
	var out []Cause
	event := "" // the ERROR event since prev, if any: its step token
	for _, s := range steps {
		if !s.Request {
			if event != "410" {
				event = s.Token
			}
			continue
		}
		r := reqs[len(out)]
		out = append(out, cause(prev, event, r))
		prev, event = &reqs[len(out)-1], ""
	}
	return out
}

// cause is why request r followed request prev, whose stream carried the ERROR event event
// ("410", "ERROR" or "").
func cause(prev *record.Record, event string, r record.Record) Cause {
	switch {
	case event == "410":
		return Cause{Why: CauseExpired}
	case event != "":
		return Cause{Why: CauseError}
	case prev == nil:
		return Cause{Why: CauseUnknown}
	}
	tok := record.Token(*prev)
	switch tok {
	case record.TokenList:
		return Cause{Why: CauseRelist}
	case record.TokenWatch, record.TokenStream:
		return Cause{Why: CauseWatchEnded, Detail: watchEnd(*prev, r)}
	}
	return Cause{Why: CauseRetry, Detail: tok}
}

// watchEnd says how long the watch prev lasted at most (until request r was sent) and how that
// compares with the timeoutSeconds it asked for: the server ends a watch there.
func watchEnd(prev, r record.Record) string {
	lasted := sent(r).Sub(prev.Time)
	s := lasted.Round(100*time.Millisecond).String() + " after it opened"
	q, _ := url.ParseQuery(prev.Query)
	timeout, err := strconv.Atoi(q.Get("timeoutSeconds"))
	switch {
	case err != nil:
	case lasted >= time.Duration(timeout)*time.Second:
		s += fmt.Sprintf(", at its timeoutSeconds=%d", timeout)
	default:
		s += fmt.Sprintf(", before its timeoutSeconds=%d", timeout)
	}
	return s
}

// Sequence spells the steps after the sync point as analysis.Sequence does: each request with
// the ERROR events its stream carried ("WATCH→410"), a run of the same once with its count
// ("STREAM(422)×2"), and the number of requests: "WATCH→410→LIST→WATCH (3 req)"; "none"
// without any.
func Sequence(steps []analysis.Step) string { return analysis.Sequence(steps, "none") }
