package bench

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"informer-lab/harness/internal/labproc"
	"informer-lab/record"

	toxiproxy "github.com/Shopify/toxiproxy/v2"
	"github.com/rs/zerolog"
	"k8s.io/client-go/tools/clientcmd"
)

// Links (-cases links): the same ConfigMaps synced by K informers whose one connection to
// kube-apiserver (the lab's informers share one HTTP/2 connection) goes through a link the
// harness shapes: a round trip added, a bandwidth cap, a slow reader. The link is Toxiproxy
// (github.com/Shopify/toxiproxy/v2), run in this process as a library, one proxy per run: a TCP
// listener on 127.0.0.1 whose bytes reach kube-apiserver through the link's toxics. It works on
// TCP, below TLS: the lab's TLS session is kube-apiserver's, whose serving certificate covers
// 127.0.0.1 on any port, so the lab's kubeconfig only changes its server's port. With
// -links-watch-timeout, each link also gets one run per mode with a short watch timeout, which
// records when each informer's first watch ended after its sync point (watchRun).

// The kinds of link.
const (
	linkDirect     = "direct"      // no proxy: the lab's kubeconfig points at kube-apiserver, as in every other case
	linkProxy      = "proxy"       // through Toxiproxy, no toxic: what the proxy itself costs
	linkLatency    = "latency"     // latency=RTT: a round trip added to every exchange, half each way
	linkBandwidth  = "bandwidth"   // bandwidth=RATE: each direction capped at RATE per second
	linkSlowReader = "slow-reader" // slow-reader=RATE: the lab takes kube-apiserver's bytes at RATE per second
)

// DefaultLinks are -links' default: the two baselines, then each shape from mild to narrow.
var DefaultLinks = "direct,proxy,latency=1ms,latency=20ms,latency=100ms,bandwidth=100MiB,bandwidth=10MiB,slow-reader=1MiB"

// DefaultLinkServers are the servers of a run of the links cases alone when -servers is not
// given: 1.37.2 gzips a streaming list (WatchListCompression, on by default), and with the gate
// off it sends it as every server before 1.37 does, uncompressed, while a LIST is gzipped on
// both; the bytes a narrow link must carry differ by that alone.
var DefaultLinkServers = "1.37.2,1.37.2:WatchListCompression=false"

// watchLabel is the Result.Case suffix of a link's watch runs.
const watchLabel = "-watch"

// Link is how a link case's lab reaches kube-apiserver.
type Link struct {
	Kind string        `json:"kind"`           // linkDirect, linkProxy, linkLatency, linkBandwidth or linkSlowReader
	RTT  time.Duration `json:"rtt,omitempty"`  // linkLatency: the round trip added
	Rate int64         `json:"rate,omitempty"` // linkBandwidth, linkSlowReader: bytes per second
}

// String is how tables name l: "latency 20ms", "bandwidth 10 MiB/s".
func (l Link) String() string {
	switch l.Kind {
	case linkLatency:
		return "latency " + l.RTT.String()
	case linkBandwidth, linkSlowReader:
		return l.Kind + " " + FormatBytes(l.Rate) + "/s"
	}
	return l.Kind
}

// spec is l as -links writes it, and its case's name after "link-".
func (l Link) spec() string {
	switch l.Kind {
	case linkLatency:
		return l.Kind + "=" + l.RTT.String()
	case linkBandwidth, linkSlowReader:
		return l.Kind + "=" + rateSpec(l.Rate)
	}
	return l.Kind
}

// rateSpec writes a rate in the largest binary unit that divides it: 10MiB, 512KiB.
func rateSpec(n int64) string {
	for _, u := range []struct {
		name string
		size int64
	}{{"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n%u.size == 0 {
			return strconv.FormatInt(n/u.size, 10) + u.name
		}
	}
	return strconv.FormatInt(n, 10) + "B"
}

// linkUsage is what -links takes, for its errors.
const linkUsage = "direct, proxy, latency=RTT (a round trip added, whole milliseconds: 20ms), bandwidth=RATE or slow-reader=RATE (bytes per second: 10MiB, 512KiB)"

// ParseLinks reads -links: links separated by commas, each at most once.
func ParseLinks(spec string) ([]Link, error) {
	var links []Link
	for _, f := range strings.Split(spec, ",") {
		f = strings.TrimSpace(f)
		l, err := parseLink(f)
		if err != nil {
			return nil, fmt.Errorf("-links: %q: %w; a link is one of %s", f, err, linkUsage)
		}
		if slices.Contains(links, l) {
			return nil, fmt.Errorf("-links: %s is there twice", l.spec())
		}
		links = append(links, l)
	}
	return links, nil
}

