package wire_test

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"flag"
	"fmt"
	"io"
	"maps"
	"mime"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"informer-lab/lab/controlplane"
	"informer-lab/lab/labtest"
	"informer-lab/lab/wire"
	"informer-lab/record"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

var updateGzip = flag.Bool("update-gzip", false, "rewrite testdata/"+gzipStream+" and its .want with what TestGzipWatchListFromServer's kube-apiserver 1.37.2 sent")

const (
	gzipNS = "gzip"
	// gzipStream is a real watch-list stream of kube-apiserver 1.37.2 (WatchListCompression on,
	// its default), its body as it came off the connection: recorded by
	// `GOWORK=off go test ./wire/ -run TestGzipWatchListFromServer -update-gzip`, which sends
	// Accept-Encoding: gzip itself (so that Go's transport hands the body up compressed) and keeps
	// the gzip members up to and with the one that carries the initial-events-end bookmark, and
	// one more: that of a ConfigMap created after it. Its .want holds the response's Content-Type and the events, decoded from the file with
	// encoding/json alone.
	gzipStream      = "gzip-configmaps-watchlist.json.gz"
	watchListQuery  = "allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&sendInitialEvents=true&watch=true"
	gzipServer      = "1.37.2"
	contentTypeLine = "Content-Type: "
)

// A LIST above 128 KiB from a real kube-apiserver (1.32.13) comes gzipped: the wire must say so,
// count it compressed and decompressed, and the client must read what it reads without the
// wire; with DisableCompression, and below 128 KiB, nothing is encoded.
func TestGzipListFromServer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cp := startControlPlane(t, ctx, "")
	created := createConfigMaps(t, ctx, cp.Config, 40, 8<<10)

	gz := newWired(t, cp.Config, false, nil)
	list, err := gz.cs.CoreV1().ConfigMaps(gzipNS).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if got := dataOf(list.Items); !maps.Equal(got, created) {
		t.Errorf("the client read %d ConfigMaps, not the %d created (or not their data)", len(got), len(created))
	}
	exact := metav1.ListOptions{ResourceVersion: list.ResourceVersion, ResourceVersionMatch: metav1.ResourceVersionMatchExact}
	plain := newWired(t, cp.Config, false, func(c *rest.Config) { c.DisableCompression = true })
	if _, err := plain.cs.CoreV1().ConfigMaps(gzipNS).List(ctx, exact); err != nil {
		t.Fatal(err)
	}

	gzHTTP, gzList := gz.listRecords(t, len(created))
	plainHTTP, plainList := plain.listRecords(t, len(created))
	t.Logf("LIST of %d ConfigMaps: %d bytes on the wire (%s), %d decoded; with DisableCompression %d", len(created), gzList.Body.Wire, gzHTTP.Encoding, gzList.Body.Decoded, plainList.Body.Wire)
	if gzHTTP.Encoding != "gzip" || plainHTTP.Encoding != "" {
		t.Errorf("encodings %q and, with DisableCompression, %q; want gzip and none", gzHTTP.Encoding, plainHTTP.Encoding)
	}
	if b := gzList.Body; b.Wire >= b.Decoded || b.Decoded != plainList.Body.Decoded {
		t.Errorf("gzipped LIST body %+v: want wire < decoded = the uncompressed LIST's %d", *b, plainList.Body.Decoded)
	}
	if b := plainList.Body; b.Wire != b.Decoded {
		t.Errorf("uncompressed LIST body %+v: want wire = decoded", *b)
	}
	checkStats(t, "gzip", gz.counts.Stats(), record.Stats{Requests: 1, Bytes: gzList.Body.Decoded, WireBytes: gzList.Body.Wire, ContentTypes: jsonType})
	checkStats(t, "DisableCompression", plain.counts.Stats(), record.Stats{Requests: 1, Bytes: plainList.Body.Decoded, WireBytes: plainList.Body.Decoded, ContentTypes: jsonType})

	t.Run("quiet", func(t *testing.T) {
		quiet := newWired(t, cp.Config, true, nil)
		if _, err := quiet.cs.CoreV1().ConfigMaps(gzipNS).List(ctx, exact); err != nil {
			t.Fatal(err)
		}
		if len(quiet.logs.Bytes()) != 0 {
			t.Errorf("quiet mode wrote records:\n%s", quiet.logs.Bytes())
		}
		// the same LIST at the same rv: the same body, gzipped alike
		checkStats(t, "quiet", quiet.counts.Stats(), record.Stats{Requests: 1, Bytes: gzList.Body.Decoded, WireBytes: gzList.Body.Wire, ContentTypes: jsonType})
	})
	// A client that asks for gzip itself (a proxy's) reads the LIST compressed, byte for byte as
	// the server sent it; the wire decodes and sizes it as it does the LIST it asked gzipped.
	t.Run("the client's own gzip", func(t *testing.T) {
		own := &ownGzip{raw: &labtest.Buffer{}}
		w := newWired(t, cp.Config, false, nil, own.wrap)
		list, err := w.cs.CoreV1().ConfigMaps(gzipNS).List(ctx, exact)
		if err != nil {
			t.Fatal(err)
		}
		if got := dataOf(list.Items); !maps.Equal(got, created) {
			t.Errorf("the client read %d ConfigMaps, not the %d created (or not their data)", len(got), len(created))
		}
		h, l := w.listRecords(t, len(created))
		if h.Encoding != "gzip" || *l.Body != *gzList.Body {
			t.Errorf("encoding %q, LIST body %+v; want gzip and the gzipped LIST's %+v", h.Encoding, *l.Body, *gzList.Body)
		}
		checkStats(t, "the client's own gzip", w.counts.Stats(), record.Stats{Requests: 1, Bytes: gzList.Body.Decoded, WireBytes: gzList.Body.Wire, ContentTypes: jsonType})
		// the same request without the wire in between
		rt, err := rest.TransportFor(cp.Config)
		if err != nil {
			t.Fatal(err)
		}
		url := strings.TrimSuffix(cp.Config.Host, "/") + h.Path + "?" + h.Query
		_, direct, err := get(rt, url, http.Header{"Accept": {h.Accept}, "Accept-Encoding": {"gzip"}})
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(own.raw.Bytes(), direct) {
			t.Errorf("through the wire the client read %d bytes, without it %d (or other bytes)", len(own.raw.Bytes()), len(direct))
		}
	})
	t.Run("small LIST", func(t *testing.T) {
		small := newWired(t, cp.Config, false, nil)
		two := exact
		two.Limit = 2 // two 8 KiB ConfigMaps: below 128 KiB
		if _, err := small.cs.CoreV1().ConfigMaps(gzipNS).List(ctx, two); err != nil {
			t.Fatal(err)
		}
		h, l := small.listRecords(t, 2)
		if h.Encoding != "" || l.Body.Wire != l.Body.Decoded {
			t.Errorf("a LIST of %d bytes: encoding %q, body %+v; want none, wire = decoded", l.Body.Decoded, h.Encoding, *l.Body)
		}
	})
	t.Run("watch-list before 1.37", func(t *testing.T) {
		w := newWired(t, cp.Config, false, nil)
		h, end, _ := w.watchList(t, ctx)
		if h.Encoding != "" || end.Body.Wire != end.Body.Decoded {
			t.Errorf("%s's streaming list: encoding %q, end bookmark body %+v; want none (no WatchListCompression before 1.37), wire = decoded", cp.ServerVersion, h.Encoding, *end.Body)
		}
	})
}

