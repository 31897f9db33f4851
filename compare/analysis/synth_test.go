package analysis

import (
	"fmt"
	"strings"
	"time"

	"informer-lab/record"
)

// This file builds synthetic runs that follow the wire shapes the labs record (docs/matrix), for the tests and
// for testdata/runs/synthetic.

// synthLab describes one lab of a synthetic run.
type synthLab struct {
	name, clientGo, gate string
	shape                string // the handshake its informers perform
}

// synth is a clock and an rv counter shared by the logs of one synthetic run.
type synth struct {
	now time.Time
	rv  int
}

func newSynth() *synth {
	return &synth{now: time.Date(2025, 1, 2, 3, 4, 5, 0, time.UTC), rv: 40}
}

// rec stamps a record with the next time (100 µs later) and the schema.
func (s *synth) rec(source string, r record.Record) record.Record {
	s.now = s.now.Add(100 * time.Microsecond)
	r.Schema, r.Time, r.Source = record.Schema, s.now, source
	return r
}

func (s *synth) nextRV() string { s.rv++; return fmt.Sprint(s.rv) }

const (
	jsonAccept  = "application/json, */*"
	protoAccept = "application/vnd.kubernetes.protobuf,application/json"
	listQuery   = "limit=500&resourceVersion=0"
)

// wire returns the Accept a client-go version sends and the content types it gets back.
func wire(clientGo string) (accept, listCT, watchCT string) {
	if strings.HasPrefix(clientGo, "v0.31") {
		return jsonAccept, "application/json", "application/json"
	}
	return protoAccept, "application/vnd.kubernetes.protobuf", "application/vnd.kubernetes.protobuf;stream=watch"
}

// handshakeRecords is one informer's initial phase, up to and including SETUP synced.
// seeds are the objects in the store; syncRV is the collection rv the server reports.
func (s *synth) handshakeRecords(lab synthLab, tag string, seeds []record.Item, syncRV string, timeout int) []record.Record {
	accept, listCT, watchCT := wire(lab.clientGo)
	to := fmt.Sprintf("timeout=%dm%ds&timeoutSeconds=%d", timeout/60, timeout%60, timeout)
	src := lab.name
	http := func(query string, status int, ct string) record.Record {
		return s.rec(src, record.Record{Kind: record.HTTP, Tag: tag, Method: "GET", Path: "/api/v1/configmaps",
			Query: query, Status: status, ContentType: ct, Accept: accept, Millis: 2})
	}
	handlers := func() (out []record.Record) {
		for _, it := range seeds {
			out = append(out, s.rec(src, record.Record{Kind: record.Handler, Tag: tag, Event: "ADDED", Namespace: it.Namespace, Name: it.Name, RV: it.RV}))
		}
		return out
	}
	listWatch := func() (out []record.Record) {
		out = append(out,
			http(listQuery, 200, listCT),
			s.rec(src, record.Record{Kind: record.List, Tag: tag, RV: syncRV, Items: seeds}),
			http("allowWatchBookmarks=true&resourceVersion="+syncRV+"&"+to+"&watch=true", 200, watchCT))
		return append(out, handlers()...)
	}
	var out []record.Record
	switch lab.shape {
	case record.ShapeListWatch:
		out = listWatch()
	case record.ShapeStream:
		out = append(out, http("allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&sendInitialEvents=true&"+to+"&watch=true", 200, watchCT))
		for _, it := range seeds {
			out = append(out, s.rec(src, record.Record{Kind: record.WatchEvent, Tag: tag, Event: "ADDED", Namespace: it.Namespace, Name: it.Name, RV: it.RV}))
		}
		out = append(out, s.rec(src, record.Record{Kind: record.WatchEvent, Tag: tag, Event: "BOOKMARK", RV: syncRV,
			Annotations: map[string]string{record.AnnotationInitialEventsEnd: "true"}}))
		out = append(out, handlers()...)
	case record.ShapeFallback:
		out = append(out,
			http("allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&sendInitialEvents=true&"+to+"&watch=true", 422, "application/json"),
			http("resourceVersion=0&resourceVersionMatch=NotOlderThan&sendInitialEvents=true&watch=true", 422, "application/json"))
		out = append(out, listWatch()...)
	}
	return append(out, s.rec(src, record.Record{Kind: record.Setup, Tag: tag, Step: record.StepSynced}))
}