func parseLink(f string) (Link, error) {
	kind, value, hasValue := strings.Cut(f, "=")
	switch kind {
	case linkDirect, linkProxy:
		if hasValue {
			return Link{}, fmt.Errorf("%s takes no value", kind)
		}
		return Link{Kind: kind}, nil
	case linkLatency:
		d, err := time.ParseDuration(value)
		if err != nil || d < time.Millisecond || d > 10*time.Second || d%time.Millisecond != 0 {
			return Link{}, errors.New("the round trip must be whole milliseconds from 1ms to 10s")
		}
		return Link{Kind: kind, RTT: d}, nil
	case linkBandwidth, linkSlowReader:
		n, err := parseRate(value)
		if err != nil {
			return Link{}, err
		}
		return Link{Kind: kind, Rate: n}, nil
	}
	return Link{}, errors.New("no such link")
}

// parseRate reads bytes per second: a whole number of KiB, MiB or GiB, at least 1 KiB
// (Toxiproxy takes whole KB, 1000 bytes, per second) and at most 10 GiB.
func parseRate(s string) (int64, error) {
	s = strings.TrimSuffix(s, "/s")
	for _, u := range []struct {
		name string
		size int64
	}{{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}} {
		if num, ok := strings.CutSuffix(s, u.name); ok {
			n, err := strconv.ParseInt(num, 10, 64)
			if err != nil || n < 1 || n*u.size > 10<<30 {
				break
			}
			return n * u.size, nil
		}
	}
	return 0, errors.New("the rate must be a whole number of KiB, MiB or GiB per second, from 1KiB to 10GiB")
}

// linkFlags are the links cases' flags, read into options by cases.
type linkFlags struct {
	links        string
	count, k     int
	watchTimeout time.Duration
}

func defineLinkFlags(fs *flag.FlagSet, v *linkFlags) {
	fs.StringVar(&v.links, "links", DefaultLinks, "the links cases' links, comma-separated, each a case link-<link>: "+linkUsage+"; -cases links alone measures on "+DefaultLinkServers+" unless -servers is given, and -docs writes docs/links.md")
	fs.IntVar(&v.count, "links-count", 10000, "ConfigMaps of 1 KiB seeded in the links cases")
	fs.IntVar(&v.k, "links-k", 8, "informers started at once in the links cases (they run at this K only), sharing the link")
	fs.DurationVar(&v.watchTimeout, "links-watch-timeout", 10*time.Second, "after a link's repeats, one run per mode whose watches ask kube-apiserver for this timeout (the lab's -watch-timeout), to see when each informer's first watch ends after its sync point (kubernetes/kubernetes#134837); whole seconds, 0: none")
}

// cases are the links cases -links names, and the watch runs' timeout.
func (v linkFlags) cases() ([]Case, time.Duration, error) {
	switch {
	case v.k < 1 || v.k > 26:
		return nil, 0, fmt.Errorf("-links-k: %d is not a number of informers from 1 to 26", v.k)
	case v.count < 1:
		return nil, 0, fmt.Errorf("-links-count must be at least 1, got %d", v.count)
	case v.watchTimeout < 0 || v.watchTimeout%time.Second != 0:
		return nil, 0, fmt.Errorf("-links-watch-timeout must be whole seconds (kube-apiserver's timeoutSeconds), or 0 for no watch runs, got %s", v.watchTimeout)
	}
	links, err := ParseLinks(v.links)
	if err != nil {
		return nil, 0, err
	}
	var cs []Case
	for _, l := range links {
		name := "link-" + strings.ToLower(strings.ReplaceAll(l.spec(), "=", "-")) // a namespace's name too: lower case
		cs = append(cs, Case{Name: name, Objects: v.count, Size: 1 << 10,
			Resource: record.ResourceConfigMaps, Ks: []int{v.k}, Link: &l})
	}
	return cs, v.watchTimeout, nil
}

