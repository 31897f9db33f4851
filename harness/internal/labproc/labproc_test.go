package labproc

import (
	"testing"

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