// synthRun builds a run: seeds configmaps, every lab's informers A and B sync, then the harness
// makes writes and every watcher sees each of them. It returns the logs by source.
func synthRun(server, gates string, labs []synthLab, seeds, writes int) map[string][]record.Record {
	s := newSynth()
	logs := map[string][]record.Record{}
	logs["harness"] = append(logs["harness"], s.rec("harness", record.Record{Kind: record.Setup, Step: record.StepServer, Value: server, Detail: gates}))

	var items []record.Item
	for i := range seeds {
		items = append(items, record.Item{Namespace: "default", Name: fmt.Sprintf("lab-cm-%d", i), RV: s.nextRV()})
	}
	syncRV := s.nextRV()
	for li, lab := range labs {
		src := lab.name
		logs[src] = append(logs[src],
			s.rec(src, record.Record{Kind: record.Setup, Step: record.StepClientGo, Value: lab.clientGo, Detail: "pin k8s.io/client-go " + lab.clientGo}),
			s.rec(src, record.Record{Kind: record.Setup, Step: record.StepGate, Value: lab.gate, Detail: "KUBE_FEATURE_WatchListClient=" + map[string]string{"on": "true", "off": "false"}[lab.gate]}))
		a := s.handshakeRecords(lab, "A", items, syncRV, 300+37*li)
		b := s.handshakeRecords(lab, "B", items, syncRV, 333+41*li)
		logs[src] = append(logs[src], interleave(a, b)...)
	}

	names := []string{"lab-cm-0", "lab-cm-1", "lab-cm-2"}
	for i := range writes {
		s.rv += 2 // other objects (events, leases) take rvs too: steady rvs are not consecutive
		w := record.Record{Kind: record.Mutator, Tag: "MUT", Namespace: "default", Tick: i + 1, RV: s.nextRV()}
		switch {
		case i == 0:
			w.Event, w.Name = "CREATE", "lab-cm-new"
		case i == writes-1:
			w.Event, w.Name = "DELETE", "lab-cm-new"
		default:
			w.Event, w.Name = "UPDATE", names[i%len(names)]
		}
		logs["harness"] = append(logs["harness"], s.rec("harness", w))
		for _, lab := range labs {
			for _, tag := range []string{"A", "B"} {
				logs[lab.name] = append(logs[lab.name],
					s.rec(lab.name, record.Record{Kind: record.WatchEvent, Tag: tag, Event: record.EventFor(w.Event), Namespace: w.Namespace, Name: w.Name, RV: w.RV}),
					s.rec(lab.name, record.Record{Kind: record.Handler, Tag: tag, Event: record.EventFor(w.Event), Namespace: w.Namespace, Name: w.Name, RV: w.RV}))
			}
		}
		if i == writes/2 { // a periodic bookmark, at a time of the server's choosing
			lab := labs[len(labs)-1]
			logs[lab.name] = append(logs[lab.name], s.rec(lab.name, record.Record{Kind: record.WatchEvent, Tag: "A", Event: "BOOKMARK", RV: w.RV}))
		}
	}
	logs["harness"] = append(logs["harness"], s.rec("harness", record.Record{Kind: record.Setup, Step: record.StepWriteDone}))
	for _, lab := range labs {
		logs[lab.name] = append(logs[lab.name], s.rec(lab.name, record.Record{Kind: record.Setup, Step: record.StepStopped}))
	}
	return logs
}

// interleave alternates two informers' records, as two concurrently started informers do.
func interleave(a, b []record.Record) []record.Record {
	var out []record.Record
	for i := 0; i < max(len(a), len(b)); i++ {
		if i < len(a) {
			out = append(out, a[i])
		}
		if i < len(b) {
			out = append(out, b[i])
		}
	}
	return out
}

// synthLabs is the usual pair: v0.31 with the gate off, v0.32 with it on.
var synthLabs = []synthLab{
	{"client-v031", "v0.31.14", "off", record.ShapeListWatch},
	{"client-v032", "v0.32.13", "on", record.ShapeStream},
}

// runFrom turns synthetic logs into a Run as LoadRun would return it.
func runFrom(logs map[string][]record.Record, server, gates string) *Run {
	run := &Run{Dir: "synthetic", Harness: logs["harness"], Server: server, ServerGates: gates}
	for _, name := range sortedKeys(logs) {
		if name != "harness" {
			run.Labs = append(run.Labs, &Lab{Name: name, File: name + ".jsonl", Records: logs[name]})
		}
	}
	return run
}
