package observed

import (
	"fmt"
	"net/url"
	"slices"
	"time"

	"informer-lab/compare/analysis"
	"informer-lab/record"
)

// How a sync point was found on the wire. A lab's informer says when it synced (SETUP synced);
// an observed client does not, so its sync point is the moment the protocol says it may be:
// the watch that follows its LIST, or the end of a stream's initial events.
const (
	SyncListWatch = "the first 2xx WATCH after a 2xx LIST"
	SyncStream    = "the stream's initial-events-end BOOKMARK"
	SyncWatchOnly = "a 2xx WATCH with no LIST before it: no initial state read"
)

// Why no sync point was found.
const (
	NoSyncOneOff     = "no sync point: a LIST with no watch after it (a one-off read)"
	NoSyncNoBookmark = "no sync point: a stream without initial-events-end BOOKMARK"
	NoSyncNoWatch    = "no sync point: no 2xx LIST or watch"
)

// Report is the analysis of one observation.
type Report struct {
	Path    string
	Clients []*ClientReport // in the order of their first request
	Setup   []string        // the log's other SETUP records, as text lines
}

// ClientReport is what one client did.
type ClientReport struct {
	Name, UserAgent, Conn string
	Resources             []*Resource     // in the order of their first request
	NonResource           []record.Record // its requests that named no resource (record.TagNoResource): discovery, /version
	Records               []record.Record // every record of it, in log order
	// Initial is its records of every resource up to that resource's sync point (all of them
	// where there is none), in log order: the requests that made it sync and what came back.
	Initial []record.Record
}

// Resource is what one client did with one resource (a record tag, record.ResourceOf): on the
// wire, one informer.
type Resource struct {
	Name      string
	Handshake Handshake
	After     []record.Record // collection requests, LIST and WATCH-EVENT records after the sync point
	Steps     []analysis.Step // After as steps: requests and the ERROR events that made the client ask again
	Causes    []Cause         // per request step in Steps: why the client made it, as the log shows it
	Problems  []string        // relations that do not hold, in words
	Other     []record.Record // requests that are not collection GETs: writes, single-object GETs
	Wire      []string        // Accept → content type of the successful collection requests, once each
	Gzip      []string        // "gzip LIST": a Content-Encoding and a request (token) it came with, once each
	Synced    Bytes           // counted up to the sync point
	Later     Bytes           // counted after it
	Events    map[string]int  // WATCH-EVENT records by type, in the whole log
}

// Handshake is how one client synced one resource, as far as the wire shows: its initial records
// read as compare reads a lab's informer (analysis.DescribeInitial: Requests are its collection
// GETs up to the sync point, every one of them when there is none; SyncRV is "" for a watch with
// no LIST before it), and the sync point inferred from them.
type Handshake struct {
	analysis.Initial
	Synced   bool          // a sync point was found
	SyncBy   string        // how it was found (SyncListWatch, SyncStream, SyncWatchOnly) or why not (NoSync...)
	SyncAt   time.Time     // the sync point's record time
	SyncTime time.Duration // from the first request sent to the sync point
}

// Bytes is what the log says one client received for one resource: LIST bodies and streams
// up to their initial-events-end bookmark (record.Body). Plain watch streams carry no size in
// the log and are not counted.
type Bytes struct {
	Wire, Decoded int64
	Bodies        int // LIST bodies and streams counted
	Unsized       int // LIST bodies and streams the log has no size for (logs from before sizes)
}

// Known reports whether every body counted has a size.
func (b Bytes) Known() bool { return b.Unsized == 0 }

// Analyze reads every client's records, resource by resource.
func Analyze(obs *Observation) *Report {
	rep := &Report{Path: obs.Path}
	for _, r := range obs.Setup {
		rep.Setup = append(rep.Setup, r.Text())
	}
	for _, c := range obs.Clients {
		rep.Clients = append(rep.Clients, analyzeClient(c))
	}
	slices.SortStableFunc(rep.Clients, func(a, b *ClientReport) int {
		ta, tb := firstRequest(a), firstRequest(b)
		switch {
		case ta.Equal(tb):
			return 0
		case ta.IsZero():
			return 1 // a client that made no request goes last
		case tb.IsZero(), ta.Before(tb):
			return -1
		}
		return 1
	})
	return rep
}