// kube-apiserver 1.37 gzips a whole watch-list stream (WatchListCompression, on by default),
// one gzip member per flush: the wire must say so and size the stream up to its end bookmark
// both ways, on 1.37.2 (make check, which builds it); TestGzipWatchListTestdata replays its
// recorded stream in make test.
func TestGzipWatchListFromServer(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cp := labtest.StartServer(t, ctx, gzipServer)
	createConfigMaps(t, ctx, cp.Config, 12, 4<<10)
	admin, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}

	gz := newWired(t, cp.Config, false, nil)
	h, end, events := gz.watchList(t, ctx)
	t.Logf("%s's streaming list of 12 ConfigMaps up to its end bookmark: %d bytes on the wire (%s), %d decoded", cp.ServerVersion, end.Body.Wire, h.Encoding, end.Body.Decoded)
	if h.Encoding != "gzip" || end.Body.Wire >= end.Body.Decoded {
		t.Errorf("streaming list: encoding %q, end bookmark body %+v; want gzip, wire < decoded", h.Encoding, *end.Body)
	}
	if s := gz.counts.Stats(); s.Requests != 1 || s.Events != events || s.WireBytes < end.Body.Wire || s.Bytes < end.Body.Decoded || s.WireBytes >= s.Bytes {
		t.Errorf("stats %+v after %d events, the end bookmark's body %+v", *s, events, *end.Body)
	}

	// a client asking for gzip itself reads the stream compressed; the wire sizes it alike
	own := &ownGzip{raw: &labtest.Buffer{}}
	ownWired := newWired(t, cp.Config, false, nil, own.wrap)
	h, end, events = ownWired.watchList(t, ctx)
	t.Logf("the client's own gzip: %s, end bookmark body %+v", h.Encoding, *end.Body)
	if h.Encoding != "gzip" || end.Body.Wire >= end.Body.Decoded {
		t.Errorf("the client's own gzip: encoding %q, end bookmark body %+v; want gzip, wire < decoded", h.Encoding, *end.Body)
	}
	if s := ownWired.counts.Stats(); s.Requests != 1 || s.Events != events || s.WireBytes != int64(len(own.raw.Bytes())) || s.Bytes < end.Body.Decoded || s.WireBytes >= s.Bytes {
		t.Errorf("the client's own gzip: stats %+v after %d events, %d bytes read by the client, the end bookmark's body %+v", *s, events, len(own.raw.Bytes()), *end.Body)
	}

	plain := newWired(t, cp.Config, false, func(c *rest.Config) { c.DisableCompression = true })
	h, end, _ = plain.watchList(t, ctx)
	t.Logf("with DisableCompression: %s, %+v", h.Encoding, *end.Body)
	if h.Encoding != "" || end.Body.Wire != end.Body.Decoded {
		t.Errorf("DisableCompression: encoding %q, end bookmark body %+v; want none, wire = decoded", h.Encoding, *end.Body)
	}

	// a write after the end bookmark comes in a gzip member of its own
	raw, contentType := captureWatchList(t, ctx, cp.Config, func() {
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: "after-sync"}, Data: map[string]string{"tick": "1"}}
		if _, err := admin.CoreV1().ConfigMaps(gzipNS).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
	})
	members := gzipMembers(t, raw)
	t.Logf("raw capture: %d bytes in %d gzip members (%d through the end bookmark's), %s", len(raw), len(members), endMember(t, members)+1, contentType)
	if n := len(members); n < 2 || endMember(t, members) != n-2 {
		t.Errorf("%d gzip members, the end bookmark in member %d: want the write after it in a member of its own", n, endMember(t, members))
	}
	if *updateGzip {
		want := append([]string{contentTypeLine + contentType}, jsonEvents(t, gunzip(t, raw))...)
		writeFile(t, gzipStream, raw)
		writeFile(t, strings.TrimSuffix(gzipStream, ".json.gz")+".want", []byte(strings.Join(want, "\n")+"\n"))
	}
}

