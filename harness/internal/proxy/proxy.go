// Package proxy is a TLS reverse proxy between lab processes and the envtest kube-apiserver.
// It leaves the clients' own logic alone: they talk HTTPS (HTTP/2, like the apiserver) to the
// proxy with a kubeconfig from Kubeconfig(), and the proxy forwards every request with the
// admin credentials of the upstream rest.Config. Three things can be changed on the way:
//
//   - WatchTimeout: the proxy ends each watch that long after it is established (a streaming
//     list: after its end bookmark), cleanly, as the apiserver ends a watch at its
//     timeoutSeconds (timeout.go); the request goes upstream as the client sent it;
//   - Pause/Resume: new requests are held, neither forwarded nor failed, until Resume; the
//     requests in flight go on. The upstream apiserver may be killed and restarted meanwhile;
//   - Fault: the streaming list (a watch with sendInitialEvents=true) is answered the way a
//     server or proxy that does not follow the protocol answers it, as users reported (Faults
//     lists them); every other request passes untouched;
//   - Servers: the proxy balances over several kube-apiservers that share the upstream's
//     credentials (one etcd, one set of certificates), each request to the next one in turn, and
//     names the one that answered in the response (record.ServerHeader).
//
// With Record, it also records every request and watch event of its clients (record.go).
package proxy

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"io"
	"log"
	"math/big"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"informer-lab/harness/internal/cli"
	"informer-lab/lab/wire"
	labrecord "informer-lab/record"

	utilnet "k8s.io/apimachinery/pkg/util/net"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
)

// Token is the bearer token in the proxy's kubeconfig. It is worth nothing: the proxy does
// not check it and never forwards it (upstream, it authenticates with its own credentials).
const Token = "informer-lab-proxy"

// Options change what the proxy does to requests. The zero value forwards everything as is.
type Options struct {
	// WatchTimeout, when > 0, is how long every watch (watch=true) lasts once established: from
	// its response, or for a streaming list (sendInitialEvents=true, as forwarded) from its end
	// bookmark; the proxy then ends the response cleanly (timeout.go).
	WatchTimeout time.Duration
	// Fault, if set, applies to every streaming list (watch=true&sendInitialEvents=true) and to
	// nothing else; see Faults. A Param of 0 takes the fault's default.
	Fault *Fault
	// Log, if set, receives one line per thing the proxy did that the client cannot see:
	// rewrites, holds, releases, drops, watch ends, upstream errors. Paths and queries only,
	// never a header.
	Log func(format string, args ...any)
	// Record, if set, records each client's requests as they go to the apiserver (after the
	// rewrites above), with the labs' wire: see Recorder. Close ends it.
	Record *Recorder
	// Servers, if set, are the kube-apiservers the proxy balances over, round-robin per request,
	// in place of the upstream's own address (which it then does not use); each must accept the
	// upstream's credentials.
	Servers []Server
}

// Server is one kube-apiserver behind the balancer.
type Server struct {
	Name string // what the response's record.ServerHeader says: its version
	Host string // https://127.0.0.1:port
}

// Proxy is a running proxy.
type Proxy struct {
	opts     Options
	fault    *Fault // opts.Fault, validated, its default parameter filled in
	upstream *url.URL
	servers  []*url.URL        // Options.Servers' addresses; nil: upstream only
	names    map[string]string // Options.Servers' names by host:port
	turn     atomic.Uint64     // the next request's server: servers[turn % len]
	rt       http.RoundTripper // to the apiserver, with the admin credentials
	rp       *httputil.ReverseProxy
	srv      *http.Server
	url      string // https://127.0.0.1:port
	caPEM    []byte
	served   chan struct{} // Serve returned

	mu       sync.Mutex
	paused   bool
	resumed  chan struct{} // closed by Resume; a new one per Pause
	closed   bool
	closedCh chan struct{}
	held     int // requests waiting for Resume
	watches  int // watch requests being served
	handlers int // requests in ServeHTTP, held ones included
	once     sync.Once
}

type ctxKey struct{}

// watchEnd is what the proxy learns about one watch's upstream response.
type watchEnd struct {
	what  string // the client's request line, for the log
	fault *Fault // the fault applied to this watch, if any

	mu     sync.Mutex
	note   string // set when the proxy itself answered or ended the watch
	status string
	proto  string
	err    error // the upstream body's final read error: io.EOF is a clean end
	bytes  int64
}

