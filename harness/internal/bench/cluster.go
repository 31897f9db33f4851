package bench

// make bench KUBECONFIG=path: the same runs on a user's cluster, its one server. Each case goes
// into a namespace of its own, named and checked (SelfSubjectAccessReview) before anything is
// created, and deleted after the case, on an error and on Ctrl-C, its finalizing left to the
// cluster's namespace controller. The harness has no process of that kube-apiserver: its memory
// and CPU come from its GET /metrics where the user may read them, and the tables say plainly
// where they may not.

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"informer-lab/harness/internal/cli"
	"informer-lab/harness/internal/cluster"
	"informer-lab/harness/internal/servers"
	"informer-lab/record"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilrand "k8s.io/apimachinery/pkg/util/rand"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// metricsInterval is how often a run reads a cluster's /metrics for kube-apiserver's resident
// memory: every read is the whole exposition, which the server's CPU pays for too.
const metricsInterval = 250 * time.Millisecond

// namespaceWait bounds the wait for the cluster's namespace controller to remove a namespace.
const namespaceWait = time.Minute

// The sentences that say where a server's memory and CPU came from (ServerInfo.Source).
const (
	procSource    = "kube-apiserver's memory and CPU: /proc/<pid> of the local process (VmHWM reset to VmRSS before each run and read at sync, VmRSS sampled, utime + stime)"
	metricsSource = "kube-apiserver's memory and CPU: GET /metrics of the cluster (process_resident_memory_bytes read 250ms after each read returned, the peak being the highest read above the read just before the run, as the harness cannot reset a cluster's high-water mark; process_cpu_seconds_total before the run and at sync). " +
		"Several kube-apiservers behind one address each report their own process: a run whose reads came from more than one says so and has no server figures, and the one that answered need not be the one the informers reached"
	forbiddenSource = "kube-apiserver's memory and CPU are not readable by this user (GET /metrics forbidden): the tables show the client side only"
)

// onCluster applies -kubeconfig before read builds the cases: the cluster is the one server,
// which the harness cannot restart, docs/bench.md stays envtest's, and counts are capped by
// -max-objects (lowered where not given, refused where given).
func (o *options) onCluster(fs *flag.FlagSet, v *flagValues) error {
	if o.kubeconfig == "" {
		if o.kubeContext != "" {
			return errors.New("-context goes with -kubeconfig (make bench KUBECONFIG=path CONTEXT=name)")
		}
		return nil
	}
	set := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	names := strings.Split(strings.ReplaceAll(o.cases, " ", ""), ",")
	switch {
	case set["servers"]:
		return errors.New("-servers picks envtest's kube-apiservers, and with -kubeconfig the cluster is the one server: drop -servers (SERVERS=)")
	case set["fresh"] && o.fresh:
		return errors.New("-fresh restarts kube-apiserver before each run, which the harness cannot do to a cluster: drop it (every run on a cluster measures its running processes)")
	case o.docs:
		return errors.New("-docs writes docs/bench.md from envtest's servers, and a cluster's run stays in its run directory: drop -docs")
	case slices.Contains(names, "cbor"):
		return errors.New("-cases cbor installs a CustomResourceDefinition (cluster-scoped) and needs kube-apiserver's " + cborGate + ": run it on envtest, not with -kubeconfig")
	case o.maxObjects < 1:
		return fmt.Errorf("-max-objects must be at least 1, got %d", o.maxObjects)
	}
	var err error
	if o.kubeconfig, err = filepath.Abs(o.kubeconfig); err != nil { // the labs get it too
		return err
	}
	o.fresh = false
	if slices.Contains(names, "pods") {
		capped, err := capPodCounts(fs, v, o.maxObjects)
		if err != nil {
			return err
		}
		if capped != "" {
			o.capped = append(o.capped, capped)
		}
	}
	for _, c := range []struct {
		name string
		n    *int
	}{{"large", &o.large.Objects}, {"small", &o.small.Objects}, {"secrets", &o.secrets.Objects}, {"writes", &v.writesCount}} {
		flagName := c.name + "-count"
		switch {
		case *c.n <= o.maxObjects || !slices.Contains(names, c.name):
		case set[flagName]:
			return fmt.Errorf("-%s %d is more than -max-objects %d, the most objects make bench creates in a cluster per case: lower it, or raise -max-objects", flagName, *c.n, o.maxObjects)
		default:
			o.capped = append(o.capped, fmt.Sprintf("-%s %d (not %d: -max-objects)", flagName, o.maxObjects, *c.n))
			*c.n = o.maxObjects
		}
	}
	return nil
}