// The recorded 1.37.2 stream, served again gzipped (over TLS and HTTP/2, as kube-apiserver
// does), through the wire on Go's transport: the client reads what it reads without the wire,
// the request carries the Accept-Encoding Go would have sent, and the wire's sizes are the
// file's.
func TestGzipWatchListTestdata(t *testing.T) {
	file := readFile(t, gzipStream)
	want := strings.Split(strings.TrimSpace(string(readFile(t, strings.TrimSuffix(gzipStream, ".json.gz")+".want"))), "\n")
	contentType, wantEvents := strings.TrimPrefix(want[0], contentTypeLine), want[1:]
	decoded := gunzip(t, file)
	if got := jsonEvents(t, decoded); strings.Join(got, "\n") != strings.Join(wantEvents, "\n") {
		t.Fatalf("the recorded stream decodes to\n  %s\nnot its .want", strings.Join(got, "\n  "))
	}
	// The stream up to and with the end bookmark's gzip member: endWire bytes, endDecoded
	// decompressed. The wire sizes it when it decodes the bookmark: by then the client has read
	// at least up to its closing brace, and the gzip reader has taken at least the compressed
	// bytes that decode to that; the server sends nothing more until then.
	members := gzipMembers(t, file)
	var endWire int64
	for _, m := range members[:endMember(t, members)+1] {
		endWire += int64(len(m))
	}
	endDecoded := int64(len(gunzip(t, file[:endWire])))
	objEnd := endDecoded - 1 // its "\n"
	needed := compressedFor(t, file, objEnd)
	srv := serveEncoded(t, contentType, members, decoded, -1)
	cfg := clientConfig(srv)

	t.Run("gzip", func(t *testing.T) {
		srv := serveEncoded(t, contentType, members, decoded, endMember(t, members))
		w := newWired(t, clientConfig(srv), false, nil)
		lines := watchToEnd(t, w.cs, srv, w.logs)
		h, end := w.streamRecords(t, lines)
		if g := srv.acceptEncoding(); g != "gzip" {
			t.Errorf("the server got Accept-Encoding %q, want gzip, as Go sends it", g)
		}
		if h.Encoding != "gzip" || h.ContentType != contentType {
			t.Errorf("HTTP record: %s", h.Text())
		}
		if b := end.Body; b.Decoded < objEnd || b.Decoded > endDecoded || b.Wire < needed || b.Wire > endWire {
			t.Errorf("end bookmark body %+v: want decoded in [%d, %d], wire in [%d, %d]", *b, objEnd, endDecoded, needed, endWire)
		}
		t.Logf("end bookmark body %+v (the stream through its gzip member: %d bytes, %d decompressed; the file: %d bytes in %d members, %d decompressed)", *end.Body, endWire, endDecoded, len(file), len(members), len(decoded))
		checkStats(t, "gzip", w.counts.Stats(), record.Stats{Requests: 1, Bytes: int64(len(decoded)), WireBytes: int64(len(file)), Events: len(wantEvents), ContentTypes: []string{mediaType(t, contentType)}})
		if strings.Join(lines, "\n") != strings.Join(wantEvents, "\n") {
			t.Errorf("the client read\n  %s\nwant\n  %s", strings.Join(lines, "\n  "), strings.Join(wantEvents, "\n  "))
		}
	})
	// What a proxy's wire sees: its client asks for gzip and decompresses itself; the wire between
	// hands the body on as it came and decodes a gunzipped copy.
	t.Run("the client's own gzip", func(t *testing.T) {
		srv := serveEncoded(t, contentType, members, decoded, endMember(t, members))
		own := &ownGzip{raw: &labtest.Buffer{}}
		w := newWired(t, clientConfig(srv), false, nil, own.wrap)
		lines := watchToEnd(t, w.cs, srv, w.logs)
		h, end := w.streamRecords(t, lines)
		if g := srv.acceptEncoding(); g != "gzip" || h.Encoding != "gzip" || h.ContentType != contentType {
			t.Errorf("the server got Accept-Encoding %q; HTTP record: %s", g, h.Text())
		}
		if !bytes.Equal(own.raw.Bytes(), file) {
			t.Errorf("the client read %d bytes off the wire, not the %d the server sent", len(own.raw.Bytes()), len(file))
		}
		if b := end.Body; b.Decoded < objEnd || b.Decoded > endDecoded || b.Wire < needed || b.Wire > endWire {
			t.Errorf("end bookmark body %+v: want decoded in [%d, %d], wire in [%d, %d]", *b, objEnd, endDecoded, needed, endWire)
		}
		t.Logf("end bookmark body %+v", *end.Body)
		checkStats(t, "the client's own gzip", w.counts.Stats(), record.Stats{Requests: 1, Bytes: int64(len(decoded)), WireBytes: int64(len(file)), Events: len(wantEvents), ContentTypes: []string{mediaType(t, contentType)}})
		if strings.Join(lines, "\n") != strings.Join(wantEvents, "\n") {
			t.Errorf("the client read\n  %s\nwant\n  %s", strings.Join(lines, "\n  "), strings.Join(wantEvents, "\n  "))
		}
	})
	t.Run("without the wire", func(t *testing.T) {
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if lines := watchToEnd(t, cs, srv, nil); strings.Join(lines, "\n") != strings.Join(wantEvents, "\n") {
			t.Errorf("the client alone read\n  %s", strings.Join(lines, "\n  "))
		}
		if g := srv.acceptEncoding(); g != "gzip" {
			t.Errorf("Go's transport sent Accept-Encoding %q", g)
		}
	})
	t.Run("DisableCompression", func(t *testing.T) {
		w := newWired(t, cfg, false, func(c *rest.Config) { c.DisableCompression = true })
		lines := watchToEnd(t, w.cs, srv, nil)
		h, end := w.streamRecords(t, lines)
		if g := srv.acceptEncoding(); g != "" || h.Encoding != "" || end.Body.Wire != end.Body.Decoded {
			t.Errorf("Accept-Encoding %q, encoding %q, end bookmark body %+v: want none, none, wire = decoded", g, h.Encoding, *end.Body)
		}
		checkStats(t, "DisableCompression", w.counts.Stats(), record.Stats{Requests: 1, Bytes: int64(len(decoded)), WireBytes: int64(len(decoded)), Events: len(wantEvents), ContentTypes: []string{mediaType(t, contentType)}})
	})
	t.Run("quiet", func(t *testing.T) {
		w := newWired(t, cfg, true, nil)
		if lines := watchToEnd(t, w.cs, srv, nil); len(lines) != len(wantEvents) {
			t.Errorf("the client read %d events, want %d", len(lines), len(wantEvents))
		}
		if len(w.logs.Bytes()) != 0 {
			t.Errorf("quiet mode wrote records:\n%s", w.logs.Bytes())
		}
		checkStats(t, "quiet", w.counts.Stats(), record.Stats{Requests: 1, Bytes: int64(len(decoded)), WireBytes: int64(len(file)), ContentTypes: []string{mediaType(t, contentType)}})
	})
	t.Run("quiet, the client's own gzip", func(t *testing.T) {
		own := &ownGzip{raw: &labtest.Buffer{}}
		w := newWired(t, cfg, true, nil, own.wrap)
		if lines := watchToEnd(t, w.cs, srv, nil); len(lines) != len(wantEvents) {
			t.Errorf("the client read %d events, want %d", len(lines), len(wantEvents))
		}
		if len(w.logs.Bytes()) != 0 || !bytes.Equal(own.raw.Bytes(), file) {
			t.Errorf("quiet mode wrote %d bytes of records; the client read %d bytes off the wire, want the %d sent", len(w.logs.Bytes()), len(own.raw.Bytes()), len(file))
		}
		checkStats(t, "quiet, the client's own gzip", w.counts.Stats(), record.Stats{Requests: 1, Bytes: int64(len(decoded)), WireBytes: int64(len(file)), ContentTypes: []string{mediaType(t, contentType)}})
	})

	// Raw requests, the wire straight on a transport.
	goTransport := srv.Client().Transport.(*http.Transport)
	url := srv.URL + "/api/v1/namespaces/" + gzipNS + "/configmaps?" + watchListQuery
	tests := []struct {
		name         string
		below        http.RoundTripper // what the wire wraps
		header       http.Header       // the caller's
		wantSent     string            // what the server gets
		wantEncoding string            // the HTTP record's
		wantBody     []byte            // what the client reads
		wantFault    bool              // the wire does not decode (an encoding other than gzip)
	}{
		{"Go's transport", goTransport, nil, "gzip", "gzip", decoded, false},
		{"behind a RoundTripperWrapper", wrapper{goTransport}, nil, "gzip", "gzip", decoded, false},
		// a proxy's case: the client decompresses, the wire decodes a gunzipped copy
		{"caller's own Accept-Encoding", goTransport, http.Header{"Accept-Encoding": {"gzip"}}, "gzip", "gzip", file, false},
		{"caller's own, another encoding", relabeled{goTransport, "deflate"}, http.Header{"Accept-Encoding": {"gzip"}}, "gzip", "deflate", file, true},
		{"caller's Range", goTransport, http.Header{"Range": {"bytes=0-"}}, "", "", decoded, false},
		// Go's transport asks below the wire, and takes the gzip off out of its sight
		{"not Go's transport", opaque{goTransport}, nil, "gzip", "", decoded, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logs, counts := &bytes.Buffer{}, &wire.Counters{}
			rt := wire.WrapCounting("T", record.NewWriter("test", logs, nil), counts, false)(tt.below)
			resp, body, err := get(rt, url, tt.header)
			if err != nil {
				t.Fatal(err)
			}
			if g := srv.acceptEncoding(); g != tt.wantSent {
				t.Errorf("the server got Accept-Encoding %q, want %q", g, tt.wantSent)
			}
			if !bytes.Equal(body, tt.wantBody) {
				t.Errorf("the client read %d bytes, want %d", len(body), len(tt.wantBody))
			}
			// as Go's transport leaves a response it decompressed, or one it did not
			compressed, decompressed := bytes.Equal(tt.wantBody, file), tt.wantSent == "gzip" && !bytes.Equal(tt.wantBody, file)
			if g := resp.Header.Get("Content-Encoding"); (g != "") != compressed || resp.Uncompressed != decompressed || (decompressed && resp.ContentLength != -1) {
				t.Errorf("the client's response: Content-Encoding %q, Uncompressed %v, ContentLength %d", g, resp.Uncompressed, resp.ContentLength)
			}
			recs, err := record.Read(logs, t.Name())
			if err != nil {
				t.Fatal(err)
			}
			var faults int
			var events []string
			for _, r := range recs {
				t.Log(r.Text())
				if r.Kind == record.HTTP && r.Encoding != tt.wantEncoding {
					t.Errorf("HTTP record's encoding %q, want %q", r.Encoding, tt.wantEncoding)
				}
				if r.Kind == record.Setup {
					faults++
				}
				if l := wireLine(r); l != "" {
					events = append(events, l)
				}
			}
			if (faults > 0) != tt.wantFault {
				t.Errorf("%d fault records, want them: %v", faults, tt.wantFault)
			}
			if !tt.wantFault && strings.Join(events, "\n") != strings.Join(wantEvents, "\n") {
				t.Errorf("the wire recorded\n  %s\nwant\n  %s", strings.Join(events, "\n  "), strings.Join(wantEvents, "\n  "))
			}
			// off the connection: the body as the server sent it; decoded: gunzipped, by the
			// client's transport or the wire's, when it was gzip
			wireBytes, decodedBytes := int64(len(body)), int64(len(body))
			if tt.wantEncoding != "" {
				wireBytes = int64(len(file))
			}
			if tt.wantEncoding == "gzip" {
				decodedBytes = int64(len(decoded))
			}
			if s := counts.Stats(); s.Bytes != decodedBytes || s.WireBytes != wireBytes {
				t.Errorf("stats %+v, want bytes %d, wire %d", *s, decodedBytes, wireBytes)
			}
		})
	}
}