// setNote says that the proxy itself answered or ended the watch, and how.
func (e *watchEnd) setNote(note string) {
	e.mu.Lock()
	e.note = note
	e.mu.Unlock()
}

// Start listens on 127.0.0.1 (a free port) and serves until Close.
func Start(upstream *rest.Config, opts Options) (*Proxy, error) {
	if upstream == nil {
		return nil, errors.New("proxy: no upstream rest.Config")
	}
	if opts.Log == nil {
		opts.Log = func(string, ...any) {}
	}
	var fault *Fault
	if opts.Fault != nil {
		f, err := opts.Fault.validate()
		if err != nil {
			return nil, fmt.Errorf("proxy: %w", err)
		}
		fault = &f
	}
	u, rt, err := upstreamTransport(upstream, opts.Record != nil)
	if err != nil {
		return nil, err
	}
	servers, names, err := serverURLs(opts.Servers)
	if err != nil {
		return nil, err
	}
	caPEM, leaf, err := newCerts()
	if err != nil {
		return nil, fmt.Errorf("proxy: certificates: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("proxy: listen: %w", err)
	}
	p := &Proxy{
		opts:     opts,
		fault:    fault,
		upstream: u,
		servers:  servers,
		names:    names,
		rt:       rt,
		url:      "https://" + ln.Addr().String(),
		caPEM:    caPEM,
		served:   make(chan struct{}),
		closedCh: make(chan struct{}),
	}
	p.serve(ln, leaf)
	return p, nil
}

// upstreamTransport is the apiserver's address and a transport to it of the proxy's own.
// recording: the apiserver gets the client's own Accept-Encoding.
func upstreamTransport(upstream *rest.Config, recording bool) (*url.URL, http.RoundTripper, error) {
	u, _, err := rest.DefaultServerUrlFor(upstream)
	if err != nil {
		return nil, nil, fmt.Errorf("proxy: upstream address %q: %w", upstream.Host, err)
	}
	cfg := rest.CopyConfig(upstream)
	// A dialer of its own makes the transport the proxy's alone (client-go shares transports
	// of equal configs): no other client's connections to the apiserver are touched by the
	// proxy, and Close can drop its connections.
	cfg.Dial = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	if recording {
		// The apiserver gets the client's own Accept-Encoding and nothing else: Go's transport
		// would ask for gzip for a client that did not (and decompress out of sight), and the
		// records would show what the proxy's leg got, not the client's.
		cfg.DisableCompression = true
	}
	rt, err := rest.TransportFor(cfg)
	if err != nil {
		return nil, nil, fmt.Errorf("proxy: transport to the apiserver: %w", err)
	}
	return u, rt, nil
}

// serverURLs are the addresses of Options.Servers, and each one's name by host.
func serverURLs(list []Server) ([]*url.URL, map[string]string, error) {
	var servers []*url.URL
	names := map[string]string{}
	for _, srv := range list {
		su, err := url.Parse(srv.Host)
		if err != nil || su.Host == "" {
			return nil, nil, fmt.Errorf("proxy: server %s address %q: not a URL", srv.Name, srv.Host)
		}
		servers = append(servers, su)
		names[su.Host] = srv.Name
	}
	return servers, names, nil
}

// serve serves TLS on ln with leaf, through the reverse proxy, until Close.
func (p *Proxy) serve(ln net.Listener, leaf tls.Certificate) {
	var forward http.RoundTripper = p.rt
	if p.opts.Record != nil {
		forward = recordingTransport{p.rt}
	}
	p.rp = &httputil.ReverseProxy{
		Rewrite:        p.rewrite,
		Transport:      forward,
		FlushInterval:  -1, // every write goes out at once: watch events are not delayed
		ModifyResponse: p.modifyResponse,
		ErrorHandler:   p.errorHandler,
		ErrorLog:       log.New(cli.Lines(p.opts.Log), "proxy: ", 0),
	}
	p.srv = &http.Server{
		Handler: p,
		TLSConfig: &tls.Config{
			Certificates: []tls.Certificate{leaf},
			NextProtos:   []string{"h2", "http/1.1"}, // HTTP/2 first, like kube-apiserver
			MinVersion:   tls.VersionTLS12,
		},
		ReadHeaderTimeout: 30 * time.Second,
		ErrorLog:          log.New(cli.Lines(p.opts.Log), "proxy: server: ", 0),
	}
	go func() {
		defer close(p.served)
		if err := p.srv.ServeTLS(ln, "", ""); err != nil && !errors.Is(err, http.ErrServerClosed) {
			p.opts.Log("proxy: serve: %v", err)
		}
	}()
}

// URL is the proxy's address, https://127.0.0.1:port.
func (p *Proxy) URL() string { return p.url }

// CAData is the PEM certificate of the CA that signed the proxy's serving certificate.
func (p *Proxy) CAData() []byte { return append([]byte(nil), p.caPEM...) }

// Kubeconfig returns a kubeconfig for the proxy: its URL, its CA, and a user whose token
// (Token) is worth nothing.
func (p *Proxy) Kubeconfig() ([]byte, error) {
	const name = "informer-lab-proxy"
	cfg := clientcmdapi.NewConfig()
	cfg.Clusters[name] = &clientcmdapi.Cluster{Server: p.url, CertificateAuthorityData: p.CAData()}
	cfg.AuthInfos[name] = &clientcmdapi.AuthInfo{Token: Token}
	cfg.Contexts[name] = &clientcmdapi.Context{Cluster: name, AuthInfo: name, Namespace: "default"}
	cfg.CurrentContext = name
	return clientcmd.Write(*cfg)
}

// Pause holds every new request until Resume; requests in flight go on.
func (p *Proxy) Pause() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.paused || p.closed {
		return
	}
	p.paused = true
	p.resumed = make(chan struct{})
	p.opts.Log("proxy: paused: new requests are held (%d watches in flight go on)", p.watches)
}

