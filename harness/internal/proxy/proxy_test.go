package proxy

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"informer-lab/lab/controlplane"
	"informer-lab/lab/labtest"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	"k8s.io/client-go/tools/clientcmd"
)

// The tests start etcd and kube-apiserver: this binary is their reaper if it is killed, and
// stops the control plane its tests share once they have ended.
func TestMain(m *testing.M) { labtest.Main(m) }

// lines is a log shared by a test and the goroutines it starts.
type lines struct {
	t    *testing.T
	name string
	mu   sync.Mutex
	all  []string
	done bool
}

func (l *lines) add(format string, args ...any) {
	s := fmt.Sprintf(format, args...)
	l.mu.Lock()
	defer l.mu.Unlock()
	l.all = append(l.all, s)
	if !l.done {
		l.t.Logf("[%s] %s", l.name, s)
	}
}

func (l *lines) grep(sub string) []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []string
	for _, s := range l.all {
		if strings.Contains(s, sub) {
			out = append(out, s)
		}
	}
	return out
}

func newLines(t *testing.T, name string) *lines {
	l := &lines{t: t, name: name}
	t.Cleanup(func() { l.mu.Lock(); l.done = true; l.mu.Unlock() })
	return l
}

// sharedServer is the control plane this binary's tests share (labtest.Shared), with an admin
// client and a namespace of the test's own: for a test that neither kills nor restarts it.
func sharedServer(t *testing.T) (*controlplane.ControlPlane, kubernetes.Interface, string) {
	t.Helper()
	if testing.Short() {
		t.Skip("boots envtest")
	}
	cp := labtest.Shared(t)
	return cp, adminOf(t, cp), labtest.Namespace(t, cp.Config)
}

// ownServer starts a control plane of the test's own, stopped when it ends: for a test that
// kills, restarts or stops kube-apiserver. Its namespace is "default".
func ownServer(t *testing.T) (*controlplane.ControlPlane, kubernetes.Interface, string) {
	t.Helper()
	if testing.Short() {
		t.Skip("boots envtest")
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cp, err := controlplane.Start(ctx, controlplane.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cp.Stop() })
	return cp, adminOf(t, cp), "default"
}

func adminOf(t *testing.T, cp *controlplane.ControlPlane) kubernetes.Interface {
	t.Helper()
	admin, err := kubernetes.NewForConfig(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	return admin
}

func startProxy(t *testing.T, cp *controlplane.ControlPlane, opts Options) (*Proxy, *lines) {
	t.Helper()
	log := newLines(t, "proxy")
	opts.Log = log.add
	p, err := Start(cp.Config, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p, log
}

// proxyClient is a clientset built from the proxy's kubeconfig alone, with a recorder of
// what it sends and gets (method, path, query, status, protocol, content type: no other header).
func proxyClient(t *testing.T, p *Proxy) (kubernetes.Interface, *lines) {
	t.Helper()
	cfg := proxyConfig(t, p)
	wire := newLines(t, "client")
	cfg.Wrap(func(rt http.RoundTripper) http.RoundTripper { return recorder{rt, wire} })
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return cs, wire
}

// proxyConfig is the client config of the proxy's kubeconfig, which is all that a client of the
// proxy is given: a test that passes where the client knew more would prove nothing.
func proxyConfig(t *testing.T, p *Proxy) *rest.Config {
	t.Helper()
	kc, err := p.Kubeconfig()
	if err != nil {
		t.Fatal(err)
	}
	cfg, err := clientcmd.RESTConfigFromKubeConfig(kc)
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

type recorder struct {
	rt  http.RoundTripper
	log *lines
}

func (r recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.rt.RoundTrip(req)
	if err != nil {
		r.log.add("%s %s -> error %v", req.Method, req.URL.RequestURI(), err)
		return nil, err
	}
	r.log.add("%s %s -> %d %s %s", req.Method, req.URL.RequestURI(), resp.StatusCode, resp.Proto, resp.Header.Get("Content-Type"))
	return resp, nil
}

// createCM creates ConfigMap name in ns.
func createCM(t *testing.T, ctx context.Context, cs kubernetes.Interface, ns, name string) *corev1.ConfigMap {
	t.Helper()
	cm, err := cs.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"n": "0"}}, metav1.CreateOptions{})
	if err != nil {
		t.Errorf("create %s: %v", name, err) // Errorf: also called from goroutines
	}
	return cm
}

