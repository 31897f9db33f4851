// Package wire is the lab's logging http.RoundTripper: it records every request, every LIST body
// and every watch event as it streams past, without changing what the client reads.
package wire

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"informer-lab/record"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer/streaming"
	restwatch "k8s.io/client-go/rest/watch"
)

// Wrap returns a function for rest.Config.Wrap: every request made through that config is
// recorded under tag. Only the method, path, query, Accept and the response's status, content
// type and content encoding are recorded: headers carrying credentials (Authorization,
// cookies) never are, and TLS client keys live below this layer.
func Wrap(tag string, w *record.Writer) func(http.RoundTripper) http.RoundTripper {
	return WrapCounting(tag, w, nil, false)
}

// WrapCounting is Wrap that also counts requests, body bytes and events into c (if not nil).
// Quiet writes no records and decodes nothing: it only counts bytes (off the connection and
// decompressed, see asksGzip; a gzip body the client decompresses itself is gunzipped on a copy,
// to be counted), so that a benchmark measures the apiserver and the reflector, not this logger.
func WrapCounting(tag string, w *record.Writer, c *Counters, quiet bool) func(http.RoundTripper) http.RoundTripper {
	if c == nil {
		c = &Counters{}
	}
	return func(next http.RoundTripper) http.RoundTripper {
		return &transport{tag: tag, out: w, next: next, count: c, quiet: quiet}
	}
}

// Counters is one informer's traffic, safe for concurrent use.
type Counters struct {
	requests, events atomic.Int64
	bytes, wireBytes atomic.Int64 // response bodies decoded (as the client read or gunzips them), and off the connection
	mu               sync.Mutex
	types            []string              // media types of 200 responses, each once
	open             map[*pending]struct{} // the buffers of the responses the wire still decodes
}

// CaughtUp returns once the wire has logged every event of what the informer has read so far:
// its decoders run behind the client's reads (pending), and a record written after CaughtUp
// (the lab's "synced") comes after the events the informer had when it wrote it.
func (c *Counters) CaughtUp() {
	c.mu.Lock()
	open := make([]*pending, 0, len(c.open))
	for p := range c.open {
		open = append(open, p)
	}
	c.mu.Unlock()
	for _, p := range open {
		p.caughtUp()
	}
}

// decoding notes that p's response is being decoded until the returned function is called.
func (c *Counters) decoding(p *pending) (done func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.open == nil {
		c.open = map[*pending]struct{}{}
	}
	c.open[p] = struct{}{}
	return func() {
		c.mu.Lock()
		defer c.mu.Unlock()
		delete(c.open, p)
	}
}

// Stats returns the counts so far.
func (c *Counters) Stats() *record.Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return &record.Stats{Requests: int(c.requests.Load()), Bytes: c.bytes.Load(), WireBytes: c.wireBytes.Load(), Events: int(c.events.Load()),
		ContentTypes: slices.Clone(c.types)}
}