// A gzipped body that turns out broken fails the client's reads as it fails them without the
// wire, and RoundTrip returns before the body (the gzip header) has come.
func TestGzipLikeGo(t *testing.T) {
	file := readFile(t, gzipStream)
	decoded := gunzip(t, file)
	flipped := bytes.Clone(file)
	flipped[len(flipped)-5] ^= 0xff // the last member's CRC
	corrupt := bytes.Clone(file)
	for i := len(corrupt) / 2; i < len(corrupt)/2+16; i++ {
		corrupt[i] = 0xff
	}
	for _, tt := range []struct {
		name string
		body []byte
	}{
		{"whole", file},
		{"truncated", file[:len(file)/2]},
		{"bad checksum", flipped},
		{"corrupt", corrupt},
		{"not gzip", decoded},
		{"empty", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			srv := serveEncoded(t, "application/json", [][]byte{tt.body}, nil, -1)
			url := srv.URL + "/api/v1/namespaces/" + gzipNS + "/configmaps?" + watchListQuery
			goTransport := srv.Client().Transport.(*http.Transport)
			_, alone, errAlone := get(goTransport, url, nil)
			rt := wire.Wrap("T", record.NewWriter("test", io.Discard, nil))(goTransport)
			_, wired, errWired := get(rt, url, nil)
			if !bytes.Equal(alone, wired) || fmt.Sprint(errAlone) != fmt.Sprint(errWired) {
				t.Errorf("without the wire the client read %d bytes, then %v; through it %d bytes, then %v", len(alone), errAlone, len(wired), errWired)
			}
			t.Logf("%d bytes, then %v", len(wired), errWired)
		})
	}

	t.Run("lazy", func(t *testing.T) {
		release := make(chan struct{})
		srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			w.Header().Set("Content-Encoding", "gzip")
			w.WriteHeader(http.StatusOK)
			w.(http.Flusher).Flush() // the headers, as kube-apiserver's BeginStream does
			<-release
			w.Write(file)
		}))
		srv.EnableHTTP2 = true
		srv.StartTLS()
		defer srv.Close()
		unblock := sync.OnceFunc(func() { close(release) })
		defer unblock() // before Close, which waits for the handler
		rt := wire.Wrap("T", record.NewWriter("test", io.Discard, nil))(srv.Client().Transport)
		type result struct {
			resp *http.Response
			err  error
		}
		got := make(chan result, 1)
		go func() {
			req, _ := http.NewRequest(http.MethodGet, srv.URL+"/api/v1/configmaps?"+watchListQuery, nil)
			resp, err := rt.RoundTrip(req)
			got <- result{resp, err}
		}()
		var r result
		select {
		case r = <-got:
		case <-time.After(10 * time.Second):
			t.Fatal("RoundTrip is waiting for the body")
		}
		if r.err != nil {
			t.Fatal(r.err)
		}
		defer r.resp.Body.Close()
		unblock()
		if body, err := io.ReadAll(r.resp.Body); err != nil || !bytes.Equal(body, decoded) {
			t.Errorf("after the body came, the client read %d bytes (want %d), then %v", len(body), len(decoded), err)
		}
	})
}

