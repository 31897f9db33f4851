package record

import (
	"fmt"
	"strings"
)

// The initial-sync shapes the gates produce. docs/upstream.md gives the client-go and
// kube-apiserver code that decides each.
const (
	ShapeListWatch = "LIST→WATCH"            // client gate off: LIST ?resourceVersion=0, then WATCH from its rv
	ShapeStream    = "STREAM"                // client gate on, server streams: one WATCH with sendInitialEvents=true
	ShapeFallback  = "STREAM→422→LIST→WATCH" // client gate on, server refuses (422): LIST, then WATCH
	ShapeNone      = "no request"
)

// Request tokens: what one HTTP record asked for.
const (
	TokenList   = "LIST"
	TokenWatch  = "WATCH"
	TokenStream = "STREAM" // a watch asking for initial events (sendInitialEvents=true)
)

// Token names one request: LIST, WATCH or STREAM, with its status appended when the server
// did not answer 2xx ("STREAM(422)") or the request failed ("WATCH(error)").
func Token(r Record) string {
	tok := TokenList
	switch req := ClassifyRequest(r.Path, r.Query); {
	case req.Stream:
		tok = TokenStream
	case req.Watch:
		tok = TokenWatch
	}
	switch {
	case r.Error != "":
		tok += "(error)"
	case !OK(r.Status):
		tok += fmt.Sprintf("(%d)", r.Status)
	}
	return tok
}

// OK reports a 2xx status.
func OK(status int) bool { return status >= 200 && status < 300 }

// IsWatch reports a request that opened a watch (plain or streaming), whatever its answer.
func IsWatch(r Record) bool {
	t := Token(r)
	return r.Kind == HTTP && (strings.HasPrefix(t, TokenWatch) || strings.HasPrefix(t, TokenStream))
}

// Classify names the shape of one informer's initial requests, or spells the sequence out
// when it is none of the known shapes; label adds the request count: "LIST→WATCH (2 req)".
func Classify(reqs []Record) (shape, label string) {
	toks := make([]string, len(reqs))
	for i, r := range reqs {
		toks[i] = Token(r)
	}
	seq := strings.Join(toks, "→")
	refused := 0
	for refused < len(toks) && toks[refused] == TokenStream+"(422)" {
		refused++
	}
	switch {
	case seq == TokenList+"→"+TokenWatch:
		shape = ShapeListWatch
	case seq == TokenStream:
		shape = ShapeStream
	case refused > 0 && strings.Join(toks[refused:], "→") == TokenList+"→"+TokenWatch:
		shape = ShapeFallback
	case seq == "":
		shape = ShapeNone
	default:
		shape = seq
	}
	return shape, fmt.Sprintf("%s (%d req)", shape, len(reqs))
}

// ExpectedShape is the handshake the gates imply: the client gate (on|off, from the lab's
// SETUP gate record) decides whether the reflector asks to stream, the server's WatchList gate
// whether it may. "" when the client gate is unknown.
func ExpectedShape(clientGate, serverGates, serverVersion string) string {
	switch clientGate {
	case "off":
		return ShapeListWatch
	case "on":
		if !ServerStreams(serverGates, serverVersion) {
			return ShapeFallback
		}
		return ShapeStream
	}
	return ""
}

// KindExpectedShape is ExpectedShape for an informer kind (Kinds; "" is the typed default) of a
// client-go version: a ListWatch that says it does not support watch-list semantics lists and
// watches on a client-go that asks (v0.35+, k8s.io/client-go/tools/cache reflector.go,
// NewReflectorWithOptions), whatever the gate.
//
// The aggregated kind's requests are answered by the aggregated apiserver, not kube-apiserver:
// k8s.io/sample-apiserver v0.X builds on k8s.io/apiserver v0.X, whose feature gates and their
// defaults (k8s.io/apiserver/pkg/features) kube-apiserver 1.X has too, so its WatchList default
// is kube-apiserver 1.X's, and kube-apiserver's own settings do not reach it.
func KindExpectedShape(kind, clientGo, clientGate, serverGates, serverVersion string) string {
	if kind == KindCustomListWatchOptOut && Minor(clientGo) >= 35 && clientGate != "" {
		return ShapeListWatch
	}
	gates, version := answering(kind, serverGates, serverVersion)
	return ExpectedShape(clientGate, gates, version)
}

// KindServerStreams is ServerStreams of the server that answers kind's requests (KindExpectedShape);
// with a second kube-apiserver behind a balancer (upgrade=VERSION, the same flags), of both: a
// request may meet either.
func KindServerStreams(kind, serverGates, serverVersion string) bool {
	if v := UpgradeOf(serverGates); v != "" && kind != KindAggregated && !ServerStreams(serverGates, v) {
		return false
	}
	return ServerStreams(answering(kind, serverGates, serverVersion))
}

