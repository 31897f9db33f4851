package proxy

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"informer-lab/lab/controlplane"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	"k8s.io/apimachinery/pkg/watch"
	clientfeatures "k8s.io/client-go/features"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/kubernetes/scheme"
	restwatch "k8s.io/client-go/rest/watch"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
	"k8s.io/utils/ptr"
)

// --- ParseFault, Faults ---

func TestParseFault(t *testing.T) {
	good := map[string]Fault{
		"no-end-bookmark":            {Name: FaultNoEndBookmark},
		"strip-annotations":          {Name: FaultStripAnnotations},
		"ignore-send-initial-events": {Name: FaultIgnoreSendInitialEvents},
		"cut-initial-stream":         {Name: FaultCutInitialStream, Param: 2},
		"cut-initial-stream=1":       {Name: FaultCutInitialStream, Param: 1},
		"cut-initial-stream=1000":    {Name: FaultCutInitialStream, Param: 1000},
		"too-large-rv":               {Name: FaultTooLargeRV},
		"refuse-watch-list":          {Name: FaultRefuseWatchList, Param: 400},
		"refuse-watch-list=406":      {Name: FaultRefuseWatchList, Param: 406},
		"refuse-watch-list=410":      {Name: FaultRefuseWatchList, Param: 410},
	}
	for in, want := range good {
		got, err := ParseFault(in)
		if err != nil || got != want {
			t.Errorf("ParseFault(%q) = %+v, %v; want %+v", in, got, err, want)
		}
		if again, err := ParseFault(got.String()); err != nil || again != got {
			t.Errorf("ParseFault(%q.String() = %q) = %+v, %v", in, got.String(), again, err)
		}
	}
	bad := map[string]string{
		"":                          "no fault named",
		"=2":                        "no fault named",
		"nope":                      `unknown fault "nope"`,
		"No-End-Bookmark":           `unknown fault "No-End-Bookmark"`,
		" no-end-bookmark":          `unknown fault " no-end-bookmark"`,
		"no-end-bookmark=1":         `fault no-end-bookmark takes no parameter, got "1"`,
		"too-large-rv=":             `fault too-large-rv takes no parameter, got ""`,
		"cut-initial-stream=0":      "fault cut-initial-stream: parameter 0 is out of range 1..1000",
		"cut-initial-stream=1001":   "fault cut-initial-stream: parameter 1001 is out of range 1..1000",
		"cut-initial-stream=-3":     "fault cut-initial-stream: parameter -3 is out of range 1..1000",
		"cut-initial-stream=":       `fault cut-initial-stream: parameter "" is not a whole number`,
		"cut-initial-stream=two":    `fault cut-initial-stream: parameter "two" is not a whole number`,
		"cut-initial-stream=2.5":    `fault cut-initial-stream: parameter "2.5" is not a whole number`,
		"refuse-watch-list=200":     "fault refuse-watch-list: parameter 200 is not one of 400, 403, 404, 406, 410, 422, 500, 503",
		"refuse-watch-list=418":     "fault refuse-watch-list: parameter 418 is not one of 400, 403, 404, 406, 410, 422, 500, 503",
		"refuse-watch-list=422=422": `fault refuse-watch-list: parameter "422=422" is not a whole number`,
	}
	for in, want := range bad {
		_, err := ParseFault(in)
		if err == nil {
			t.Errorf("ParseFault(%q) succeeded", in)
			continue
		}
		msg := err.Error()
		if !strings.HasPrefix(msg, want) {
			t.Errorf("ParseFault(%q): %q, want it to start with %q", in, msg, want)
		}
		if strings.Contains(msg, "\n") {
			t.Errorf("ParseFault(%q): the error is not one line: %q", in, msg)
		}
		for _, fi := range Faults() {
			if !strings.Contains(msg, fi.Name) {
				t.Errorf("ParseFault(%q): the error does not list %s: %q", in, fi.Name, msg)
			}
		}
	}
	_, err := ParseFault("cut-initial-stream=0")
	t.Logf("e.g. %v", err)
	// Options.Fault as a struct: the same checks, the default filled in.
	for _, c := range []struct {
		f    Fault
		want string
	}{{Fault{Name: "cut-initial-stream"}, ""}, {Fault{Name: "refuse-watch-list", Param: 401}, "not one of"}, {Fault{Name: "no-end-bookmark", Param: 2}, "takes no parameter"}, {Fault{Name: "x"}, "unknown fault"}} {
		got, err := c.f.validate()
		switch {
		case c.want == "" && (err != nil || got.Param != 2):
			t.Errorf("%+v.validate() = %+v, %v", c.f, got, err)
		case c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)):
			t.Errorf("%+v.validate(): %v, want %q", c.f, err, c.want)
		}
	}
}

func TestFaultsDocs(t *testing.T) {
	names := map[string]bool{}
	for _, fi := range Faults() {
		names[fi.Name] = true
		f := Fault{Name: fi.Name}
		if f.Doc() != fi.Doc || len(fi.Doc) < 100 || !strings.HasPrefix(fi.Usage, fi.Name) {
			t.Errorf("%s: doc %q, usage %q", fi.Name, fi.Doc, fi.Usage)
		}
		if fi.HasParam != (fi.Default != 0) {
			t.Errorf("%s: HasParam %v, Default %d", fi.Name, fi.HasParam, fi.Default)
		}
	}
	for _, n := range []string{FaultNoEndBookmark, FaultStripAnnotations, FaultIgnoreSendInitialEvents, FaultCutInitialStream, FaultTooLargeRV, FaultRefuseWatchList} {
		if !names[n] {
			t.Errorf("Faults() lacks %s", n)
		}
	}
	// The products' faults say they are emulations.
	for _, n := range []string{FaultNoEndBookmark, FaultStripAnnotations, FaultTooLargeRV, FaultRefuseWatchList} {
		if !strings.Contains((Fault{Name: n}).Doc(), "emulation on the wire") {
			t.Errorf("%s: the doc does not say it is an emulation of the product", n)
		}
	}
}