// wired is a clientset whose requests go through the wire, with the wire's log and counts.
type wired struct {
	cs     kubernetes.Interface
	logs   *labtest.Buffer
	counts *wire.Counters
}

// newWired's edit changes the config below the wire; outer wrap the wire, in the client's place.
func newWired(t *testing.T, cfg *rest.Config, quiet bool, edit func(*rest.Config), outer ...func(http.RoundTripper) http.RoundTripper) wired {
	t.Helper()
	w := wired{logs: &labtest.Buffer{}, counts: &wire.Counters{}}
	cfg = rest.CopyConfig(cfg)
	if edit != nil {
		edit(cfg)
	}
	cfg.Wrap(wire.WrapCounting("T", record.NewWriter("test", w.logs, nil), w.counts, quiet))
	for _, o := range outer {
		cfg.Wrap(o)
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	w.cs = cs
	return w
}

func (w wired) records(t *testing.T) []record.Record {
	t.Helper()
	recs, err := record.Read(bytes.NewReader(w.logs.Bytes()), t.Name())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		if r.Kind == record.Setup {
			t.Errorf("wire: %s", r.Text())
		}
	}
	return recs
}

// listRecords returns the one request's HTTP record and its LIST record, of n items.
func (w wired) listRecords(t *testing.T, n int) (h, list record.Record) {
	t.Helper()
	recs := w.records(t)
	if len(recs) != 2 || recs[0].Kind != record.HTTP || recs[1].Kind != record.List || recs[1].Body == nil {
		t.Fatalf("want an HTTP and a LIST record with a body, got %v", recs)
	}
	if len(recs[1].Items) != n {
		t.Errorf("LIST record of %d items, want %d", len(recs[1].Items), n)
	}
	return recs[0], recs[1]
}

