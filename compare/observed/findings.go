package observed

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"informer-lab/compare/matrix"
	"informer-lab/record"
)

// FindingsPage is where each symptom's causes and fixes are (compare/findings writes it from the
// committed grids), from the repository's root.
const FindingsPage = "docs/findings.md"

// Finding is a symptom of a grid's findings that one observed client shows for one resource.
type Finding struct {
	Client, Resource string
	Symptom          matrix.Symptom
	Detail           string // what the log shows of it
}

// String is the finding in one line, with where its causes and fixes are.
func (f Finding) String() string {
	return fmt.Sprintf("%s %s %s: %s (%s). Causes and what to do: %s#%s",
		f.Symptom.Icon(), f.Client, f.Resource, f.Symptom, f.Detail, FindingsPage, f.Symptom.Anchor())
}

// unsyncedFor is how long an observed stream must go without its end bookmark to count as
// never syncing: client-go's reflector warns every 10 s without it ("hasn't received required
// bookmark", tools/cache/reflector.go's newInitialEventsEndBookmarkTicker from v0.31 on); an
// observation that ends sooner says nothing either way.
const unsyncedFor = 10 * time.Second

// Findings are the symptoms the observed clients show, by the rules a grid's cells are read with
// (compare/matrix: Result.Hits), where an observation can tell: it has no setup with the gate off
// to compare with, so a fallback's extra requests are counted against LIST→WATCH's two.
func (r *Report) Findings() []Finding {
	var out []Finding
	for _, c := range r.Clients {
		end := lastTime(c.Records)
		for _, res := range c.Resources {
			add := func(s matrix.Symptom, detail string) {
				out = append(out, Finding{Client: c.Name, Resource: res.Name, Symptom: s, Detail: detail})
			}
			h := res.Handshake
			streams, lists := sentAny(h.Requests, record.TokenStream), sentAny(h.Requests, record.TokenList)
			n := len(h.Requests)
			switch {
			case !h.Synced && streams:
				took := end.Sub(firstSent(h.Requests)).Round(time.Millisecond)
				if took >= unsyncedFor {
					add(matrix.NeverSyncs, fmt.Sprintf("not synced in the %s it was observed streaming", took))
				}
				if s := took.Seconds(); n >= matrix.HotRate && float64(n) >= matrix.HotRate*s {
					add(matrix.HotLoop, fmt.Sprintf("%d requests in %s, %.0f a second", n, took, float64(n)/max(s, 1e-3)))
				}
			case h.Synced && streams && lists && n > 2:
				add(matrix.ExtraRequests, fmt.Sprintf("synced after %d requests (%s), 2 by LIST→WATCH", n, strings.TrimSpace(h.Label)))
			}
		}
	}
	return out
}

// sentAny says one of the requests is of token's kind (with its status, if not 200: "STREAM(400)").
func sentAny(reqs []record.Record, token string) bool {
	return slices.ContainsFunc(reqs, func(q record.Record) bool { return strings.HasPrefix(record.Token(q), token) })
}

// lastTime is the time of the last record.
func lastTime(recs []record.Record) time.Time {
	if len(recs) == 0 {
		return time.Time{}
	}
	return recs[len(recs)-1].Time
}

// firstSent is when the first request was sent.
func firstSent(reqs []record.Record) time.Time {
	if len(reqs) == 0 {
		return time.Time{}
	}
	return sent(reqs[0])
}