// --- The request side ---

func TestFaultRequestHelpers(t *testing.T) {
	q := "allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&sendInitialEvents=true&timeout=7m44s&timeoutSeconds=464&watch=true"
	got, removed := removeQueryParams(q, "sendInitialEvents", "resourceVersionMatch")
	if got != "allowWatchBookmarks=true&timeout=7m44s&timeoutSeconds=464&watch=true" || strings.Join(removed, ",") != "resourceVersionMatch=NotOlderThan,sendInitialEvents=true" {
		t.Errorf("removeQueryParams: %q, %q", got, removed)
	}
	for path, want := range map[string]string{
		"/api/v1/namespaces/default/configmaps":       "/configmaps",
		"/api/v1/configmaps":                          "/configmaps",
		"/api/v1/watch/namespaces/default/configmaps": "/configmaps",
		"/apis/apps/v1/namespaces/x/deployments":      "apps/deployments",
		"/apis/apps/v1/watch/deployments":             "apps/deployments",
	} {
		gr := groupResource(path)
		if gr.Group+"/"+gr.Resource != want {
			t.Errorf("groupResource(%s) = %+v, want %s", path, gr, want)
		}
	}
	for path, want := range map[string]string{
		"/api/v1/watch/namespaces/default/configmaps": "/api/v1/namespaces/default/configmaps",
		"/apis/apps/v1/watch/deployments":             "/apis/apps/v1/deployments",
		"/api/v1/namespaces/watch/configmaps":         "/api/v1/namespaces/watch/configmaps",
		"/api/v1/configmaps":                          "/api/v1/configmaps",
	} {
		if got := listPath(path); got != want {
			t.Errorf("listPath(%s) = %s, want %s", path, got, want)
		}
	}
	for q, want := range map[string]bool{
		"watch=true&sendInitialEvents=true": true, "watch=1&sendInitialEvents=1": true, "watch=true": false,
		"watch=true&sendInitialEvents=false": false, "sendInitialEvents=true": false, "limit=500&resourceVersion=0": false,
	} {
		r, _ := http.NewRequest(http.MethodGet, "https://x/api/v1/configmaps?"+q, nil)
		if isStreamingList(r) != want {
			t.Errorf("isStreamingList(%s) = %v", q, !want)
		}
	}
	for accept, want := range map[string]string{
		"application/vnd.kubernetes.protobuf,application/json":       "application/vnd.kubernetes.protobuf",
		"application/json, */*":                                      "application/json",
		"application/json;q=0.5,application/vnd.kubernetes.protobuf": "application/vnd.kubernetes.protobuf",
		"*/*":                   "application/json",
		"":                      "application/json",
		"application/yaml":      "application/json",
		"application/cbor, */*": "application/json",
	} {
		if got := errorSerializer(accept).MediaType; got != want {
			t.Errorf("errorSerializer(%q) = %s, want %s", accept, got, want)
		}
	}
}

// --- The Statuses the proxy answers with ---

func TestFaultStatuses(t *testing.T) {
	// too-large-rv, in JSON: byte for byte what kube-apiserver writes (as quoted in
	// kubernetes-client/java#2190), with its Retry-After.
	rec := httptest.NewRecorder()
	r, _ := http.NewRequest(http.MethodGet, "https://x/api/v1/configmaps?watch=true&sendInitialEvents=true", nil)
	r.Header.Set("Accept", "application/json, */*")
	if err := writeStatus(rec, r, tooLargeRVStatus(5399771, 5399139)); err != nil {
		t.Fatal(err)
	}
	want := `{"kind":"Status","apiVersion":"v1","metadata":{},"status":"Failure","message":"Timeout: Too large resource version: 5399771, current: 5399139","reason":"Timeout","details":{"causes":[{"reason":"ResourceVersionTooLarge","message":"Too large resource version"}],"retryAfterSeconds":1},"code":504}` + "\n"
	if rec.Code != 504 || rec.Body.String() != want || rec.Header().Get("Content-Type") != "application/json" || rec.Header().Get("Retry-After") != "1" {
		t.Errorf("too-large-rv JSON: %d %q %v\nwant 504 %q", rec.Code, rec.Body.String(), rec.Header(), want)
	}

	type answer struct {
		code   int
		reason metav1.StatusReason
		msg    string
	}
	cases := []struct {
		name string
		st   *metav1.Status
		want answer
	}{
		{"too-large-rv", tooLargeRVStatus(58, 57), answer{504, metav1.StatusReasonTimeout, "Timeout: Too large resource version: 58, current: 57"}},
	}
	gr := schema.GroupResource{Resource: "configmaps"}
	for code, a := range map[int]answer{
		400: {400, metav1.StatusReasonBadRequest, "sendInitialEvents is not supported for watch"},
		403: {403, metav1.StatusReasonForbidden, "configmaps is forbidden: sendInitialEvents is not supported for watch"},
		404: {404, metav1.StatusReasonNotFound, `configmaps "" not found`},
		406: {406, metav1.StatusReasonNotAcceptable, "sendInitialEvents is not supported for watch"},
		410: {410, metav1.StatusReasonGone, "sendInitialEvents is not supported for watch"},
		422: {422, metav1.StatusReasonInvalid, `ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled`},
		500: {500, metav1.StatusReasonInternalError, "Internal error occurred: sendInitialEvents is not supported for watch"},
		503: {503, metav1.StatusReasonServiceUnavailable, "sendInitialEvents is not supported for watch"},
	} {
		cases = append(cases, struct {
			name string
			st   *metav1.Status
			want answer
		}{fmt.Sprintf("refuse-watch-list=%d", code), refuseStatus(code, gr), a})
	}
	for _, c := range cases {
		for _, accept := range []string{"application/json", "application/vnd.kubernetes.protobuf,application/json"} {
			rec := httptest.NewRecorder()
			r.Header.Set("Accept", accept)
			if err := writeStatus(rec, r, c.st); err != nil {
				t.Fatal(err)
			}
			ct := rec.Header().Get("Content-Type")
			wantCT := strings.Split(accept, ",")[0]
			if ct != wantCT || rec.Code != c.want.code {
				t.Errorf("%s (%s): %d %s, want %d %s", c.name, accept, rec.Code, ct, c.want.code, wantCT)
			}
			if strings.Contains(ct, "protobuf") && !bytes.HasPrefix(rec.Body.Bytes(), []byte("k8s\x00")) {
				t.Errorf("%s: protobuf body without the k8s magic: %q", c.name, rec.Body.Bytes())
			}
			obj, _, err := scheme.Codecs.UniversalDeserializer().Decode(rec.Body.Bytes(), nil, nil)
			st, ok := obj.(*metav1.Status)
			if err != nil || !ok {
				t.Errorf("%s (%s): %v, %T", c.name, accept, err, obj)
				continue
			}
			// what client-go makes of it
			cerr := apierrors.FromObject(st)
			if st.Code != int32(c.want.code) || apierrors.ReasonForError(cerr) != c.want.reason || st.Message != c.want.msg || st.Status != metav1.StatusFailure {
				t.Errorf("%s (%s): code %d reason %s message %q; want %+v", c.name, accept, st.Code, st.Reason, st.Message, c.want)
			}
			if c.name == "too-large-rv" && !(apierrors.IsTimeout(cerr) && apierrors.HasStatusCause(cerr, metav1.CauseTypeResourceVersionTooLarge) && st.Details.RetryAfterSeconds == 1) {
				t.Errorf("too-large-rv (%s): %+v is not a too-large-resource-version error to client-go", accept, st)
			}
		}
	}
}