// linkDefaults applies -cases links before the other defaults: a run of the links cases alone
// measures on DefaultLinkServers unless -servers is given (-quick, applied after, still picks
// its one server), and a user's cluster is refused: its address is no 127.0.0.1 that its
// serving certificate covers through the proxy.
func linkDefaults(fs *flag.FlagSet, o *options, v *flagValues) error {
	names := strings.Split(strings.ReplaceAll(o.cases, " ", ""), ",")
	if !slices.Contains(names, "links") {
		return nil
	}
	if o.kubeconfig != "" {
		return errors.New("-cases links puts a proxy on 127.0.0.1 between the labs and envtest's kube-apiserver, whose certificate covers that address: run it on envtest, not with -kubeconfig")
	}
	set := false
	fs.Visit(func(f *flag.Flag) { set = set || f.Name == "servers" })
	if !set && !slices.ContainsFunc(names, func(n string) bool { return n != "links" }) {
		v.servers = DefaultLinkServers
	}
	return nil
}

// link is one run's way to kube-apiserver: the kubeconfig its lab gets, and the proxy behind
// it (none for the direct link), which close stops.
type link struct {
	kubeconfig string
	proxy      *toxiproxy.Proxy
}

// openLink starts c's link for the run name: a Toxiproxy listener on 127.0.0.1 with c's toxics,
// forwarding to kube-apiserver, and a copy of the lab's kubeconfig that points at it. Not a
// link case, or the direct link: the lab's own kubeconfig, and nothing to close.
func (b *bed) openLink(c Case, name string) (l *link, err error) {
	l = &link{kubeconfig: b.kubeconfig}
	if c.Link == nil || c.Link.Kind == linkDirect {
		return l, nil
	}
	upstream, err := url.Parse(b.cp.Config.Host)
	if err != nil {
		return nil, fmt.Errorf("kube-apiserver's address: %w", err)
	}
	server := toxiproxy.NewServer(toxiproxy.NewMetricsContainer(nil), zerolog.Nop())
	l.proxy = toxiproxy.NewProxy(server, name, "127.0.0.1:0", upstream.Host)
	if err := l.proxy.Start(); err != nil {
		return nil, fmt.Errorf("start the link's proxy: %w", err)
	}
	defer func() {
		if err != nil {
			l.close()
		}
	}()
	for _, t := range toxicsOf(*c.Link) {
		if _, err := l.proxy.Toxics.AddToxicJson(strings.NewReader(t)); err != nil {
			return nil, fmt.Errorf("the link's toxic %s: %w", t, err)
		}
	}
	cfg, err := clientcmd.LoadFromFile(b.kubeconfig)
	if err != nil {
		return nil, fmt.Errorf("the link's kubeconfig: %w", err)
	}
	for _, cl := range cfg.Clusters {
		cl.Server = "https://" + l.proxy.Listen
	}
	l.kubeconfig = b.kubeconfig + "-" + name
	if err := clientcmd.WriteToFile(*cfg, l.kubeconfig); err != nil {
		return nil, fmt.Errorf("the link's kubeconfig: %w", err)
	}
	return l, nil
}

// close stops the proxy, which closes its connections, and removes the kubeconfig.
func (l *link) close() {
	if l.proxy == nil {
		return
	}
	l.proxy.Stop()
	os.Remove(l.kubeconfig)
}

// toxicsOf are the Toxiproxy toxics that make l, as JSON. Toxiproxy delays or paces what it
// forwards; both sides of it are loopback TCP, so a round trip here costs what the protocols'
// own round trips cost (TLS, each request, HTTP/2's flow control), not TCP's slow start.
//
// A slow reader is a bandwidth toxic on the downstream direction alone: Toxiproxy then takes
// kube-apiserver's bytes only as fast as it hands them on, so kube-apiserver's writes block once
// the socket buffers between them are full, as they block for a client that reads slowly. That
// is the same backpressure a client's own slow reads make (its HTTP/2 window and then TCP's
// fill up), with the buffers on the way in other places; no other toxic paces bytes. The lab's
// informers share one connection, so the rate is shared by all of them, as the cap is.
func toxicsOf(l Link) []string {
	toxic := func(typ, stream, attrs string) string {
		return fmt.Sprintf(`{"name":%q,"type":%q,"stream":%q,"toxicity":1,"attributes":{%s}}`, typ+"-"+stream, typ, stream, attrs)
	}
	switch l.Kind {
	case linkLatency: // the odd millisecond goes downstream
		ms := l.RTT.Milliseconds()
		return []string{toxic("latency", "upstream", fmt.Sprintf(`"latency":%d,"jitter":0`, ms/2)),
			toxic("latency", "downstream", fmt.Sprintf(`"latency":%d,"jitter":0`, ms-ms/2))}
	case linkBandwidth:
		return []string{toxic("bandwidth", "upstream", fmt.Sprintf(`"rate":%d`, kbPerSecond(l.Rate))),
			toxic("bandwidth", "downstream", fmt.Sprintf(`"rate":%d`, kbPerSecond(l.Rate)))}
	case linkSlowReader:
		return []string{toxic("bandwidth", "downstream", fmt.Sprintf(`"rate":%d`, kbPerSecond(l.Rate)))}
	}
	return nil
}