// clusterTarget is the user's cluster as make bench's one server.
type clusterTarget struct {
	*cluster.Cluster
	server     servers.Server    // "cluster-" and its /version: Result.Server
	namespaces map[string]string // each case's namespace, by case name
	cs         kubernetes.Interface
	// unreadable says why kube-apiserver's memory and CPU cannot be read from /metrics: "" when
	// they can.
	unreadable string
}

// openCluster opens o's cluster, names each case's namespace and checks, by
// SelfSubjectAccessReview, that the user may do everything the run does there, then whether it
// may read kube-apiserver's /metrics. It creates nothing; a refusal is the user's input.
func openCluster(ctx context.Context, o options, cases []Case) (*clusterTarget, error) {
	cl, err := cluster.Open(ctx, o.kubeconfig, o.kubeContext)
	if err != nil {
		return nil, cli.Usage(err)
	}
	cfg := rest.CopyConfig(cl.Config)
	cfg.QPS, cfg.Burst = 50, 50 // the /metrics reads: never held back by the client
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	t := &clusterTarget{Cluster: cl, server: servers.Server{Version: "cluster-" + cl.Version}, namespaces: map[string]string{}, cs: cs}
	var perms []cluster.Permission
	for _, c := range cases {
		ns := cluster.NamespacePrefix + "bench-" + c.Name + "-" + utilrand.String(5)
		t.namespaces[c.Name] = ns
		for _, p := range needs(ns, c) {
			if !slices.Contains(perms, p) {
				perms = append(perms, p)
			}
		}
	}
	if err := cl.Check(ctx, perms); err != nil {
		return nil, cli.Usage(err)
	}
	text, err := getMetrics(ctx, cs)
	if err == nil {
		_, err = parseProcess(text)
	}
	switch {
	case apierrors.IsForbidden(err):
		t.unreadable = forbiddenSource
	case err != nil:
		t.unreadable = fmt.Sprintf("kube-apiserver's memory and CPU could not be read (%s): the tables show the client side only", record.OneLine(err))
	}
	return t, nil
}

// needs is what a case does in its namespace ns on a cluster: the namespace, its objects (the
// resource of the case: ConfigMaps or Secrets), the informers' LIST and WATCH, and for a writes
// case the writer's updates and deletes.
func needs(ns string, c Case) []cluster.Permission {
	in := func(verb, why string) cluster.Permission {
		return cluster.Permission{Verb: verb, Resource: c.Resource, Namespace: ns, Why: why}
	}
	ps := []cluster.Permission{
		{Verb: "create", Resource: "namespaces", Why: "each case's own namespace"},
		{Verb: "delete", Resource: "namespaces", Name: ns, Why: "the case's namespace, deleted after it"},
		{Verb: "get", Resource: "namespaces", Name: ns, Why: "waiting for it to be gone"},
		in("create", "the seed objects and the writer's creates"),
		in("list", "the informers' LISTs and the writes cases' reader"),
		in("watch", "the informers' watches and streaming lists"),
		in("deletecollection", "removing the case's objects"),
	}
	if c.WriteRate > 0 {
		ps = append(ps, in("patch", "the writer's updates"), in("delete", "the writer's deletes"))
	}
	return ps
}