// --- Frame rewriting, on the recorded streams ---

type recorded struct {
	file, contentType string
	data              []byte
	frames            [][]byte // as on the wire
}

func loadRecordings(t *testing.T) []recorded {
	t.Helper()
	var out []recorded
	for _, rec := range recordings {
		data, err := os.ReadFile(rec.file)
		if err != nil {
			t.Fatalf("%v (record with go test -run TestRecordWatchStreams -record)", err)
		}
		out = append(out, recorded{file: rec.file, contentType: rec.contentType, data: data, frames: splitFrames(t, rec.contentType, data)})
	}
	return out
}

// splitFrames cuts a watch body into its frames as on the wire, independently of the proxy's
// code: newline-terminated JSON, or a 4-byte big-endian length and the protobuf WatchEvent.
func splitFrames(t *testing.T, contentType string, data []byte) [][]byte {
	t.Helper()
	var frames [][]byte
	for len(data) > 0 {
		var n int
		if strings.HasPrefix(contentType, "application/json") {
			n = bytes.IndexByte(data, '\n') + 1
			if n == 0 {
				t.Fatalf("JSON stream without a final newline: %q", data)
			}
		} else {
			if len(data) < 4 {
				t.Fatalf("truncated protobuf frame")
			}
			n = 4 + int(binary.BigEndian.Uint32(data))
		}
		frames = append(frames, data[:n])
		data = data[n:]
	}
	return frames
}

type event struct {
	Type        string
	Name, RV    string
	Annotations map[string]string
}

func (e event) String() string {
	if len(e.Annotations) > 0 {
		return fmt.Sprintf("%s %s rv=%s %v", e.Type, e.Name, e.RV, e.Annotations)
	}
	return fmt.Sprintf("%s %s rv=%s", e.Type, e.Name, e.RV)
}

// decodeStream decodes a watch body the way client-go does (its rest watch decoder on
// apimachinery's framer and stream serializer); it fails on anything client-go would not read.
func decodeStream(t *testing.T, contentType string, data []byte) []event {
	t.Helper()
	info, ok := runtime.SerializerInfoForMediaType(scheme.Codecs.SupportedMediaTypes(), strings.Split(contentType, ";")[0])
	if !ok {
		t.Fatalf("no serializer for %s", contentType)
	}
	dec := restwatch.NewDecoder(streaming.NewDecoder(info.StreamSerializer.Framer.NewFrameReader(io.NopCloser(bytes.NewReader(data))), info.StreamSerializer.Serializer), scheme.Codecs.UniversalDeserializer())
	var evs []event
	for {
		typ, obj, err := dec.Decode()
		if errors.Is(err, io.EOF) {
			return evs
		}
		if err != nil {
			t.Fatalf("decoding the stream as client-go does: %v", err)
		}
		m, err := meta.Accessor(obj)
		if err != nil {
			t.Fatalf("%s event with %T", typ, obj)
		}
		evs = append(evs, event{Type: string(typ), Name: m.GetName(), RV: m.GetResourceVersion(), Annotations: m.GetAnnotations()})
	}
}

// rewrite runs a fault's frame rewriting over a recorded body; it returns what the client
// would read and the proxy's log lines.
func rewrite(t *testing.T, f Fault, rec recorded) ([]byte, []string) {
	t.Helper()
	var mu sync.Mutex
	var logged []string
	logf := func(format string, args ...any) {
		mu.Lock()
		defer mu.Unlock()
		logged = append(logged, fmt.Sprintf(format, args...))
	}
	fs, ok := newFaultStream(io.NopCloser(bytes.NewReader(rec.data)), rec.contentType, f, "GET /api/v1/namespaces/default/configmaps?sendInitialEvents=true&watch=true", logf)
	if !ok {
		t.Fatalf("no fault stream for %s", rec.contentType)
	}
	out, err := io.ReadAll(fs)
	if err != nil {
		t.Fatalf("%s over %s: %v", f, rec.file, err)
	}
	fs.Close()
	return out, logged
}