// kbPerSecond is a rate in Toxiproxy's bandwidth unit, KB (1000 bytes) per second.
func kbPerSecond(rate int64) int64 { return max(1, rate/1000) }

// WatchLife is what a link's watch run saw of each informer's first watch, with every watch
// asking kube-apiserver for a timeout of TimeoutSeconds (the lab's -watch-timeout).
type WatchLife struct {
	TimeoutSeconds int64           `json:"timeoutSeconds"`
	Synced         bool            `json:"synced"` // every informer synced before the run gave up on it
	Informers      []InformerWatch `json:"informers"`
	// VeryShort counts client-go's klog lines of a watch it gave up as "very short" (closed
	// within a second with no event), after which the reflector lists, or streams, again.
	VeryShort int `json:"veryShort,omitempty"`
}

// InformerWatch is one informer's first watch in a watch run, from its sync point (a streaming
// list's initial-events-end bookmark, as the client read it; a plain watch's response after a
// LIST) to the next request the informer sent. The reflector sends that request as the watch
// ends: at once to watch on from where it was; after a backoff of 0.8 to 1.6 s to start over
// (k8s.io/client-go@v0.32.13 tools/cache/reflector.go, "wait.NewExponentialBackoffManager(800*time.Millisecond, 30*time.Second, 2*time.Minute, 2.0, 1.0, reflectorClock)"),
// as it does after a watch it gave up as very short. The wire logs no watch's end: that next
// request is where the log shows it.
type InformerWatch struct {
	Tag       string  `json:"tag"`
	Streams   int     `json:"streams,omitempty"` // streaming lists it sent until its end bookmark (1: the first held)
	UntilNext float64 `json:"untilNext"`         // seconds from its sync point to its next request, or to the lab's stop when Open
	Open      bool    `json:"open,omitempty"`    // no next request by the stop: the watch outlived the run
	Then      string  `json:"then,omitempty"`    // its next request: "watch" (on from where it was), "stream" (a streaming list again), "list"
	Synced    bool    `json:"synced"`
}

// The next requests of InformerWatch.Then.
const (
	nextWatch  = "watch"
	nextStream = "stream"
	nextList   = "list"
)

// watchRuns are a link case's watch runs (-links-watch-timeout), one per mode, after its
// measured runs (results): each may take three times the slowest of those to sync, and the
// watch timeout and 30 s more, at most -sync-timeout.
func (b *bed) watchRuns(ctx context.Context, c Case, ns string, results []Result) ([]Result, error) {
	if c.Link == nil || b.o.linkWatch == 0 || b.o.overheadOnly {
		return nil, nil
	}
	k := c.Runs(b.o.ks)[0]
	var out []Result
	for _, m := range Modes {
		slowest := 0.0
		for _, r := range results {
			if r.Case == c.Name && r.Mode == m {
				slowest = max(slowest, r.SyncMillis)
			}
		}
		syncFor := min(b.o.syncTimeout, 3*time.Duration(slowest*float64(time.Millisecond))+b.o.linkWatch+30*time.Second)
		r, err := b.watchRun(ctx, c, ns, k, m, syncFor)
		if err != nil {
			return out, err
		}
		out = append(out, r)
	}
	return out, nil
}

