package wire_test

import (
	"bytes"
	"context"
	"flag"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"informer-lab/lab/wire"
	"informer-lab/record"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured/unstructuredscheme"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/runtime/serializer/cbor"
	"k8s.io/apimachinery/pkg/runtime/serializer/json"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
)

var update = flag.Bool("update", false, "rewrite testdata/ with what TestCBORFromServer's apiserver sent")

const (
	cborList   = "application/cbor"
	cborStream = "application/cbor-seq"
)

// A kube-apiserver with CBORServingAndStorage=true (alpha, off by default) answers a client
// that accepts only CBOR in CBOR: typed ConfigMaps and custom resources alike. The wire must
// record what the client decoded, as for JSON and protobuf.
func TestCBORFromServer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cp, admin := seeded(t, ctx, "CBORServingAndStorage=true")

	tests := []struct {
		name      string // also the testdata files' stem
		gv        schema.GroupVersion
		apiPath   string
		resource  string
		reader    cborReader
		write     func(ctx context.Context, op, name string, tick int) error
		writeName string
	}{
		{"configmaps", corev1.SchemeGroupVersion, "/api", "configmaps", typedCBOR(), admin.writeConfigMap, "cbor"},
		{"widgets", widgets.GroupVersion(), "/apis", widgets.Resource, unstructuredCBOR(), admin.writeWidget, "cbor"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logs := &bytes.Buffer{}
			saved := &capture{}
			cfg := rest.CopyConfig(cp.Config)
			cfg.Wrap(saved.wrap) // below the wire: the bytes exactly as the server sent them
			cfg.Wrap(wire.Wrap("T", record.NewWriter("test", logs, nil)))
			c, err := cborClient(cfg, tt.gv, tt.apiPath, tt.resource, tt.reader)
			if err != nil {
				t.Fatal(err)
			}
			c.write, c.writeName = tt.write, tt.writeName
			read := exercise(t, ctx, c)
			recs := checkRecords(t, logs, read)
			checkContentTypes(t, recs, cborList, cborStream)
			if *update {
				saved.write(t, tt.name, read)
			}
		})
	}
}

// The CBOR a real apiserver sent (saved by TestCBORFromServer -update) decodes without a
// server to what the client decoded then.
func TestCBORTestdata(t *testing.T) {
	for _, name := range []string{"configmaps", "widgets"} {
		t.Run(name, func(t *testing.T) {
			want, err := os.ReadFile(filepath.Join("testdata", "cbor-"+name+".want"))
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, r := range []struct{ file, query, contentType string }{
				{"cbor-" + name + "-list.cbor", "", cborList},
				{"cbor-" + name + "-stream.cbor-seq", "allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&sendInitialEvents=true&watch=true", cborStream},
			} {
				body, err := os.ReadFile(filepath.Join("testdata", r.file))
				if err != nil {
					t.Fatal(err)
				}
				for _, rec := range replay(t, r.query, r.contentType, body) {
					if rec.Kind == record.Setup {
						t.Errorf("%s: %s", r.file, rec.Text())
					}
					if l := wireLine(rec); l != "" {
						got = append(got, l)
					}
				}
			}
			if g, w := strings.Join(got, "\n"), strings.TrimSpace(string(want)); g != w {
				t.Errorf("the wire decoded the saved CBOR to:\n  %s\nthe client had decoded:\n  %s", strings.ReplaceAll(g, "\n", "\n  "), strings.ReplaceAll(w, "\n", "\n  "))
			}
			if !strings.Contains(string(want), endAnnotation+":true") {
				t.Errorf("the saved stream has no %s bookmark", endAnnotation)
			}
		})
	}
}

// replay sends one saved response through the wire, reads it as a client would, and returns
// the wire's records.
func replay(t *testing.T, query, contentType string, body []byte) []record.Record {
	t.Helper()
	logs := &bytes.Buffer{}
	rt := wire.Wrap("T", record.NewWriter("test", logs, nil))(savedResponse{contentType, body})
	req, err := http.NewRequest(http.MethodGet, "https://saved.invalid/resource?"+query, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	recs, err := record.Read(logs, "replay")
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

type savedResponse struct {
	contentType string
	body        []byte
}

func (s savedResponse) RoundTrip(req *http.Request) (*http.Response, error) {
	return &http.Response{
		StatusCode: http.StatusOK,
		Header:     http.Header{"Content-Type": {s.contentType}},
		Body:       io.NopCloser(bytes.NewReader(s.body)),
		Request:    req,
	}, nil
}

// capture keeps the bodies of the LIST and of the streaming WATCH as the client read them.
type capture struct {
	next         http.RoundTripper
	mu           sync.Mutex
	list, stream bytes.Buffer
}

func (c *capture) wrap(next http.RoundTripper) http.RoundTripper { c.next = next; return c }

func (c *capture) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := c.next.RoundTrip(req)
	if err != nil {
		return resp, err
	}
	q := req.URL.Query()
	into := &c.list
	switch {
	case q.Get("sendInitialEvents") == "true":
		into = &c.stream
	case q.Get("watch") == "true":
		return resp, nil
	}
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.TeeReader(resp.Body, lockedWriter{&c.mu, into}), resp.Body}
	return resp, nil
}

