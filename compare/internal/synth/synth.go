// Package synth builds synthetic matrix runs for tests: the logs a harness run of one scenario
// writes (harness.jsonl and one log per lab), following the wire shapes real labs record (docs/matrix, docs/upstream.md).
// It models a server (objects and their rvs) and, per informer, what it last saw and its cache,
// so that a test can make a watcher miss a write or lose an object and see the analysis say so.
package synth

import (
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"time"

	"informer-lab/record"
)

// Handshakes a synthetic lab performs (Lab.Shape).
const (
	ListWatch = "LIST→WATCH"
	Stream    = "STREAM"
	Fallback  = "STREAM→422→LIST→WATCH" // server refuses sendInitialEvents
	Blueprint = "blueprint"             // stream whose end bookmark lacks the list blueprint, then LIST→WATCH
)

const (
	jsonAccept  = "application/json, */*"
	protoAccept = "application/vnd.kubernetes.protobuf,application/json"
	blueprint   = "kubernetes.io/initial-events-list-blueprint"
	eventsEnd   = "k8s.io/initial-events-end"
)

// Lab is one lab of a run.
type Lab struct {
	Name, ClientGo, Gate, GateHow string
	Shape                         string // its handshake
	ShapeB                        string // informer B's, when it differs from A's
	Restream                      bool   // re-established watches ask for initial events again
	// Cut is how many of its informers' initial streams (Shape Stream) end before their end
	// bookmark, each followed by a new one: a watch timeout used up by the initial events.
	Cut int
}

// watcher is one informer: what it last saw and its cache.
type watcher struct {
	lab    *Lab
	tag    string
	lastRV string
	store  map[string]string // name -> rv
	miss   int               // writes it will not see
	cutOff bool              // its requests are held (expired scenario)
}

// Run is a synthetic run being written.
type Run struct {
	Logs     map[string][]record.Record // by source: "harness" and each lab's name
	now      time.Time
	rv       int
	objects  map[string]string // the server's ConfigMaps: name -> rv
	watchers []*watcher
	timeout  int
	created  int // objects Writes created so far: each batch creates and deletes its own
}

// New starts a run: the harness's SETUP records, three seeded objects, and every lab's
// informers A and B synced by their handshake.
func New(scenario, server, gates string, labs ...Lab) *Run {
	r := &Run{Logs: map[string][]record.Record{}, now: time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC), rv: 100, objects: map[string]string{}, timeout: 300}
	r.harness(record.Record{Kind: record.Setup, Step: record.StepScenario, Value: scenario, Detail: "synthetic " + scenario})
	r.harness(record.Record{Kind: record.Setup, Step: record.StepServer, Value: server, Detail: gates})
	// A scenario played through the harness's proxy has its SETUP proxy record (a fault
	// scenario's would name its fault; synth makes none).
	if record.ScenarioOf(scenario).Proxy {
		r.harness(record.Record{Kind: record.Setup, Step: record.StepProxy, Value: "watch timeout 4s"})
	}
	for i := range 3 {
		r.objects[fmt.Sprintf("seed-cm-%d", i)] = r.nextRV()
	}
	for i := range labs {
		lab := &labs[i]
		r.lab(lab.Name, record.Record{Kind: record.Setup, Step: record.StepClientGo, Value: lab.ClientGo, Detail: "pin " + lab.ClientGo})
		r.lab(lab.Name, record.Record{Kind: record.Setup, Step: record.StepGate, Value: lab.Gate, Detail: lab.GateHow})
		for _, tag := range []string{"A", "B"} {
			w := &watcher{lab: lab, tag: tag, store: map[string]string{}}
			r.watchers = append(r.watchers, w)
			r.handshake(w)
		}
	}
	return r
}

func (r *Run) nextRV() string { r.rv++; return fmt.Sprint(r.rv) }

// Sleep advances the clock.
func (r *Run) Sleep(d time.Duration) { r.now = r.now.Add(d) }

func (r *Run) stamp(source string, rec record.Record) record.Record {
	r.now = r.now.Add(100 * time.Microsecond)
	rec.Schema, rec.Time, rec.Source = record.Schema, r.now, source
	return rec
}

func (r *Run) harness(rec record.Record) {
	r.Logs["harness"] = append(r.Logs["harness"], r.stamp("harness", rec))
}

func (r *Run) lab(name string, rec record.Record) {
	r.Logs[name] = append(r.Logs[name], r.stamp(name, rec))
}

