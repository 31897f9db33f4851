package proxy

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	labrecord "informer-lab/record"
	"io"
	"maps"
	"mime"
	"net/http"
	"net/url"
	"slices"
	"sort"
	"strconv"
	"strings"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/util/validation/field"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"
)

// The faults, by name (the record vocabulary's).
const (
	FaultNoEndBookmark           = labrecord.FaultNoEndBookmark
	FaultStripAnnotations        = labrecord.FaultStripAnnotations
	FaultIgnoreSendInitialEvents = labrecord.FaultIgnoreSendInitialEvents
	FaultCutInitialStream        = labrecord.FaultCutInitialStream
	FaultTooLargeRV              = labrecord.FaultTooLargeRV
	FaultRefuseWatchList         = labrecord.FaultRefuseWatchList
)

// Fault is one way a server or a proxy in front of it does not follow the streaming-list
// protocol. It applies only to a streaming list, a watch with sendInitialEvents=true (the
// reflector's, and the typed List() of client-go v0.31–v0.33 when it streams); every other
// request goes through the proxy untouched.
type Fault struct {
	Name string
	// Param is the fault's parameter: for cut-initial-stream the number of initial events
	// before the cut, for refuse-watch-list the HTTP status; 0 means the default. Faults
	// without a parameter take 0 only.
	Param int
}

// FaultInfo describes one fault for a usage text.
type FaultInfo struct {
	Name  string
	Usage string // e.g. "cut-initial-stream[=N]  N: 1..1000, default 2"
	Doc   string
	// The parameter, when the fault takes one: its default, and either the range Min..Max
	// or the values in Allowed.
	HasParam bool
	Default  int
	Min, Max int
	Allowed  []int
	// Grid are the parameters the grid of every fault plays (make matrix SCENARIOS=faults,
	// docs/faults.md), a scenario each; none: the fault once, with its default.
	Grid []int

	rewritesFrames bool // it edits the upstream response's watch frames (faultStream)
	answersLocally bool // it answers the request itself; nothing is forwarded (Proxy.answer)
}

// The HTTP statuses refuse-watch-list may answer with.
var refuseCodes = []int{400, 403, 404, 406, 410, 422, 500, 503}

