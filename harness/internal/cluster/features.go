package cluster

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"regexp"
	"strings"
	"time"

	"informer-lab/record"

	authorizationv1 "k8s.io/api/authorization/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// ListGates are the kube-apiserver feature gates a cluster's column names, when its /metrics
// says them: the one that decides whether it streams lists, and the one that decides whether it
// compresses them (docs/upstream.md §1).
var ListGates = []string{"WatchList", "WatchListCompression"}

// Features is what the server says of its streaming lists, and how it was learned.
type Features struct {
	// Gates is in --feature-gates form, "WatchList=true,WatchListCompression=true": what
	// record.ServerStreams reads to expect a handshake. "" when it could not be learned.
	Gates string
	How   string // in a few words: "from /metrics", "probed: 422", "probed: end bookmark", "unknown"
	// Detail says how in full, for the log.
	Detail string
}

// String says it in a log line: "WatchList=true, probed: … (why not /metrics)".
func (f Features) String() string {
	gates := f.Gates
	if gates == "" {
		gates = "unknown"
	}
	return gates + ", " + f.Detail
}

// Features learns whether the server streams lists: from its own /metrics when the user may
// read them (kubernetes_feature_enabled, one series per gate), else by asking for a streaming
// list of ConfigMaps in ns, as a reflector does: refused with 422 means the WatchList gate is
// off (docs/upstream.md §3.6), the initial-events-end bookmark means it is on.
func (c *Cluster) Features(ctx context.Context, ns string) Features {
	ok, err := c.may(ctx, nil, &authorizationv1.NonResourceAttributes{Verb: "get", Path: "/metrics"})
	var why string
	switch {
	case err != nil:
		why = err.Error()
	case !ok:
		why = fmt.Sprintf("user %s may not get /metrics", c.User)
	default:
		f, err := c.fromMetrics(ctx)
		if err == nil {
			return f
		}
		why = err.Error()
	}
	f := c.probe(ctx, ns)
	f.Detail += " (" + why + ")"
	return f
}

// fromMetrics reads the gates of ListGates from GET /metrics.
func (c *Cluster) fromMetrics(ctx context.Context) (Features, error) {
	body, err := c.cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return Features{}, fmt.Errorf("GET /metrics: %s", record.OneLine(err))
	}
	gates := GatesFromMetrics(body)
	var set []string
	for _, g := range ListGates {
		if on, ok := gates[g]; ok {
			set = append(set, fmt.Sprintf("%s=%t", g, on))
		}
	}
	if _, ok := gates["WatchList"]; !ok {
		return Features{}, fmt.Errorf("/metrics has no kubernetes_feature_enabled series for WatchList")
	}
	return Features{Gates: strings.Join(set, ","), How: "from /metrics",
		Detail: "read from GET /metrics, kubernetes_feature_enabled{name=...}"}, nil
}

// featureSeries is one line of kube-apiserver's kubernetes_feature_enabled metric, e.g.
// kubernetes_feature_enabled{name="WatchList",stage="BETA"} 1.
var featureSeries = regexp.MustCompile(`^kubernetes_feature_enabled\{([^}]*)\}\s+(\S+)`)

var labelName = regexp.MustCompile(`(?:^|,)name="([^"]*)"`)

// GatesFromMetrics reads every gate of a Prometheus text exposition's kubernetes_feature_enabled
// series: on for a value of 1.
func GatesFromMetrics(body []byte) map[string]bool {
	gates := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(make([]byte, 64*1024), 1024*1024)
	for sc.Scan() {
		m := featureSeries.FindSubmatch(sc.Bytes())
		if m == nil {
			continue
		}
		if n := labelName.FindSubmatch(m[1]); n != nil {
			gates[string(n[1])] = string(m[2]) == "1"
		}
	}
	return gates
}

// probe asks for a streaming list of ConfigMaps in ns, the reflector's request: a watch with
// sendInitialEvents=true, resourceVersionMatch=NotOlderThan and allowWatchBookmarks=true.
func (c *Cluster) probe(ctx context.Context, ns string) Features {
	ctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	const asked = "a streaming list of configmaps (sendInitialEvents=true, resourceVersionMatch=NotOlderThan, allowWatchBookmarks=true)"
	timeout, send := int64(10), true
	w, err := c.cs.CoreV1().ConfigMaps(ns).Watch(ctx, metav1.ListOptions{
		SendInitialEvents: &send, ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan,
		AllowWatchBookmarks: true, TimeoutSeconds: &timeout,
	})
	switch {
	case apierrors.IsInvalid(err):
		return Features{Gates: "WatchList=false", How: "probed: 422", Detail: "probed: " + asked + " in " + ns + " was refused with 422: " + record.OneLine(err)}
	case err != nil:
		return Features{How: "unknown", Detail: "probed: " + asked + " in " + ns + " failed: " + record.OneLine(err)}
	}
	defer w.Stop()
	for ev := range w.ResultChan() {
		switch ev.Type {
		case watch.Bookmark:
			if m, err := meta.Accessor(ev.Object); err == nil && m.GetAnnotations()[record.AnnotationInitialEventsEnd] == "true" {
				return Features{Gates: "WatchList=true", How: "probed: end bookmark",
					Detail: "probed: " + asked + " in " + ns + " ended its initial events with the " + record.AnnotationInitialEventsEnd + " bookmark"}
			}
		case watch.Error:
			return Features{How: "unknown", Detail: "probed: " + asked + " in " + ns + " got an ERROR event: " + record.OneLine(apierrors.FromObject(ev.Object))}
		}
	}
	return Features{How: "unknown", Detail: "probed: " + asked + " in " + ns + ": the stream ended without the " + record.AnnotationInitialEventsEnd + " bookmark"}
}