func (r *Run) emit(w *watcher, rec record.Record) {
	rec.Tag = w.tag
	r.lab(w.lab.Name, rec)
}

func (r *Run) http(w *watcher, query string, status int, errText string) {
	accept, ct := jsonAccept, "application/json"
	if w.lab.ClientGo >= "v0.32" {
		accept, ct = protoAccept, "application/vnd.kubernetes.protobuf"
	}
	if status == 200 && query != listQuery {
		ct += ";stream=watch"
		if accept == jsonAccept {
			ct = "application/json"
		}
	}
	rec := record.Record{Kind: record.HTTP, Method: "GET", Path: "/api/v1/configmaps", Query: query, Accept: accept, Status: status, ContentType: ct, Error: errText, Millis: 2}
	if errText != "" {
		rec.Status, rec.ContentType = 0, ""
	}
	r.timeout += 7
	r.emit(w, rec)
}

const listQuery = "limit=500&resourceVersion=0"

func (r *Run) watchQuery(rv string) string {
	return fmt.Sprintf("allowWatchBookmarks=true&resourceVersion=%s&timeout=%dm%ds&timeoutSeconds=%d&watch=true", rv, r.timeout/60, r.timeout%60, r.timeout)
}

func (r *Run) streamQuery() string {
	return fmt.Sprintf("allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&sendInitialEvents=true&timeout=%dm%ds&timeoutSeconds=%d&watch=true", r.timeout/60, r.timeout%60, r.timeout)
}

func (r *Run) items() []record.Item {
	var items []record.Item
	for _, name := range slices.Sorted(maps.Keys(r.objects)) {
		items = append(items, record.Item{Namespace: "default", Name: name, RV: r.objects[name]})
	}
	return items
}

// list performs LIST then WATCH from the list's rv; the cache becomes the server's state.
func (r *Run) list(w *watcher) {
	r.http(w, listQuery, 200, "")
	rv := fmt.Sprint(r.rv)
	r.emit(w, record.Record{Kind: record.List, RV: rv, Items: r.items()})
	w.store, w.lastRV = maps.Clone(r.objects), rv
	r.http(w, r.watchQuery(rv), 200, "")
}

// stream performs a streaming list: ADDED per object and the end bookmark.
func (r *Run) stream(w *watcher, withBlueprint bool) {
	r.http(w, r.streamQuery(), 200, "")
	for _, it := range r.items() {
		r.emit(w, record.Record{Kind: record.WatchEvent, Event: "ADDED", Namespace: it.Namespace, Name: it.Name, RV: it.RV})
	}
	rv := fmt.Sprint(r.rv)
	ann := map[string]string{eventsEnd: "true"}
	if withBlueprint {
		ann[blueprint] = "azhzAAoTCgJ2MRINQ29uZmlnTWFwTGlzdBIICgYKABIAGgAaACIA"
	}
	r.emit(w, record.Record{Kind: record.WatchEvent, Event: "BOOKMARK", RV: rv, Annotations: ann})
	w.store, w.lastRV = maps.Clone(r.objects), rv
}

// cutStream is a streaming list that ends before its end bookmark: one ADDED, then nothing.
func (r *Run) cutStream(w *watcher) {
	r.http(w, r.streamQuery(), 200, "")
	it := r.items()[0]
	r.emit(w, record.Record{Kind: record.WatchEvent, Event: record.EventAdded, Namespace: it.Namespace, Name: it.Name, RV: it.RV})
	r.Sleep(4 * time.Second)
}

func (r *Run) handshake(w *watcher) {
	shape := w.lab.Shape
	if w.tag == "B" && w.lab.ShapeB != "" {
		shape = w.lab.ShapeB
	}
	switch shape {
	case ListWatch:
		r.list(w)
	case Stream:
		for range w.lab.Cut {
			r.cutStream(w)
		}
		r.stream(w, true)
	case Fallback:
		r.http(w, r.streamQuery(), 422, "")
		r.http(w, "resourceVersion=0&resourceVersionMatch=NotOlderThan&sendInitialEvents=true&watch=true", 422, "")
		r.list(w)
	case Blueprint:
		r.stream(w, false)
		r.list(w)
	default:
		panic("synth: unknown shape " + shape)
	}
	for _, name := range slices.Sorted(maps.Keys(w.store)) {
		r.emit(w, record.Record{Kind: record.Handler, Event: "ADDED", Namespace: "default", Name: name, RV: w.store[name]})
	}
	r.emit(w, record.Record{Kind: record.Setup, Step: record.StepSynced, Value: "informer cache synced"})
}