var faultInfos = []FaultInfo{
	{
		Name:  FaultNoEndBookmark,
		Usage: FaultNoEndBookmark, rewritesFrames: true,
		Doc: "streams the initial ADDED events but drops the BOOKMARK annotated k8s.io/initial-events-end " +
			"(that frame alone; every later event and bookmark passes). As reported from an aggregated apiserver " +
			"(kubernetes/kubernetes#140890: \"accepted a WatchList request and sent initial events but never sent the " +
			"initial-events-end Bookmark\") and from Teleport's kube agent (gravitational/teleport#64188: \"correctly streams " +
			"all ADDED events, but the terminating BOOKMARK ... never reaches the client\"); an emulation on the wire of " +
			"those products' behaviour, not the products. client-go v0.31-v0.37 never syncs: each time the stream ends it " +
			"opens a new streaming watch, and never falls back to LIST",
	},
	{
		Name:  FaultStripAnnotations,
		Usage: FaultStripAnnotations, rewritesFrames: true,
		Doc: "sends the end bookmark with no metadata.annotations (no k8s.io/initial-events-end, no " +
			"kubernetes.io/initial-events-list-blueprint); its resourceVersion and every other frame pass unchanged. " +
			"An emulation on the wire of Antrea's aggregated controlplane apiserver (antrea-io/antrea#8123: its " +
			"\"dummy BOOKMARK ... does not include the Kubernetes watch-list annotation k8s.io/initial-events-end=true\") as " +
			"Rancher's Steve informers met it (rancher/rancher#55606: \"stalls when an aggregated API watch-list stream " +
			"omits initial-events-end bookmark annotation\"), not of those products; Antrea's bookmark also lacked its " +
			"resourceVersion (antrea-io/antrea#8124), which this fault keeps. client-go waits as with no-end-bookmark",
	},
	{
		Name:  FaultIgnoreSendInitialEvents,
		Usage: FaultIgnoreSendInitialEvents, rewritesFrames: true,
		Doc: "answers the streaming watch as a plain watch, with no error and no end bookmark, as a server older than " +
			"sendInitialEvents and resourceVersionMatch does: it ignores them as unknown parameters (derailed/k9s#4044, a 1.18 " +
			"server: \"silently ignores the unknown parameters, streams the initial ADDED events, but never sends the " +
			"BOOKMARK carrying the k8s.io/initial-events-end annotation\"; derailed/k9s#4186). The proxy removes both from the " +
			"query; the other parameters (allowWatchBookmarks, resourceVersion, timeouts) stay. kube-apiserver 1.32.13 with its " +
			"WatchList gate on defaults a watch whose resourceVersion is \"\" or \"0\" and that names neither parameter back " +
			"to sendInitialEvents=true, resourceVersionMatch=NotOlderThan (apimachinery metainternalversion.SetListOptionsDefaults, " +
			"from handlers/get.go ListResource), so it answers one synthetic ADDED per existing object from its watch cache, " +
			"then, bookmarks being allowed, the k8s.io/initial-events-end bookmark, then every change and unannotated " +
			"bookmarks (about every minute, and 2 s before the timeout); that end bookmark, which an old server never sends, " +
			"the proxy drops. (With the gate off the same watch is the legacy one: the same ADDED per object, then changes, " +
			"no end bookmark.) client-go never syncs. Servers 1.19-1.26 refuse resourceVersionMatch on a watch with a 422 " +
			"instead: see refuse-watch-list=422",
	},
	{
		Name:     FaultCutInitialStream,
		Usage:    FaultCutInitialStream + "[=N]  N: 1..1000, default 2",
		HasParam: true, Default: 2, Min: 1, Max: 1000, rewritesFrames: true,
		Doc: "ends the stream cleanly (END_STREAM, no error, no bookmark) right after the first N initial ADDED " +
			"events, on every streaming watch, so on every retry too; a list of fewer than N objects is cut where its " +
			"end bookmark would be (the bookmark is not sent). As kubernetes/kubernetes#129197 and #134837 report; the same " +
			"end as a watch cache force-closing a streaming list whose initial events fill its buffer (kubernetes/kubernetes#127553) " +
			"and as kubernetes/kubernetes#140902 puts it: \"sends some initial events, and then closes the stream without ever " +
			"sending the initial-events-end bookmark\". client-go discards what it got and opens a new streaming watch at " +
			"once, for ever: no backoff, and no client-side throttling, as its rest client does not rate limit a watch " +
			"(k8s.io/client-go@v0.31.14 rest/request.go: \"We specifically don't want to rate limit watches\") and " +
			"throttles only the retries of a request (k8s.io/client-go@v0.31.14 rest/with_retry.go: \"also be throttled " +
			"with the client-internal rate limiter.\")",
	},
	{
		Name:  FaultTooLargeRV,
		Usage: FaultTooLargeRV, answersLocally: true,
		Doc: "answers the streaming watch, without forwarding it, with HTTP 504 and kube-apiserver's own Status " +
			"(storage.NewTooLargeResourceVersionError: reason Timeout, \"Timeout: Too large resource version: R, current: C\", " +
			"cause ResourceVersionTooLarge, retryAfterSeconds 1 and a Retry-After: 1 header), in the content type the client " +
			"accepts. R is the request's resourceVersion when it is a number, else the collection's current one (a LIST " +
			"limit=1 upstream), C = R-1: a watch cache behind its storage. As milo-os/milo#671 reports for milo-apiserver " +
			"(\"504 Timeout: Too large resource version: 1280714733, current: 1280614472\"); an emulation on the wire of that " +
			"apiserver, not milo (kube-apiserver's own watch cache sends this Status as an ERROR event in a 200 stream). " +
			"client-go's rest client retries it (Retry-After) 10 times per stream. From v0.32 it then returns the decoded " +
			"Status (k8s.io/client-go@v0.32.13 rest/request.go: \"result := r.transformResponse(ctx, resp, req) if err := " +
			"result.Error(); err != nil {\"), whose ResourceVersionTooLarge cause makes the reflector stream again with " +
			"resourceVersion=\"\" (k8s.io/client-go@v0.32.13 tools/cache/reflector.go: \"if isExpiredError(err) || " +
			"isTooLargeResourceVersionError(err) {\"): never synced, no fallback. v0.31.14's Watch returns an error built from the " +
			"status code alone (k8s.io/client-go@v0.31.14 rest/request.go: \"if result := r.transformResponse(resp, req); " +
			"result.err != nil {\"), a Timeout without that cause, so its reflector falls back to LIST: the typed List() it " +
			"lists with streams first and is refused 11 times too (22 streams, 20 s), then LIST→WATCH",
	},
	{
		Name:     FaultRefuseWatchList,
		Usage:    FaultRefuseWatchList + "[=CODE]  CODE: 400, 403, 404, 406, 410, 422, 500 or 503, default 400",
		HasParam: true, Default: 400, Allowed: refuseCodes, answersLocally: true,
		// the statuses that decide between falling back and retrying
		Grid: []int{400, 406, 500},
		Doc: "refuses the streaming watch, without forwarding it, with that HTTP status and a Status of the matching " +
			"reason (422: kube-apiserver's own \"sendInitialEvents is forbidden for watch unless the WatchList feature gate " +
			"is enabled\"; otherwise \"sendInitialEvents is not supported for watch\"), in the content type the client " +
			"accepts. An emulation on the wire of calico-apiserver with projectcalico/calico#11604 (\"Return error upon " +
			"receiving WATCH/WATCHLIST request with sendInitialEvent opt ... to let client fall back to LIST/WATCH\"), not " +
			"Calico. client-go falls back to LIST then WATCH on every code but 410, on which it streams again (for ever)",
	},
}

