package analysis

import (
	"cmp"
	"fmt"
	"slices"
	"strconv"

	"informer-lab/record"
)

// Delivered compares what informer tag received after its first sync point on the wire (its
// LIST's body, or its stream's initial-events-end bookmark) with the writes made after that
// point: each write whose rv is above the sync's, once, in rv order, as the event it must
// cause (record.Delivers). It reads the informer's own records, not the lab's phases: while
// writes go on during the initial sync, an informer's events start at its own sync point,
// which may be before or after its synced record is logged, and before another informer has
// synced. writes may come in any order (several writers at once): they are put in rv order.
//
// A second sync point (a LIST or a stream again: the informer lost its watch and read its state
// anew) ends what is checked; Mismatch says so, since the writes after it were not compared. The
// LISTs of client-go's inconsistency detectors (resourceVersionMatch=Exact, after a sync) are
// not sync points.
func Delivered(tag string, recs, writes []record.Record) *Watcher {
	var own []record.Record
	exact := false // the tag's latest request read one rv exactly: its LIST body is no sync point
	for _, r := range recs {
		if r.Tag != tag {
			continue
		}
		if r.Kind == record.HTTP {
			exact = record.ClassifyRequest(r.Path, r.Query).Exact
		}
		if r.Kind == record.List && exact {
			continue // client-go's inconsistency detector comparing the sync with etcd
		}
		own = append(own, r)
	}
	start := slices.IndexFunc(own, isSyncPoint)
	if start < 0 {
		return &Watcher{Mismatch: "no sync point on the wire (no LIST body, no initial-events-end bookmark): nothing to compare"}
	}
	after := own[start+1:]
	again := slices.IndexFunc(after, isSyncPoint)
	if again >= 0 {
		after = after[:again]
	}
	ordered := slices.Clone(writes)
	slices.SortStableFunc(ordered, func(a, b record.Record) int { return compareRV(a.RV, b.RV) })
	w := watcher(tag, after, ordered, own[start].RV)
	if again >= 0 && w.Mismatch == "" {
		w.Mismatch = fmt.Sprintf("synced again at rv %s (a LIST or a stream after its first): delivery checked up to it", own[start+1+again].RV)
	}
	return w
}

// isSyncPoint is where an informer's initial state ends on the wire: its LIST's body, or the
// bookmark that ends a stream's initial events.
func isSyncPoint(r record.Record) bool { return r.Kind == record.List || record.IsEndBookmark(r) }

// compareRV orders rvs as numbers (see rvAfter on why this harness may); an rv that is not one
// sorts last.
func compareRV(a, b string) int {
	x, err1 := strconv.ParseUint(a, 10, 64)
	y, err2 := strconv.ParseUint(b, 10, 64)
	if err1 != nil || err2 != nil {
		return cmp.Compare(notNumber(err1), notNumber(err2))
	}
	return cmp.Compare(x, y)
}

func notNumber(err error) int {
	if err != nil {
		return 1
	}
	return 0
}