// Resume forwards the held requests and lets new ones through.
func (p *Proxy) Resume() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if !p.paused {
		return
	}
	p.paused = false
	close(p.resumed)
	p.opts.Log("proxy: resumed: %d held requests released", p.held)
}

// Held is the number of requests waiting for Resume.
func (p *Proxy) Held() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.held
}

// ActiveWatches is the number of watch requests being served (forwarded, not yet ended).
func (p *Proxy) ActiveWatches() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.watches
}

// WaitIdle returns nil once no watch is being served, or ctx's error.
func (p *Proxy) WaitIdle(ctx context.Context) error {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	for p.ActiveWatches() > 0 {
		select {
		case <-ctx.Done():
			return fmt.Errorf("proxy: %d watches still active: %w", p.ActiveWatches(), ctx.Err())
		case <-tick.C:
		}
	}
	return nil
}

// Close stops listening, ends every connection (watches included), drops the held requests
// and waits (up to 10 s) for the handlers to return: a handler returns once its response's
// records are written (the wire's watch tap waits for its decoder), and Close then ends
// Options.Record. Calling it again does nothing.
func (p *Proxy) Close() error {
	var err error
	p.once.Do(func() {
		p.mu.Lock()
		p.closed = true
		close(p.closedCh)
		p.mu.Unlock()
		err = p.srv.Close()
		<-p.served
		for deadline := time.Now().Add(10 * time.Second); p.handlersRunning() > 0; time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				p.opts.Log("proxy: close: %d handlers still running after 10s", p.handlersRunning())
				break
			}
		}
		if p.opts.Record != nil {
			p.opts.Record.close() // a handler that outlived the wait writes nothing more
		}
		utilnet.CloseIdleConnectionsFor(p.rt)
	})
	return err
}

func (p *Proxy) handlersRunning() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.handlers
}

func (p *Proxy) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	p.mu.Lock()
	p.handlers++
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		p.handlers--
		p.mu.Unlock()
	}()
	if p.opts.Record != nil {
		r = p.opts.Record.withRecording(r, p.rt)
	}
	watch := isWatch(r)
	if !p.admit(w, r, watch) {
		return
	}
	if !watch {
		p.rp.ServeHTTP(w, r)
		return
	}
	end := &watchEnd{what: requestLine(r)}
	if p.fault != nil && isStreamingList(r) {
		end.fault = p.fault
	}
	start := time.Now()
	defer func() { // also when the reverse proxy aborts the stream (a panic, re-raised)
		p.mu.Lock()
		p.watches--
		p.mu.Unlock()
		end.mu.Lock()
		defer end.mu.Unlock()
		var how string
		switch {
		case end.note != "":
			how = end.note
		case end.status == "":
			how = "no upstream response"
		case errors.Is(end.err, io.EOF):
			// The apiserver ended the response normally (HTTP/2 END_STREAM): at its
			// timeoutSeconds, or after an ERROR event (e.g. 410 for a too old resourceVersion),
			// which the proxy does not decode.
			how = "upstream ended the stream (EOF)"
		case r.Context().Err() != nil:
			how = "client went away"
		case end.err != nil:
			how = "upstream stream broke: " + end.err.Error()
		default:
			how = "ended"
		}
		if end.status != "" && end.note == "" {
			how += fmt.Sprintf(" [upstream %s %s, %d bytes]", end.proto, end.status, end.bytes)
		}
		p.opts.Log("proxy: watch %s ended after %s: %s", requestLine(r), time.Since(start).Round(time.Millisecond), how)
	}()
	if end.fault != nil && end.fault.answersLocally() {
		p.answer(w, r, *end.fault)
		end.setNote("answered by the proxy (fault " + end.fault.String() + ")")
		return
	}
	p.rp.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), ctxKey{}, end)))
}