func endBookmarkIndex(t *testing.T, evs []event) int {
	t.Helper()
	for i, e := range evs {
		if e.Type == "BOOKMARK" && e.Annotations[metav1.InitialEventsAnnotationKey] == "true" {
			return i
		}
	}
	t.Fatalf("no end bookmark in %v", evs)
	return -1
}

// The recordings hold what the tests expect: 3 ADDED, the end bookmark with both annotations,
// a later ADDED, plain bookmarks.
func TestRecordings(t *testing.T) {
	for _, rec := range loadRecordings(t) {
		evs := decodeStream(t, rec.contentType, rec.data)
		t.Logf("%s (%d bytes, %d frames): %v", rec.file, len(rec.data), len(rec.frames), evs)
		if len(evs) != len(rec.frames) {
			t.Errorf("%s: %d events, %d frames", rec.file, len(evs), len(rec.frames))
		}
		end := endBookmarkIndex(t, evs)
		var names []string
		for _, e := range evs[:end] {
			if e.Type != "ADDED" {
				t.Errorf("%s: %v before the end bookmark", rec.file, e)
			}
			names = append(names, e.Name)
		}
		if strings.Join(names, ",") != strings.Join(recordedNames, ",") {
			t.Errorf("%s: initial events %v, want %v", rec.file, names, recordedNames)
		}
		if _, ok := evs[end].Annotations[metav1.InitialEventsListBlueprintAnnotationKey]; !ok {
			t.Errorf("%s: the end bookmark has no blueprint: %v", rec.file, evs[end])
		}
		if len(evs) < end+3 || evs[end+1].Name != recordedLater || evs[end+2].Type != "BOOKMARK" {
			t.Errorf("%s: after the end bookmark: %v, want ADDED %s and a bookmark", rec.file, evs[end+1:], recordedLater)
		}
		if bytes.Contains(rec.data, []byte("Bearer")) || bytes.Contains(rec.data, []byte("PRIVATE KEY")) || bytes.Contains(rec.data, []byte(Token)) {
			t.Errorf("%s: credentials in a recording", rec.file)
		}
	}
}

// no-end-bookmark, and ignore-send-initial-events on what kube-apiserver 1.32.13 answers the
// plain watch it forwards (the same stream: see TestFaultsEndToEnd), drop the end bookmark's
// frame and nothing else.
func TestFaultNoEndBookmarkFrames(t *testing.T) {
	for _, name := range []string{FaultNoEndBookmark, FaultIgnoreSendInitialEvents} {
		t.Run(name, func(t *testing.T) { testDropEndBookmark(t, Fault{Name: name}) })
	}
}

func testDropEndBookmark(t *testing.T, f Fault) {
	for _, rec := range loadRecordings(t) {
		in := decodeStream(t, rec.contentType, rec.data)
		end := endBookmarkIndex(t, in)
		out, logged := rewrite(t, f, rec)
		// every other frame, byte for byte, in order
		want := bytes.Join(append(append([][]byte{}, rec.frames[:end]...), rec.frames[end+1:]...), nil)
		if !bytes.Equal(out, want) {
			t.Errorf("%s: the output is not the recording without the end bookmark's frame", rec.file)
		}
		evs := decodeStream(t, rec.contentType, out)
		t.Logf("%s: %v", rec.file, evs)
		added := 0
		for _, e := range evs {
			if _, ok := e.Annotations[metav1.InitialEventsAnnotationKey]; ok {
				t.Errorf("%s: a frame with the initial-events-end annotation: %v", rec.file, e)
			}
			if e.Type == "ADDED" {
				added++
			}
		}
		if added != len(recordedNames)+1 || len(evs) != len(in)-1 {
			t.Errorf("%s: %d ADDED, %d events; want all %d ADDED (%d initial, 1 later) and every frame but one", rec.file, added, len(evs), len(recordedNames)+1, len(recordedNames))
		}
		if len(logged) != 1 || !strings.Contains(logged[0], "dropped the BOOKMARK rv="+in[end].RV) || !strings.Contains(logged[0], "after 3 ADDED") {
			t.Errorf("%s: logged %q", rec.file, logged)
		}
	}
}

func TestFaultStripAnnotationsFrames(t *testing.T) {
	for _, rec := range loadRecordings(t) {
		in := decodeStream(t, rec.contentType, rec.data)
		end := endBookmarkIndex(t, in)
		out, logged := rewrite(t, Fault{Name: FaultStripAnnotations}, rec)
		frames := splitFrames(t, rec.contentType, out)
		if len(frames) != len(rec.frames) {
			t.Fatalf("%s: %d frames out of %d", rec.file, len(frames), len(rec.frames))
		}
		for i := range frames {
			if i != end && !bytes.Equal(frames[i], rec.frames[i]) {
				t.Errorf("%s: frame %d changed", rec.file, i)
			}
		}
		evs := decodeStream(t, rec.contentType, out)
		t.Logf("%s: %v", rec.file, evs)
		if b := evs[end]; b.Type != "BOOKMARK" || b.RV != in[end].RV || len(b.Annotations) != 0 {
			t.Errorf("%s: the end bookmark became %v, want a BOOKMARK rv=%s without annotations", rec.file, b, in[end].RV)
		}
		// Encoded as the apiserver encodes a bookmark without annotations: the recording's
		// later plain bookmark, with the end bookmark's rv.
		plain := rec.frames[len(rec.frames)-1]
		if evs[len(evs)-1].RV != in[len(in)-1].RV || len(in[end].RV) != len(in[len(in)-1].RV) {
			t.Fatalf("%s: unexpected rvs", rec.file)
		}
		wantFrame := bytes.Replace(plain, []byte(in[len(in)-1].RV), []byte(in[end].RV), 1)
		if !bytes.Equal(frames[end], wantFrame) {
			t.Errorf("%s: the stripped bookmark\n%q\nis not encoded like the apiserver's plain bookmark\n%q", rec.file, frames[end], wantFrame)
		}
		if len(logged) != 1 || !strings.Contains(logged[0], "removed the annotations k8s.io/initial-events-end, kubernetes.io/initial-events-list-blueprint of the end BOOKMARK rv="+in[end].RV) {
			t.Errorf("%s: logged %q", rec.file, logged)
		}
	}
}