// Write makes one harness write and delivers its event to every watcher that is not cut off
// and not told to miss it. A DELETE's record carries the deletion's rv, which a real writer of
// ConfigMaps cannot know (lab/mutator's Apply): compare's resolveDeleteRVs fills it in there.
func (r *Run) Write(event, name string) {
	rv := r.nextRV()
	wr := record.Record{Kind: record.Mutator, Tag: record.TagWriter, Event: event, Namespace: "default", Name: name, RV: rv, Tick: r.rv}
	watchEvent := record.EventFor(event)
	if event == record.WriteDelete {
		delete(r.objects, name)
	} else {
		r.objects[name] = rv
	}
	r.harness(wr)
	for _, w := range r.watchers {
		if w.cutOff {
			continue
		}
		if w.miss > 0 {
			w.miss--
			continue
		}
		r.emit(w, record.Record{Kind: record.WatchEvent, Event: watchEvent, Namespace: "default", Name: name, RV: rv})
		r.emit(w, record.Record{Kind: record.Handler, Event: watchEvent, Namespace: "default", Name: name, RV: rv})
		w.lastRV = rv
		if event == record.WriteDelete {
			delete(w.store, name)
		} else {
			w.store[name] = rv
		}
	}
}

// Writes makes n writes: a create, updates, a delete of what it created.
func (r *Run) Writes(n int) {
	r.created++
	name := fmt.Sprintf("lab-cm-%d", r.created)
	for i := range n {
		switch {
		case i == 0:
			r.Write("CREATE", name)
		case i == n-1:
			r.Write("DELETE", name)
		default:
			r.Write("UPDATE", fmt.Sprintf("seed-cm-%d", i%3))
		}
		r.Sleep(200 * time.Millisecond)
	}
}

func (r *Run) find(lab, tag string) *watcher {
	for _, w := range r.watchers {
		if w.lab.Name == lab && w.tag == tag {
			return w
		}
	}
	panic("synth: no watcher " + lab + "/" + tag)
}

// Miss makes one watcher miss its next n write events (a lost event).
func (r *Run) Miss(lab, tag string, n int) { r.find(lab, tag).miss = n }

// Forget removes an object from one watcher's cache (lost data at stop).
func (r *Run) Forget(lab, tag, name string) { delete(r.find(lab, tag).store, name) }

// Received sets what one informer's client read until its sync (tag "" for both): the stats of
// its SETUP synced record (wire 0: a log from before WireBytes), and, when gzipped names a
// request token (record.TokenList, record.TokenStream), a gzip Content-Encoding on those
// initial responses, with the LIST body or the stream up to its end bookmark as Body.
func (r *Run) Received(lab, tag string, wire, decoded int64, gzipped string) {
	synced := map[string]bool{}
	requests, events := map[string]int{}, map[string]int{}
	recs := r.Logs[lab]
	for i := range recs {
		rec := &recs[i]
		if (tag != "" && rec.Tag != tag) || synced[rec.Tag] {
			continue
		}
		switch rec.Kind {
		case record.HTTP:
			requests[rec.Tag]++
		case record.WatchEvent:
			events[rec.Tag]++
		}
		switch {
		case rec.Kind == record.Setup && rec.Step == record.StepSynced:
			rec.Stats = &record.Stats{Requests: requests[rec.Tag], Bytes: decoded, WireBytes: wire, Events: events[rec.Tag]}
			synced[rec.Tag] = true
		case gzipped == "":
		case rec.Kind == record.HTTP && record.Token(*rec) == gzipped:
			rec.Encoding = "gzip"
		case rec.Kind == record.List && gzipped == record.TokenList, record.IsEndBookmark(*rec) && gzipped == record.TokenStream:
			rec.Body = &record.Body{Wire: wire, Decoded: decoded}
		}
	}
}

// Unsync removes one informer's SETUP synced record: it never synced.
func (r *Run) Unsync(lab, tag string) {
	r.Logs[lab] = slices.DeleteFunc(r.Logs[lab], func(rec record.Record) bool {
		return rec.Tag == tag && rec.Kind == record.Setup && rec.Step == record.StepSynced
	})
}

// Reconnect ends every watch (the proxy's short timeout) and each reflector watches again: from
// its last rv, or, for a lab with Restream, by streaming the initial events again.
func (r *Run) Reconnect() {
	for _, w := range r.watchers {
		if w.lab.Restream {
			r.stream(w, true)
			continue
		}
		r.http(w, r.watchQuery(w.lastRV), 200, "")
	}
}