// watchList opens a streaming list of namespace gzip's ConfigMaps and reads it to its end
// bookmark; it returns the HTTP record, the end bookmark's record and the number of events.
func (w wired) watchList(t *testing.T, ctx context.Context) (h, end record.Record, events int) {
	t.Helper()
	ww, err := w.cs.CoreV1().ConfigMaps(gzipNS).Watch(ctx, metav1.ListOptions{SendInitialEvents: ptr(true), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true})
	if err != nil {
		t.Fatal(err)
	}
	lines := readEvents(t, ctx, ww, func(_ []string, ev watch.Event) bool {
		m, err := meta.Accessor(ev.Object)
		return ev.Type == watch.Bookmark && err == nil && m.GetAnnotations()[endAnnotation] == "true"
	})
	h, end = w.streamRecords(t, lines)
	return h, end, len(lines)
}

// streamRecords checks that the wire's event records are the client's lines and returns the
// HTTP record and the end bookmark's record, which must carry a body.
func (w wired) streamRecords(t *testing.T, lines []string) (h, end record.Record) {
	t.Helper()
	var got []string
	for _, r := range w.records(t) {
		switch {
		case r.Kind == record.HTTP:
			h = r
		case record.IsEndBookmark(r):
			end = r
		}
		if l := wireLine(r); l != "" {
			got = append(got, l)
		}
	}
	if strings.Join(got, "\n") != strings.Join(lines, "\n") {
		t.Errorf("the wire recorded\n  %s\nthe client read\n  %s", strings.Join(got, "\n  "), strings.Join(lines, "\n  "))
	}
	if end.Body == nil {
		t.Fatalf("no end bookmark with a body among the wire's records")
	}
	return h, end
}

// watchToEnd watches srv's stream until it ends, and returns the client's lines. When the
// client has read the end bookmark, it waits for the wire's record of it in logs (if not nil)
// and then resumes srv if it paused: a live stream has more only after a write.
func watchToEnd(t *testing.T, cs kubernetes.Interface, srv *encodedServer, logs *labtest.Buffer) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	w, err := cs.CoreV1().ConfigMaps(gzipNS).Watch(ctx, metav1.ListOptions{SendInitialEvents: ptr(true), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	var lines []string
	for ev := range w.ResultChan() {
		m, err := meta.Accessor(ev.Object)
		if err != nil {
			t.Fatalf("event %s: %v", ev.Type, err)
		}
		var annotations map[string]string
		if ev.Type == watch.Bookmark {
			annotations = m.GetAnnotations()
		}
		lines = append(lines, eventLine(string(ev.Type), m.GetNamespace(), m.GetName(), m.GetResourceVersion(), annotations))
		if annotations[endAnnotation] == "true" {
			for logs != nil && !bytes.Contains(logs.Bytes(), []byte(endAnnotation)) {
				if ctx.Err() != nil {
					t.Fatal("the wire did not record the end bookmark")
				}
				time.Sleep(5 * time.Millisecond)
			}
			if srv.pauseAfter >= 0 {
				srv.resume <- struct{}{}
			}
		}
	}
	return lines
}

func checkStats(t *testing.T, what string, got *record.Stats, want record.Stats) {
	t.Helper()
	if !reflect.DeepEqual(*got, want) {
		t.Errorf("%s: stats %+v, want %+v", what, *got, want)
	}
}

// jsonType is Stats.ContentTypes of an informer whose responses were all JSON.
var jsonType = []string{"application/json"}

// mediaType is a Content-Type without its parameters, as Stats.ContentTypes holds it.
func mediaType(t *testing.T, contentType string) string {
	t.Helper()
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		t.Fatalf("content type %q: %v", contentType, err)
	}
	return mt
}