// sawType notes the media type of a 200 response's body (record.Stats.ContentTypes).
func (c *Counters) sawType(resp *http.Response) {
	if resp.StatusCode != http.StatusOK {
		return
	}
	mt, _, err := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if err != nil {
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !slices.Contains(c.types, mt) {
		c.types = append(c.types, mt)
	}
}

type transport struct {
	tag   string
	out   *record.Writer
	next  http.RoundTripper
	count *Counters
	quiet bool
}

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	t.count.requests.Add(1)
	start := time.Now()
	resp, askedGzip, err := t.send(req)
	if err == nil {
		t.count.sawType(resp)
	}
	if t.quiet {
		if err == nil {
			t.countOnly(resp, measure(resp, askedGzip, t.count))
		}
		return resp, err
	}
	rec := record.Record{
		Kind:   record.HTTP,
		Tag:    t.tag,
		Method: req.Method,
		Path:   req.URL.Path,
		Query:  req.URL.RawQuery,
		Accept: req.Header.Get("Accept"),
		Millis: time.Since(start).Milliseconds(),
	}
	if err != nil {
		rec.Error = err.Error()
		t.out.Write(rec)
		return resp, err
	}
	rec.Status = resp.StatusCode
	rec.ContentType = resp.Header.Get("Content-Type")
	rec.Encoding = resp.Header.Get("Content-Encoding") // before measure takes the gzip off
	rec.Server = resp.Header.Get(record.ServerHeader)
	size := measure(resp, askedGzip, t.count)
	if resp.StatusCode >= 400 {
		rec.Detail = statusMessage(resp)
	}
	t.out.Write(rec)

	if req.Method != http.MethodGet || resp.StatusCode != http.StatusOK {
		t.countOnly(resp, size)
		return resp, nil
	}
	// A gzip body the client asked for itself is decoded from a decompressed copy (clientGzip);
	// any other encoding is the client's alone.
	if enc := resp.Header.Get("Content-Encoding"); enc != "" && !size.clientGzip {
		t.out.Setup(t.tag, record.StepFault, "undecodable response", "content encoding "+enc+" is the client's own to decode (it asked for it); its objects and events are not logged")
		return resp, nil
	}
	info, ok := serializerFor(rec.ContentType)
	if !ok {
		t.out.Setup(t.tag, record.StepFault, "undecodable response", "content type "+rec.ContentType+" is none the wire decodes (JSON, protobuf, CBOR); its objects and events are not logged")
		t.countOnly(resp, size)
		return resp, nil
	}
	if record.ClassifyRequest(req.URL.Path, req.URL.RawQuery).Watch {
		resp.Body = t.tapWatch(resp.Body, info, size)
	} else {
		resp.Body = &listTap{body: resp.Body, t: t, info: info, size: size}
	}
	return resp, nil
}

// countOnly: a body the wire does not decode still counts decompressed when the client
// decompresses it itself (clientGzip): a copy is gunzipped only to be counted.
func (t *transport) countOnly(resp *http.Response, size *sizes) {
	if size.clientGzip {
		resp.Body = t.tap(resp.Body, size, func(r io.ReadCloser, _ func() stamp) { io.Copy(io.Discard, r) })
	}
}

// send sends req to next, asking for gzip itself where Go's transport would have (see
// asksGzip), on a copy: the caller's request is the caller's.
func (t *transport) send(req *http.Request) (*http.Response, bool, error) {
	if !asksGzip(t.next, req) {
		resp, err := t.next.RoundTrip(req)
		return resp, false, err
	}
	sent := req.Clone(req.Context())
	sent.Header.Set("Accept-Encoding", "gzip")
	resp, err := t.next.RoundTrip(sent)
	if err == nil {
		resp.Request = req
	}
	return resp, true, err
}

// statusMessage reads an error response's body (a small Status), puts it back for the
// client, and returns its message, e.g. the 422 that refuses sendInitialEvents.
func statusMessage(resp *http.Response) string {
	body, err := io.ReadAll(io.LimitReader(resp.Body, 64<<10))
	resp.Body = struct {
		io.Reader
		io.Closer
	}{io.MultiReader(bytes.NewReader(body), resp.Body), resp.Body}
	if err != nil {
		return ""
	}
	obj, err := runtime.Decode(objects, body)
	if err != nil {
		return ""
	}
	if st, ok := obj.(*metav1.Status); ok {
		return fmt.Sprintf("%s: %s", st.Reason, st.Message)
	}
	return ""
}

// tapWatch copies every byte the client reads to a decoder goroutine that reads it frame by
// frame with apimachinery's own framer and serializer, through a buffer (pending): the client
// reads on while the decoder logs, up to maxPending behind it.
//
// Close waits for the decoder: the events of the bytes the client read are recorded by the time
// its watch is stopped, so nothing the stream carried is logged after, say, the lab's "stopped".
func (t *transport) tapWatch(body io.ReadCloser, info runtime.SerializerInfo, size *sizes) io.ReadCloser {
	return t.tap(body, size, func(r io.ReadCloser, at func() stamp) { t.decodeWatch(r, at, info, size) })
}

