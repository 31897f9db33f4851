package wire

import (
	"compress/gzip"
	"io"
	"net/http"
	"strings"
	"sync/atomic"

	"informer-lab/record"

	utilnet "k8s.io/apimachinery/pkg/util/net"
)

// Why the wire asks for gzip itself. Go's http.Transport (and its HTTP/2 transport) adds
// "Accept-Encoding: gzip" to a request that has no Accept-Encoding and no Range and is not HEAD,
// and then decompresses the answer out of sight: it deletes the response's Content-Encoding and
// Content-Length, so a RoundTripper above it sees neither the encoding nor the compressed size.
// kube-apiserver gzips LIST/GET bodies above 128 KiB and (1.37+, WatchListCompression) whole
// streaming lists. So when the transport below is Go's and would ask for gzip, the wire asks
// instead: the same header with the same value on the same request, so the server sees what it
// would have seen (only the header's place among the others may differ), and Go, which
// decompresses only what it asked for itself, hands the compressed body up. The wire then does
// exactly what Go would have done, and counts the body on both sides of the decompression.

// asksGzip reports whether next, for req, is Go's transport that would add
// Accept-Encoding: gzip itself: net/http's own condition, and its HTTP/2 transport's (which
// counts a header present but empty as set, so the wire does too).
func asksGzip(next http.RoundTripper, req *http.Request) bool {
	t, ok := goTransport(next)
	return ok && !t.DisableCompression && req.Method != http.MethodHead &&
		len(req.Header.Values("Accept-Encoding")) == 0 && len(req.Header.Values("Range")) == 0
}

// goTransport finds the Go transport that rt is, or forwards every request to as it is:
// client-go v0.36+ puts its TLS cache's trackedTransport (and, for a CA file it reloads, a
// holder) between rest.Config.Wrap and it. Each says what it wraps with
// utilnet.RoundTripperWrapper, through which apimachinery's utilnet.TLSClientConfig finds the
// transport too. Anything else (a test's capture, a proxy of one's own) is left alone.
func goTransport(rt http.RoundTripper) (*http.Transport, bool) {
	for {
		switch t := rt.(type) {
		case *http.Transport:
			return t, true
		case utilnet.RoundTripperWrapper:
			rt = t.WrappedRoundTripper()
		default:
			return nil, false
		}
	}
}

// sizes counts one response body two ways: off the connection and decoded, as the client read
// it. clientGzip is set when the client asked for gzip itself and reads the body compressed:
// then decoded is what it will have once it decompressed it, counted on the copy the wire
// decompresses (see decompressed).
type sizes struct {
	wire, decoded atomic.Int64
	clientGzip    bool
}

func (s *sizes) body() *record.Body {
	return &record.Body{Wire: s.wire.Load(), Decoded: s.decoded.Load()}
}

// measure wraps resp.Body to count it into the sizes it returns and into c. If the wire asked
// for gzip and the server gzipped a body that may not be empty, it decompresses as Go's
// transport would have: lazily (creating a gzip reader reads the gzip header, which on a watch
// comes with the first event: RoundTrip must not wait for it), and the response then looks as
// Go would have returned it.
//
// If the client asked for gzip itself (a proxy forwards its client's Accept-Encoding: gzip,
// and that client's transport decompresses), the body stays the client's, compressed as the
// server sent it: measure counts it off the connection only, and the wire's own decompressed
// copy counts it decoded.
func measure(resp *http.Response, askedGzip bool, c *Counters) *sizes {
	s := &sizes{}
	if resp.StatusCode == http.StatusSwitchingProtocols {
		// exec, attach, port-forward through a proxy: the body is the connection itself, which
		// the caller writes to as well (httputil.ReverseProxy needs it an io.ReadWriteCloser)
		return s
	}
	gzipped := strings.EqualFold(resp.Header.Get("Content-Encoding"), "gzip")
	switch {
	case askedGzip && gzipped && resp.ContentLength != 0:
		off := &countingBody{resp.Body, []*atomic.Int64{&s.wire, &c.wireBytes}}
		resp.Body = &countingBody{&gzipBody{body: off}, []*atomic.Int64{&s.decoded, &c.bytes}}
		resp.Header.Del("Content-Encoding")
		resp.Header.Del("Content-Length")
		resp.ContentLength = -1
		resp.Uncompressed = true
		return s
	case !askedGzip && gzipped:
		s.clientGzip = true
		resp.Body = &countingBody{resp.Body, []*atomic.Int64{&s.wire, &c.wireBytes}}
		return s
	}
	resp.Body = &countingBody{resp.Body, []*atomic.Int64{&s.wire, &s.decoded, &c.wireBytes, &c.bytes}}
	return s
}

// decompressed is what the wire decodes of the bytes r carries, copied from what the client
// read: those bytes, or, when the client decompresses them itself (clientGzip), their gunzip,
// counted as decoded into s and c. Lazily, like Go's transport: the gzip header of a watch
// comes with its first event.
func (s *sizes) decompressed(r io.ReadCloser, c *Counters) io.ReadCloser {
	if !s.clientGzip {
		return r
	}
	return &countingBody{Gunzip(r), []*atomic.Int64{&s.decoded, &c.bytes}}
}

// countingBody adds the bytes read through it to each of ns.
type countingBody struct {
	io.ReadCloser
	ns []*atomic.Int64
}

func (c *countingBody) Read(p []byte) (int, error) {
	n, err := c.ReadCloser.Read(p)
	for _, total := range c.ns {
		total.Add(int64(n))
	}
	return n, err
}

// gzipBody is Go's transport's gzip reader: created on the first Read, its errors the
// client's (a bad header sticks), multi-member streams (the apiserver's per-flush gzip)
// read through. Close only closes the body, so it may come from another goroutine mid-Read.
type gzipBody struct {
	body io.ReadCloser
	zr   *gzip.Reader
	err  error
}

func (g *gzipBody) Read(p []byte) (int, error) {
	if g.zr == nil && g.err == nil {
		g.zr, g.err = gzip.NewReader(g.body)
	}
	if g.err != nil {
		return 0, g.err
	}
	return g.zr.Read(p)
}

func (g *gzipBody) Close() error { return g.body.Close() }

// Gunzip decompresses a gzip body as Go's transport does: lazily, on the first Read, so that
// a watch's response headers are not held until its first event (the fault proxy uses it).
func Gunzip(body io.ReadCloser) io.ReadCloser { return &gzipBody{body: body} }