// admit lets a request through, holding it while paused; false means it was answered (or
// dropped) here. A watch is counted as active from the moment it is let through.
func (p *Proxy) admit(w http.ResponseWriter, r *http.Request, watch bool) bool {
	var heldSince time.Time
	for {
		p.mu.Lock()
		if p.closed {
			p.mu.Unlock()
			http.Error(w, "informer-lab proxy: closed", http.StatusServiceUnavailable)
			return false
		}
		if !p.paused {
			if watch {
				p.watches++
			}
			p.mu.Unlock()
			if !heldSince.IsZero() {
				p.opts.Log("proxy: forwarding %s, held %s", requestLine(r), time.Since(heldSince).Round(time.Millisecond))
			}
			return true
		}
		resumed := p.resumed
		p.held++
		p.mu.Unlock()
		if heldSince.IsZero() {
			heldSince = time.Now()
			p.opts.Log("proxy: holding %s", requestLine(r))
		}
		var gone error
		select {
		case <-resumed:
		case <-r.Context().Done():
			gone = r.Context().Err()
		case <-p.closedCh:
		}
		p.mu.Lock()
		p.held--
		p.mu.Unlock()
		if gone != nil {
			p.opts.Log("proxy: dropped held %s: the client gave up after %s (%v)", requestLine(r), time.Since(heldSince).Round(time.Millisecond), gone)
			return false
		}
	}
}

func (p *Proxy) rewrite(pr *httputil.ProxyRequest) {
	pr.SetURL(p.next())
	// The client's credentials (the worthless token) stay here: the transport adds the
	// proxy's own, and a bearer token next to the client certificate would be refused.
	pr.Out.Header.Del("Authorization")
	end, _ := pr.In.Context().Value(ctxKey{}).(*watchEnd)
	if end == nil || end.fault == nil {
		return
	}
	if end.fault.Name == FaultIgnoreSendInitialEvents {
		raw, removed := removeQueryParams(pr.Out.URL.RawQuery, "sendInitialEvents", "resourceVersionMatch")
		pr.Out.URL.RawQuery = raw
		p.opts.Log("proxy: fault %s: forwarded %s as a plain watch (removed %s)", end.fault, requestLine(pr.In), strings.Join(removed, ", "))
	}
	if end.fault.rewritesFrames() {
		// The frames are rewritten: ask for them uncompressed (an explicit identity also keeps
		// the transport from asking for gzip on its own).
		pr.Out.Header.Set("Accept-Encoding", "identity")
	}
}

// next is the server the next request goes to: the upstream, or the next of Servers in turn.
func (p *Proxy) next() *url.URL {
	if len(p.servers) == 0 {
		return p.upstream
	}
	return p.servers[(p.turn.Add(1)-1)%uint64(len(p.servers))]
}

// nameServer names, in the response, the server of Servers that the request went to.
func (p *Proxy) nameServer(h http.Header, sent *http.Request) {
	if name := p.names[sent.URL.Host]; name != "" {
		h.Set(labrecord.ServerHeader, name)
	}
}

func (p *Proxy) modifyResponse(resp *http.Response) error {
	p.nameServer(resp.Header, resp.Request)
	end, _ := resp.Request.Context().Value(ctxKey{}).(*watchEnd)
	if end == nil {
		return nil
	}
	end.mu.Lock()
	end.status, end.proto = resp.Status, resp.Proto
	end.mu.Unlock()
	upstream := resp.Body
	resp.Body = &endBody{ReadCloser: resp.Body, end: end}
	if end.fault != nil && end.fault.rewritesFrames() {
		p.rewriteFrames(resp, end)
	}
	if p.opts.WatchTimeout > 0 && resp.StatusCode == http.StatusOK {
		p.timeWatch(resp, end, upstream)
	}
	return nil
}