func TestFaultCutInitialStreamFrames(t *testing.T) {
	for _, rec := range loadRecordings(t) {
		for _, n := range []int{1, 2, 3, 4, 1000} {
			out, logged := rewrite(t, Fault{Name: FaultCutInitialStream, Param: n}, rec)
			keep := min(n, len(recordedNames))
			if want := bytes.Join(rec.frames[:keep], nil); !bytes.Equal(out, want) {
				t.Errorf("%s, cut-initial-stream=%d: the output is not the first %d frames", rec.file, n, keep)
			}
			evs := decodeStream(t, rec.contentType, out)
			if len(evs) != keep {
				t.Errorf("%s, cut-initial-stream=%d: %v, want exactly %d ADDED then EOF", rec.file, n, evs, keep)
			}
			for _, e := range evs {
				if e.Type != "ADDED" {
					t.Errorf("%s, cut-initial-stream=%d: %v", rec.file, n, e)
				}
			}
			if len(logged) != 1 || !strings.Contains(logged[0], "cut GET") || !strings.Contains(logged[0], strconv.Itoa(keep)+" initial ADDED") {
				t.Errorf("%s, cut-initial-stream=%d: logged %q", rec.file, n, logged)
			}
			if n == 2 {
				t.Logf("%s, cut-initial-stream=2: %v then EOF; %s", rec.file, evs, logged[0])
			}
		}
	}
}

// A gzip-encoded upstream body (kube-apiserver 1.37 compresses a streaming list for a client
// that accepts gzip) is decompressed, rewritten, and sent without Content-Encoding.
func TestFaultGzipUpstreamBody(t *testing.T) {
	rec := loadRecordings(t)[1]
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write(rec.data)
	zw.Close()
	var logged []string
	p := &Proxy{opts: Options{Log: func(f string, a ...any) { logged = append(logged, fmt.Sprintf(f, a...)) }}}
	end := &watchEnd{what: "GET /api/v1/configmaps?sendInitialEvents=true&watch=true", fault: &Fault{Name: FaultNoEndBookmark}}
	req, _ := http.NewRequestWithContext(context.WithValue(context.Background(), ctxKey{}, end), http.MethodGet, "https://x/api/v1/configmaps", nil)
	resp := &http.Response{StatusCode: 200, Status: "200 OK", Proto: "HTTP/2.0", Request: req, Body: io.NopCloser(&gz),
		Header: http.Header{"Content-Type": {rec.contentType}, "Content-Encoding": {"gzip"}, "Content-Length": {strconv.Itoa(gz.Len())}}}
	if err := p.modifyResponse(resp); err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	if resp.Header.Get("Content-Encoding") != "" || resp.Header.Get("Content-Length") != "" || resp.Header.Get("Content-Type") != rec.contentType {
		t.Errorf("headers after the rewrite: %v", resp.Header)
	}
	evs := decodeStream(t, rec.contentType, out)
	if len(evs) != len(rec.frames)-1 || len(logged) != 1 {
		t.Errorf("%v; logged %q", evs, logged)
	}
}

// --- End to end: the real proxy, a real apiserver, client-go ---

