package proxy

import (
	"bytes"
	"compress/gzip"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"k8s.io/apimachinery/pkg/runtime/serializer/cbor"
	"k8s.io/client-go/rest"
)

// A streaming list whose initial events take longer than the watch timeout (kube-apiserver on a
// loaded machine) still gets every initial event and its end bookmark: the proxy ends it a watch
// timeout after the bookmark, cleanly, having passed byte for byte what the apiserver sent (in
// JSON, protobuf and CBOR; gzip-encoded, compressed again and ended with its trailer). A plain
// watch ends a watch timeout after its response. The apiserver is a stand-in that streams a
// recording, its initial events slowly, and, like kube-apiserver, ends each watch at its
// timeoutSeconds: a proxy that shortened timeoutSeconds fails this (kubernetes/kubernetes#134837).
func TestWatchTimeoutAfterEndBookmark(t *testing.T) {
	const timeout, delay = time.Second, 600 * time.Millisecond
	streams := loadRecordings(t)
	streams = append(streams, loadCBOR(t, "testdata/watchlist-widgets.cbor-seq"))
	cases := []struct {
		name      string
		rec       recorded
		gzip      bool
		streaming bool
	}{
		{"json", streams[0], false, true},
		{"protobuf", streams[1], false, true},
		{"cbor", streams[2], false, true},
		{"json gzip", streams[0], true, true},
		{"protobuf gzip", streams[1], true, true},
		{"plain watch", streams[0], false, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			up := &standIn{rec: c.rec, delay: delay, gzip: c.gzip}
			if c.streaming {
				up.end = endFrame(t, c.rec)
			}
			p, plog := startStandInProxy(t, up, timeout)
			query := "allowWatchBookmarks=true&timeoutSeconds=300&watch=true"
			if c.streaming {
				query += "&resourceVersionMatch=NotOlderThan&sendInitialEvents=true"
			}
			start := time.Now()
			body, err := watchThrough(t, p, query, c.rec.contentType, c.gzip)
			elapsed := time.Since(start)
			t.Logf("%d bytes in %s, then %v; proxy: %q", len(body), elapsed.Round(time.Millisecond), err, plog.grep("ended"))
			if err != nil {
				t.Errorf("the stream did not end cleanly: %v", err)
			}
			if !bytes.Equal(body, c.rec.data) {
				t.Errorf("the client got %d bytes, not the %d the apiserver sent (its initial events, end bookmark and later frames)", len(body), len(c.rec.data))
			}
			established := time.Duration(up.end) * delay
			if elapsed < established+timeout-100*time.Millisecond || elapsed > established+timeout+3*time.Second {
				t.Errorf("the watch ended after %s, want a watch timeout (%s) after it was established (%s)", elapsed, timeout, established)
			}
			if q := up.query(); !strings.Contains(q, "timeoutSeconds=300") {
				t.Errorf("the apiserver was asked %q, want the client's own timeoutSeconds=300", q)
			}
			since := map[bool]string{true: "its end bookmark", false: "its response"}[c.streaming]
			waitFor(t, "the proxy's account of the watch end", 2*time.Second, func() bool {
				return len(plog.grep("ended by the proxy, its watch timeout 1s after "+since)) == 1
			})
		})
	}
}

// endFrame is the index of a recording's end bookmark.
func endFrame(t *testing.T, rec recorded) int {
	t.Helper()
	if rec.contentType == cborSeq {
		return len(rec.frames) - 1 // its last frame (lab/wire/testdata/cbor-widgets.want)
	}
	return endBookmarkIndex(t, decodeStream(t, rec.contentType, rec.data))
}