// Faults lists every fault with its usage and doc.
func Faults() []FaultInfo {
	out := make([]FaultInfo, len(faultInfos))
	copy(out, faultInfos)
	for i := range out {
		out[i].Allowed = append([]int(nil), out[i].Allowed...)
		out[i].Grid = append([]int(nil), out[i].Grid...)
	}
	return out
}

func faultInfo(name string) (FaultInfo, bool) {
	for _, fi := range faultInfos {
		if fi.Name == name {
			return fi, true
		}
	}
	return FaultInfo{}, false
}

// faultList is every fault's usage on one line, for error messages.
func faultList() string {
	var s []string
	for _, fi := range faultInfos {
		s = append(s, strings.Join(strings.Fields(fi.Usage), " "))
	}
	return "faults: " + strings.Join(s, "; ")
}

// ParseFault parses "name" or "name=param", e.g. "cut-initial-stream=3", "refuse-watch-list=406".
// A fault's parameter left out takes its default.
func ParseFault(s string) (Fault, error) {
	name, param, hasParam := strings.Cut(s, "=")
	fi, ok := faultInfo(name)
	if !ok {
		if name == "" {
			return Fault{}, fmt.Errorf("no fault named in %q; %s", s, faultList())
		}
		return Fault{}, fmt.Errorf("unknown fault %q; %s", name, faultList())
	}
	f := Fault{Name: name}
	if hasParam {
		if !fi.HasParam {
			return Fault{}, fmt.Errorf("fault %s takes no parameter, got %q; %s", name, param, faultList())
		}
		n, err := strconv.Atoi(param)
		if err != nil {
			return Fault{}, fmt.Errorf("fault %s: parameter %q is not a whole number; %s", name, param, faultList())
		}
		f.Param = n
		if err := f.check(fi); err != nil {
			return Fault{}, err
		}
	}
	return f.withDefault(), nil
}