func waitFor(t *testing.T, what string, timeout time.Duration, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(timeout); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %s waiting for %s", timeout, what)
		}
	}
}

// (a) With WatchTimeout=3s a client-go watch that asked for timeoutSeconds=300 is ended by the
// proxy about 3 s after its response, cleanly: its channel closes, no ERROR event. The client's
// own request says 300, and so does the one the apiserver gets; the proxy says it ended the
// watch. On the wire (HTTP/2 both sides) the stream simply ends: the last bytes are a complete
// event, then EOF.
func TestWatchTimeoutEndsWatchCleanly(t *testing.T) {
	cp, admin, ns := sharedServer(t)
	p, plog := startProxy(t, cp, Options{WatchTimeout: 3 * time.Second})
	cs, wire := proxyClient(t, p)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	t.Run("client-go watch", func(t *testing.T) {
		ts := int64(300)
		start := time.Now()
		w, err := cs.CoreV1().ConfigMaps(ns).Watch(ctx, metav1.ListOptions{TimeoutSeconds: &ts})
		if err != nil {
			t.Fatal(err)
		}
		defer w.Stop()
		go func() {
			time.Sleep(time.Second)
			createCM(t, ctx, admin, ns, "watched")
		}()
		var sawAdded time.Duration
		for ev := range w.ResultChan() {
			if ev.Type == watch.Error {
				t.Errorf("ERROR event: %v", ev.Object)
				continue
			}
			if cm, ok := ev.Object.(*corev1.ConfigMap); ok && ev.Type == watch.Added && cm.Name == "watched" {
				sawAdded = time.Since(start)
			}
		}
		elapsed := time.Since(start)
		t.Logf("watch channel closed after %s; ADDED watched at %s", elapsed.Round(time.Millisecond), sawAdded.Round(time.Millisecond))
		if elapsed < 2500*time.Millisecond || elapsed > 6*time.Second {
			t.Errorf("the watch ended after %s, want about 3s", elapsed)
		}
		if sawAdded == 0 || sawAdded > 2*time.Second {
			t.Errorf("ADDED for the write at 1s arrived at %s, want promptly (streamed, not buffered)", sawAdded)
		}
		if got := wire.grep("watch=true"); len(got) != 1 || !strings.Contains(got[0], "timeoutSeconds=300") || !strings.Contains(got[0], "HTTP/2.0") {
			t.Errorf("the client's watch request, as the client logged it: %q; want one, with its own timeoutSeconds=300, over HTTP/2", got)
		}
		waitFor(t, "the proxy's account of the watch end", 2*time.Second, func() bool {
			return len(plog.grep("ended by the proxy, its watch timeout 3s after its response")) == 1
		})
	})

	t.Run("raw HTTP/2 stream", func(t *testing.T) {
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(p.CAData())
		hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool}, ForceAttemptHTTP2: true}}
		defer hc.CloseIdleConnections()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, p.URL()+"/api/v1/namespaces/"+ns+"/configmaps?watch=true&timeoutSeconds=300", nil)
		req.Header.Set("Accept", "application/json")
		req.Header.Set("Authorization", "Bearer "+Token) // ignored, and not forwarded
		start := time.Now()
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		go func() {
			time.Sleep(time.Second)
			createCM(t, ctx, admin, ns, "raw")
		}()
		body, err := io.ReadAll(resp.Body)
		elapsed := time.Since(start)
		t.Logf("%s %s, %s; stream ended after %s with err=%v, %d bytes", resp.Proto, resp.Status, resp.Header.Get("Content-Type"), elapsed.Round(time.Millisecond), err, len(body))
		if err != nil {
			t.Errorf("reading the stream: %v, want a clean EOF", err)
		}
		if resp.ProtoMajor != 2 || resp.StatusCode != 200 {
			t.Errorf("got %s %s, want HTTP/2.0 200", resp.Proto, resp.Status)
		}
		if elapsed < 2500*time.Millisecond || elapsed > 6*time.Second {
			t.Errorf("the stream ended after %s, want about 3s", elapsed)
		}
		var types []string
		for _, line := range strings.Split(strings.TrimSpace(string(body)), "\n") {
			var ev struct {
				Type   string
				Object struct{ Metadata struct{ Name string } }
			}
			if err := json.Unmarshal([]byte(line), &ev); err != nil {
				t.Errorf("stream line %q: %v", line, err)
			}
			types = append(types, ev.Type+" "+ev.Object.Metadata.Name)
		}
		t.Logf("events on the stream, in order: %q; last bytes %q", types, tail(body, 40))
		if len(types) == 0 || types[len(types)-1] != "ADDED raw" {
			t.Errorf("want the stream to end right after the last event (ADDED raw), got %q", types)
		}
	})
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

