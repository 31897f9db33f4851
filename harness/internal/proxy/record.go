package proxy

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"informer-lab/lab/wire"
	// aliased: the package's tests have a flag named record
	labrecord "informer-lab/record"
)

// Recording mode (Options.Record) is what make observe runs: a client the project did not
// build (kubectl, a controller) talks to the proxy, and every request it makes is recorded on
// the upstream side by the labs' own logging RoundTripper (lab/wire), wrapped around the
// proxy's transport to the apiserver. Its records are a lab's wire log (HTTP, LIST,
// WATCH-EVENT, the end bookmark with its Body), with Source the client and Tag the resource
// each request was for (record.ResourceOf): on the wire, one informer per resource.

// Recorder writes the records of every client of one proxy to one output, as JSON lines. A
// client is one User-Agent on one connection: a lab's informers share one HTTP/2 connection
// and differ by their User-Agent, two kubectl processes by their connection.
type Recorder struct {
	outMu  sync.Mutex // one record at a time on out, whichever client's writer writes it
	out    io.Writer
	closed bool // the proxy was closed: nothing more is written

	// answered: a request for a collection (a LIST or a WATCH) has had its answer. Until then
	// a client is still finding its way (discovery, /version): make observe's writes wait for
	// it, so that they come after the client's view of the collection, not before.
	answered atomic.Bool

	mu      sync.Mutex
	conns   map[string]int // remote address -> connection number, from 1
	clients map[clientKey]*observed
	order   []*observed
	taken   map[string]bool // names given
}

// Client is one client the proxy has seen.
type Client struct {
	// Name is its records' Source: the product token of its User-Agent, safe as a file name
	// ("kubectl"), "client" if none; the next clients with the same one get "-2", "-3", in the
	// order of their first requests.
	Name      string
	UserAgent string
	Conn      int       // its connection, numbered in the order the proxy saw them, from 1
	Addr      string    // the connection's remote address
	First     time.Time // its first request
}

type clientKey struct{ addr, userAgent string }

type observed struct {
	Client
	out *labrecord.Writer
}

// NewRecorder returns a Recorder writing to out. It belongs to one proxy (Options.Record):
// the proxy's Close waits for every record in flight and then ends the recorder, so that
// nothing is written to out after Close returns.
func NewRecorder(out io.Writer) *Recorder {
	return &Recorder{out: out, conns: map[string]int{}, clients: map[clientKey]*observed{}, taken: map[string]bool{}}
}

// Clients returns the clients seen so far, in the order of their first requests.
func (r *Recorder) Clients() []Client {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]Client, len(r.order))
	for i, c := range r.order {
		out[i] = c.Client
	}
	return out
}

// wireFor returns the transport that records req: the wire around upstream, writing to req's
// client's records under the resource its path names. A client's first request writes its
// SETUP record, before any record of that request.
func (r *Recorder) wireFor(req *http.Request, upstream http.RoundTripper) http.RoundTripper {
	r.mu.Lock()
	c := r.clientOf(req)
	r.mu.Unlock()
	rt := wire.Wrap(labrecord.ResourceOf(req.URL.Path), c.out)(upstream)
	if !labrecord.ClassifyRequest(req.URL.Path, req.URL.RawQuery).Collection {
		return rt
	}
	return roundTripFunc(func(req *http.Request) (*http.Response, error) {
		resp, err := rt.RoundTrip(req)
		if err == nil {
			r.answered.Store(true)
		}
		return resp, err
	})
}

// AnsweredCollection reports whether any client's request for a collection (a LIST or a WATCH)
// has had its answer's headers: by then the server has taken the client's view of it.
func (r *Recorder) AnsweredCollection() bool { return r.answered.Load() }

type roundTripFunc func(*http.Request) (*http.Response, error)

func (f roundTripFunc) RoundTrip(req *http.Request) (*http.Response, error) { return f(req) }

// clientOf finds or adds req's client; r.mu is held.
func (r *Recorder) clientOf(req *http.Request) *observed {
	ua := req.Header.Get("User-Agent")
	key := clientKey{req.RemoteAddr, ua}
	if c, ok := r.clients[key]; ok {
		return c
	}
	conn, ok := r.conns[req.RemoteAddr]
	if !ok {
		conn = len(r.conns) + 1
		r.conns[req.RemoteAddr] = conn
	}
	c := &observed{
		Client: Client{Name: r.uniqueName(productName(ua)), UserAgent: ua, Conn: conn, Addr: req.RemoteAddr, First: time.Now()},
	}
	c.out = labrecord.NewWriter(c.Name, recorderOut{r}, nil)
	c.out.Write(labrecord.Record{Time: c.First, Kind: labrecord.Setup, Step: labrecord.StepClient, Value: ua,
		Detail: fmt.Sprintf("connection %d (%s)", conn, req.RemoteAddr)})
	r.clients[key] = c
	r.order = append(r.order, c)
	return c
}

// uniqueName is base, or base-2, base-3, ... if taken; r.mu is held.
func (r *Recorder) uniqueName(base string) string {
	name := base
	for n := 2; r.taken[name]; n++ {
		name = fmt.Sprintf("%s-%d", base, n)
	}
	r.taken[name] = true
	return name
}

// productName is the product token of a User-Agent, the text before the first "/" or space
// ("kubectl" of "kubectl/v1.32.0 (linux/amd64) kubernetes/abc"): client-go's default names the
// binary there. Every character but [a-zA-Z0-9._-] becomes "-", so that the name can name a
// file; "client" when nothing is left (or only dots).
func productName(userAgent string) string {
	token := strings.TrimSpace(userAgent)
	if i := strings.IndexAny(token, "/ "); i >= 0 {
		token = token[:i]
	}
	name := strings.Map(func(c rune) rune {
		switch {
		case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', c == '.', c == '_', c == '-':
			return c
		}
		return '-'
	}, token)
	if strings.Trim(name, ".") == "" {
		return "client"
	}
	return name
}

// close ends the recorder: what is written after (a record of a handler that outlived the
// proxy's Close) is dropped, since the caller may have closed out.
func (r *Recorder) close() {
	r.outMu.Lock()
	defer r.outMu.Unlock()
	r.closed = true
}

// recorderOut is the one output every client's record.Writer writes to.
type recorderOut struct{ r *Recorder }

func (o recorderOut) Write(p []byte) (int, error) {
	o.r.outMu.Lock()
	defer o.r.outMu.Unlock()
	if o.r.closed {
		return len(p), nil
	}
	return o.r.out.Write(p)
}

// recordKey is the context key under which ServeHTTP leaves a request's wire transport.
type recordKey struct{}

// withRecording returns req with its wire transport in its context (see recordingTransport).
func (r *Recorder) withRecording(req *http.Request, upstream http.RoundTripper) *http.Request {
	return req.WithContext(context.WithValue(req.Context(), recordKey{}, r.wireFor(req, upstream)))
}

// recordingTransport is the reverse proxy's transport in recording mode: each request goes
// through the wire transport ServeHTTP picked for its client and resource, which sends it on
// with next; a request without one (none is) goes to next as it is.
type recordingTransport struct{ next http.RoundTripper }

func (t recordingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if rt, ok := req.Context().Value(recordKey{}).(http.RoundTripper); ok {
		return rt.RoundTrip(req)
	}
	return t.next.RoundTrip(req)
}
