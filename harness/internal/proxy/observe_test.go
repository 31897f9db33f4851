package proxy

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"informer-lab/harness/internal/labproc"
	"informer-lab/harness/internal/rundir"
	"informer-lab/lab/controlplane"
	"informer-lab/lab/labtest"
	"informer-lab/lab/wire"
	labrecord "informer-lab/record"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

const (
	observeNS = "observe"
	// observeLab is the lab module the agreement test runs: its gate can be set either way
	observeLab = "client-v031"
	// observeSeeds ConfigMaps of observeSeedSize random bytes each: a LIST of them is above
	// kube-apiserver's 128 KiB, so it comes gzipped, to a client that asked for gzip itself
	// (the proxy's wire) and to one whose wire asked for it (the lab's)
	observeSeeds, observeSeedSize = 20, 8 << 10
)

// TestObserveAgreesWithLab runs a real lab process through the recording proxy and checks
// that the proxy, which sees the lab from outside, records what the lab's own wire records,
// request by request, for each informer: the same HTTP records, LIST items and sizes, watch
// events and end bookmark. The lab's informers share one HTTP/2 connection; the proxy tells
// them apart by their User-Agents. Gate off (LIST→WATCH, the LIST gzipped) and on (STREAM).
func TestObserveAgreesWithLab(t *testing.T) {
	cp, admin, _ := sharedServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	bin := buildObserveLab(t, ctx)
	seedObserved(t, ctx, admin)
	for _, gate := range []struct{ setting, shape string }{{"off", labrecord.ShapeListWatch}, {"on", labrecord.ShapeStream}} {
		t.Run("watch-list "+gate.setting, func(t *testing.T) {
			run := observeRun(t, ctx, cp, admin, bin, gate.setting)
			run.agree(t, gate.shape)
		})
	}
	// A client that does not accept gzip (DisableCompression: no Accept-Encoding) gets the big
	// LIST as the server sends it to such a client, uncompressed, and the proxy records that:
	// the proxy's own transport must not ask for gzip in the client's place.
	t.Run("a client without gzip", func(t *testing.T) {
		out := &labtest.Buffer{}
		p, _ := startProxy(t, cp, Options{Record: NewRecorder(out)})
		cfg := proxyConfig(t, p)
		cfg.DisableCompression = true
		cfg.UserAgent = "no-gzip/v0 (informer-lab test)"
		own := &labtest.Buffer{}
		cfg.Wrap(wire.Wrap("C", labrecord.NewWriter("client", own, nil)))
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := cs.CoreV1().ConfigMaps(observeNS).List(ctx, metav1.ListOptions{ResourceVersion: "0"}); err != nil {
			t.Fatal(err)
		}
		p.Close()
		clientRecs, err := labrecord.Read(bytes.NewReader(own.Bytes()), "client")
		if err != nil {
			t.Fatal(err)
		}
		proxied, err := labrecord.Read(bytes.NewReader(out.Bytes()), "proxy")
		if err != nil {
			t.Fatal(err)
		}
		compareViews(t, "no-gzip", clientRecs, proxied)
		for _, r := range proxied {
			if r.Kind == labrecord.HTTP && r.Encoding != "" {
				t.Errorf("the proxy recorded %s: the apiserver compressed for a client that did not ask", r.Text())
			}
		}
	})
}

