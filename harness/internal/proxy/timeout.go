package proxy

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"informer-lab/lab/wire"
)

// Options.WatchTimeout ends each watch a fixed time after it is established, as kube-apiserver
// ends a watch at its timeoutSeconds: cleanly, after a whole frame (a gzip-encoded stream with
// its trailer), so that the client reads the end of its stream and watches again. A plain watch
// is established when its response arrives; a streaming list (sendInitialEvents=true) once its
// initial events have ended, when its end bookmark has passed the proxy. Shortening the watch's
// timeoutSeconds instead would let kube-apiserver end a streaming list whose initial events take
// longer than the timeout (on a loaded machine) before its end bookmark: not a timeout but
// kubernetes/kubernetes#134837.

// gzipLevel is kube-apiserver's (k8s.io/apiserver responsewriters, defaultGzipContentEncodingLevel):
// a stream the proxy re-compresses stays as close to the server's as it can.
const gzipLevel = 1

// timedWatch is a watch response body that the proxy ends after WatchTimeout from the moment the
// watch is established: read frame by frame (frames), or, in a content type or encoding the
// proxy does not frame, byte by byte and ended wherever the stream is then.
type timedWatch struct {
	after    time.Duration
	upstream io.Closer          // the upstream response body: closing it ends a read waiting on it
	ended    func(since string) // called as the timeout ends the watch, before upstream is closed
	body     io.ReadCloser      // what is read: the response body as it was handed over, or decompressed
	frames   *frames            // body's frames; nil when the proxy cannot frame it
	waiting  bool               // a streaming list whose end bookmark has not passed yet
	out      bytes.Buffer       // what goes to the client next
	zw       *gzip.Writer       // re-compresses into out what came gzip-encoded; nil if it did not
	done     bool

	mu      sync.Mutex
	timer   *time.Timer
	expired bool
	closed  bool
}

// timeWatch makes resp's body a timedWatch; upstream is the response body as the apiserver's
// transport gave it. Whether the watch is a streaming list is read from the request as
// forwarded: one the proxy forwards as a plain watch (fault ignore-send-initial-events) is
// established at its response.
func (p *Proxy) timeWatch(resp *http.Response, end *watchEnd, upstream io.Closer) {
	t := &timedWatch{after: p.opts.WatchTimeout, upstream: upstream, body: resp.Body, waiting: isStreamingList(resp.Request)}
	t.ended = func(since string) {
		end.setNote(fmt.Sprintf("ended by the proxy, its watch timeout %s after %s", t.after, since))
	}
	enc, contentType := resp.Header.Get("Content-Encoding"), resp.Header.Get("Content-Type")
	if enc == "" || strings.EqualFold(enc, "gzip") {
		t.frame(enc != "", contentType)
	}
	if t.frames == nil {
		p.opts.Log("proxy: watch %s: content type %q, encoding %q: the proxy cannot read its frames; it ends %s after its response, wherever its stream is then", end.what, contentType, enc, t.after)
		t.waiting = false
	} else {
		resp.Header.Del("Content-Length")
	}
	resp.Body = t
	if !t.waiting {
		t.establish("its response")
	}
}

// frame reads the body frame by frame, decompressed first when gzipped, and then compressed
// again as it goes to the client.
func (t *timedWatch) frame(gzipped bool, contentType string) {
	body := t.body
	if gzipped {
		body = wire.Gunzip(body)
	}
	fr, ok := newFrames(body, contentType, watchTypes)
	if !ok {
		return
	}
	t.body, t.frames = body, fr
	if gzipped {
		t.zw, _ = gzip.NewWriterLevel(&t.out, gzipLevel)
	}
}

func (t *timedWatch) Read(p []byte) (int, error) {
	if t.frames == nil {
		return t.body.Read(p)
	}
	for t.out.Len() == 0 && !t.done {
		t.step()
	}
	if t.out.Len() == 0 {
		return 0, io.EOF
	}
	return t.out.Read(p)
}

// step reads one frame into out; at the end of the stream, the apiserver's or the timeout's,
// it finishes out (a gzip stream's trailer) instead. A frame the proxy cannot decode passes as
// it is.
func (t *timedWatch) step() {
	if t.isExpired() {
		t.finish()
		return
	}
	ev, frame, _ := t.frames.next()
	if frame == nil {
		t.finish()
		return
	}
	if t.zw == nil {
		t.frames.wire(&t.out, frame)
	} else {
		t.frames.wire(t.zw, frame)
		t.zw.Flush()
	}
	if _, ok := endBookmark(ev); ok && t.waiting {
		t.waiting = false
		t.establish("its end bookmark")
	}
}

func (t *timedWatch) finish() {
	t.done = true
	if t.zw != nil {
		t.zw.Close()
	}
}

// establish starts the watch's timeout.
func (t *timedWatch) establish(since string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if !t.closed {
		t.timer = time.AfterFunc(t.after, func() { t.expire(since) })
	}
}

// expire ends the watch: the frames read so far go to the client, then the end of the stream.
func (t *timedWatch) expire(since string) {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return
	}
	t.expired = true
	t.mu.Unlock()
	t.ended(since)
	t.upstream.Close()
}

func (t *timedWatch) isExpired() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.expired
}

func (t *timedWatch) Close() error {
	t.mu.Lock()
	t.closed = true
	if t.timer != nil {
		t.timer.Stop()
	}
	t.mu.Unlock()
	return t.body.Close()
}