// firstRequest is when the client sent its first request, zero if it made none.
func firstRequest(c *ClientReport) time.Time {
	var first time.Time
	for _, r := range c.Records {
		if t := sent(r); r.Kind == record.HTTP && (first.IsZero() || t.Before(first)) {
			first = t
		}
	}
	return first
}

// sent is when a request was sent: its HTTP record is written when the response headers
// arrive, Millis after.
func sent(r record.Record) time.Time { return r.Time.Add(-time.Duration(r.Millis) * time.Millisecond) }

func analyzeClient(c *Client) *ClientReport {
	cr := &ClientReport{Name: c.Name, UserAgent: c.UserAgent, Conn: c.Conn, Records: c.Records}
	byTag := map[string][]record.Record{}
	var tags []string
	for _, r := range c.Records {
		tag := r.Tag
		if tag == record.TagNoResource {
			cr.NonResource = append(cr.NonResource, r)
			continue
		}
		if _, ok := byTag[tag]; !ok {
			tags = append(tags, tag)
		}
		byTag[tag] = append(byTag[tag], r)
	}
	initial := map[string]int{} // per tag: how many of its collection records are initial
	for _, tag := range tags {
		res := analyzeResource(tag, byTag[tag])
		initial[tag] = len(byTag[tag]) - len(res.After) - len(res.Other)
		cr.Resources = append(cr.Resources, res)
	}
	for _, r := range c.Records {
		if !(r.Kind == record.HTTP && !isCollectionGet(r)) && initial[r.Tag] > 0 {
			initial[r.Tag]--
			cr.Initial = append(cr.Initial, r)
		}
	}
	return cr
}

// analyzeResource reads one client's records of one resource.
func analyzeResource(name string, recs []record.Record) *Resource {
	res := &Resource{Name: name, Events: map[string]int{}}
	var coll []record.Record // collection GETs, with their LIST bodies and watch events
	for _, r := range recs {
		switch {
		case r.Kind == record.HTTP && !isCollectionGet(r):
			res.Other = append(res.Other, r)
			continue
		case r.Kind == record.WatchEvent:
			res.Events[r.Event]++
		}
		coll = append(coll, r)
	}
	end, how := syncPoint(coll)
	initial := coll
	if end >= 0 {
		initial, res.After = coll[:end+1], coll[end+1:]
	}
	res.Handshake = handshake(initial, end >= 0, how)
	if end >= 0 && how == SyncListWatch {
		res.Problems = append(res.Problems, resumes(initial, analysis.PhaseInitial)...)
	}
	res.Steps = analysis.Steps(res.After, time.Time{})
	res.Causes = causes(res.Handshake, res.After, res.Steps)
	res.Problems = append(res.Problems, relistProblems(res.After)...)
	res.Wire, res.Gzip = wire(coll)
	res.Synced, res.Later = bodies(initial), bodies(res.After)
	return res
}

// isCollectionGet reports a GET of a collection: a LIST or a watch. A path that names an object
// (/api/v1/namespaces/NS/configmaps/NAME) or a subresource is one object's, as is any write.
func isCollectionGet(r record.Record) bool {
	return r.Method == "GET" && record.ClassifyRequest(r.Path, r.Query).Collection
}

// syncPoint finds the record at which a client's collection records of one resource say it
// is in sync, and how; -1 and why not when none does.
func syncPoint(coll []record.Record) (int, string) {
	listed, streamed := false, false
	for i, r := range coll {
		switch {
		case r.Kind == record.HTTP && r.Error == "" && record.OK(r.Status):
			switch record.Token(r) {
			case record.TokenList:
				listed = true
			case record.TokenWatch:
				if listed {
					return i, SyncListWatch
				}
				return i, SyncWatchOnly
			case record.TokenStream:
				streamed = true
			}
		case record.IsEndBookmark(r):
			if givenUp(r, coll[i+1:]) {
				continue
			}
			return i, SyncStream
		}
	}
	switch {
	case listed:
		return -1, NoSyncOneOff
	case streamed:
		return -1, NoSyncNoBookmark
	}
	return -1, NoSyncNoWatch
}