// TestFaultsEndToEnd runs each fault through the proxy against one envtest apiserver, with
// client-go watches in protobuf and in JSON, each fault in a namespace of its own. In each, the
// fault applies to the streaming list, and a plain LIST and a plain watch through the same
// proxy are untouched.
func TestFaultsEndToEnd(t *testing.T) {
	cp, admin, _ := sharedServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	env := &e2e{cp: cp, admin: admin, ctx: ctx}

	t.Run(FaultNoEndBookmark, func(t *testing.T) {
		fx := env.setup(t, Fault{Name: FaultNoEndBookmark}, 3)
		fx.checkStreamsWithoutBookmark(t)
		fx.waitLog(t, "dropped the BOOKMARK", 2)
		fx.checkUntouched(t)

		// An informer streaming (gate on) never syncs.
		inf := startStreamingInformer(t, ctx, fx.clients[0].cs, fx.ns)
		time.Sleep(3 * time.Second)
		if inf.HasSynced() {
			t.Errorf("an informer synced through %s", fx.fault)
		}
		fx.waitLog(t, "dropped the BOOKMARK", 3)
		t.Logf("informer (WatchListClient on) after 3 s: synced=%v; its requests: %q", inf.HasSynced(), fx.wire.grep("/namespaces/"+fx.ns+"/configmaps?"))
	})

	t.Run(FaultStripAnnotations, func(t *testing.T) {
		fx := env.setup(t, Fault{Name: FaultStripAnnotations}, 3)
		for _, c := range fx.clients {
			names := fx.names(t)
			w := fx.streamingWatch(t, c)
			evs := collect(w, 5*time.Second, func(evs []event) bool { return len(bookmarks(evs)) > 0 })
			b := bookmarks(evs)
			if len(b) != 1 || b[0].RV == "" || len(b[0].Annotations) != 0 || evs[len(evs)-1].Type != "BOOKMARK" {
				t.Errorf("%s: %v, want the initial ADDED then one BOOKMARK with an rv and no annotations", c.enc, evs)
			}
			fx.checkInitial(t, c, evs[:len(evs)-1], names)
			fx.checkLaterPasses(t, c, w)
		}
		fx.waitLog(t, "removed the annotations k8s.io/initial-events-end, kubernetes.io/initial-events-list-blueprint", 2)
		fx.checkUntouched(t)
	})

	t.Run(FaultIgnoreSendInitialEvents, func(t *testing.T) {
		fx := env.setup(t, Fault{Name: FaultIgnoreSendInitialEvents}, 3)
		// What kube-apiserver 1.32.13 itself answers to the plain watch the proxy forwards
		// (resourceVersion unset, bookmarks allowed): its WatchList gate on, it defaults the watch
		// to a streaming list, so one ADDED per object, then the end bookmark, the one the proxy
		// drops.
		names := fx.names(t)
		direct, err := fx.admin.CoreV1().ConfigMaps(fx.ns).Watch(ctx, metav1.ListOptions{AllowWatchBookmarks: true, TimeoutSeconds: ptr.To[int64](30)})
		if err != nil {
			t.Fatal(err)
		}
		evs := collect(direct, 5*time.Second, func(evs []event) bool { return len(bookmarks(evs)) > 0 })
		direct.Stop()
		t.Logf("the apiserver's own answer to the plain watch: %v", evs)
		if len(evs) != len(names)+1 || evs[len(evs)-1].Annotations[metav1.InitialEventsAnnotationKey] != "true" {
			t.Errorf("the apiserver's own answer to a plain watch: %v, want %d ADDED then the end bookmark", evs, len(names))
		}
		// kube-apiserver's answer to a plain watch with resourceVersion unset: one ADDED per
		// object, and no bookmark
		fx.checkStreamsWithoutBookmark(t)
		fx.waitLog(t, "as a plain watch (removed resourceVersionMatch=NotOlderThan, sendInitialEvents=true)", 2)
		fx.waitLog(t, "that the apiserver's defaulting of the plain watch added", 2)
		fx.checkUntouched(t)
	})

	t.Run(FaultCutInitialStream+"=2", func(t *testing.T) {
		fx := env.setup(t, Fault{Name: FaultCutInitialStream, Param: 2}, 3)
		for _, c := range fx.clients {
			for try := 1; try <= 2; try++ { // and again on the retry
				w := fx.streamingWatch(t, c)
				evs := collect(w, 5*time.Second, nil)
				closed := isClosed(w)
				t.Logf("%s, watch %d: %v, then closed=%v", c.enc, try, evs, closed)
				if len(evs) != 2 || evs[0].Type != "ADDED" || evs[1].Type != "ADDED" || !closed {
					t.Errorf("%s, watch %d: %v, closed=%v; want exactly 2 ADDED, then the end of the stream", c.enc, try, evs, closed)
				}
				w.Stop()
			}
		}
		fx.waitLog(t, "after 2 initial ADDED events, before the end bookmark", 4)
		fx.waitLog(t, "cut by the proxy (fault cut-initial-stream=2)", 4)
		fx.checkUntouched(t)
	})

	t.Run(FaultTooLargeRV, func(t *testing.T) {
		fx := env.setup(t, Fault{Name: FaultTooLargeRV}, 2)
		re := regexp.MustCompile(`^Timeout: Too large resource version: (\d+), current: (\d+)$`)
		for _, c := range fx.clients {
			list, err := fx.admin.CoreV1().ConfigMaps(fx.ns).List(ctx, metav1.ListOptions{})
			if err != nil {
				t.Fatal(err)
			}
			// the rest client's own watch, without its retries of a 5xx with Retry-After
			_, err = c.cs.CoreV1().RESTClient().Get().Namespace(fx.ns).Resource("configmaps").
				VersionedParams(streamingOptions(), scheme.ParameterCodec).MaxRetries(0).Watch(ctx)
			var se *apierrors.StatusError
			if !errors.As(err, &se) {
				t.Fatalf("%s: %v, want a Status error", c.enc, err)
			}
			m := re.FindStringSubmatch(se.ErrStatus.Message)
			t.Logf("%s: %d %s %q (collection rv %s)", c.enc, se.ErrStatus.Code, se.ErrStatus.Reason, se.ErrStatus.Message, list.ResourceVersion)
			if se.ErrStatus.Code != 504 || !apierrors.IsTimeout(err) || !apierrors.HasStatusCause(err, metav1.CauseTypeResourceVersionTooLarge) || m == nil {
				t.Errorf("%s: %+v, want 504 Timeout, Too large resource version, cause ResourceVersionTooLarge", c.enc, se.ErrStatus)
			} else if r, _ := strconv.Atoi(m[1]); r < atoi(t, list.ResourceVersion) || m[2] != strconv.Itoa(r-1) {
				// The proxy reads the collection's rv after this LIST: the apiserver's own
				// writes (leases) may have moved it on since, never back.
				t.Errorf("%s: %q, want requested = the collection's rv (%s or later), current one less", c.enc, se.ErrStatus.Message, list.ResourceVersion)
			}
		}
		fx.waitLog(t, "answered GET /api/v1/namespaces/"+fx.ns+"/configmaps?", 2)
		if got := fx.wire.grep("sendInitialEvents=true"); len(got) != 2 || !strings.Contains(got[0], "-> 504 HTTP/2.0 application/vnd.kubernetes.protobuf") || !strings.Contains(got[1], "-> 504 HTTP/2.0 application/json") {
			t.Errorf("the client's streaming requests: %q", got)
		}
		fx.checkUntouched(t)
	})

	for _, code := range refuseCodes {
		t.Run(fmt.Sprintf("%s=%d", FaultRefuseWatchList, code), func(t *testing.T) {
			fx := env.setup(t, Fault{Name: FaultRefuseWatchList, Param: code}, 2)
			want := refuseStatus(code, schema.GroupResource{Resource: "configmaps"})
			for _, c := range fx.clients {
				_, err := fx.streamingWatchErr(c)
				var se *apierrors.StatusError
				if !errors.As(err, &se) || se.ErrStatus.Code != int32(code) || se.ErrStatus.Reason != want.Reason || se.ErrStatus.Message != want.Message {
					t.Errorf("%s: %v, want %d %s %q", c.enc, err, code, want.Reason, want.Message)
				}
			}
			fx.waitLog(t, fmt.Sprintf("answered GET /api/v1/namespaces/%s/configmaps?", fx.ns), 2)
			fx.checkUntouched(t)
			if code != 422 {
				return
			}
			// An informer streaming (gate on) falls back to LIST then WATCH, and syncs.
			inf := startStreamingInformer(t, ctx, fx.clients[0].cs, fx.ns)
			sctx, cancel := context.WithTimeout(ctx, 20*time.Second)
			defer cancel()
			if !cache.WaitForCacheSync(sctx.Done(), inf.HasSynced) {
				t.Fatal("the informer did not sync")
			}
			if n, want := len(inf.GetStore().List()), len(fx.names(t)); n != want {
				t.Errorf("the informer holds %d objects, want %d", n, want)
			}
			t.Logf("informer (WatchListClient on) synced; its requests: %q", fx.wire.grep("/namespaces/"+fx.ns+"/configmaps?"))
		})
	}
}

