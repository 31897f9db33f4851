package analysis

import (
	"strings"
	"testing"

	"informer-lab/record"
)

// Writes made while informers sync: each informer must get, after its own sync point on the
// wire, every write above its sync rv, once and in rv order, whatever order the writers
// finished in, and whether its synced record came before or after those events.
func TestDelivered(t *testing.T) {
	ns := "w"
	write := func(op, name, rv string) record.Record {
		return record.Record{Kind: record.Mutator, Tag: record.TagWriter, Event: op, Namespace: ns, Name: name, RV: rv}
	}
	event := func(tag, typ, name, rv string) record.Record {
		return record.Record{Kind: record.WatchEvent, Tag: tag, Event: typ, Namespace: ns, Name: name, RV: rv}
	}
	endBookmark := func(tag, rv string) record.Record {
		r := event(tag, record.EventBookmark, "", rv)
		r.Annotations = map[string]string{record.AnnotationInitialEventsEnd: "true"}
		return r
	}
	list := func(tag, rv string) record.Record { return record.Record{Kind: record.List, Tag: tag, RV: rv} }
	request := func(tag, query string) record.Record {
		return record.Record{Kind: record.HTTP, Tag: tag, Method: "GET", Path: "/api/v1/namespaces/w/configmaps", Query: query, Status: 200}
	}
	synced := func(tag string) record.Record {
		return record.Record{Kind: record.Setup, Tag: tag, Step: record.StepSynced}
	}
	// Two writers at once: the log has them in the order they returned, not in rv order.
	writes := []record.Record{write("CREATE", "a", "11"), write("CREATE", "b", "10"), write("UPDATE", "a", "13"), write("DELETE", "b", "12")}

	recs := []record.Record{
		// A streams: its initial events hold a at 11 and b at 10; 12 and 13 come after its end bookmark,
		// the first of them logged before its synced record.
		event("A", "ADDED", "b", "10"), event("A", "ADDED", "a", "11"), endBookmark("A", "11"),
		event("A", "DELETED", "b", "12"), synced("A"), event("A", "MODIFIED", "a", "13"),
		// B lists at 10 (b is in its LIST) and watches from there; a periodic bookmark in between.
		list("B", "10"), synced("B"), event("B", "ADDED", "a", "11"), event("B", record.EventBookmark, "", "11"),
		event("B", "DELETED", "b", "12"), event("B", "MODIFIED", "a", "13"),
		// C lists at 10 and misses 12; D gets 12 twice; E gets 13 before 12.
		list("C", "10"), event("C", "ADDED", "a", "11"), event("C", "MODIFIED", "a", "13"),
		list("D", "11"), event("D", "DELETED", "b", "12"), event("D", "DELETED", "b", "12"), event("D", "MODIFIED", "a", "13"),
		list("E", "11"), event("E", "MODIFIED", "a", "13"), event("E", "DELETED", "b", "12"),
		// F lists again after its first sync: what came after is not compared, and said so.
		list("F", "12"), event("F", "MODIFIED", "a", "13"), list("F", "13"),
		// H's LIST at 10 is checked by client-go's inconsistency detector, which reads rv 10 again
		// from etcd: that LIST is no second sync.
		request("H", "resourceVersion=0"), list("H", "10"), request("H", "resourceVersion=10&resourceVersionMatch=Exact"), list("H", "10"),
		request("H", "watch=true&resourceVersion=10"), event("H", "ADDED", "a", "11"), event("H", "DELETED", "b", "12"), event("H", "MODIFIED", "a", "13"),
	}
	for tag, want := range map[string]string{
		"A": "", "B": "", "H": "",
		"C": "#2 want DELETED w/b rv=12, got MODIFIED w/a rv=13",
		"D": "#2 want MODIFIED w/a rv=13, got DELETED w/b rv=12",
		"E": "#1 want DELETED w/b rv=12, got MODIFIED w/a rv=13",
		"F": "synced again at rv 13",
		"G": "no sync point on the wire",
	} {
		w := Delivered(tag, recs, writes)
		if (want == "") != (w.Mismatch == "") || !strings.Contains(w.Mismatch, want) {
			t.Errorf("%s: mismatch %q, want %q", tag, w.Mismatch, want)
		}
	}
	// One writer, one write at a time, whose DELETEs have no rv (kube-apiserver answered them with
	// a Status): c was created and deleted before J's LIST at 22 (not in it: not expected), d was
	// in it (its deletion is expected), e was created after it.
	seq := []record.Record{write("CREATE", "c", "20"), write("CREATE", "d", "21"), write("DELETE", "c", ""),
		write("DELETE", "d", ""), write("CREATE", "e", "24"), write("DELETE", "e", "")}
	jrecs := []record.Record{list("J", "22"), event("J", "DELETED", "d", "23"), event("J", "ADDED", "e", "24"), event("J", "DELETED", "e", "25")}
	jrecs[0].Items = []record.Item{{Namespace: ns, Name: "d", RV: "21"}}
	if w := Delivered("J", jrecs, seq); w.Mismatch != "" || w.Expected != 3 {
		t.Errorf("J: %q, %d writes expected; want the 3 after its LIST (d's DELETE, e's CREATE and DELETE)", w.Mismatch, w.Expected)
	}
	// The same, streamed: d is among the initial events, and the stream missed e's DELETE.
	krecs := []record.Record{event("K", "ADDED", "d", "21"), endBookmark("K", "22"), event("K", "DELETED", "d", "23"), event("K", "ADDED", "e", "24")}
	if w := Delivered("K", krecs, seq); !strings.Contains(w.Mismatch, "saw 2 of 3 writes, first missing: #3 DELETED w/e") {
		t.Errorf("K: %q, want e's DELETE missing", w.Mismatch)
	}
	if w := Delivered("B", recs, writes); w.Expected != 3 || len(w.Events) != 3 || w.Bookmarks != 1 {
		t.Errorf("B: expected %d, events %d, bookmarks %d; want the 3 writes above rv 10, 3 events, 1 periodic bookmark", w.Expected, len(w.Events), w.Bookmarks)
	}
}
