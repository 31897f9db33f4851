package labproc

import (
	"testing"
	"time"

	"informer-lab/record"
)

// An informer reports synced as soon as it holds the LIST's items; the harness must not stop
// the lab until the watch after that LIST was answered, whatever the handshake.
func TestWatchAnswered(t *testing.T) {
	list := record.Record{Kind: record.HTTP, Tag: "A", Method: "GET", Path: "/api/v1/configmaps", Query: "resourceVersion=0", Status: 200}
	watch := record.Record{Kind: record.HTTP, Tag: "A", Method: "GET", Path: "/api/v1/configmaps", Query: "watch=true&resourceVersion=12", Status: 200}
	stream := record.Record{Kind: record.HTTP, Tag: "A", Method: "GET", Path: "/api/v1/configmaps", Query: "watch=true&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true"}
	refused := stream
	refused.Status = 422
	stream.Status = 200
	synced := record.Record{Kind: record.Setup, Tag: "A", Step: record.StepSynced}
	cut := watch
	cut.Status, cut.Error = 0, "context canceled"

	for _, tc := range []struct {
		name string
		recs []record.Record
		want bool
	}{
		{"LIST→WATCH, synced before the watch's answer", []record.Record{list, synced}, false},
		{"LIST→WATCH answered", []record.Record{list, synced, watch}, true},
		{"STREAM", []record.Record{stream, synced}, true},
		{"STREAM(422)→LIST, synced", []record.Record{refused, list, synced}, false},
		{"STREAM(422)→LIST→WATCH", []record.Record{refused, list, synced, watch}, true},
		{"a failed watch is an answer too", []record.Record{list, synced, cut}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newProc("lab", "")
			for _, r := range tc.recs {
				p.note(r)
			}
			if !p.Synced("A") {
				t.Fatal("not synced")
			}
			if got := p.WatchAnswered("A"); got != tc.want {
				t.Errorf("WatchAnswered = %v, want %v", got, tc.want)
			}
		})
	}
}

// After a restart of one of two servers behind a balancer, a watcher whose watch the other
// server holds is watching; one whose watch the restarted server held must watch again; without
// a balancer every watcher must.
func TestWatchingBehindABalancer(t *testing.T) {
	t0 := time.Now().Add(-time.Minute)
	at := func(d time.Duration, r record.Record) record.Record { r.Time = t0.Add(d); return r }
	watch := func(server string, status int) record.Record {
		return record.Record{Kind: record.HTTP, Tag: "A", Method: "GET", Path: "/api/v1/configmaps", Query: "watch=true&resourceVersion=12", Status: status, Server: server}
	}
	killed := t0.Add(10 * time.Second)
	for _, tc := range []struct {
		name string
		down string
		recs []record.Record
		want bool
	}{
		{"on the other server, kept", "1.32.13", []record.Record{at(0, watch("1.33.13", 200))}, true},
		{"on the restarted server, not again", "1.32.13", []record.Record{at(0, watch("1.32.13", 200))}, false},
		{"on the restarted server, then refused (502)", "1.32.13", []record.Record{at(0, watch("1.32.13", 200)), at(11*time.Second, watch("1.32.13", 502))}, false},
		{"again, on the other server", "1.32.13", []record.Record{at(0, watch("1.32.13", 200)), at(11*time.Second, watch("1.33.13", 200))}, true},
		{"on the other server, then refused", "1.32.13", []record.Record{at(0, watch("1.33.13", 200)), at(11*time.Second, watch("1.32.13", 502))}, false},
		{"no balancer: every watcher again", "", []record.Record{at(0, watch("", 200))}, false},
		{"no balancer, again", "", []record.Record{at(0, watch("", 200)), at(12*time.Second, watch("", 200))}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newProc("lab", "")
			for _, r := range tc.recs {
				p.note(r)
			}
			if got := p.Watching(killed, time.Second, tc.down, "A"); got != tc.want {
				t.Errorf("Watching = %v, want %v", got, tc.want)
			}
		})
	}
}

// What a timed-out wait for re-established watches reports: each watcher's latest accepted
// watch and latest failure, from the fault on, with the server and the reason.
func TestWatchState(t *testing.T) {
	killed := time.Now().Add(-time.Minute)
	p := newProc("lab", "")
	p.note(record.Record{Time: killed.Add(-5 * time.Second), Kind: record.HTTP, Tag: "A", Method: "GET", Path: "/api/v1/configmaps", Query: "watch=true", Status: 200, Server: "1.32.13"})
	p.note(record.Record{Time: killed.Add(1500 * time.Millisecond), Kind: record.HTTP, Tag: "A", Method: "GET", Path: "/api/v1/configmaps", Query: "watch=true", Status: 502, Server: "1.32.13"})
	p.note(record.Record{Time: killed.Add(2 * time.Second), Kind: record.Setup, Tag: "B", Step: record.StepBroken, Value: "watch stream broken", Detail: "unexpected EOF"})
	want := "A: watch accepted at -5.0s by 1.32.13, failed at +1.5s (watch answered 502); B: no watch accepted, failed at +2.0s (stream broken unexpected EOF)"
	if got := p.WatchState(killed, "A", "B"); got != want {
		t.Errorf("WatchState:\n got %s\nwant %s", got, want)
	}
}