// where says which cluster, as the harness reached it.
func (t *clusterTarget) where() string {
	s := "the cluster of kubeconfig " + t.Kubeconfig
	if t.Context != "" {
		s += fmt.Sprintf(" (context %q)", t.Context)
	}
	return fmt.Sprintf("%s at %s: kube-apiserver %s, user %s", s, t.Config.Host, t.Version, t.User)
}

// source says where its kube-apiserver's memory and CPU come from.
func (t *clusterTarget) source() string {
	if t.unreadable != "" {
		return t.unreadable
	}
	return metricsSource
}

// attach makes the bed measure on the cluster: the labs get the user's kubeconfig, and
// kube-apiserver's figures come from /metrics, or from nowhere.
func (b *bed) attach(info *ServerInfo) (*rest.Config, error) {
	t := b.cluster
	b.kubeconfig = t.Kubeconfig
	*info = ServerInfo{Name: b.server, Reported: t.Version, Cluster: t.where(), Source: t.source()}
	b.meter = &metricsMeter{cs: t.cs, bound: b.o.settle, unreadable: t.unreadable}
	b.say("%s; each case in a namespace of its own (%sbench-<case>-xxxxx), deleted after it, on an error and on Ctrl-C", t.where(), cluster.NamespacePrefix)
	for _, c := range b.o.capped {
		b.say("%s", c)
	}
	b.say("%s", t.source())
	return t.Config, nil
}

// metricsReadable says whether the server's /metrics may be read: always on envtest.
func (b *bed) metricsReadable() bool { return b.cluster == nil || b.cluster.unreadable == "" }