// rewriteFrames applies the watch's fault to its frames (faultStream), in a response it can:
// a 200 whose content type client-go's scheme streams, gzip-encoded or not.
func (p *Proxy) rewriteFrames(resp *http.Response, end *watchEnd) {
	f := *end.fault
	if resp.StatusCode != http.StatusOK {
		p.opts.Log("proxy: fault %s: not applied to %s: the apiserver answered %s", f, end.what, resp.Status)
		return
	}
	body := resp.Body
	if enc := resp.Header.Get("Content-Encoding"); enc != "" {
		if !strings.EqualFold(enc, "gzip") {
			p.opts.Log("proxy: fault %s: not applied to %s: content encoding %s", f, end.what, enc)
			return
		}
		body = wire.Gunzip(body)
	}
	fs, ok := newFaultStream(body, resp.Header.Get("Content-Type"), f, end.what, p.opts.Log)
	if !ok {
		p.opts.Log("proxy: fault %s: not applied to %s: content type %q is not one the proxy decodes", f, end.what, resp.Header.Get("Content-Type"))
		return
	}
	fs.onCut = func() { end.setNote("cut by the proxy (fault " + f.String() + ")") }
	resp.Header.Del("Content-Encoding")
	resp.Header.Del("Content-Length")
	resp.Body = fs
}

// errorHandler answers a request that could not reach the apiserver (it is down, or
// restarting) with 502 and a Status body, the way a gateway would; client-go reports it as
// an error of that request and retries in its own way. A client that went away gets nothing.
func (p *Proxy) errorHandler(w http.ResponseWriter, r *http.Request, err error) {
	if r.Context().Err() != nil {
		return
	}
	p.opts.Log("proxy: %s: upstream error, answered 502: %v", requestLine(r), err)
	msg := fmt.Sprintf("informer-lab proxy: kube-apiserver unreachable: %v", err)
	p.nameServer(w.Header(), r)
	body, _ := json.Marshal(map[string]any{
		"kind": "Status", "apiVersion": "v1", "metadata": map[string]any{},
		"status": "Failure", "message": msg, "reason": "ServiceUnavailable", "code": http.StatusBadGateway,
	})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(http.StatusBadGateway)
	w.Write(body)
}

type endBody struct {
	io.ReadCloser
	end *watchEnd
}

// Read records how the upstream watch stream ended. A stream that breaks (the apiserver was
// killed: connection reset) is ended here as if it had closed: the client's stream then ends
// (END_STREAM) and client-go reads an EOF, as it reads "connection reset by peer" or an
// unexpected EOF from a killed apiserver it talks to directly, and closes the watch quietly.
// Passed on as an error, the reverse proxy would reset the client's stream instead
// (RST_STREAM INTERNAL_ERROR), which client-go turns into an ERROR event: not what a
// killed apiserver does to it.
func (b *endBody) Read(buf []byte) (int, error) {
	n, err := b.ReadCloser.Read(buf)
	b.end.mu.Lock()
	defer b.end.mu.Unlock()
	b.end.bytes += int64(n)
	if err != nil && b.end.err == nil {
		b.end.err = err
	}
	if err != nil && !errors.Is(err, io.EOF) {
		err = io.EOF
	}
	return n, err
}

// isWatch: the request opens a watch (record.ClassifyRequest).
func isWatch(r *http.Request) bool {
	return labrecord.ClassifyRequest(r.URL.Path, r.URL.RawQuery).Watch
}

func requestLine(r *http.Request) string {
	if r.URL.RawQuery == "" {
		return r.Method + " " + r.URL.Path
	}
	return r.Method + " " + r.URL.Path + "?" + r.URL.RawQuery
}

// newCerts makes a CA and a serving certificate it signs for 127.0.0.1, ::1 and localhost.
func newCerts() (caPEM []byte, leaf tls.Certificate, err error) {
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, leaf, err
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "informer-lab proxy CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(7 * 24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageCRLSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
		MaxPathLenZero:        true,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, leaf, err
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, leaf, err
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, leaf, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: "informer-lab proxy"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(7 * 24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1), net.IPv6loopback},
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, leaf, err
	}
	leaf = tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER}), leaf, nil
}

func serial() *big.Int {
	n, err := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 127))
	if err != nil {
		return big.NewInt(time.Now().UnixNano())
	}
	return n
}