// (b) A SharedInformer through the proxy with WatchTimeout=2s stays in sync over 7 s of
// writes: several watches, each ended by the proxy and re-established by the reflector from
// where it was, one LIST only, and the cache equals a LIST at the end.
func TestInformerInSyncAcrossEndedWatches(t *testing.T) {
	cp, admin, ns := sharedServer(t)
	p, plog := startProxy(t, cp, Options{WatchTimeout: 2 * time.Second})
	cs, wire := proxyClient(t, p)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	inf := startInformer(t, ctx, cs, ns)

	start := time.Now()
	writes := 0
	for i := 0; time.Since(start) < 7*time.Second; i++ {
		name := fmt.Sprintf("sync-%d", i/3)
		var err error
		switch i % 3 {
		case 0:
			_, err = admin.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"n": "0"}}, metav1.CreateOptions{})
		case 1:
			_, err = admin.CoreV1().ConfigMaps(ns).Update(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"n": "1"}}, metav1.UpdateOptions{})
		case 2:
			if i%2 == 0 { // keep every other one
				err = admin.CoreV1().ConfigMaps(ns).Delete(ctx, name, metav1.DeleteOptions{})
			}
		}
		if err != nil {
			t.Fatal(err)
		}
		writes++
		time.Sleep(150 * time.Millisecond)
	}
	want := func() map[string]string {
		l, err := admin.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Fatal(err)
		}
		m := map[string]string{}
		for _, cm := range l.Items {
			m[cm.Name] = cm.ResourceVersion
		}
		return m
	}()
	got := func() map[string]string {
		m := map[string]string{}
		for _, o := range inf.GetStore().List() {
			cm := o.(*corev1.ConfigMap)
			m[cm.Name] = cm.ResourceVersion
		}
		return m
	}
	var last map[string]string
	deadline := time.Now().Add(10 * time.Second)
	for last = got(); !equal(last, want) && time.Now().Before(deadline); last = got() {
		time.Sleep(50 * time.Millisecond)
	}
	if !equal(last, want) {
		t.Fatalf("cache %v\nLIST  %v", last, want)
	}
	t.Logf("%d writes over %s; cache equals a LIST (%d objects)", writes, time.Since(start).Round(time.Millisecond), len(want))

	watches := wire.grep("watch=true")
	lists := 0
	for _, l := range wire.grep("GET /api/v1/namespaces/" + ns + "/configmaps?") {
		if !strings.Contains(l, "watch=true") {
			lists++
		}
	}
	ends := plog.grep("ended by the proxy, its watch timeout 2s")
	t.Logf("client requests: %d LIST, %d WATCH; proxy: %d watches ended", lists, len(watches), len(ends))
	if len(watches) < 3 || len(ends) < 2 {
		t.Errorf("want at least 3 watches, 2 of them ended by the proxy; got %d watches, %d ends", len(watches), len(ends))
	}
	if lists != 1 {
		t.Errorf("want one LIST (each ended watch resumed from its rv, no relist), got %d", lists)
	}
	for _, w := range watches {
		if strings.Contains(w, "timeoutSeconds=2&") || !strings.Contains(w, "-> 200 HTTP/2.0") {
			t.Errorf("client-side watch request %q: want the reflector's own timeoutSeconds, 200 over HTTP/2", w)
		}
	}
}