// leaveNamespace deletes a case's objects in a cluster namespace (gone even while the namespace
// is Terminating), then the namespace, and waits at most namespaceWait for the cluster's
// namespace controller to finalize it: the harness never clears a finalizer on a cluster.
func (b *bed) leaveNamespace(ctx context.Context, ns string, c Case) error {
	del := b.cs.CoreV1().ConfigMaps(ns).DeleteCollection
	switch c.Resource {
	case record.ResourceSecrets:
		del = b.cs.CoreV1().Secrets(ns).DeleteCollection
	case record.ResourcePods:
		del = b.cs.CoreV1().Pods(ns).DeleteCollection
	}
	if err := deleteCollection(ctx, del, c.Resource); err != nil {
		b.say("delete the %s of namespace %s: %v (deleting the namespace removes them too)", c.Resource, ns, err)
	}
	nss := b.cs.CoreV1().Namespaces()
	if err := nss.Delete(ctx, ns, metav1.DeleteOptions{}); err != nil && !apierrors.IsNotFound(err) {
		return fmt.Errorf("delete namespace %s: %w", ns, err)
	}
	start := time.Now()
	for {
		_, err := nss.Get(ctx, ns, metav1.GetOptions{})
		switch {
		case apierrors.IsNotFound(err):
			b.say("deleted namespace %s (gone after %s)", ns, time.Since(start).Round(100*time.Millisecond))
			return nil
		case err != nil:
			return fmt.Errorf("wait for namespace %s to go: %w", ns, err)
		case time.Since(start) > namespaceWait:
			b.say("deleted namespace %s, still Terminating after %s: the cluster's namespace controller removes it (kubectl get namespace %s)", ns, namespaceWait, ns)
			return nil
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("wait for namespace %s to go: %w", ns, ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
}

// metricsMeter is a cluster's kube-apiserver seen through GET /metrics (the process collector's
// process_resident_memory_bytes, process_cpu_seconds_total and process_start_time_seconds),
// or, when unreadable says why not, not seen at all.
type metricsMeter struct {
	cs         kubernetes.Interface
	bound      time.Duration // -settle
	unreadable string

	stop, done chan struct{} // the sampling between begin and end
	mu         sync.Mutex
	peak       int64
	cpu0       float64
	starts     map[float64]bool // the processes that answered, by start time
	failed     error
}

// processSample is one read of kube-apiserver's process metrics.
type processSample struct {
	rss        int64
	cpu, start float64 // seconds
}

func (m *metricsMeter) read(ctx context.Context) (processSample, error) {
	text, err := getMetrics(ctx, m.cs)
	if err != nil {
		return processSample{}, err
	}
	return parseProcess(text)
}

// settle waits until the resident memory /metrics reports holds still for 2 s; a cluster gets
// no GC asked of it.
func (m *metricsMeter) settle(ctx context.Context) (int64, bool, error) {
	if m.unreadable != "" {
		return 0, false, nil
	}
	return holdStill(ctx, metricsInterval, 8, m.bound, func() (int64, error) {
		s, err := m.read(ctx)
		return s.rss, err
	})
}

func (m *metricsMeter) begin(ctx context.Context, r *Result) error {
	if m.unreadable != "" {
		r.APIMissing = m.unreadable
		return nil
	}
	s, err := m.read(ctx)
	if err != nil {
		return err
	}
	r.APIBaseline, m.peak, m.cpu0, m.starts, m.failed = s.rss, s.rss, s.cpu, map[float64]bool{s.start: true}, nil
	m.stop, m.done = make(chan struct{}), make(chan struct{})
	go func() { // a read every metricsInterval after the last one returned: a slow one never piles up
		defer close(m.done)
		for {
			select {
			case <-m.stop:
				return
			case <-time.After(metricsInterval):
			}
			s, err := m.read(ctx)
			m.mu.Lock()
			m.note(s, err)
			m.mu.Unlock()
		}
	}()
	return nil
}

func (m *metricsMeter) note(s processSample, err error) {
	if err != nil {
		m.failed = err
		return
	}
	m.peak = max(m.peak, s.rss)
	m.starts[s.start] = true
}

// end reads /metrics once more at sync. Figures from more than one process (another start
// time: another kube-apiserver behind the address, or the same one restarted) are not
// subtracted from each other: the run says so instead.
func (m *metricsMeter) end(ctx context.Context, r *Result) error {
	if m.stop == nil {
		return nil
	}
	close(m.stop)
	<-m.done
	m.stop = nil
	if r == nil {
		return nil
	}
	s, err := m.read(ctx)
	m.note(s, err)
	switch {
	case m.failed != nil:
		r.APIMissing = "a GET /metrics during the run failed: " + record.OneLine(m.failed)
	case len(m.starts) > 1:
		r.APIMissing = fmt.Sprintf("GET /metrics reached %d kube-apiserver processes during the run (process_start_time_seconds differed), each reporting its own memory and CPU: no figure is taken across them", len(m.starts))
	default:
		r.APIPeakHWM, r.APIPeakSampled, r.APICPUMillis = m.peak, m.peak, (s.cpu-m.cpu0)*1000
	}
	return nil
}

// parseProcess reads the process collector's series from Prometheus's text format (they carry
// no labels).
func parseProcess(text string) (processSample, error) {
	var s processSample
	var rss float64
	seen := 0
	for _, line := range strings.Split(text, "\n") {
		name, value, _ := strings.Cut(line, " ")
		into := map[string]*float64{"process_resident_memory_bytes": &rss, "process_cpu_seconds_total": &s.cpu, "process_start_time_seconds": &s.start}[name]
		if into == nil {
			continue
		}
		v, err := strconv.ParseFloat(strings.Fields(value + " ")[0], 64)
		if err != nil {
			return s, fmt.Errorf("/metrics: %q: %w", line, err)
		}
		*into = v
		seen++
	}
	if seen < 3 {
		return s, errors.New("/metrics lacks process_resident_memory_bytes, process_cpu_seconds_total or process_start_time_seconds")
	}
	s.rss = int64(rss)
	return s, nil
}

// dryRun is -dry-run: where the runs would go, what each case would create and how many runs
// and lab processes it would take; on a cluster, whether the user may (SelfSubjectAccessReview)
// and whether kube-apiserver's /metrics is readable. It creates, starts and measures nothing.
func dryRun(ctx context.Context, o options, stdout io.Writer) error {
	cases, _ := o.selected()
	p := func(format string, a ...any) { fmt.Fprintf(stdout, format+"\n", a...) }
	prefix := "bench-"
	var t *clusterTarget
	if o.kubeconfig != "" {
		var err error
		if t, err = openCluster(ctx, o, cases); err != nil {
			return err
		}
		o.servers, prefix = []servers.Server{t.server}, cluster.NamespacePrefix+"bench-"
		p("make bench -dry-run on %s", t.where())
	} else {
		var names []string
		for _, sv := range o.servers {
			names = append(names, sv.Name())
		}
		p("make bench -dry-run on envtest, each kube-apiserver on its own etcd in turn: %s", strings.Join(names, ", "))
	}
	for _, c := range o.capped {
		p("%s", c)
	}
	var objects int
	var bytes int64
	for _, c := range cases {
		writer := ""
		if c.WriteRate > 0 {
			writer = fmt.Sprintf("; during each run (and alone for -writes-alone before each repeat) a writer creates, updates and deletes ConfigMaps of its own at %d writes/s, at most %d at a time", c.WriteRate, writeLanes(c.WriteRate))
		}
		p("- namespace %s%s-xxxxx: %s%s; K = %s, %d repeat(s) of each mode", prefix, c.Name, c, writer, joinInts(c.Runs(o.ks)), o.repeats)
		objects += c.Objects
		bytes += int64(c.Objects) * c.Size
	}
	p("per server: %d objects, %s of data, one case at a time: each namespace is deleted after its case, on an error and on Ctrl-C too", objects, FormatBytes(bytes))
	n := o.runCount(cases)
	p("%d runs, each one lab process (%s) with K informers: %d lab processes, one after the other", n, o.lab, n)
	if t != nil {
		p("each namespace labelled %s=<its name>; permissions: every one the run needs is granted (SelfSubjectAccessReview)", record.RunLabel)
		p("%s", t.source())
	}
	p("nothing was created (-dry-run)")
	return nil
}

// apiMeasured reports whether every run on server has kube-apiserver's figures.
func (rep Report) apiMeasured(server string) bool {
	return !slices.ContainsFunc(rep.Results, func(r Result) bool { return r.Server == server && r.APIMissing != "" })
}

// sourceNote is the line under a server's tables: where its memory and CPU came from, and why
// runs have none.
func (rep Report) sourceNote(sv ServerInfo) string {
	note := sv.Source + "."
	if sv.Source == "" {
		note = procSource + "."
	}
	var why []string
	missing, all := 0, 0
	for _, r := range rep.Results {
		if r.Server != sv.Name {
			continue
		}
		all++
		if r.APIMissing != "" {
			missing++
			if !slices.Contains(why, r.APIMissing) && r.APIMissing != sv.Source {
				why = append(why, r.APIMissing)
			}
		}
	}
	if missing > 0 && len(why) > 0 {
		note += fmt.Sprintf(" %d of %d runs have none (%s): the tables show the client side only.", missing, all, strings.Join(why, "; "))
	}
	return note
}

// ClientTable is CaseTable without kube-apiserver's columns: a server whose memory and CPU were
// not read in every run.
func ClientTable(results []Result, server string, c Case, ks []int) string {
	header := []string{"K", "sync s, LIST→WATCH", "sync s, streaming", "ratio", "requests L / S", "MiB received L / S", "MiB on the wire L / S", "lab peak MiB L / S"}
	var rows [][]string
	for _, k := range ks {
		l, s := Point{server, c.Name, k, List, false}, Point{server, c.Name, k, Streaming, false}
		pair := func(m Metric) string {
			return l.Summarize(results, m).Format(m.Decimals) + " / " + s.Summarize(results, m).Format(m.Decimals)
		}
		lt, st := l.Summarize(results, SyncTime), s.Summarize(results, SyncTime)
		rows = append(rows, []string{fmt.Sprint(k), lt.Format(2), st.Format(2), FormatRatio(Ratio(st, lt)), pair(Requests), pair(Received), pair(OnWire), pair(LabMem)})
	}
	return Table(header, rows)
}