// tap copies every byte the client reads from body to consume, decompressed where the client
// decompresses them itself (sizes.decompressed), in a goroutine of its own; at tells consume
// when the client had read the last byte consume read, and how much of the body by then. The
// returned body's Close waits for consume to return.
func (t *transport) tap(body io.ReadCloser, size *sizes, consume func(r io.ReadCloser, at func() stamp)) io.ReadCloser {
	p := newPending()
	done := make(chan struct{})
	decoded := t.count.decoding(p)
	go func() {
		defer close(done)
		defer decoded()
		// Whatever happens, the client's reads never wait for us again.
		defer p.Close()
		consume(size.decompressed(p, t.count), p.stamp)
	}()
	return &watchTap{body: body, p: p, size: size, decoded: done, out: t.out}
}

// decodeWatch records each event; the initial-events-end bookmark with the stream's size so
// far: what the client had read by the read that brought the bookmark's last bytes (at). The
// server flushes right after that bookmark, so this is the stream up to and with it, give or
// take the few bytes of a gzip member's end that the gzip reader had not yet needed.
//
// Each event is logged with the time the client had read it (at), and with Later: the initial
// events of a streaming list of thousands go out in batches, not a system call each.
func (t *transport) decodeWatch(r io.ReadCloser, at func() stamp, info runtime.SerializerInfo, size *sizes) {
	stream := info.StreamSerializer
	if stream == nil {
		return
	}
	frames := stream.Framer.NewFrameReader(r)
	dec := restwatch.NewDecoder(streaming.NewDecoder(frames, stream.Serializer), eventObjects)
	for {
		typ, obj, err := dec.Decode()
		if err != nil {
			switch {
			case err == io.EOF || strings.Contains(err.Error(), "closed pipe") || strings.Contains(err.Error(), "context canceled") || strings.Contains(err.Error(), "context deadline exceeded"):
				// the stream ended: the server's timeout, or the client stopped watching
			case errors.Is(err, io.ErrUnexpectedEOF) || strings.Contains(err.Error(), "connection reset") || strings.Contains(err.Error(), "unexpected EOF"):
				// the connection broke mid-stream: the server went away; the reflector will watch again
				t.out.Setup(t.tag, record.StepBroken, "watch stream broken", err.Error())
			default:
				// a real decoding problem, worth a line, since the client read those bytes too
				t.out.Setup(t.tag, record.StepFault, "watch stream decode", err.Error())
			}
			return
		}
		t.count.events.Add(1)
		rec := eventRecord(t.tag, string(typ), obj)
		read := at()
		rec.Time = read.time
		if record.IsEndBookmark(rec) {
			body := read.body
			if size.clientGzip { // decompressed by the wire, as it decodes: counted up to here
				body.Decoded = size.decoded.Load()
			}
			rec.Body = &body
		}
		t.out.Later(rec)
	}
}

func eventRecord(tag, typ string, obj runtime.Object) record.Record {
	rec := record.Record{Kind: record.WatchEvent, Tag: tag, Event: typ}
	if status, ok := obj.(*metav1.Status); ok {
		rec.Detail = fmt.Sprintf("code=%d reason=%s message=%q", status.Code, status.Reason, status.Message)
		return rec
	}
	if t, ok := obj.(*metav1.Table); ok { // an event of a table watch: one row, the object's
		if rows := tableObjects(t); len(rows) == 1 {
			obj = rows[0]
		}
	}
	m, err := meta.Accessor(obj)
	if err != nil {
		rec.Detail = fmt.Sprintf("object %T without metadata", obj)
		return rec
	}
	rec.Namespace, rec.Name, rec.RV = m.GetNamespace(), m.GetName(), m.GetResourceVersion()
	if typ == "BOOKMARK" {
		rec.Annotations = m.GetAnnotations()
	}
	return rec
}

