package findings

import (
	"fmt"
	"slices"
	"strings"

	"informer-lab/compare/matrix"
	"informer-lab/record"
)

// Cause is why a symptom happens: what the code does, the source line that decides it, and
// what to do about it. Each is knowledge, read in the source at the tag it quotes.
type Cause struct {
	Text  string
	Quote Quote // the zero Quote: the cause is not established
	Fixes []fix
}

// Quote is an excerpt of one or more consecutive source lines of a module at a tag, as
// docs/upstream.md cites source: it must be in the file, whitespace aside, without a double quote.
type Quote struct {
	Module, Version, Path, Excerpt string
}

// String is the quote in the marker shape the docs' source-quote check reads:
// (module@version path: "excerpt").
func (q Quote) String() string {
	return fmt.Sprintf("(%s@%s %s: \"%s\")", q.Module, q.Version, q.Path, q.Excerpt)
}

// Where the quotes are.
const (
	clientGo    = "k8s.io/client-go"
	apiserver   = "k8s.io/apiserver"
	apimachine  = "k8s.io/apimachinery"
	reflectorGo = "tools/cache/reflector.go"
	requestGo   = "rest/request.go"
)

// bookmarkNeedsAsking is why a streaming list that does not ask for bookmarks never ends.
var bookmarkNeedsAsking = Quote{apiserver, "v0.37.2", "pkg/storage/cacher/cacher.go",
	"return opts.SendInitialEvents != nil && *opts.SendInitialEvents && opts.Predicate.AllowWatchBookmarks"}