// loadCBOR reads a CBOR watch stream that kube-apiserver sent (lab/wire's TestCBORFromServer
// saved it), split into its frames as on the wire: each item apimachinery's CBOR framer reads,
// after the self-described CBOR tag that the framer drops.
func loadCBOR(t *testing.T, file string) recorded {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	rec := recorded{file: file, contentType: cborSeq, data: data}
	r := cbor.NewFramer().NewFrameReader(io.NopCloser(bytes.NewReader(data)))
	buf := make([]byte, len(data))
	for {
		n, err := r.Read(buf)
		if err == io.EOF && bytes.Equal(bytes.Join(rec.frames, nil), data) {
			return rec
		}
		if err != nil {
			t.Fatalf("%s: %v, or its items are not each a self-described CBOR tag and an item", file, err)
		}
		rec.frames = append(rec.frames, append(append([]byte(nil), selfDescribedCBOR...), buf[:n]...))
	}
}

// standIn is kube-apiserver answering a watch with a recording: the frames up to the end
// bookmark (end) one every delay, then the rest at once; the response ends at the watch's
// timeoutSeconds, or when the client goes.
type standIn struct {
	rec   recorded
	end   int
	delay time.Duration
	gzip  bool // gzip-encoded, flushed after each frame

	mu      sync.Mutex
	queries []string
}

func (s *standIn) query() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.queries, " ")
}

func (s *standIn) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	s.queries = append(s.queries, r.URL.RawQuery)
	s.mu.Unlock()
	secs, _ := strconv.Atoi(r.URL.Query().Get("timeoutSeconds"))
	ends := time.After(time.Duration(secs) * time.Second)
	w.Header().Set("Content-Type", s.rec.contentType)
	var out io.Writer = w
	flush := func() { w.(http.Flusher).Flush() }
	if s.gzip {
		w.Header().Set("Content-Encoding", "gzip")
		zw := gzip.NewWriter(w)
		defer zw.Close()
		out, flush = zw, func() { zw.Flush(); w.(http.Flusher).Flush() }
	}
	w.WriteHeader(http.StatusOK)
	flush()
	for i, f := range s.rec.frames {
		if i > 0 && i <= s.end {
			select {
			case <-time.After(s.delay):
			case <-ends:
				return
			case <-r.Context().Done():
				return
			}
		}
		out.Write(f)
		flush()
	}
	select {
	case <-ends:
	case <-r.Context().Done():
	}
}

// startStandInProxy starts the stand-in apiserver (HTTP/2, TLS) and a proxy in front of it.
func startStandInProxy(t *testing.T, up http.Handler, timeout time.Duration) (*Proxy, *lines) {
	t.Helper()
	srv := httptest.NewUnstartedServer(up)
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	log := newLines(t, "proxy")
	p, err := Start(&rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{CAData: ca}}, Options{WatchTimeout: timeout, Log: log.add})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p, log
}

// watchThrough watches through the proxy over HTTP/2 and reads the whole response: its body
// (decompressed, when it asked for gzip) and how it ended (nil: cleanly).
func watchThrough(t *testing.T, p *Proxy, query, accept string, asksGzip bool) ([]byte, error) {
	t.Helper()
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(p.CAData())
	hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}}
	defer hc.CloseIdleConnections()
	req, _ := http.NewRequest(http.MethodGet, p.URL()+"/api/v1/namespaces/default/configmaps?"+query, nil)
	req.Header.Set("Accept", accept)
	if asksGzip {
		req.Header.Set("Accept-Encoding", "gzip") // asked by the client itself: read as sent
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.ProtoMajor != 2 || resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != accept {
		t.Errorf("got %s %s %s, want HTTP/2.0 200 %s", resp.Proto, resp.Status, resp.Header.Get("Content-Type"), accept)
	}
	if !asksGzip {
		return io.ReadAll(resp.Body)
	}
	if enc := resp.Header.Get("Content-Encoding"); enc != "gzip" {
		t.Errorf("Content-Encoding %q, want gzip as the apiserver sent it", enc)
	}
	zr, err := gzip.NewReader(resp.Body)
	if err != nil {
		return nil, err
	}
	return io.ReadAll(zr) // io.ErrUnexpectedEOF without the gzip trailer
}