func (f Fault) check(fi FaultInfo) error {
	switch {
	case !fi.HasParam && f.Param != 0:
		return fmt.Errorf("fault %s takes no parameter, got %d; %s", f.Name, f.Param, faultList())
	case !fi.HasParam:
		return nil
	case fi.Allowed != nil:
		for _, v := range fi.Allowed {
			if v == f.Param {
				return nil
			}
		}
		return fmt.Errorf("fault %s: parameter %d is not one of %s; %s", f.Name, f.Param, joinInts(fi.Allowed), faultList())
	case f.Param < fi.Min || f.Param > fi.Max:
		return fmt.Errorf("fault %s: parameter %d is out of range %d..%d; %s", f.Name, f.Param, fi.Min, fi.Max, faultList())
	}
	return nil
}

func joinInts(v []int) string {
	s := make([]string, len(v))
	for i, n := range v {
		s[i] = strconv.Itoa(n)
	}
	return strings.Join(s, ", ")
}

func (f Fault) withDefault() Fault {
	if fi, ok := faultInfo(f.Name); ok && fi.HasParam && f.Param == 0 {
		f.Param = fi.Default
	}
	return f
}

// validate returns f with its default parameter filled in, or why it is not a fault.
func (f Fault) validate() (Fault, error) {
	fi, ok := faultInfo(f.Name)
	if !ok {
		return Fault{}, fmt.Errorf("unknown fault %q; %s", f.Name, faultList())
	}
	f = f.withDefault()
	return f, f.check(fi)
}

// String is the fault as ParseFault reads it: "no-end-bookmark", "cut-initial-stream=2".
func (f Fault) String() string {
	if fi, ok := faultInfo(f.Name); ok && fi.HasParam {
		return fmt.Sprintf("%s=%d", f.Name, f.withDefault().Param)
	}
	return f.Name
}

// Doc says what the fault does on the wire and which report it follows.
func (f Fault) Doc() string {
	if fi, ok := faultInfo(f.Name); ok {
		return fi.Doc
	}
	return "unknown fault"
}

// rewritesFrames: the fault edits the upstream response's watch frames.
func (f Fault) rewritesFrames() bool {
	fi, _ := faultInfo(f.Name)
	return fi.rewritesFrames
}

// answersLocally: the fault answers the request itself; nothing is forwarded.
func (f Fault) answersLocally() bool {
	fi, _ := faultInfo(f.Name)
	return fi.answersLocally
}

// isStreamingList: a watch with sendInitialEvents=true, the only request a fault applies to.
func isStreamingList(r *http.Request) bool {
	if !isWatch(r) {
		return false
	}
	b, err := strconv.ParseBool(r.URL.Query().Get("sendInitialEvents"))
	return err == nil && b
}

// removeQueryParams drops every occurrence of the keys from a raw query (the others keep their
// order and encoding) and returns the new query and the removed "key=value" pairs.
func removeQueryParams(raw string, keys ...string) (string, []string) {
	var out, removed []string
	for _, kv := range strings.Split(raw, "&") {
		if kv == "" {
			continue
		}
		k, _, _ := strings.Cut(kv, "=")
		uk, err := url.QueryUnescape(k)
		drop := false
		for _, key := range keys {
			if err == nil && uk == key {
				drop = true
			}
		}
		if drop {
			if u, err := url.QueryUnescape(kv); err == nil {
				kv = u
			}
			removed = append(removed, kv)
			continue
		}
		out = append(out, kv)
	}
	return strings.Join(out, "&"), removed
}

// --- Statuses the proxy answers with itself ---