// causes is the table, by the keys causeKeys gives a hit.
var causes = map[string]Cause{
	"end-bookmark": {"client-go's reflector takes a streaming list as complete only at the BOOKMARK annotated k8s.io/initial-events-end: until then it reads on, and when the stream ends without it, it opens a new one. Against a server that never sends that bookmark (it drops the bookmark, strips its annotations, or ignores sendInitialEvents and answers a plain watch) the informer stays unsynced for as long as it runs, and never falls back to LIST.",
		Quote{clientGo, "v0.35.10", reflectorGo, "if watchListBookmarkReceived { break }"}, []fix{fixGateOff}},
	"cut-stream": {"A streaming list that ends before its end bookmark is thrown away and a new one opened at once: the reflector's loop has no backoff for it, and client-go's rest client does not rate limit watches, so each informer streams again as fast as the server answers.",
		Quote{clientGo, "v0.35.10", requestGo, "We specifically don't want to rate limit watches"}, []fix{fixGateOff}},
	"rv-ahead": {"A 504 whose Status carries the ResourceVersionTooLarge cause tells the reflector its resourceVersion is ahead of the server: after its rest client's Retry-After retries it streams again from the current state, for ever, and never falls back to LIST.",
		Quote{clientGo, "v0.35.10", reflectorGo, "if isExpiredError(err) || isTooLargeResourceVersionError(err) {"}, []fix{fixGateOff}},
	"rv-ahead-v031": {"client-go v0.31's rest client turns the 504 into an error built from its status code alone, without the Status's ResourceVersionTooLarge cause, so its reflector falls back to LIST once the retries are spent; that LIST is the typed List(), which streams first and is refused as often.",
		Quote{clientGo, "v0.31.14", requestGo, "if result := r.transformResponse(resp, req); result.err != nil {"}, []fix{fixGateOff}},
	"refused": {"Any error of a streaming list but a 410, a too-large resourceVersion and the retriable ones (connection refused, 429) makes the reflector fall back to LIST, then WATCH: the refused stream is one request more at every informer start.",
		Quote{clientGo, "v0.35.10", reflectorGo, "fallbackToList = true"}, []fix{fixGateOff}},
	"upgrade-mixed": {"During an upgrade across a change of kube-apiserver's WatchList default (on in 1.32, off in 1.33, on from 1.34), a balancer sends each request to either version: an informer whose streaming list meets the server with the gate off gets a 422 and lists, one request more, while the next one streams. Every relist asks to stream again, whichever server answered the last one.",
		Quote{clientGo, "v0.37.2", reflectorGo, "fallbackToList := !r.useWatchList"}, []fix{fixGateOff, fixStreamingServer}},
	"watchlist-off": {"kube-apiserver with its WatchList gate off (1.31 and older, 1.33 by default, or set off) refuses sendInitialEvents with a 422 before any watch starts, and client-go lists instead.",
		Quote{apimachine, "v0.33.13", "pkg/apis/meta/internalversion/validation/validation.go", "sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled"}, []fix{fixGateOff, fixStreamingServer}},
	"aggregated-watchlist-off": {"An aggregated apiserver answers its group's requests itself: kube-apiserver's aggregator forwards the streaming list as the client sent it, and an aggregated apiserver built on k8s.io/apiserver with its WatchList gate off (v0.33 by default, as sample-apiserver 0.33.5 here) refuses sendInitialEvents with a 422, whatever kube-apiserver's version, and client-go lists instead.",
		Quote{"k8s.io/kube-aggregator", "v0.34.4", "pkg/apiserver/handler_proxy.go", "location.RawQuery = req.URL.Query().Encode()"}, []fix{fixGateOff, fixStreamingAggregated}},
	"typed-list-streams": {"client-go v0.31 to v0.33's typed List() streams too when the gate is on, and lists on any error of its stream. The reflector's own fallback LIST is that List(): a refused stream is refused once more before the LIST.",
		Quote{clientGo, "v0.33.13", "gentype/type.go", "} else if hasWatchListOptionsPrepared { result, err := l.watchList(ctx, watchListOptions)"}, []fix{fixGateOff, fixNewer("client-go %s or later: its typed List() never streams.")}},
	"blueprint": {"client-go v0.32 and v0.33's streaming List() requires the kubernetes.io/initial-events-list-blueprint annotation on the end bookmark, which only kube-apiserver 1.32 and 1.33 send: against a server that streams without it, the List() streams, rejects the answer and lists.",
		Quote{clientGo, "v0.33.13", requestGo, "if len(base64EncodedInitialEventsListBlueprint) == 0 {"}, []fix{fixGateOff, fixNewer("client-go %s or later: its typed List() never streams.")}},
	"list-waits": {"client-go v0.31 to v0.33's streaming List() returns at the end bookmark, at an error, or when its context ends: against a server that never sends the bookmark, a List() without a deadline waits until the server ends the stream.",
		Quote{clientGo, "v0.33.13", requestGo, "case <-ctx.Done(): return WatchListResult{err: ctx.Err()}"}, []fix{fixGateOff, fixNewer("client-go %s or later: its typed List() never streams.")}},
	"rest-retries": {"client-go's rest client retries a 504 that carries Retry-After, up to 10 times, before the List() sees the error and lists.",
		Quote{clientGo, "v0.33.13", requestGo, "maxRetries: 10,"}, []fix{fixGateOff, fixNewer("client-go %s or later: its typed List() never streams.")}},
	"no-bookmarks-asked": {"A hand-written cache.ListWatch whose WatchFunc passes on only the options it knows drops sendInitialEvents, resourceVersionMatch and allowWatchBookmarks: the reflector still waits for the end-of-initial-events bookmark, which kube-apiserver sends only to a watch that asked for initial events and bookmarks both.",
		bookmarkNeedsAsking, []fix{fixGateOff, fixOptOut}},
	"optout-before-v035": {"client-go reads IsWatchListSemanticsUnSupported from v0.35 on: an older reflector with the gate on streams through the hand-written ListWatch all the same, and never syncs as without the opt-out.",
		Quote{clientGo, "v0.35.10", reflectorGo, "if r.useWatchList && watchlist.DoesClientNotSupportWatchListSemantics(lw) {"}, []fix{fixGateOff, fixNewer("client-go %s or later, whose reflector reads the opt-out.")}},
	"controller-runtime-bookmarks": {"controller-runtime's cache builds a bare cache.ListWatch whose watch function sets allowWatchBookmarks from the cache's EnableWatchBookmarks, false by default in controller-runtime v0.19 (the lab's pin beside client-go v0.31) and true from v0.20: its streaming list asks for no bookmarks, and kube-apiserver sends the end-of-initial-events bookmark only to a watch that asked for them.",
		bookmarkNeedsAsking, []fix{fixGateOff, fixNewer("controller-runtime v0.20 or later (in these labs, beside client-go %s), whose cache asks for bookmarks by default.")}},
	"watchlist-compression": {"kube-apiserver 1.37 gzips a streaming list for a client that accepts gzip (WatchListCompression, beta and on by default), each flush of the stream compressed and closed on its own.",
		Quote{apiserver, "v0.37.2", "pkg/endpoints/handlers/watch.go", "w.writer = &perFlushGzipWriter{delegateRW: w.delegateRW, flusher: w.flusher}"}, []fix{fixGateOff, fixNoCompression}},
	"cpu-not-established": {"Not established: these runs measure it on a server that sends streaming lists uncompressed, but which code of kube-apiserver spends the extra CPU here is not known to this project.",
		Quote{}, []fix{fixGateOff}},
	"memory-not-established": {"Not established: these runs measure it, but which code of kube-apiserver makes its peak higher for a streaming list than for LIST→WATCH here is not known to this project (with WatchListCompression=false it is as high).",
		Quote{}, []fix{fixGateOff}},
}