type e2e struct {
	cp    *controlplane.ControlPlane
	admin kubernetes.Interface
	ctx   context.Context
}

type client struct {
	enc string // "protobuf" or "json"
	cs  kubernetes.Interface
}

type fixture struct {
	*e2e
	fault   Fault
	ns      string
	p       *Proxy
	plog    *lines
	wire    *lines
	clients []client
}

// setup starts a proxy with fault f, a namespace with n ConfigMaps, and two clientsets through
// the proxy: protobuf (what v0.32+ typed clients ask for) and JSON.
func (e *e2e) setup(t *testing.T, f Fault, n int) *fixture {
	t.Helper()
	p, plog := startProxy(t, e.cp, Options{Fault: &f})
	fx := &fixture{e2e: e, fault: f, ns: "fault-" + strings.NewReplacer("=", "-").Replace(f.String()), p: p, plog: plog, wire: newLines(t, "client")}
	if _, err := e.admin.CoreV1().Namespaces().Create(e.ctx, &corev1.Namespace{ObjectMeta: metav1.ObjectMeta{Name: fx.ns}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < n; i++ {
		fx.create(t, fmt.Sprintf("cm-%d", i))
	}
	kc, err := p.Kubeconfig()
	if err != nil {
		t.Fatal(err)
	}
	for _, enc := range []string{"protobuf", "json"} {
		cfg, err := clientcmd.RESTConfigFromKubeConfig(kc)
		if err != nil {
			t.Fatal(err)
		}
		if enc == "json" {
			cfg.AcceptContentTypes, cfg.ContentType = "application/json", "application/json"
		} else {
			cfg.AcceptContentTypes, cfg.ContentType = "application/vnd.kubernetes.protobuf,application/json", "application/vnd.kubernetes.protobuf"
		}
		cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return recorder{rt, fx.wire} })
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		fx.clients = append(fx.clients, client{enc, cs})
	}
	return fx
}

func (fx *fixture) create(t *testing.T, name string) string {
	t.Helper()
	if _, err := fx.admin.CoreV1().ConfigMaps(fx.ns).Create(fx.ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"n": "0"}}, metav1.CreateOptions{}); err != nil {
		t.Fatal(err)
	}
	return name
}