// tooLargeRVStatus is kube-apiserver's storage.NewTooLargeResourceVersionError(requested,
// current, 1) (k8s.io/apiserver@v0.32.13 pkg/storage/errors.go), as its handlers write it.
func tooLargeRVStatus(requested, current uint64) *metav1.Status {
	err := apierrors.NewTimeoutError(fmt.Sprintf("Too large resource version: %d, current: %d", requested, current), 1)
	err.ErrStatus.Details.Causes = []metav1.StatusCause{{
		Type:    metav1.CauseTypeResourceVersionTooLarge,
		Message: "Too large resource version",
	}}
	return statusOf(err)
}

// refuseStatus is the Status refuse-watch-list answers with for code, for a watch of gr.
func refuseStatus(code int, gr schema.GroupResource) *metav1.Status {
	const msg = "sendInitialEvents is not supported for watch"
	var err *apierrors.StatusError
	switch code {
	case http.StatusBadRequest:
		err = apierrors.NewBadRequest(msg)
	case http.StatusForbidden:
		err = apierrors.NewForbidden(gr, "", errors.New(msg))
	case http.StatusNotFound:
		err = apierrors.NewNotFound(gr, "")
	case http.StatusNotAcceptable:
		err = &apierrors.StatusError{ErrStatus: metav1.Status{
			Status: metav1.StatusFailure, Code: http.StatusNotAcceptable, Reason: metav1.StatusReasonNotAcceptable, Message: msg,
		}}
	case http.StatusGone:
		err = apierrors.NewGone(msg)
	case http.StatusUnprocessableEntity:
		// What kube-apiserver answers with its WatchList gate off
		// (k8s.io/apimachinery@v0.32.13 pkg/apis/meta/internalversion/validation, validateWatchOptions;
		// k8s.io/apiserver@v0.32.13 pkg/endpoints/handlers/get.go, ListResource).
		err = apierrors.NewInvalid(schema.GroupKind{Group: metav1.GroupName, Kind: "ListOptions"}, "", field.ErrorList{
			field.Forbidden(field.NewPath("sendInitialEvents"), "sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled"),
		})
	case http.StatusInternalServerError:
		err = apierrors.NewInternalError(errors.New(msg))
	case http.StatusServiceUnavailable:
		err = apierrors.NewServiceUnavailable(msg)
	default:
		err = apierrors.NewGenericServerResponse(code, "watch", gr, "", msg, 0, false)
	}
	return statusOf(err)
}

func statusOf(err *apierrors.StatusError) *metav1.Status {
	st := err.ErrStatus
	st.Kind, st.APIVersion = "Status", "v1"
	return &st
}

// groupResource reads the group and resource of an API path: /api/v1/namespaces/ns/configmaps,
// /apis/apps/v1/deployments, /api/v1/watch/namespaces/ns/configmaps.
func groupResource(path string) schema.GroupResource {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	var group string
	var rest []string
	switch {
	case len(parts) >= 2 && parts[0] == "api":
		rest = parts[2:]
	case len(parts) >= 3 && parts[0] == "apis":
		group, rest = parts[1], parts[3:]
	default:
		return schema.GroupResource{}
	}
	if len(rest) > 0 && rest[0] == "watch" {
		rest = rest[1:]
	}
	if len(rest) >= 3 && rest[0] == "namespaces" {
		rest = rest[2:]
	}
	if len(rest) == 0 {
		return schema.GroupResource{Group: group}
	}
	return schema.GroupResource{Group: group, Resource: rest[0]}
}

// listPath is the collection path of a watch path (the old /watch/ segment removed).
func listPath(path string) string {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	i := -1
	switch {
	case len(parts) > 2 && parts[0] == "api" && parts[2] == "watch":
		i = 2
	case len(parts) > 3 && parts[0] == "apis" && parts[3] == "watch":
		i = 3
	}
	if i < 0 {
		return path
	}
	return "/" + strings.Join(append(parts[:i:i], parts[i+1:]...), "/")
}