// createConfigMaps creates namespace gzip and n ConfigMaps in it, each with size bytes of
// random base64 text (which gzip shrinks by a quarter, no more), and returns their data.
func createConfigMaps(t *testing.T, ctx context.Context, cfg *rest.Config, n, size int) map[string]string {
	t.Helper()
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if err := controlplane.EnsureNamespace(ctx, cs, gzipNS); err != nil {
		t.Fatal(err)
	}
	data := map[string]string{}
	for i := range n {
		random := make([]byte, size*3/4)
		rand.Read(random)
		cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("cm-%02d", i)}, Data: map[string]string{"random": base64.StdEncoding.EncodeToString(random)}}
		if _, err := cs.CoreV1().ConfigMaps(gzipNS).Create(ctx, cm, metav1.CreateOptions{}); err != nil {
			t.Fatal(err)
		}
		data[cm.Name] = cm.Data["random"]
	}
	return data
}

func dataOf(items []corev1.ConfigMap) map[string]string {
	m := map[string]string{}
	for _, cm := range items {
		m[cm.Name] = cm.Data["random"]
	}
	return m
}

// captureWatchList reads a streaming list with Accept-Encoding: gzip set by itself, so that
// Go's transport hands the body up as it came off the connection, up to and with the gzip
// member that carries the end bookmark; then calls then, and reads one gzip member more. It
// returns the bytes read and the Content-Type.
func captureWatchList(t *testing.T, ctx context.Context, cfg *rest.Config, then func()) ([]byte, string) {
	t.Helper()
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		t.Fatal(err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimSuffix(cfg.Host, "/")+"/api/v1/namespaces/"+gzipNS+"/configmaps?"+watchListQuery, nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("Accept-Encoding", "gzip")
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Encoding") != "gzip" {
		t.Fatalf("%s answered %s, Content-Encoding %q", req.URL, resp.Status, resp.Header.Get("Content-Encoding"))
	}
	// gzip reads a member exactly, from a ByteReader, and stops at its end when not multistream
	taken := &keptReader{r: bufio.NewReader(resp.Body)}
	zr, err := gzip.NewReader(taken)
	if err != nil {
		t.Fatal(err)
	}
	zr.Multistream(false)
	var decoded bytes.Buffer
	for synced := false; ; {
		if _, err := io.Copy(&decoded, zr); err != nil {
			t.Fatal(err)
		}
		if synced {
			return taken.kept.Bytes(), resp.Header.Get("Content-Type")
		}
		if synced = bytes.Contains(decoded.Bytes(), endMarker); synced {
			then()
		}
		if err := zr.Reset(taken); err != nil {
			t.Fatal(err)
		}
		zr.Multistream(false) // Reset turns it on again
	}
}

// endMarker is the end bookmark's annotation in JSON.
var endMarker = []byte(`"` + endAnnotation + `":"true"`)

// gzipMembers splits a gzip stream into its members.
func gzipMembers(t *testing.T, b []byte) [][]byte {
	t.Helper()
	var members [][]byte
	r := bytes.NewReader(b)
	zr, err := gzip.NewReader(r)
	for start := 0; err == nil; err = zr.Reset(r) {
		zr.Multistream(false)
		if _, err := io.Copy(io.Discard, zr); err != nil {
			t.Fatal(err)
		}
		end := len(b) - r.Len()
		members, start = append(members, b[start:end]), end
	}
	if err != io.EOF {
		t.Fatal(err)
	}
	return members
}

// endMember returns the index of the member that carries the end bookmark.
func endMember(t *testing.T, members [][]byte) int {
	t.Helper()
	for i, m := range members {
		if bytes.Contains(gunzip(t, m), endMarker) {
			return i
		}
	}
	t.Fatal("no end bookmark in the stream")
	return -1
}

// keptReader keeps the bytes read from it.
type keptReader struct {
	r    *bufio.Reader
	kept bytes.Buffer
}

func (k *keptReader) Read(p []byte) (int, error) {
	n, err := k.r.Read(p)
	k.kept.Write(p[:n])
	return n, err
}

func (k *keptReader) ReadByte() (byte, error) {
	b, err := k.r.ReadByte()
	if err == nil {
		k.kept.WriteByte(b)
	}
	return b, err
}

// jsonEvents decodes a JSON watch stream with encoding/json alone, to the lines eventLine makes.
func jsonEvents(t *testing.T, stream []byte) []string {
	t.Helper()
	var lines []string
	dec := json.NewDecoder(bytes.NewReader(stream))
	for dec.More() {
		var ev struct {
			Type   string
			Object struct{ Metadata metav1.ObjectMeta }
		}
		if err := dec.Decode(&ev); err != nil {
			t.Fatal(err)
		}
		m := ev.Object.Metadata
		var annotations map[string]string
		if ev.Type == string(watch.Bookmark) {
			annotations = m.Annotations
		}
		lines = append(lines, eventLine(ev.Type, m.Namespace, m.Name, m.ResourceVersion, annotations))
	}
	return lines
}