// givenUp reports an initial-events-end bookmark the client did not sync at: one without the
// list blueprint, after which it lists (client-go v0.32/v0.33 refuse such a bookmark,
// kubernetes/kubernetes#138167; compare/analysis reads a lab's fallback alike).
func givenUp(bookmark record.Record, rest []record.Record) bool {
	if !record.BlueprintMissing(bookmark) {
		return false
	}
	for _, r := range rest {
		if r.Kind == record.HTTP {
			return record.Token(r) == record.TokenList
		}
	}
	return false
}

// handshake describes the initial records of one resource.
func handshake(initial []record.Record, synced bool, how string) Handshake {
	h := Handshake{Initial: analysis.DescribeInitial(initial), Synced: synced, SyncBy: how}
	if synced && len(initial) > 0 && len(h.Requests) > 0 {
		h.SyncAt = initial[len(initial)-1].Time
		h.SyncTime = h.SyncAt.Sub(sent(h.Requests[0]))
	}
	if how == SyncWatchOnly {
		h.SyncRV = ""
	}
	return h
}

// resumes checks the one relation a LIST→WATCH handshake needs: the watch resumes exactly where
// the LIST's snapshot ends, or the events between them are lost. recs end with the watch.
func resumes(recs []record.Record, what string) []string {
	watch := recs[len(recs)-1]
	var list *record.Record
	for i := range recs {
		if recs[i].Kind == record.List {
			list = &recs[i]
		}
	}
	from, _ := url.ParseQuery(watch.Query)
	switch {
	case list == nil:
		return []string{what + ": no LIST record for the LIST request"}
	case from.Get("resourceVersion") != list.RV:
		return []string{fmt.Sprintf("%s: WATCH resumed from rv=%s, LIST returned rv=%s", what, from.Get("resourceVersion"), list.RV)}
	}
	return nil
}

// relistProblems checks the same relation for every relist after the sync point: a 2xx LIST and
// the first 2xx WATCH after it.
func relistProblems(after []record.Record) []string {
	var out []string
	start := -1 // the 2xx LIST request of the relist being read
	for i, r := range after {
		if r.Kind != record.HTTP || r.Error != "" || !record.OK(r.Status) {
			continue
		}
		switch record.Token(r) {
		case record.TokenList:
			start = i
		case record.TokenWatch:
			if start >= 0 {
				out = append(out, resumes(after[start:i+1], "relist at "+r.Time.Format("15:04:05.000"))...)
			}
			start = -1
		case record.TokenStream:
			start = -1
		}
	}
	return out
}

// wire lists the Accept → content type pairs of the successful requests, and which requests
// came gzip-encoded.
func wire(coll []record.Record) (pairs, gzip []string) {
	for _, r := range coll {
		if r.Kind != record.HTTP || r.Error != "" || !record.OK(r.Status) {
			continue
		}
		if p := r.Accept + " → " + r.ContentType; !slices.Contains(pairs, p) {
			pairs = append(pairs, p)
		}
		if t := record.Token(r); r.Encoding != "" && !slices.Contains(gzip, r.Encoding+" "+t) {
			gzip = append(gzip, r.Encoding+" "+t)
		}
	}
	return pairs, gzip
}

// bodies sums the sizes the log has: LIST bodies and streams up to their end bookmark.
func bodies(recs []record.Record) Bytes {
	var b Bytes
	for _, r := range recs {
		if r.Kind != record.List && !record.IsEndBookmark(r) {
			continue
		}
		if r.Body == nil {
			b.Unsized++
			continue
		}
		b.Bodies++
		b.Wire += r.Body.Wire
		b.Decoded += r.Body.Decoded
	}
	return b
}