// causeKeys are the entries of the table that explain a hit, by its symptom and then its fault,
// its informer kind, its client-go and its server; "" where the table has none.
func causeKeys(h matrix.Hit) []string {
	s := h.Setup
	switch h.Symptom {
	case matrix.NeverSyncs:
		return []string{neverSyncsCause(s)}
	case matrix.HotLoop:
		return []string{"cut-stream"}
	case matrix.ListHangs:
		return []string{"list-waits"}
	case matrix.SyncsLate:
		return []string{refusalCause(s)}
	case matrix.ExtraRequests:
		if record.Minor(s.ClientGo) <= 33 {
			return []string{refusalCause(s), "typed-list-streams"}
		}
		return []string{refusalCause(s)}
	case matrix.ListExtra:
		if key := listRefusalCause(s); key != "" {
			return []string{"typed-list-streams", key}
		}
		return []string{"typed-list-streams"}
	case matrix.MoreCPU:
		if compresses(s.Server) {
			return []string{"watchlist-compression"}
		}
		return []string{"cpu-not-established"}
	case matrix.MoreMemory:
		return []string{"memory-not-established"}
	}
	return []string{""}
}

// neverSyncsCause is why a setup's informers never synced: its fault, else its kind.
func neverSyncsCause(s matrix.Setup) string {
	switch {
	case s.Fault == record.FaultNoEndBookmark || s.Fault == record.FaultStripAnnotations || s.Fault == record.FaultIgnoreSendInitialEvents:
		return "end-bookmark"
	case s.Fault == record.FaultCutInitialStream:
		return "cut-stream"
	case s.Fault == record.FaultTooLargeRV:
		return "rv-ahead"
	case s.Fault == "" && s.Kind == record.KindCR:
		return "controller-runtime-bookmarks"
	case s.Fault == "" && s.Kind == record.KindCustomListWatchOptOut && record.Minor(s.ClientGo) < 35:
		return "optout-before-v035"
	case s.Fault == "" && (s.Kind == record.KindCustomListWatch || s.Kind == record.KindCustomListWatchOptOut):
		return "no-bookmarks-asked"
	}
	return ""
}

// refusalCause is why a setup's streaming list failed before it fell back: its fault, else its
// server's WatchList gate, else (a streaming server) the List()'s blueprint check.
func refusalCause(s matrix.Setup) string {
	switch {
	case s.Fault == record.FaultTooLargeRV && record.Minor(s.ClientGo) == 31:
		return "rv-ahead-v031"
	case s.Fault == record.FaultTooLargeRV:
		return "rv-ahead"
	case s.Fault == record.FaultCutInitialStream:
		return "cut-stream"
	case strings.HasPrefix(s.Fault, record.FaultRefuseWatchList):
		return "refused"
	case s.Fault == "" && !s.ServerStreams && s.Kind == record.KindAggregated:
		return "aggregated-watchlist-off"
	case s.Fault == "" && s.Upgrade != "" && !s.ServerStreams:
		return "upgrade-mixed"
	case s.Fault == "" && !s.ServerStreams:
		return "watchlist-off"
	case s.Fault == "" && record.Minor(s.ClientGo) >= 32 && record.Minor(s.ClientGo) <= 33:
		return "blueprint"
	}
	return ""
}

// listRefusalCause is why a setup's streaming List() failed, where the table says more than
// typed-list-streams does: its server's WatchList gate, the blueprint check, the rest client's
// retries of a 504; "" otherwise.
func listRefusalCause(s matrix.Setup) string {
	switch {
	case s.Fault == record.FaultTooLargeRV:
		return "rest-retries"
	case s.Fault == "":
		return refusalCause(s)
	}
	return ""
}

// CauseOf is one cause of a finding and the setups it explains.
type CauseOf struct {
	Key string // "" for hits the table has no cause for
	Cause
	Setups []matrix.Setup
}

// causesOf are the causes of a finding's hits, those that explain the most setups first.
func causesOf(g matrix.Group) []CauseOf {
	var out []CauseOf
	for _, h := range g.Hits {
		for _, key := range causeKeys(h) {
			i := indexOf(out, key)
			if i < 0 {
				out = append(out, CauseOf{Key: key, Cause: causes[key]})
				i = len(out) - 1
			}
			if !slices.Contains(out[i].Setups, h.Setup) {
				out[i].Setups = append(out[i].Setups, h.Setup)
			}
		}
	}
	slices.SortStableFunc(out, func(a, b CauseOf) int { return len(b.Setups) - len(a.Setups) })
	return out
}

func indexOf(cs []CauseOf, key string) int {
	for i, c := range cs {
		if c.Key == key {
			return i
		}
	}
	return -1
}