// watchRun is a link case's watch run in mode m: one lab with the wire logged (its records say,
// per informer, when its end bookmark came and when its next request went) and -watch-timeout,
// run until every informer's first watch has ended and the next has been answered, or the
// watch timeout and a margin have passed; syncFor is how long it may take to sync (a streaming
// list cut before its end bookmark may never sync: then the run says so, it does not fail).
// It is no measurement of kube-apiserver: no settling, no memory.
func (b *bed) watchRun(ctx context.Context, c Case, ns string, k int, m Mode, syncFor time.Duration) (Result, error) {
	r := Result{Server: b.server, Case: c.Name + watchLabel, K: k, Mode: m, Logged: true, Rep: 1}
	timeout := b.o.linkWatch
	name := fmt.Sprintf("%s-%s-k%02d-%s-watch", b.slug, c.Name, k, m)
	lk, err := b.openLink(c, name)
	if err != nil {
		return r, err
	}
	defer lk.close()
	args := []string{"-kubeconfig", lk.kubeconfig, "-records", "-", "-name", b.o.lab, "-namespace", ns,
		"-informers", fmt.Sprint(k), "-watch-list", m.Gate(), "-resource", c.Resource, "-watch-timeout", timeout.String()}
	logPath := filepath.Join(b.runDir, "runs", name+".jsonl")
	p, err := labproc.Start(b.o.lab, b.bin, args, logPath, filepath.Join(b.runDir, "runs", name+".stderr"))
	if err != nil {
		return r, err
	}
	defer p.Stop(15 * time.Second)
	tags := record.InformerTags(k)
	synced, err := waitFor(ctx, p, syncFor, func() bool { return p.Synced(tags...) })
	if err != nil {
		return r, fmt.Errorf("%s: %w", name, err)
	}
	if synced {
		// Every informer's first watch ends within the timeout of its start, which came before
		// its sync; the next requests, a watch each, are answered after that. A second after
		// the last sync, no first watch of a LIST→WATCH informer is still being answered.
		since := lastSynced(p.Setups()).Add(time.Second)
		if _, err := waitFor(ctx, p, time.Until(since)+timeout+30*time.Second, func() bool {
			return time.Now().After(since) && p.Watching(since, 0, "", tags...)
		}); err != nil {
			return r, fmt.Errorf("%s: %w", name, err)
		}
	}
	stop := time.Now()
	if err := p.Stop(15 * time.Second); err != nil && synced {
		return r, err
	}
	if synced {
		if err := fromRecords(&r, p.Setups(), tags); err != nil {
			return r, fmt.Errorf("%s: %w", name, err)
		}
	}
	recs, err := readRecords(logPath)
	if err != nil {
		return r, err
	}
	if r.Watch, err = watchLives(recs, tags, m, int64(timeout/time.Second), stop); err != nil {
		return r, fmt.Errorf("%s: %w", name, err)
	}
	r.Watch.Synced = synced
	b.say("%-44s %s  %s", name, r.Watch.line(m), b.progress.step())
	return r, nil
}

