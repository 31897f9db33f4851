// Package probe is make probe: for every resource a cluster serves that the user may list and
// watch, the one request client-go v0.35+ informers send to sync (a streaming list), bounded in
// time and objects, and a grade of what came back, read against the fault grid's patterns.
package probe

import (
	"fmt"
	"time"

	"informer-lab/record"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// Verdict is a resource's grade.
type Verdict string

const (
	Streams    Verdict = "streams"    // initial events, then the end bookmark with its annotation and an rv
	Refuses    Verdict = "refuses"    // an error client-go falls back from (to LIST→WATCH)
	Misbehaves Verdict = "misbehaves" // one of the fault grid's patterns: informers may never sync
	Unknown    Verdict = "unknown"    // the probe stopped first (its object cap), or could not ask
)

// Grade is what one resource's streaming list did.
type Grade struct {
	Resource   string  `json:"resource"` // plural.group, e.g. "configmaps", "flunders.wardle.example.com"
	Namespaced bool    `json:"namespaced"`
	Verdict    Verdict `json:"verdict"`
	// Pattern is the fault of the proxy's table (record.Fault*) whose behaviour the answer
	// matches, for Misbehaves and for a refusal the fault grid has ("refuse-watch-list=400").
	Pattern string        `json:"pattern,omitempty"`
	Detail  string        `json:"detail"`
	Objects int           `json:"objects"`
	Took    time.Duration `json:"tookNanos"`
	Bytes   int64         `json:"bytes"` // read from the connection until the grade was known
	// APIService is the aggregated APIService that serves the resource, "" for kube-apiserver's
	// own resources.
	APIService string `json:"apiService,omitempty"`
}

// stream is what the probe saw of one streaming list.
type stream struct {
	err     error         // the request's own error (an HTTP error status), nil once it streamed
	events  []watch.Event // in order, up to the end bookmark, the cap or the end
	ended   bool          // the server ended the stream
	timeout time.Duration // the probe's limit, when it ran out with the stream still open
	capped  int           // the probe stopped after this many objects (0: it did not)
}

// grade reads a stream as a reflector would: an end bookmark with its annotation and an rv
// completes the list; anything else is a pattern of the fault grid, or a refusal client-go
// falls back from.
func grade(s stream) Grade {
	if s.err != nil {
		return refusal(s.err)
	}
	var g Grade
	stripped := 0 // bookmarks without the annotation, before any end bookmark
	for _, ev := range s.events {
		switch ev.Type {
		case watch.Added:
			g.Objects++
		case watch.Bookmark:
			m, err := meta.Accessor(ev.Object)
			switch {
			case err != nil:
				return misbehaves(g, "", "a BOOKMARK without metadata")
			case m.GetAnnotations()[metav1.InitialEventsAnnotationKey] != "true":
				stripped++
			case m.GetResourceVersion() == "":
				return misbehaves(g, "", "the end bookmark has no resourceVersion: client-go cannot resume from it")
			default:
				g.Verdict, g.Detail = Streams, fmt.Sprintf("%d objects, end bookmark rv %s", g.Objects, m.GetResourceVersion())
				return g
			}
		case watch.Error:
			if err := apierrors.FromObject(ev.Object); err != nil {
				return errorEvent(g, err)
			}
		}
	}
	switch {
	case s.capped > 0:
		g.Verdict, g.Detail = Unknown, fmt.Sprintf("stopped after %d objects (-max-objects), before the end bookmark", s.capped)
	case stripped > 0:
		g = misbehaves(g, record.FaultStripAnnotations, fmt.Sprintf("%d BOOKMARK without the %s annotation, no end bookmark", stripped, metav1.InitialEventsAnnotationKey))
	case s.ended:
		g = misbehaves(g, record.FaultCutInitialStream, fmt.Sprintf("the stream ended after %d objects, before the end bookmark", g.Objects))
	default:
		g = misbehaves(g, record.FaultNoEndBookmark, fmt.Sprintf("%d objects, no end bookmark in %s (the same on the wire as a server that ignores sendInitialEvents)", g.Objects, s.timeout))
	}
	return g
}

func misbehaves(g Grade, pattern, detail string) Grade {
	g.Verdict, g.Pattern, g.Detail = Misbehaves, pattern, detail
	return g
}

// refusal grades the request's error: a 504 with the ResourceVersionTooLarge cause is retried
// for ever by client-go v0.32+ (the fault grid's too-large-rv); any other status it falls back
// from.
func refusal(err error) Grade {
	st, ok := err.(apierrors.APIStatus)
	if !ok {
		return Grade{Verdict: Unknown, Detail: "no answer: " + record.OneLine(err)}
	}
	s := st.Status()
	detail := fmt.Sprintf("%d %s: %s", s.Code, s.Reason, record.OneLine(err))
	if apierrors.HasStatusCause(err, metav1.CauseTypeResourceVersionTooLarge) {
		return Grade{Verdict: Misbehaves, Pattern: record.FaultTooLargeRV, Detail: detail}
	}
	return Grade{Verdict: Refuses, Pattern: fmt.Sprintf("%s=%d", record.FaultRefuseWatchList, s.Code), Detail: detail}
}

// errorEvent grades an ERROR event inside the stream: a too-large resourceVersion is the same
// pattern as its 504; a 410 is what client-go relists after; anything else ends the stream.
func errorEvent(g Grade, err error) Grade {
	if apierrors.HasStatusCause(err, metav1.CauseTypeResourceVersionTooLarge) {
		return misbehaves(g, record.FaultTooLargeRV, "an ERROR event: "+record.OneLine(err))
	}
	return misbehaves(g, "", fmt.Sprintf("an ERROR event after %d objects: %s", g.Objects, record.OneLine(err)))
}