// Kill records the harness killing kube-apiserver: every stream breaks, every retry is refused
// `refused` times.
func (r *Run) Kill(refused int) {
	r.harness(record.Record{Kind: record.Setup, Step: record.StepInjected, Value: record.InjectKillAPIServer, Detail: "SIGKILL kube-apiserver, restart it"})
	for _, w := range r.watchers {
		r.emit(w, record.Record{Kind: record.Setup, Step: record.StepBroken, Value: "watch stream broken", Detail: "unexpected EOF"})
	}
	for range refused {
		r.Sleep(time.Second)
		for _, w := range r.watchers {
			r.http(w, r.watchQuery(w.lastRV), 0, "dial tcp 127.0.0.1:6443: connect: connection refused")
		}
	}
}

// Restarted records kube-apiserver back; after `after`, every reflector watches again from its
// last rv (expired: the server answers 410 in the stream and the reflector relists).
func (r *Run) Restarted(after time.Duration, expired bool) {
	r.harness(record.Record{Kind: record.Setup, Step: record.StepRecovered, Value: "kube-apiserver restarted", Detail: "down 3s"})
	r.Sleep(after)
	for _, w := range r.watchers {
		r.rewatch(w, expired, false)
	}
}

// rewatch is a reflector's watch from its last rv after a gap: 200, or a 410 (in the stream or,
// with httpGone, as the response), then a relist by its handshake's means.
func (r *Run) rewatch(w *watcher, expired, httpGone bool) {
	if !expired {
		r.http(w, r.watchQuery(w.lastRV), 200, "")
		return
	}
	if httpGone {
		r.http(w, r.watchQuery(w.lastRV), 410, "")
	} else {
		r.http(w, r.watchQuery(w.lastRV), 200, "")
		r.emit(w, record.Record{Kind: record.WatchEvent, Event: "ERROR", Detail: `code=410 reason=Expired message="too old resource version: 150 (160)"`})
	}
	if w.lab.Restream {
		r.stream(w, true)
		return
	}
	r.list(w)
}

// Expire records the proxy holding the labs' requests: writes made now reach no watcher.
func (r *Run) Expire() {
	r.harness(record.Record{Kind: record.Setup, Step: record.StepInjected, Value: "expire", Detail: "proxy holds the labs' requests"})
	for _, w := range r.watchers {
		w.cutOff = true
	}
}

// Resume records the proxy releasing the held requests after etcd was compacted; after `after`
// every reflector's watch gets a 410 (an ERROR event, or HTTP 410 with httpGone) and relists.
func (r *Run) Resume(after time.Duration, httpGone bool) {
	r.harness(record.Record{Kind: record.Setup, Step: record.StepRecovered, Value: "proxy resumed", Detail: fmt.Sprintf("compacted etcd at rev %d", r.rv)})
	r.Sleep(after)
	for _, w := range r.watchers {
		w.cutOff = false
		r.rewatch(w, true, httpGone)
	}
}

// Stop ends the run: the harness's fresh LIST, each informer's cache, each lab stopped.
func (r *Run) Stop() {
	r.harness(record.Record{Kind: record.Setup, Step: record.StepWriteDone})
	r.harness(record.Record{Kind: record.Setup, Tag: "LIST", Step: record.StepStore, Value: "fresh LIST before the labs stop", RV: fmt.Sprint(r.rv), Items: r.items()})
	stopped := map[string]bool{}
	for _, w := range r.watchers {
		var items []record.Item
		for _, name := range slices.Sorted(maps.Keys(w.store)) {
			items = append(items, record.Item{Namespace: "default", Name: name, RV: w.store[name]})
		}
		r.emit(w, record.Record{Kind: record.Setup, Step: record.StepStore, Value: "informer cache at stop", Items: items})
	}
	for _, w := range r.watchers {
		if !stopped[w.lab.Name] {
			stopped[w.lab.Name] = true
			r.lab(w.lab.Name, record.Record{Kind: record.Setup, Step: record.StepStopped, Value: "informers stopped"})
		}
	}
	r.harness(record.Record{Kind: record.Setup, Step: record.StepStopped, Value: "run complete"})
}

// WriteDir writes the logs as a run directory: harness.jsonl and <lab>.jsonl.
func (r *Run) WriteDir(dir string) error {
	for source, recs := range r.Logs {
		buf, err := record.MarshalLines(recs)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, source+".jsonl"), buf, 0o644); err != nil {
			return err
		}
	}
	return nil
}