type watchTap struct {
	body    io.ReadCloser
	p       *pending
	size    *sizes
	decoded chan struct{} // closed when the decoder has recorded all it was given
	out     *record.Writer
}

func (w *watchTap) Read(p []byte) (int, error) {
	n, err := w.body.Read(p)
	if n > 0 {
		w.p.write(p[:n], stamp{time: time.Now(), body: *w.size.body()})
	}
	if err != nil {
		w.p.closeWithError(err)
	}
	return n, err
}

func (w *watchTap) Close() error {
	w.p.closeWithError(nil)
	err := w.body.Close()
	<-w.decoded
	w.out.Flush() // what the decoder logged with Later, written before Close returns
	return err
}

// listTap keeps a copy of a LIST body as the client reads it and decodes it once the client
// has read it all. client-go holds a whole LIST body in memory anyway; watch streams, which
// never end, are decoded frame by frame instead.
type listTap struct {
	body io.ReadCloser
	t    *transport
	info runtime.SerializerInfo
	size *sizes
	buf  bytes.Buffer
	done bool
}

func (l *listTap) Read(p []byte) (int, error) {
	n, err := l.body.Read(p)
	l.buf.Write(p[:n])
	if err == io.EOF {
		l.decode()
	}
	return n, err
}

func (l *listTap) Close() error {
	l.decode()
	return l.body.Close()
}

func (l *listTap) decode() {
	if l.done {
		return
	}
	l.done = true
	defer l.buf.Reset()
	body := l.buf.Bytes()
	if l.size.clientGzip { // the body as the client will have it, once its transport gunzipped it
		var err error
		if body, err = io.ReadAll(l.size.decompressed(io.NopCloser(&l.buf), l.t.count)); err != nil {
			return // the client's gzip reader fails on it too
		}
	}
	obj, err := runtime.Decode(objects, body)
	if err != nil {
		return
	}
	rec := record.Record{Kind: record.List, Tag: l.t.tag, Body: l.size.body(), Items: []record.Item{}}
	item := func(o runtime.Object) error {
		if m, err := meta.Accessor(o); err == nil {
			rec.Items = append(rec.Items, record.Item{Namespace: m.GetNamespace(), Name: m.GetName(), RV: m.GetResourceVersion()})
		}
		return nil
	}
	// A server-side table (meta.k8s.io Table) is what kubectl get asks for (Accept:
	// application/json;as=Table;v=v1;g=meta.k8s.io): a LIST's objects as rows, and each watch
	// event's object as a table of one row (eventRecord).
	table, isTable := obj.(*metav1.Table)
	switch {
	case isTable:
		rec.RV = table.ResourceVersion
		for _, o := range tableObjects(table) {
			item(o)
		}
	case !meta.IsListType(obj) || obj.GetObjectKind().GroupVersionKind().Group == discoveryGroup:
		return // not a list (discovery, a single object): the HTTP line says enough
	default:
		if lm, err := meta.ListAccessor(obj); err == nil {
			rec.RV = lm.GetResourceVersion()
		}
		meta.EachListItem(obj, item)
	}
	l.t.out.Write(rec)
}

// tableObjects decodes the object of each row of a table: a PartialObjectMetadata unless the
// client asked includeObject=Object (or None: then there is none, and no name to log).
func tableObjects(t *metav1.Table) []runtime.Object {
	var objs []runtime.Object
	for _, row := range t.Rows {
		if row.Object.Object != nil {
			objs = append(objs, row.Object.Object)
			continue
		}
		if len(row.Object.Raw) == 0 {
			continue
		}
		if o, err := runtime.Decode(objects, row.Object.Raw); err == nil {
			objs = append(objs, o)
		}
	}
	return objs
}