func equal(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if b[k] != v {
			return false
		}
	}
	return true
}

// (c) Pause holds new requests (a GET does not return while paused, and does after Resume),
// lets the watch in flight go on, drops a held request whose client gave up, and WaitIdle
// returns once the active watch has ended at the proxy's watch timeout.
func TestPauseHoldsRequestsAndWaitIdle(t *testing.T) {
	cp, admin, ns := sharedServer(t)
	p, plog := startProxy(t, cp, Options{WatchTimeout: 2 * time.Second})
	cs, _ := proxyClient(t, p)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	ts := int64(300)
	w, err := cs.CoreV1().ConfigMaps(ns).Watch(ctx, metav1.ListOptions{TimeoutSeconds: &ts})
	if err != nil {
		t.Fatal(err)
	}
	defer w.Stop()
	watchStart := time.Now()
	waitFor(t, "one active watch", 5*time.Second, func() bool { return p.ActiveWatches() == 1 })

	p.Pause()
	createCM(t, ctx, admin, ns, "during-pause") // straight to the apiserver
	select {
	case ev := <-w.ResultChan():
		if cm, ok := ev.Object.(*corev1.ConfigMap); !ok || ev.Type != watch.Added || cm.Name != "during-pause" {
			t.Errorf("in-flight watch while paused: got %s %v, want ADDED during-pause", ev.Type, ev.Object)
		}
	case <-time.After(2 * time.Second):
		t.Error("the watch in flight did not deliver the write made while paused")
	}

	got := make(chan error, 1)
	go func() {
		_, err := cs.CoreV1().ConfigMaps(ns).Get(ctx, "during-pause", metav1.GetOptions{})
		got <- err
	}()
	waitFor(t, "the GET to be held", 5*time.Second, func() bool { return p.Held() == 1 })

	// A client that gives up while held: its request is dropped, never forwarded.
	short, cancelShort := context.WithTimeout(ctx, 300*time.Millisecond)
	_, err = cs.CoreV1().ConfigMaps(ns).Get(short, "during-pause", metav1.GetOptions{})
	cancelShort()
	if err == nil {
		t.Error("a GET with a 300ms deadline succeeded while paused")
	}
	waitFor(t, "the abandoned request to be dropped", 5*time.Second, func() bool {
		return p.Held() == 1 && len(plog.grep("dropped held GET")) == 1
	})

	idleCtx, cancelIdle := context.WithTimeout(ctx, 10*time.Second)
	defer cancelIdle()
	if err := p.WaitIdle(idleCtx); err != nil {
		t.Fatal(err)
	}
	t.Logf("WaitIdle returned %s after the watch started", time.Since(watchStart).Round(time.Millisecond))
	select {
	case ev, ok := <-w.ResultChan():
		if ok {
			t.Errorf("after WaitIdle the watch is still open (got %s)", ev.Type)
		}
	case <-time.After(2 * time.Second):
		t.Error("after WaitIdle the watch channel did not close")
	}
	select {
	case err := <-got:
		t.Fatalf("the GET returned while paused: %v", err)
	default:
	}

	begin := time.Now()
	p.Resume()
	select {
	case err := <-got:
		if err != nil {
			t.Errorf("held GET after Resume: %v", err)
		}
		t.Logf("held GET answered %s after Resume", time.Since(begin).Round(time.Microsecond))
	case <-time.After(5 * time.Second):
		t.Fatal("held GET not answered 5s after Resume")
	}
	if p.Held() != 0 || p.ActiveWatches() != 0 {
		t.Errorf("held %d, active watches %d, want 0 and 0", p.Held(), p.ActiveWatches())
	}
}