// errorSerializer picks, from the request's Accept, the serializer kube-apiserver would answer
// an error in: JSON or protobuf (JSON for */*, or when nothing else matches).
func errorSerializer(accept string) runtime.SerializerInfo {
	type entry struct {
		media string
		q     float64
	}
	var entries []entry
	for _, part := range strings.Split(accept, ",") {
		mt, params, err := mime.ParseMediaType(strings.TrimSpace(part))
		if err != nil {
			continue
		}
		q := 1.0
		if v, ok := params["q"]; ok {
			if f, err := strconv.ParseFloat(v, 64); err == nil {
				q = f
			}
		}
		entries = append(entries, entry{mt, q})
	}
	sort.SliceStable(entries, func(i, j int) bool { return entries[i].q > entries[j].q })
	supported := scheme.Codecs.SupportedMediaTypes()
	for _, e := range entries {
		if e.q <= 0 {
			continue
		}
		media := e.media
		if media == "*/*" || media == "application/*" {
			media = runtime.ContentTypeJSON
		}
		if media == runtime.ContentTypeJSON || media == runtime.ContentTypeProtobuf {
			if info, ok := runtime.SerializerInfoForMediaType(supported, media); ok {
				return info
			}
		}
	}
	info, _ := runtime.SerializerInfoForMediaType(supported, runtime.ContentTypeJSON)
	return info
}

// writeStatus answers with st, encoded as kube-apiserver encodes an error
// (responsewriters.ErrorNegotiated): in the accepted content type, Retry-After when the Status
// asks for one.
func writeStatus(w http.ResponseWriter, r *http.Request, st *metav1.Status) error {
	info := errorSerializer(r.Header.Get("Accept"))
	body, err := runtime.Encode(scheme.Codecs.EncoderForVersion(info.Serializer, schema.GroupVersion{Version: "v1"}), st)
	if err != nil {
		http.Error(w, "informer-lab proxy: encoding a Status: "+err.Error(), http.StatusInternalServerError)
		return err
	}
	h := w.Header()
	h.Set("Content-Type", info.MediaType)
	h.Set("Cache-Control", "no-cache, private")
	if st.Details != nil && st.Details.RetryAfterSeconds > 0 {
		h.Set("Retry-After", strconv.Itoa(int(st.Details.RetryAfterSeconds)))
	}
	w.WriteHeader(int(st.Code))
	_, err = w.Write(body)
	return err
}

// answer serves a fault that answers the request itself.
func (p *Proxy) answer(w http.ResponseWriter, r *http.Request, f Fault) {
	var st *metav1.Status
	switch f.Name {
	case FaultTooLargeRV:
		requested, err := strconv.ParseUint(r.URL.Query().Get("resourceVersion"), 10, 64)
		if err != nil || requested == 0 {
			requested = max(p.collectionRV(r.Context(), r), 1)
		}
		st = tooLargeRVStatus(requested, requested-1)
	case FaultRefuseWatchList:
		st = refuseStatus(f.Param, groupResource(r.URL.Path))
	default:
		return
	}
	if err := writeStatus(w, r, st); err != nil {
		p.opts.Log("proxy: fault %s: answering %s: %v", f, requestLine(r), err)
		return
	}
	p.opts.Log("proxy: fault %s: answered %s with %d %s %q (not forwarded)", f, requestLine(r), st.Code, st.Reason, st.Message)
}