// answering is the gates and version of the server that answers kind's requests: for the
// aggregated kind on a server with one registered, the aggregated apiserver's.
func answering(kind, serverGates, serverVersion string) (gates, version string) {
	if v := AggregatedOf(serverGates); kind == KindAggregated && v != "" {
		return "", fmt.Sprintf("1.%d", Minor(v))
	}
	return serverGates, serverVersion
}

// SameVersion reports whether two spellings name one Kubernetes version: "v1.32.13" (what
// /version says) and "1.32.13" (what the harness's balancer names a server).
func SameVersion(a, b string) bool { return strings.TrimPrefix(a, "v") == strings.TrimPrefix(b, "v") }

// Minor is the minor version of a client-go ("v0.35.10": 35) or Kubernetes ("v1.37.2", "1.37.2":
// 37) version, 0 when version is not one.
func Minor(version string) int {
	var major, minor int
	if _, err := fmt.Sscanf(strings.TrimPrefix(version, "v"), "%d.%d", &major, &minor); err != nil {
		return 0
	}
	return minor
}

// ServerStreams says whether kube-apiserver's WatchList gate is on: as set in --feature-gates,
// else its default for the version (docs/upstream.md: alpha and off up to 1.31, beta and on in
// 1.32, off again in 1.33, on from 1.34).
func ServerStreams(serverGates, serverVersion string) bool {
	switch {
	case strings.Contains(serverGates, "WatchList=false"):
		return false
	case strings.Contains(serverGates, "WatchList=true"):
		return true
	}
	var major, minor int
	if _, err := fmt.Sscanf(strings.TrimPrefix(serverVersion, "v"), "%d.%d", &major, &minor); err != nil || major != 1 {
		return true // unknown: assume a current server
	}
	return minor == 32 || minor >= 34
}

// IsEndBookmark reports the BOOKMARK annotated k8s.io/initial-events-end: the end of a
// stream's initial events, the point an informer is in sync.
func IsEndBookmark(r Record) bool {
	return r.Kind == WatchEvent && r.Event == EventBookmark && r.Annotations[AnnotationInitialEventsEnd] == "true"
}

// IsPeriodicBookmark reports a bookmark without annotations, which the server sends at times
// of its choosing: it says nothing about what a client saw.
func IsPeriodicBookmark(r Record) bool {
	return r.Kind == WatchEvent && r.Event == EventBookmark && len(r.Annotations) == 0
}

// BlueprintMissing reports an initial-events-end bookmark without (or with an empty)
// kubernetes.io/initial-events-list-blueprint annotation.
func BlueprintMissing(r Record) bool {
	return IsEndBookmark(r) && r.Annotations[AnnotationBlueprint] == ""
}

// IsExpired reports an ERROR watch event carrying a 410 (the rv the watch asked for is too old).
func IsExpired(r Record) bool {
	return r.Kind == WatchEvent && r.Event == EventError && strings.Contains(r.Detail, "code=410")
}

// WriteKey names the watch event a write must cause: type, object and, when its record has
// it, rv. A watcher delivered the write when one of its events has the same key (EventKeys).
// A DELETE's record has no rv where the apiserver answered with a Status instead of the deleted
// object (ConfigMaps, custom resources: lab/mutator's Apply): its key has none either.
func WriteKey(w Record) string {
	k := EventFor(w.Event) + " " + w.Namespace + "/" + w.Name
	if w.RV != "" {
		k += "@" + w.RV
	}
	return k
}

// EventKeys are the keys of a watch event: without and with its rv, so that it matches the
// WriteKey of a write whether or not its record has the rv.
func EventKeys(ev Record) [2]string {
	k := ev.Event + " " + ev.Namespace + "/" + ev.Name
	return [2]string{k, k + "@" + ev.RV}
}

// Delivers reports whether watch event ev is the event write w must cause (see WriteKey).
func Delivers(w, ev Record) bool {
	k, want := EventKeys(ev), WriteKey(w)
	return ev.Kind == WatchEvent && (want == k[0] || want == k[1])
}

// InitialRequests are informer tag's HTTP requests before its SETUP synced record: the
// requests it made to sync (all of them, if it never synced).
func InitialRequests(recs []Record, tag string) []Record {
	var reqs []Record
	for _, r := range recs {
		if r.Tag != tag {
			continue
		}
		if r.Kind == Setup && r.Step == StepSynced {
			break
		}
		if r.Kind == HTTP {
			reqs = append(reqs, r)
		}
	}
	return reqs
}