// kube-apiserver 1.37 gzips a whole streaming list (WatchListCompression) for a client that
// accepts gzip: the lab's wire asks for it, the proxy forwards the header, and the proxy's
// wire decodes a gunzipped copy of what it passes on compressed. Both must still agree, the
// end bookmark's sizes included. make check, which builds 1.37.2.
func TestObserveCompressedWatchList(t *testing.T) {
	const version = "1.37.2"
	if testing.Short() {
		t.Skip("boots envtest")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cp := labtest.StartServer(t, ctx, version)
	admin, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	bin := buildObserveLab(t, ctx)
	seedObserved(t, ctx, admin)
	run := observeRun(t, ctx, cp, admin, bin, "on")
	run.agree(t, labrecord.ShapeStream)
	for _, tag := range []string{"A", "B"} {
		for _, r := range run.lab[tag] {
			if r.Kind == labrecord.HTTP && labrecord.IsWatch(r) && r.Encoding != "gzip" {
				t.Errorf("%s's streaming list was not compressed: %s", cp.ServerVersion, r.Text())
			}
		}
	}
}

func buildObserveLab(t *testing.T, ctx context.Context) string {
	t.Helper()
	root, err := rundir.FindRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin, clientGo, err := labproc.Build(ctx, filepath.Join(root, observeLab))
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("built %s (client-go %s)", observeLab, clientGo)
	return bin
}

// seedObserved creates namespace observeNS and its observeSeeds ConfigMaps.
func seedObserved(t *testing.T, ctx context.Context, admin kubernetes.Interface) {
	t.Helper()
	if err := controlplane.EnsureNamespace(ctx, admin, observeNS); err != nil {
		t.Fatal(err)
	}
	for i := range observeSeeds {
		random := make([]byte, observeSeedSize*3/4)
		rand.Read(random)
		observeWrite(t, ctx, admin, labrecord.WriteCreate, fmt.Sprintf("seed-%02d", i), base64.StdEncoding.EncodeToString(random))
	}
}

// agree checks that the proxy recorded each of the lab's informers as the lab's wire did, and
// that their initial sync had the shape the gate implies; and the lab's requests to learn about
// its server (GET /version), made under client-go's default User-Agent: the client whose
// User-Agent is the informers' without their suffix.
func (run observedRun) agree(t *testing.T, shape string) {
	t.Helper()
	for _, tag := range []string{"A", "B"} {
		c := run.client(t, " informer/"+tag)
		proxied := run.proxied[c.Name]
		compareViews(t, tag, run.lab[tag], proxied)
		if got, label := labrecord.Classify(initialRequests(proxied)); got != shape {
			t.Errorf("informer %s through the proxy: %s, want %s", tag, label, shape)
		}
	}
	def := run.client(t, "")
	compareViews(t, labrecord.TagServer, run.lab[labrecord.TagServer], run.proxied[def.Name])
}

// observedRun is one run of the lab through the recording proxy: the records of the lab's own
// wire by tag, those of the proxy by client name, and the clients the proxy saw.
type observedRun struct {
	lab     map[string][]labrecord.Record
	proxied map[string][]labrecord.Record
	clients []Client
}

// observeRun starts a recording proxy and the lab attached through it with -watch-list gate,
// waits for both informers to sync, writes (a create, two updates, a delete) and waits for
// both to deliver them, stops the lab, then closes the proxy and reads both logs.
func observeRun(t *testing.T, ctx context.Context, cp *controlplane.ControlPlane, admin kubernetes.Interface, bin, gate string) observedRun {
	dir := t.TempDir()
	out, err := os.Create(filepath.Join(dir, "observe.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer out.Close()
	rec := NewRecorder(out)
	p, _ := startProxy(t, cp, Options{Record: rec})
	kc, err := p.Kubeconfig()
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(dir, "kubeconfig")
	if err := os.WriteFile(kubeconfig, kc, 0o600); err != nil {
		t.Fatal(err)
	}
	labLog := filepath.Join(dir, "lab.jsonl")
	lp, err := labproc.Start("lab", bin, []string{"-kubeconfig", kubeconfig, "-records", "-", "-name", "lab", "-watch-list", gate,
		"-namespace", observeNS, "-duration", "3m"}, labLog, filepath.Join(dir, "lab.stderr"))
	if err != nil {
		t.Fatal(err)
	}
	defer lp.Stop(10 * time.Second)
	waitFor(t, "informers A and B synced", 3*time.Minute, func() bool {
		if why := lp.Exited(); why != "" {
			t.Fatal(why)
		}
		return lp.Synced("A", "B")
	})

	name := "later-" + gate
	var writes []labrecord.Record
	for i, op := range []string{labrecord.WriteCreate, labrecord.WriteUpdate, labrecord.WriteUpdate, labrecord.WriteDelete} {
		rv := observeWrite(t, ctx, admin, op, name, fmt.Sprint(i))
		writes = append(writes, labrecord.Record{Event: op, Namespace: observeNS, Name: name, RV: rv})
	}
	waitFor(t, "both informers delivering the writes", 30*time.Second, func() bool { return lp.Missing(writes, "A", "B") == 0 })

	if err := lp.Stop(10 * time.Second); err != nil {
		t.Error(err)
	}
	if err := p.WaitIdle(ctx); err != nil { // the lab's connection is gone: its watches end
		t.Error(err)
	}
	p.Close()
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}

	run := observedRun{lab: map[string][]labrecord.Record{}, proxied: map[string][]labrecord.Record{}, clients: rec.Clients()}
	labRecs, err := labrecord.ReadFile(labLog)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range labRecs {
		run.lab[r.Tag] = append(run.lab[r.Tag], r)
	}
	proxyRecs, err := labrecord.ReadFile(out.Name())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range proxyRecs {
		run.proxied[r.Source] = append(run.proxied[r.Source], r)
	}
	for _, c := range run.clients {
		t.Logf("client %s: %q, connection %d (%s), first request at %s", c.Name, c.UserAgent, c.Conn, c.Addr, c.First.Format(time.StampMilli))
		checkClientRecords(t, c, run.proxied[c.Name])
	}
	return run
}

// client finds the one client whose User-Agent is the lab's default one followed by suffix.
func (run observedRun) client(t *testing.T, suffix string) Client {
	t.Helper()
	var found []Client
	for _, c := range run.clients {
		if strings.HasSuffix(c.UserAgent, suffix) && (suffix != "" || !strings.Contains(c.UserAgent, " informer/")) {
			found = append(found, c)
		}
	}
	if len(found) != 1 {
		t.Fatalf("clients with User-Agent ending %q: %+v, want one among %+v", suffix, found, run.clients)
	}
	return found[0]
}

// checkClientRecords checks what the proxy recorded of one client: its SETUP client record
// first, then only records its wire writes, each tagged with the resource of its path, no
// fault; its name is its User-Agent's product.
func checkClientRecords(t *testing.T, c Client, recs []labrecord.Record) {
	t.Helper()
	if len(recs) == 0 || recs[0].Kind != labrecord.Setup || recs[0].Step != labrecord.StepClient || recs[0].Value != c.UserAgent ||
		recs[0].Detail != fmt.Sprintf("connection %d (%s)", c.Conn, c.Addr) {
		t.Fatalf("client %s: the first record is not its SETUP client record: %v", c.Name, recs)
	}
	if !strings.HasPrefix(c.Name, observeLab) {
		t.Errorf("client name %q, want its product %s (with a suffix for the second and third)", c.Name, observeLab)
	}
	var tag string
	for _, r := range recs[1:] {
		switch {
		case r.Kind == labrecord.Setup:
			t.Errorf("client %s: %s", c.Name, r.Text())
		case r.Kind == labrecord.HTTP:
			tag = labrecord.ResourceOf(r.Path)
			fallthrough
		default:
			if r.Tag != tag {
				t.Errorf("client %s: record tagged %q, its request's resource is %q: %s", c.Name, r.Tag, tag, r.Text())
			}
		}
	}
}

// compareViews compares, request by request, a client's own records (the lab's, of tag) with
// the proxy's of that client.
func compareViews(t *testing.T, tag string, lab, proxied []labrecord.Record) {
	t.Helper()
	want, got := viewLines(lab), viewLines(proxied)
	if len(want) == 0 {
		t.Fatalf("%s: the lab recorded nothing", tag)
	}
	// A periodic bookmark the server sends while the lab stops reaches the proxy, which
	// records it, after the lab's last record: its writer takes nothing once stopped
	// (record.Writer.Stop). Only such bookmarks may follow what the lab recorded.
	for len(got) > len(want) && periodicBookmark.MatchString(got[len(got)-1]) {
		got = got[:len(got)-1]
	}
	for i := range min(len(got), len(want)) {
		got[i] = sameFlush(got[i], want[i])
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("%s: the proxy recorded\n  %s\nthe client's own wire\n  %s", tag, strings.Join(got, "\n  "), strings.Join(want, "\n  "))
		return
	}
	var sized []string // the LIST and the end bookmark: what sizes agree on
	for _, l := range got {
		if i := strings.LastIndex(l, " body "); i >= 0 {
			sized = append(sized, strings.Fields(l)[0]+l[i:])
		}
	}
	t.Logf("%s: %d records alike, the first %s; sizes %q", tag, len(got), got[0], sized)
}

// sameFlush returns want for got when the two are the end bookmark and differ only in its wire
// size, by no more than the empty stored block that ends a gzip flush. kube-apiserver 1.37
// flushes its gzip writer after each event of a compressed streaming list
// (k8s.io/apiserver@v0.37.2 pkg/endpoints/handlers/watch.go, perFlushGzipWriter.Flush:
// "if err := p.gw.Flush(); err != nil {"), and compress/flate ends every flush with that block: a
// byte's worth of header bits, then LEN and NLEN, at most 5 bytes. A reader decodes the end
// bookmark before it has needed that block, so each view counts it with the bookmark or not, as
// its reads happened to fall (measured: 131077 bytes through the proxy, 131072 in the lab).
func sameFlush(got, want string) string {
	g, w := bodyWire.FindStringSubmatch(got), bodyWire.FindStringSubmatch(want)
	if g == nil || w == nil || g[1] != w[1] || g[3] != w[3] || !strings.Contains(got, "initial-events-end") {
		return got
	}
	gn, _ := strconv.Atoi(g[2])
	wn, _ := strconv.Atoi(w[2])
	if d := gn - wn; d >= -5 && d <= 5 {
		return want
	}
	return got
}

// bodyWire splits a view line with a body at its wire size.
var bodyWire = regexp.MustCompile(`^(.* body wire=)(\d+)( decoded=\d+)$`)

// periodicBookmark is the view line of a bookmark without annotations.
var periodicBookmark = regexp.MustCompile(`^WATCH-EVENT BOOKMARK rv=\d+$`)

// viewLines are the lines (viewLine) of those of recs that have one.
func viewLines(recs []labrecord.Record) []string {
	var lines []string
	for _, r := range recs {
		if l := viewLine(r); l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

// viewLine renders what both views must agree on: the request (method, path, query, status,
// content type, encoding, Accept, error), the LIST (rv, items, body sizes), the event (type,
// object, rv, bookmark annotations, the end bookmark's body sizes); "" for other records. Not
// the tag (the lab's informer, the proxy's resource), the source or the times.
func viewLine(r labrecord.Record) string {
	var line string
	switch r.Kind {
	case labrecord.HTTP:
		r.Tag, r.Millis = "", 0
		line = r.Text()
	case labrecord.List:
		line = fmt.Sprintf("LIST rv=%s items=%v", r.RV, r.Items)
	case labrecord.WatchEvent:
		line = "WATCH-EVENT " + labrecord.EventLine(r.Event, r.Namespace, r.Name, r.RV)
		if len(r.Annotations) > 0 {
			line += fmt.Sprintf(" %v", r.Annotations)
		}
		if r.Detail != "" {
			line += " " + r.Detail
		}
	default:
		return ""
	}
	if r.Body != nil {
		line += fmt.Sprintf(" body wire=%d decoded=%d", r.Body.Wire, r.Body.Decoded)
	}
	return line
}

// initialRequests are an informer's HTTP records up to and with its first accepted watch.
func initialRequests(recs []labrecord.Record) []labrecord.Record {
	var reqs []labrecord.Record
	for _, r := range recs {
		if r.Kind != labrecord.HTTP {
			continue
		}
		reqs = append(reqs, r)
		if labrecord.IsWatch(r) && labrecord.OK(r.Status) {
			break
		}
	}
	return reqs
}

// observeWrite creates, updates or deletes ConfigMap name in observeNS with data.value, and
// returns the rv the write made ("" for a delete).
func observeWrite(t *testing.T, ctx context.Context, admin kubernetes.Interface, op, name, value string) string {
	t.Helper()
	cms := admin.CoreV1().ConfigMaps(observeNS)
	cm := &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"value": value}}
	var err error
	switch op {
	case labrecord.WriteCreate:
		cm, err = cms.Create(ctx, cm, metav1.CreateOptions{})
	case labrecord.WriteUpdate:
		cm, err = cms.Update(ctx, cm, metav1.UpdateOptions{})
	case labrecord.WriteDelete:
		err = cms.Delete(ctx, name, metav1.DeleteOptions{})
		cm.ResourceVersion = "" // a DELETE's rv is not the writer's to know (record.WriteKey)
	}
	if err != nil {
		t.Fatalf("%s %s: %v", op, name, err)
	}
	return cm.ResourceVersion
}

// The recorder tells clients apart by User-Agent and connection, names them by their product,
// tags each request with its resource, records no credentials, and Close returns only once the
// watch taps have written what the clients read; nothing is written after. No envtest: the
// upstream is a small HTTPS server answering like an apiserver.
func TestRecorderAttribution(t *testing.T) {
	upstream := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		switch {
		case r.URL.Path == "/version":
			io.WriteString(w, `{"major":"1","minor":"32","gitVersion":"v1.32.13"}`)
		case r.URL.Query().Get("watch") == "true":
			io.WriteString(w, `{"type":"ADDED","object":{"kind":"ConfigMap","apiVersion":"v1","metadata":{"name":"a","namespace":"x","resourceVersion":"7"}}}`+"\n")
			w.(http.Flusher).Flush()
			<-r.Context().Done() // until the proxy goes
		default:
			io.WriteString(w, `{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"7"},"items":[{"metadata":{"name":"a","namespace":"x","resourceVersion":"7"}}]}`)
		}
	}))
	upstream.EnableHTTP2 = true
	upstream.StartTLS()
	defer upstream.Close()
	const secret = "upstream-credential-never-recorded"
	cfg := &rest.Config{Host: upstream.URL, BearerToken: secret,
		TLSClientConfig: rest.TLSClientConfig{CAData: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: upstream.Certificate().Raw})}}
	out := &labtest.Buffer{}
	rec := NewRecorder(out)
	p, err := Start(cfg, Options{Record: rec})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()

	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(p.CAData())
	conn := func() *http.Client {
		return &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}}
	}
	one, two := conn(), conn()
	defer one.CloseIdleConnections()
	defer two.CloseIdleConnections()
	const kubectl = "kubectl/v1.32.0 (linux/amd64) kubernetes/abc"
	get := func(c *http.Client, ua, path string) *http.Response {
		t.Helper()
		req, _ := http.NewRequest(http.MethodGet, p.URL()+path, nil)
		req.Header.Set("User-Agent", ua)
		req.Header.Set("Accept", "application/json")
		req.Header.Set("Authorization", "Bearer "+Token)
		resp, err := c.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %s", path, resp.Status)
		}
		return resp
	}
	read := func(resp *http.Response) {
		t.Helper()
		defer resp.Body.Close()
		if _, err := io.ReadAll(resp.Body); err != nil {
			t.Fatal(err)
		}
	}
	read(get(one, kubectl, "/version"))
	read(get(one, kubectl+" watcher", "/api/v1/configmaps"))
	read(get(two, kubectl, "/apis/apps/v1/namespaces/x/deployments"))
	read(get(one, "tool™/2", "/api/v1/namespaces/x/secrets"))
	watch := get(one, kubectl, "/api/v1/namespaces/x/configmaps?watch=true")
	defer watch.Body.Close()
	if line, err := bufio.NewReader(watch.Body).ReadString('\n'); err != nil || !strings.Contains(line, `"ADDED"`) {
		t.Fatalf("the watch's first event: %q, %v", line, err)
	}
	p.Close() // with the watch open: it waits for its tap
	written := out.Bytes()

	clients := rec.Clients()
	var got []string
	for _, c := range clients {
		got = append(got, fmt.Sprintf("%s %d %q", c.Name, c.Conn, c.UserAgent))
	}
	want := []string{`kubectl 1 "` + kubectl + `"`, `kubectl-2 1 "` + kubectl + ` watcher"`, `kubectl-3 2 "` + kubectl + `"`, `tool- 1 "tool™/2"`}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("clients\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	if len(clients) == 4 && (clients[0].Addr != clients[1].Addr || clients[0].Addr == clients[2].Addr || clients[0].First.After(clients[1].First)) {
		t.Errorf("connections and first requests: %+v", clients)
	}

	recs, err := labrecord.Read(bytes.NewReader(written), "proxy")
	if err != nil {
		t.Fatal(err)
	}
	got = nil
	for _, r := range recs {
		line := r.Source + " " + r.Text()
		if r.Kind == labrecord.Setup {
			line = strings.Join(strings.Fields(line)[:3], " ") // the value and detail are checked below
		}
		got = append(got, line)
	}
	want = []string{
		"kubectl [SETUP] client:",
		"kubectl [HTTP][-] GET /version -> 200 application/json (accept application/json)",
		"kubectl-2 [SETUP] client:",
		"kubectl-2 [HTTP][configmaps] GET /api/v1/configmaps -> 200 application/json (accept application/json)",
		"kubectl-2 [LIST][configmaps] initial LIST returned collection resourceVersion=7 items=1 [a]",
		"kubectl-3 [SETUP] client:",
		"kubectl-3 [HTTP][apps/deployments] GET /apis/apps/v1/namespaces/x/deployments -> 200 application/json (accept application/json)",
		"kubectl-3 [LIST][apps/deployments] initial LIST returned collection resourceVersion=7 items=1 [a]",
		"tool- [SETUP] client:",
		"tool- [HTTP][secrets] GET /api/v1/namespaces/x/secrets -> 200 application/json (accept application/json)",
		"tool- [LIST][secrets] initial LIST returned collection resourceVersion=7 items=1 [a]",
		"kubectl [HTTP][configmaps] GET /api/v1/namespaces/x/configmaps?watch=true -> 200 application/json (accept application/json)",
		"kubectl [WATCH-EVENT][configmaps] type=ADDED name=a rv=7",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("records\n  %s\nwant\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	for _, r := range recs {
		if r.Kind == labrecord.Setup {
			c := clientNamed(clients, r.Source)
			if r.Step != labrecord.StepClient || r.Value != c.UserAgent || r.Detail != fmt.Sprintf("connection %d (%s)", c.Conn, c.Addr) {
				t.Errorf("SETUP record of %s: %s", r.Source, r.Text())
			}
		}
	}
	for _, s := range []string{secret, Token, "Bearer", "uthorization"} {
		if bytes.Contains(written, []byte(s)) {
			t.Errorf("the records hold %q", s)
		}
	}
	upstream.CloseClientConnections()
	time.Sleep(50 * time.Millisecond)
	if after := out.Bytes(); !bytes.Equal(after, written) {
		t.Errorf("written after Close:\n%s", after[len(written):])
	}
}