// collectionRV is the collection's current resourceVersion, read from the apiserver with a
// LIST limit=1 (a consistent read); 0 if that fails. A failure is logged.
func (p *Proxy) collectionRV(ctx context.Context, r *http.Request) uint64 {
	u := *p.upstream
	u.Path = strings.TrimRight(u.Path, "/") + listPath(r.URL.Path)
	u.RawQuery = "limit=1"
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return 0
	}
	req.Header.Set("Accept", runtime.ContentTypeJSON)
	resp, err := p.rt.RoundTrip(req)
	if err != nil {
		p.opts.Log("proxy: fault %s: reading the current resourceVersion (GET %s?limit=1): %v", FaultTooLargeRV, listPath(r.URL.Path), err)
		return 0
	}
	defer resp.Body.Close()
	var list struct {
		Metadata struct {
			ResourceVersion string `json:"resourceVersion"`
		} `json:"metadata"`
	}
	body, _ := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if resp.StatusCode != http.StatusOK || json.Unmarshal(body, &list) != nil {
		p.opts.Log("proxy: fault %s: reading the current resourceVersion (GET %s?limit=1): %s", FaultTooLargeRV, listPath(r.URL.Path), resp.Status)
		return 0
	}
	rv, _ := strconv.ParseUint(list.Metadata.ResourceVersion, 10, 64)
	return rv
}

// --- Watch frame rewriting ---

// faultStream is a watch response body with a frame-rewriting fault applied, frame by frame
// (frames), for the content types of client-go's scheme, which the fault can re-encode.
type faultStream struct {
	fault Fault
	what  string // the request, for the log
	log   func(string, ...any)
	onCut func() // called when the fault ends the stream, if set

	frames  *frames
	out     bytes.Buffer
	added   int  // initial ADDED events so far
	applied bool // the fault has done its work: every further frame passes
	cut     bool
	err     error
}

// newFaultStream wraps body; ok is false when the content type is not one client-go's scheme
// streams (the body is then left alone).
func newFaultStream(body io.ReadCloser, contentType string, f Fault, what string, log func(string, ...any)) (*faultStream, bool) {
	fr, ok := newFrames(body, contentType, scheme.Codecs.SupportedMediaTypes())
	if !ok {
		return nil, false
	}
	return &faultStream{fault: f, what: what, log: log, frames: fr}, true
}

func (s *faultStream) Read(p []byte) (int, error) {
	for s.out.Len() == 0 {
		if s.cut {
			return 0, io.EOF
		}
		if s.err != nil {
			return 0, s.err
		}
		s.err = s.next()
	}
	return s.out.Read(p)
}

func (s *faultStream) Close() error { return s.frames.Close() }

// next reads one frame and puts what goes to the client into s.out.
func (s *faultStream) next() error {
	ev, frame, err := s.frames.next()
	switch {
	case frame == nil && errors.Is(err, io.EOF):
		return io.EOF
	case frame == nil:
		s.log("proxy: fault %s: %s: reading a watch frame: %v; the stream is ended here", s.fault, s.what, err)
		return io.EOF
	case err != nil:
		s.log("proxy: fault %s: %s: a frame the proxy cannot decode (%v) is passed as it is, and so is the rest of the stream", s.fault, s.what, err)
		s.applied = true
	}
	if m, ok := endBookmark(ev); ok && !s.applied {
		s.endBookmark(ev, frame, m)
		return nil
	}
	s.frames.wire(&s.out, frame)
	if ev.Type == string(watch.Added) && !s.applied {
		s.added++
		if s.fault.Name == FaultCutInitialStream && s.added >= s.fault.Param {
			s.log("proxy: fault %s: cut %s after %d initial ADDED events, before the end bookmark (clean end of stream)", s.fault, s.what, s.added)
			s.stop()
		}
	}
	return nil
}

// endBookmark applies the fault to the end bookmark, whose frame is not in s.out yet.
func (s *faultStream) endBookmark(ev metav1.WatchEvent, frame []byte, m metav1.ObjectMeta) {
	s.applied = true
	switch s.fault.Name {
	case FaultNoEndBookmark:
		s.log("proxy: fault %s: dropped the BOOKMARK rv=%s annotated %s=true of %s (after %d ADDED); later frames pass", s.fault, m.ResourceVersion, metav1.InitialEventsAnnotationKey, s.what, s.added)
	case FaultIgnoreSendInitialEvents:
		s.log("proxy: fault %s: dropped the BOOKMARK rv=%s annotated %s=true that the apiserver's defaulting of the plain watch added to %s (after %d ADDED); later frames pass", s.fault, m.ResourceVersion, metav1.InitialEventsAnnotationKey, s.what, s.added)
	case FaultCutInitialStream:
		s.log("proxy: fault %s: cut %s at its end bookmark rv=%s (not sent), after only %d initial ADDED events (clean end of stream)", s.fault, s.what, m.ResourceVersion, s.added)
		s.stop()
	case FaultStripAnnotations:
		s.stripAnnotations(ev, frame, m)
	default:
		s.frames.wire(&s.out, frame)
	}
}