// waitFor polls done every 10 ms for at most d: whether it came true, and an error only if the
// lab exited or ctx ended first.
func waitFor(ctx context.Context, p *labproc.Proc, d time.Duration, done func() bool) (bool, error) {
	deadline := time.Now().Add(d)
	for !done() {
		if msg := p.Exited(); msg != "" {
			return false, errors.New(msg)
		}
		if time.Now().After(deadline) {
			return false, nil
		}
		select {
		case <-ctx.Done():
			return false, fmt.Errorf("interrupted: %w", ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
	return true, nil
}

// lastSynced is the time of the last informer's synced record.
func lastSynced(setups []record.Record) time.Time {
	var t time.Time
	for _, s := range setups {
		if s.Step == record.StepSynced && s.Time.After(t) {
			t = s.Time
		}
	}
	return t
}

// watchLives reads a watch run's log: per informer, its sync point (its first end bookmark when
// it streams, its first watch's response after its LIST otherwise), the next request it sent
// after it, and how many streaming lists it sent until its sync point; and how many watches
// client-go gave up as very short. Each request counts from when it was sent: its record's
// time (its response) less its latency. Every watch must have asked for the timeout: a lab
// that did not rewrite it measured client-go's own.
func watchLives(recs []record.Record, tags []string, m Mode, timeoutSeconds int64, stop time.Time) (*WatchLife, error) {
	w := &WatchLife{TimeoutSeconds: timeoutSeconds}
	reqs := map[string][]watchRequest{}
	bookmark := map[string]time.Time{}
	for _, r := range recs {
		switch {
		case r.Kind == record.HTTP:
			req := watchRequest{r.Time.Add(-time.Duration(r.Millis) * time.Millisecond), record.ClassifyRequest(r.Path, r.Query), r}
			if req.class.Watch && mustQuery(r.Query).Get("timeoutSeconds") != strconv.FormatInt(timeoutSeconds, 10) {
				return nil, fmt.Errorf("informer %s's watch %s?%s did not ask for timeoutSeconds=%d: the lab has no -watch-timeout", r.Tag, r.Path, r.Query, timeoutSeconds)
			}
			reqs[r.Tag] = append(reqs[r.Tag], req)
		case record.IsEndBookmark(r):
			if _, ok := bookmark[r.Tag]; !ok {
				bookmark[r.Tag] = r.Time
			}
		case r.Kind == record.Setup && r.Step == record.StepKlog && strings.Contains(r.Value, "very short watch"):
			w.VeryShort++
		}
	}
	for _, tag := range tags {
		w.Informers = append(w.Informers, informerWatch(tag, reqs[tag], bookmark[tag], m, stop))
	}
	return w, nil
}

// watchRequest is a request of a watch run's informer: when it was sent, what it asked for, and
// its record.
type watchRequest struct {
	sent  time.Time
	class record.Request
	rec   record.Record
}

// informerWatch is one informer's part of watchLives: from its requests (rs) and its first end
// bookmark, its sync point and what it sent next (nothing until stop: still open).
func informerWatch(tag string, rs []watchRequest, bookmark time.Time, m Mode, stop time.Time) InformerWatch {
	slices.SortStableFunc(rs, func(a, b watchRequest) int { return a.sent.Compare(b.sent) })
	iw := InformerWatch{Tag: tag}
	var start time.Time
	if m == Streaming {
		start = bookmark
		for _, r := range rs {
			if r.class.Stream && (start.IsZero() || r.sent.Before(start)) {
				iw.Streams++
			}
		}
	} else if i := slices.IndexFunc(rs, func(r watchRequest) bool { return r.class.Watch && r.rec.Status == 200 }); i >= 0 {
		start = rs[i].rec.Time
	}
	if start.IsZero() { // never synced, or never watched
		return iw
	}
	iw.Synced = true
	next := slices.IndexFunc(rs, func(r watchRequest) bool { return r.sent.After(start) })
	if next < 0 {
		iw.Open, iw.UntilNext = true, stop.Sub(start).Seconds()
		return iw
	}
	n := rs[next]
	iw.UntilNext = n.sent.Sub(start).Seconds()
	switch {
	case n.class.Stream:
		iw.Then = nextStream
	case n.class.Watch:
		iw.Then = nextWatch
	default:
		iw.Then = nextList
	}
	return iw
}

func mustQuery(raw string) url.Values {
	q, _ := url.ParseQuery(raw)
	return q
}

// line says what a watch run saw, for the terminal.
func (w *WatchLife) line(m Mode) string {
	if !w.Synced {
		return fmt.Sprintf("watch timeout %ds: not synced (%s)", w.TimeoutSeconds, w.streamsText())
	}
	return fmt.Sprintf("watch timeout %ds: next requests %s s after %s; %s", w.TimeoutSeconds, w.untilNext().Format(1), syncPointOf(m), w.thenText())
}

// untilNext are the times from the sync points to the next requests, of the first watches
// that ended before the stop.
func (w *WatchLife) untilNext() Summary {
	var xs []float64
	for _, iw := range w.Informers {
		if iw.Synced && !iw.Open {
			xs = append(xs, iw.UntilNext)
		}
	}
	return Summarize(xs)
}

func plural(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

// thenText says what the informers sent after their first watches: "8 watched on", "2 watched
// on, 6 streamed again (client-go: 6 very short watches)", "2 still open at the stop". A very
// short watch is client-go's word, in its klog, for one closed within a second with no event.
func (w *WatchLife) thenText() string {
	count := map[string]int{}
	open := 0
	for _, iw := range w.Informers {
		if iw.Open {
			open++
		} else if iw.Synced {
			count[iw.Then]++
		}
	}
	var parts []string
	for _, t := range []struct{ then, words string }{{nextWatch, "watched on"}, {nextStream, "streamed again"}, {nextList, "listed again"}} {
		if n := count[t.then]; n > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, t.words))
		}
	}
	if open > 0 {
		parts = append(parts, fmt.Sprintf("%d still open at the stop", open))
	}
	text := strings.Join(parts, ", ")
	if w.VeryShort > 0 {
		text += fmt.Sprintf(" (client-go: %d very short %s)", w.VeryShort, plural(w.VeryShort, "watch", "watches"))
	}
	return text
}

// streamsText says how many streaming lists the informers sent until their end bookmarks.
func (w *WatchLife) streamsText() string {
	n, unsynced := 0, 0
	for _, iw := range w.Informers {
		n += iw.Streams
		if !iw.Synced {
			unsynced++
		}
	}
	return fmt.Sprintf("%d of %d informers without an end bookmark; %d streaming lists sent", unsynced, len(w.Informers), n)
}

// syncPointOf is where a mode's watch life counts from.
func syncPointOf(m Mode) string {
	if m == Streaming {
		return "their end bookmark"
	}
	return "their response"
}