// names are the namespace's ConfigMaps, sorted, read straight from the apiserver.
func (fx *fixture) names(t *testing.T) []string {
	t.Helper()
	l, err := fx.admin.CoreV1().ConfigMaps(fx.ns).List(fx.ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, cm := range l.Items {
		names = append(names, cm.Name)
	}
	sort.Strings(names)
	return names
}

func streamingOptions() *metav1.ListOptions {
	return &metav1.ListOptions{Watch: true, SendInitialEvents: ptr.To(true), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true, TimeoutSeconds: ptr.To[int64](30)}
}

// streamingWatchErr opens what the reflector opens: a streaming list, through the typed client.
func (fx *fixture) streamingWatchErr(c client) (watch.Interface, error) {
	return c.cs.CoreV1().ConfigMaps(fx.ns).Watch(fx.ctx, *streamingOptions())
}

func (fx *fixture) streamingWatch(t *testing.T, c client) watch.Interface {
	t.Helper()
	w, err := fx.streamingWatchErr(c)
	if err != nil {
		t.Fatalf("%s: streaming watch: %v", c.enc, err)
	}
	return w
}

// checkInitial: evs are one ADDED per name, nothing else.
func (fx *fixture) checkInitial(t *testing.T, c client, evs []event, names []string) {
	t.Helper()
	var got []string
	for _, e := range evs {
		if e.Type != "ADDED" {
			t.Errorf("%s: %v among the initial events", c.enc, e)
			continue
		}
		got = append(got, e.Name)
	}
	sort.Strings(got)
	if strings.Join(got, ",") != strings.Join(names, ",") {
		t.Errorf("%s: initial ADDED %v, want %v", c.enc, got, names)
	}
	t.Logf("%s: %v", c.enc, evs)
}

// checkLaterPasses writes one more object: the fault is over with the initial events, so its
// ADDED must reach the watch. Then it stops the watch.
func (fx *fixture) checkLaterPasses(t *testing.T, c client, w watch.Interface) {
	t.Helper()
	later := fx.create(t, "later-"+c.enc)
	if evs := collect(w, 5*time.Second, addedOf(later)); !hasAdded(evs, later) {
		t.Errorf("%s: the later write did not pass: %v", c.enc, evs)
	}
	w.Stop()
}

func (fx *fixture) waitLog(t *testing.T, sub string, n int) {
	t.Helper()
	waitFor(t, fmt.Sprintf("%d proxy log lines with %q", n, sub), 5*time.Second, func() bool { return len(fx.plog.grep(sub)) >= n })
	if got := fx.plog.grep(sub); len(got) != n {
		t.Errorf("%d proxy log lines with %q, want %d: %q", len(got), sub, n, got)
	}
}

// checkStreamsWithoutBookmark: every client's streaming list brings one ADDED per object and no
// bookmark at all, and the writes after it still pass.
func (fx *fixture) checkStreamsWithoutBookmark(t *testing.T) {
	t.Helper()
	for _, c := range fx.clients {
		names := fx.names(t)
		w := fx.streamingWatch(t, c)
		evs := collect(w, 2*time.Second, nil)
		fx.checkInitial(t, c, evs, names)
		if b := bookmarks(evs); len(b) != 0 {
			t.Errorf("%s: bookmarks %v, want none", c.enc, b)
		}
		fx.checkLaterPasses(t, c, w)
	}
}

// checkUntouched: through the same proxy, a plain LIST returns what the apiserver returns, and a
// plain watch from its rv delivers a write; the proxy applied its fault to streaming lists only.
func (fx *fixture) checkUntouched(t *testing.T) {
	t.Helper()
	for _, c := range fx.clients {
		direct, err := fx.admin.CoreV1().ConfigMaps(fx.ns).List(fx.ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		// At the direct LIST's rv: the apiserver's own writes (leases) may move the current rv
		// between the two LISTs on a loaded machine.
		viaProxy, err := c.cs.CoreV1().ConfigMaps(fx.ns).List(fx.ctx, metav1.ListOptions{ResourceVersion: direct.ResourceVersion, ResourceVersionMatch: metav1.ResourceVersionMatchExact})
		if err != nil {
			t.Fatalf("%s: plain LIST through the proxy: %v", c.enc, err)
		}
		if viaProxy.ResourceVersion != direct.ResourceVersion || fmt.Sprint(itemsOf(viaProxy)) != fmt.Sprint(itemsOf(direct)) {
			t.Errorf("%s: LIST through the proxy rv=%s %v, straight from the apiserver rv=%s %v", c.enc, viaProxy.ResourceVersion, itemsOf(viaProxy), direct.ResourceVersion, itemsOf(direct))
		}
		w, err := c.cs.CoreV1().ConfigMaps(fx.ns).Watch(fx.ctx, metav1.ListOptions{ResourceVersion: viaProxy.ResourceVersion, AllowWatchBookmarks: true, TimeoutSeconds: ptr.To[int64](30)})
		if err != nil {
			t.Fatalf("%s: plain watch through the proxy: %v", c.enc, err)
		}
		name := fx.create(t, "plain-"+c.enc)
		evs := collect(w, 5*time.Second, addedOf(name))
		w.Stop()
		if len(evs) != 1 || evs[0].Type != "ADDED" || evs[0].Name != name {
			t.Errorf("%s: plain watch from rv %s: %v, want exactly ADDED %s", c.enc, viaProxy.ResourceVersion, evs, name)
		}
	}
	for _, l := range fx.wire.grep("/configmaps") {
		if !strings.Contains(l, "sendInitialEvents=true") && !strings.Contains(l, "-> 200 HTTP/2.0") {
			t.Errorf("a plain request through the proxy: %s", l)
		}
	}
	for _, l := range fx.plog.grep("proxy: fault ") {
		if !strings.Contains(l, "sendInitialEvents=true") {
			t.Errorf("the fault applied to a request other than a streaming list: %s", l)
		}
	}
}

func itemsOf(l *corev1.ConfigMapList) []string {
	var s []string
	for _, cm := range l.Items {
		s = append(s, cm.Name+"@"+cm.ResourceVersion)
	}
	return s
}

// collect reads events from w until done says so, w closes, or timeout passes.
func collect(w watch.Interface, timeout time.Duration, done func([]event) bool) []event {
	var evs []event
	deadline := time.After(timeout)
	for {
		if done != nil && done(evs) {
			return evs
		}
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				return evs
			}
			e := event{Type: string(ev.Type)}
			if m, err := meta.Accessor(ev.Object); err == nil {
				e.Name, e.RV, e.Annotations = m.GetName(), m.GetResourceVersion(), m.GetAnnotations()
			} else {
				e.Name = fmt.Sprintf("%v", ev.Object)
			}
			evs = append(evs, e)
		case <-deadline:
			return evs
		}
	}
}

func isClosed(w watch.Interface) bool {
	select {
	case _, ok := <-w.ResultChan():
		return !ok
	case <-time.After(time.Second):
		return false
	}
}

func addedOf(name string) func([]event) bool {
	return func(evs []event) bool { return hasAdded(evs, name) }
}

func hasAdded(evs []event, name string) bool {
	for _, e := range evs {
		if e.Type == "ADDED" && e.Name == name {
			return true
		}
	}
	return false
}

func bookmarks(evs []event) []event {
	var b []event
	for _, e := range evs {
		if e.Type == "BOOKMARK" {
			b = append(b, e)
		}
	}
	return b
}

// startStreamingInformer starts a ConfigMap informer in ns with client-go's WatchListClient gate
// on (this client-go's default is off), as client-go v0.35+ runs by default. The gate is read
// when the informer's reflector is made; it is restored when the test ends.
func startStreamingInformer(t *testing.T, ctx context.Context, cs kubernetes.Interface, ns string) cache.SharedIndexInformer {
	t.Helper()
	gates, ok := clientfeatures.FeatureGates().(interface {
		Set(clientfeatures.Feature, bool) error
	})
	if !ok {
		t.Skip("this client-go's feature gates cannot be set in code")
	}
	before := clientfeatures.FeatureGates().Enabled(clientfeatures.WatchListClient)
	if err := gates.Set(clientfeatures.WatchListClient, true); err != nil {
		t.Fatal(err)
	}
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(ns))
	inf := factory.Core().V1().ConfigMaps().Informer()
	stop := make(chan struct{})
	t.Cleanup(func() {
		close(stop)
		factory.Shutdown()
		gates.Set(clientfeatures.WatchListClient, before)
	})
	factory.Start(stop)
	return inf
}

// atoi is strconv.Atoi for a resourceVersion the apiserver wrote, failing the test otherwise.
func atoi(t *testing.T, s string) int {
	t.Helper()
	n, err := strconv.Atoi(s)
	if err != nil {
		t.Fatalf("resourceVersion %q: %v", s, err)
	}
	return n
}