func gunzip(t *testing.T, b []byte) []byte {
	t.Helper()
	zr, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// compressedFor returns how many bytes of gzip stream b a gzip reader takes before it has
// given n decompressed bytes. A bytes.Reader is a ByteReader: gzip reads no more than it needs.
func compressedFor(t *testing.T, b []byte, n int64) int64 {
	t.Helper()
	r := bytes.NewReader(b)
	zr, err := gzip.NewReader(r)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.CopyN(io.Discard, zr, n); err != nil {
		t.Fatal(err)
	}
	return int64(len(b) - r.Len())
}

// encodedServer is an HTTPS (HTTP/2) server that answers every request with one recorded body:
// its gzip members as they are, each flushed, to a client that asks for gzip, else plain (nil:
// gzip regardless). With pauseAfter ≥ 0 it waits after that member until resumed.
type encodedServer struct {
	*httptest.Server
	pauseAfter int
	resume     chan struct{}
	mu         sync.Mutex
	got        string // the last request's Accept-Encoding
}

func serveEncoded(t *testing.T, contentType string, members [][]byte, plain []byte, pauseAfter int) *encodedServer {
	t.Helper()
	r := &encodedServer{pauseAfter: pauseAfter, resume: make(chan struct{})}
	r.Server = httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, req *http.Request) {
		r.mu.Lock()
		r.got = req.Header.Get("Accept-Encoding")
		r.mu.Unlock()
		w.Header().Set("Content-Type", contentType)
		if plain != nil && !strings.Contains(r.got, "gzip") {
			w.Write(plain)
			return
		}
		w.Header().Set("Content-Encoding", "gzip")
		for i, m := range members {
			w.Write(m)
			w.(http.Flusher).Flush()
			if i == pauseAfter {
				select {
				case <-r.resume:
				case <-req.Context().Done():
					return
				}
			}
		}
	}))
	r.EnableHTTP2 = true
	r.StartTLS()
	t.Cleanup(r.Close)
	return r
}

// clientConfig is a rest.Config for srv.
func clientConfig(srv *encodedServer) *rest.Config {
	ca := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: srv.Certificate().Raw})
	return &rest.Config{Host: srv.URL, TLSClientConfig: rest.TLSClientConfig{CAData: ca}}
}

func (r *encodedServer) acceptEncoding() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.got
}

// get GETs url through rt, with header, and reads the body.
func get(rt http.RoundTripper, url string, header http.Header) (*http.Response, []byte, error) {
	req, err := http.NewRequest(http.MethodGet, url, nil)
	if err != nil {
		return nil, nil, err
	}
	for k, v := range header {
		req.Header[k] = v
	}
	resp, err := rt.RoundTrip(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return resp, body, err
}

// wrapper forwards every request as it is and says what it wraps, as client-go v0.36+'s TLS
// cache's trackedTransport does.
type wrapper struct{ rt http.RoundTripper }

func (w wrapper) RoundTrip(req *http.Request) (*http.Response, error) { return w.rt.RoundTrip(req) }
func (w wrapper) WrappedRoundTripper() http.RoundTripper              { return w.rt }

// relabeled forwards every request and says its response is in another content encoding.
type relabeled struct {
	rt       http.RoundTripper
	encoding string
}

func (r relabeled) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.rt.RoundTrip(req)
	if err == nil {
		resp.Header.Set("Content-Encoding", r.encoding)
	}
	return resp, err
}

// ownGzip is a client that asks for gzip itself and decompresses what it reads, as the client
// of a proxy does (its Go transport asks, the proxy forwards the header): above the wire, so
// the wire sees the header and the compressed body. raw keeps the bytes it read off the wire.
type ownGzip struct {
	next http.RoundTripper
	raw  *labtest.Buffer
}

func (o *ownGzip) wrap(next http.RoundTripper) http.RoundTripper { o.next = next; return o }

func (o *ownGzip) RoundTrip(req *http.Request) (*http.Response, error) {
	sent := req.Clone(req.Context())
	sent.Header.Set("Accept-Encoding", "gzip")
	resp, err := o.next.RoundTrip(sent)
	if err != nil || !strings.EqualFold(resp.Header.Get("Content-Encoding"), "gzip") {
		return resp, err
	}
	resp.Body = wire.Gunzip(struct {
		io.Reader
		io.Closer
	}{io.TeeReader(resp.Body, o.raw), resp.Body})
	resp.Header.Del("Content-Encoding")
	resp.Header.Del("Content-Length")
	resp.ContentLength = -1
	return resp, nil
}

// opaque forwards every request but does not say what it wraps.
type opaque struct{ rt http.RoundTripper }

func (o opaque) RoundTrip(req *http.Request) (*http.Response, error) { return o.rt.RoundTrip(req) }

func readFile(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func writeFile(t *testing.T, name string, b []byte) {
	t.Helper()
	if err := os.WriteFile(filepath.Join("testdata", name), b, 0o644); err != nil {
		t.Fatal(err)
	}
}