func clientNamed(clients []Client, name string) Client {
	for _, c := range clients {
		if c.Name == name {
			return c
		}
	}
	return Client{}
}

// A client's name is the product token of its User-Agent, safe as a file name and unique.
func TestRecorderNames(t *testing.T) {
	for ua, want := range map[string]string{
		"kubectl/v1.32.0 (linux/amd64) kubernetes/abc":   "kubectl",
		"client-v031/v0.0.0 (linux/amd64) informer/A":    "client-v031",
		"Go-http-client/2.0":                             "Go-http-client",
		"curl/8.5.0":                                     "curl",
		"kube-controller-manager/v1.32.13 (linux/amd64)": "kube-controller-manager",
		"my tool/1":        "my",
		"../../etc/passwd": "client", // "..": only dots
		"a\\b:c*/1":        "a-b-c-",
		"  spaced/1":       "spaced",
		"":                 "client",
		"ünïcode_1.2":      "-n-code_1.2",
	} {
		if got := productName(ua); got != want {
			t.Errorf("productName(%q) = %q, want %q", ua, got, want)
		}
	}
	r := NewRecorder(io.Discard)
	var got []string
	for _, base := range []string{"kubectl", "kubectl", "kubectl-2", "kubectl", "client"} {
		got = append(got, r.uniqueName(base))
	}
	if want := "kubectl kubectl-2 kubectl-2-2 kubectl-3 client"; strings.Join(got, " ") != want {
		t.Errorf("names %q, want %q", strings.Join(got, " "), want)
	}
}