// stripAnnotations sends the end bookmark without its annotations, re-encoded as the apiserver
// encodes a bookmark.
func (s *faultStream) stripAnnotations(ev metav1.WatchEvent, frame []byte, m metav1.ObjectMeta) {
	obj, gvk, err := s.decodeObject(ev.Object.Raw)
	if err == nil {
		err = s.encodeStripped(obj, gvk, ev.Type)
	}
	if err != nil {
		s.log("proxy: fault %s: %s: re-encoding the end bookmark: %v; passed as it is", s.fault, s.what, err)
		s.frames.wire(&s.out, frame)
		return
	}
	keys := slices.Sorted(maps.Keys(m.Annotations))
	s.log("proxy: fault %s: removed the annotations %s of the end BOOKMARK rv=%s of %s (after %d ADDED)", s.fault, strings.Join(keys, ", "), m.ResourceVersion, s.what, s.added)
}

func (s *faultStream) encodeStripped(obj runtime.Object, gvk schema.GroupVersionKind, typ string) error {
	acc, err := meta.Accessor(obj)
	if err != nil {
		return err
	}
	acc.SetAnnotations(nil)
	raw, err := s.encodeObject(obj, gvk)
	if err != nil {
		return err
	}
	return s.encodeEvent(metav1.WatchEvent{Type: typ, Object: runtime.RawExtension{Raw: raw}})
}

// stop ends the stream after what is in s.out, and lets the upstream stream go.
func (s *faultStream) stop() {
	s.cut = true
	s.frames.Close()
	if s.onCut != nil {
		s.onCut()
	}
}

func (s *faultStream) decodeObject(raw []byte) (runtime.Object, schema.GroupVersionKind, error) {
	obj, gvk, err := scheme.Codecs.UniversalDeserializer().Decode(raw, nil, nil)
	if err == nil && gvk != nil {
		return obj, *gvk, nil
	}
	if s.frames.info.MediaType == runtime.ContentTypeJSON { // a type client-go's scheme does not know
		u := &unstructured.Unstructured{}
		if _, gvk, uerr := unstructured.UnstructuredJSONScheme.Decode(raw, nil, u); uerr == nil {
			return u, *gvk, nil
		}
	}
	if err == nil {
		err = errors.New("no kind")
	}
	return nil, schema.GroupVersionKind{}, err
}

func (s *faultStream) encodeObject(obj runtime.Object, gvk schema.GroupVersionKind) ([]byte, error) {
	var raw []byte
	var err error
	if u, ok := obj.(*unstructured.Unstructured); ok {
		raw, err = u.MarshalJSON()
	} else {
		raw, err = runtime.Encode(scheme.Codecs.EncoderForVersion(s.frames.info.Serializer, gvk.GroupVersion()), obj)
	}
	return bytes.TrimRight(raw, "\n"), err
}

// encodeEvent writes ev as kube-apiserver writes a watch event: the stream serializer through the
// framer (k8s.io/apiserver pkg/endpoints/handlers/watch.go).
func (s *faultStream) encodeEvent(ev metav1.WatchEvent) error {
	var buf bytes.Buffer
	stream := s.frames.info.StreamSerializer
	if err := streaming.NewEncoder(stream.Framer.NewFrameWriter(&buf), stream.Serializer).Encode(&ev); err != nil {
		return err
	}
	s.out.Write(buf.Bytes())
	return nil
}
