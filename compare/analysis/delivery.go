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
// synced.
//
// writes come from one writer, one write at a time (the harness's: their order is their rvs'),
// or each with its rv (then in any order: several writers at once, put in rv order here). A
// DELETE without its rv (kube-apiserver answers a ConfigMap's DELETE with a Status; no watcher
// of the run reported its DELETED event for resolveDeleteRVs to take the rv from) came after
// the sync point exactly when its object was in the informer's initial state or was created
// after that point.
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
	syncRV := own[start].RV
	w := watcher(tag, after, writesAfter(writes, syncRV, initialState(own, start)), "")
	if again >= 0 && w.Mismatch == "" {
		w.Mismatch = fmt.Sprintf("synced again at rv %s (a LIST or a stream after its first): delivery checked up to it", own[start+1+again].RV)
	}
	return w
}

// writesAfter are the writes made after a sync point at syncRV, in rv order; initial holds the
// objects (namespace/name) of the state synced there.
func writesAfter(writes []record.Record, syncRV string, initial map[string]bool) []record.Record {
	ordered := slices.Clone(writes)
	if !slices.ContainsFunc(ordered, func(w record.Record) bool { return w.RV == "" }) {
		slices.SortStableFunc(ordered, func(a, b record.Record) int { return compareRV(a.RV, b.RV) })
	}
	var want []record.Record
	created := map[string]string{} // object -> the rv of its latest CREATE so far
	for _, wr := range ordered {
		key := wr.Namespace + "/" + wr.Name
		if wr.Event == record.WriteCreate {
			created[key] = wr.RV
		}
		switch {
		case wr.RV != "":
			if rvAfter(wr.RV, syncRV) {
				want = append(want, wr)
			}
		case wr.Event == record.WriteDelete:
			if initial[key] || created[key] != "" && rvAfter(created[key], syncRV) {
				want = append(want, wr)
			}
		default:
			want = append(want, wr)
		}
	}
	return want
}

// initialState is the objects (namespace/name) an informer held at its sync point own[start]:
// its LIST's items, or the ADDED events of the stream that ended there.
func initialState(own []record.Record, start int) map[string]bool {
	in := map[string]bool{}
	if own[start].Kind == record.List {
		for _, it := range own[start].Items {
			in[it.Namespace+"/"+it.Name] = true
		}
		return in
	}
	for _, r := range own[:start] {
		switch {
		case r.Kind == record.HTTP:
			clear(in) // a stream asked again: its initial events start over
		case r.Kind == record.WatchEvent && r.Event == record.EventAdded:
			in[r.Namespace+"/"+r.Name] = true
		}
	}
	return in
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