// write saves the bodies and the lines the client decoded from them.
func (c *capture) write(t *testing.T, name string, read clientRead) {
	t.Helper()
	c.mu.Lock()
	defer c.mu.Unlock()
	files := map[string][]byte{
		"cbor-" + name + "-list.cbor":       c.list.Bytes(),
		"cbor-" + name + "-stream.cbor-seq": c.stream.Bytes(),
		"cbor-" + name + ".want":            []byte(strings.Join(append([]string{read.list}, read.stream...), "\n") + "\n"),
	}
	for file, b := range files {
		if err := os.WriteFile(filepath.Join("testdata", file), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  io.Writer
}

func (l lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// cborReader is how a client reads CBOR, as client-go v0.32+ does with its ClientsAllowCBOR
// gate on, built here from apimachinery's serializers: this module's client-go, v0.31, has no
// such gate.
type cborReader struct {
	list    runtime.Serializer // a LIST body
	event   runtime.Serializer // a watch event's envelope
	object  runtime.Serializer // a watch event's object: JSON, as apimachinery's CBOR decoder transcodes it
	newList func() runtime.Object
}

func typedCBOR() cborReader {
	return cborReader{
		list:    cbor.NewSerializer(scheme.Scheme, scheme.Scheme),
		event:   cbor.NewSerializer(scheme.Scheme, scheme.Scheme),
		object:  json.NewSerializerWithOptions(json.DefaultMetaFactory, scheme.Scheme, scheme.Scheme, json.SerializerOptions{}),
		newList: func() runtime.Object { return &corev1.ConfigMapList{} },
	}
}

func unstructuredCBOR() cborReader {
	return cborReader{
		list:    cbor.NewSerializer(unstructuredscheme.NewUnstructuredCreator(), unstructuredscheme.NewUnstructuredObjectTyper()),
		event:   cbor.NewSerializer(scheme.Scheme, scheme.Scheme),
		object:  unstructured.UnstructuredJSONScheme,
		newList: func() runtime.Object { return &unstructured.UnstructuredList{} },
	}
}

// SupportedMediaTypes makes cborReader a rest.Config's NegotiatedSerializer: client-go picks
// the decoder by the response's content type.
func (r cborReader) SupportedMediaTypes() []runtime.SerializerInfo {
	return []runtime.SerializerInfo{
		{MediaType: cborList, MediaTypeType: "application", MediaTypeSubType: "cbor", Serializer: r.list},
		{MediaType: cborStream, MediaTypeType: "application", MediaTypeSubType: "cbor-seq", Serializer: r.object,
			StreamSerializer: &runtime.StreamSerializerInfo{Serializer: r.event, Framer: cbor.NewFramer()}},
	}
}

func (cborReader) EncoderForVersion(e runtime.Encoder, _ runtime.GroupVersioner) runtime.Encoder {
	return e
}

func (cborReader) DecoderToVersion(d runtime.Decoder, _ runtime.GroupVersioner) runtime.Decoder {
	return d
}

// cborClient LISTs and WATCHes with Accept application/cbor, set on each request: client-go
// v0.32+ scrubs CBOR from a rest.Config's content types unless its ClientsAllowCBOR gate is on.
// A watch is answered application/cbor-seq, but kube-apiserver 1.32 (and 1.37) refuses that in
// Accept with a 406 (which lists application/cbor-seq as what it supports): it matches Accept
// against its object media types only.
func cborClient(cfg *rest.Config, gv schema.GroupVersion, apiPath, res string, r cborReader) (resource, error) {
	cfg.GroupVersion, cfg.APIPath, cfg.NegotiatedSerializer = &gv, apiPath, r
	rc, err := rest.RESTClientFor(cfg)
	if err != nil {
		return resource{}, err
	}
	get := func(o *metav1.ListOptions) *rest.Request {
		return rc.Get().Namespace("default").Resource(res).VersionedParams(o, metav1.ParameterCodec).SetHeader("Accept", cborList)
	}
	return resource{
		list: func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) {
			list := r.newList()
			return list, get(&o).Do(ctx).Into(list)
		},
		watch: func(ctx context.Context, o metav1.ListOptions) (watch.Interface, error) {
			o.Watch = true
			return get(&o).Watch(ctx)
		},
	}, nil
}