// (d) The matrix's sequence: Pause, WaitIdle, writes, KillAPIServer, RestartAPIServer,
// compaction, Resume. A LIST held across the restart is answered by the restarted server
// (it holds an object created after the restart), and an informer through the proxy ends
// up equal to a LIST.
func TestPauseAcrossAPIServerRestart(t *testing.T) {
	cp, admin, ns := ownServer(t)
	p, _ := startProxy(t, cp, Options{WatchTimeout: 2 * time.Second})
	cs, wire := proxyClient(t, p)
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()

	inf := startInformer(t, ctx, cs, ns)
	createCM(t, ctx, admin, ns, "before")
	waitFor(t, "the informer to see before", 5*time.Second, func() bool {
		_, ok, _ := inf.GetStore().GetByKey(ns + "/before")
		return ok
	})

	p.Pause()
	idleCtx, cancelIdle := context.WithTimeout(ctx, 15*time.Second)
	defer cancelIdle()
	if err := p.WaitIdle(idleCtx); err != nil {
		t.Fatal(err)
	}
	createCM(t, ctx, admin, ns, "while-paused")
	listed := make(chan []string, 1)
	go func() {
		l, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
		if err != nil {
			t.Errorf("held LIST: %v", err)
			listed <- nil
			return
		}
		var names []string
		for _, cm := range l.Items {
			names = append(names, cm.Name)
		}
		sort.Strings(names)
		listed <- names
	}()
	waitFor(t, "the informer's re-watch and the LIST to be held", 10*time.Second, func() bool { return p.Held() == 2 })

	begin := time.Now()
	if err := cp.KillAPIServer(); err != nil {
		t.Fatal(err)
	}
	if err := cp.RestartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	t.Logf("kube-apiserver killed and restarted in %s", time.Since(begin).Round(time.Millisecond))
	createCM(t, ctx, admin, ns, "after-restart")
	rev, err := cp.CompactEtcd(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("etcd compacted at revision %d; %d requests held", rev, p.Held())
	select {
	case names := <-listed:
		t.Fatalf("the LIST returned while paused: %v", names)
	default:
	}

	p.Resume()
	select {
	case names := <-listed:
		t.Logf("held LIST answered: %v", names)
		if strings.Join(names, ",") != "after-restart,before,while-paused" {
			t.Errorf("held LIST: %v, want after-restart, before, while-paused (the restarted server's answer)", names)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("held LIST not answered 10s after Resume")
	}

	want, err := admin.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	wantRV := map[string]string{}
	for _, cm := range want.Items {
		wantRV[cm.Name] = cm.ResourceVersion
	}
	cached := func() map[string]string {
		m := map[string]string{}
		for _, o := range inf.GetStore().List() {
			m[o.(*corev1.ConfigMap).Name] = o.(*corev1.ConfigMap).ResourceVersion
		}
		return m
	}
	deadline := time.Now().Add(30 * time.Second)
	for !equal(cached(), wantRV) {
		if time.Now().After(deadline) {
			t.Fatalf("informer cache %v, LIST %v", cached(), wantRV)
		}
		time.Sleep(50 * time.Millisecond)
	}
	t.Logf("informer cache equals a LIST %s after Resume; its requests after the pause: %q", time.Since(begin).Round(time.Millisecond), wire.grep("configmaps?"))
}

func TestIsWatch(t *testing.T) {
	for q, want := range map[string]bool{"/api/v1/configmaps?watch=true": true, "/api/v1/configmaps?watch=1": true, "/api/v1/configmaps?watch=false": false,
		"/api/v1/watch/configmaps": true, "/apis/apps/v1/watch/deployments": true, "/api/v1/configmaps": false, "/apis/apps/v1/deployments": false} {
		r, _ := http.NewRequest(http.MethodGet, "https://x"+q, nil)
		if isWatch(r) != want {
			t.Errorf("isWatch(%s) = %v, want %v", q, !want, want)
		}
	}
}

// The apiserver killed with a watch in flight through the proxy (not paused): the client's
// watch ends the way a direct watch to the killed server ends (the channel closes, no ERROR
// event), a request while the server is down is answered 502, the proxy survives, and after
// the restart requests go through again.
func TestAPIServerKilledWithWatchInFlight(t *testing.T) {
	cp, admin, ns := ownServer(t)
	p, plog := startProxy(t, cp, Options{})
	cs, _ := proxyClient(t, p)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	ts := int64(300)
	viaProxy, err := cs.CoreV1().ConfigMaps(ns).Watch(ctx, metav1.ListOptions{TimeoutSeconds: &ts})
	if err != nil {
		t.Fatal(err)
	}
	defer viaProxy.Stop()
	direct, err := admin.CoreV1().ConfigMaps(ns).Watch(ctx, metav1.ListOptions{TimeoutSeconds: &ts})
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Stop()
	waitFor(t, "the watch through the proxy", 5*time.Second, func() bool { return p.ActiveWatches() == 1 })

	if err := cp.KillAPIServer(); err != nil {
		t.Fatal(err)
	}
	drain := func(name string, w watch.Interface) []string {
		var evs []string
		timeout := time.After(10 * time.Second)
		for {
			select {
			case ev, ok := <-w.ResultChan():
				if !ok {
					return evs
				}
				evs = append(evs, fmt.Sprintf("%s %v", ev.Type, ev.Object))
			case <-timeout:
				t.Errorf("%s watch still open 10s after the kill", name)
				return evs
			}
		}
	}
	gotProxy, gotDirect := drain("proxied", viaProxy), drain("direct", direct)
	t.Logf("after the kill: proxied watch delivered %q, direct watch %q, then both closed", gotProxy, gotDirect)
	if len(gotProxy) != len(gotDirect) {
		t.Errorf("the proxied watch ended unlike the direct one: %q vs %q", gotProxy, gotDirect)
	}
	waitFor(t, "no active watch", 5*time.Second, func() bool { return p.ActiveWatches() == 0 })

	_, err = cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{})
	t.Logf("LIST through the proxy while the apiserver is down: %v", err)
	if err == nil || !strings.Contains(err.Error(), "kube-apiserver unreachable") {
		t.Errorf("LIST while down: %v, want the proxy's 502", err)
	}
	if err := cp.RestartAPIServer(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := cs.CoreV1().ConfigMaps(ns).List(ctx, metav1.ListOptions{}); err != nil {
		t.Errorf("LIST through the proxy after the restart: %v", err)
	}
	if len(plog.grep("upstream stream broke")) != 1 {
		t.Errorf("want the proxy to say the upstream watch broke: %q", plog.grep("ended after"))
	}
}

// startInformer starts a ConfigMap informer on cs in the test namespace, waits for its sync,
// and stops it when the test ends.
func startInformer(t *testing.T, ctx context.Context, cs kubernetes.Interface, ns string) cache.SharedIndexInformer {
	t.Helper()
	factory := informers.NewSharedInformerFactoryWithOptions(cs, 0, informers.WithNamespace(ns))
	inf := factory.Core().V1().ConfigMaps().Informer()
	stop := make(chan struct{})
	t.Cleanup(func() { close(stop); factory.Shutdown() })
	factory.Start(stop)
	if !cache.WaitForCacheSync(ctx.Done(), inf.HasSynced) {
		t.Fatal("informer did not sync")
	}
	return inf
}
