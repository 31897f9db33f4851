package bench

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"iter"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"informer-lab/compare/analysis"
	"informer-lab/compare/findings"
	"informer-lab/harness/internal/labproc"
	"informer-lab/lab/mutator"
	"informer-lab/record"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/cache"
	watchtools "k8s.io/client-go/tools/watch"
)

// Writes during the initial sync (-cases writes): a writer creates, updates and deletes
// ConfigMaps at a fixed rate from just before the lab starts until every informer has synced,
// beside a reader making consistent LISTs. Each run then checks, from the lab's wire log, that
// every informer received every write made after its own sync point once and in rv order, and
// that its cache at stop equals a fresh LIST; and it reads the writer's and the reader's request
// latencies against the same writer with no informers starting (Report.Alone), and
// kube-apiserver's watch-cache counters from its /metrics.

// DefaultWriteRates are the writes per second of -cases writes.
var DefaultWriteRates = "20,100,500"

// readsPerSecond is the reader's pace: consistent LISTs (resourceVersion unset, limit 1), which
// kube-apiserver serves from its watch cache once the cache has caught up with etcd, and from
// etcd when it does not in time: the reads a watch-list that stalls the cache would slow.
const readsPerSecond = 10

// writeCases are -cases writes: the same ConfigMaps, synced by k informers while the writer
// writes at each rate.
func writeCases(count int, size int64, k int, rates []int) []Case {
	var cs []Case
	for _, r := range rates {
		cs = append(cs, Case{Name: fmt.Sprintf("writes-%d", r), Objects: count, Size: size, Resource: record.ResourceConfigMaps, Ks: []int{k}, WriteRate: r})
	}
	return cs
}

// WriterStats is what the writer and the reader met in one run, or alone.
type WriterStats struct {
	Rate    int     `json:"rate"`    // writes per second asked for
	Seconds float64 `json:"seconds"` // how long the writer wrote
	Writes  int     `json:"writes"`  // writes that succeeded
	Errors  int     `json:"errors,omitempty"`
	Error   string  `json:"error,omitempty"` // the first failed write's error
	// Write latencies in milliseconds, each from the time the write was due (not from when it
	// was sent): a writer held up by a slow server owes the writes it could not send, and they
	// count as late (no coordinated omission).
	P50, P99, Max float64
	Reads         int     `json:"reads"`
	ReadP50       float64 `json:"readP50"`
	ReadP99       float64 `json:"readP99"`
	ReadMax       float64 `json:"readMax"`
	ReadErrors    int     `json:"readErrors,omitempty"`
}

// writeLoad is a writer and a reader running at their rates until stopped.
type writeLoad struct {
	stop    chan struct{}
	stopped sync.Once
	wg      sync.WaitGroup
	t0      time.Time

	mu          sync.Mutex
	writes      []record.Record // the MUTATOR records of the writes that succeeded
	lat, rlat   []float64
	errs, rerrs int
	firstErr    string
}

// writeLanes is how many writers share a rate: each writes its own objects one write after the
// other (a create, two updates, a delete, as the standalone lab's writer), so a lane's writes
// are in order; several keep the rate when each write takes a few milliseconds. At most 16:
// 31 writes/s each at 500/s.
func writeLanes(rate int) int { return max(1, min(16, rate/25)) }

// startWrites starts the writer at rate writes/s in namespace ns, its objects named after
// prefix, and the reader, until Stop or until limit has passed.
func startWrites(ctx context.Context, t *mutator.Target, cs kubernetes.Interface, ns, prefix string, rate int, limit time.Duration) *writeLoad {
	w := &writeLoad{stop: make(chan struct{}), t0: time.Now()}
	deadline := w.t0.Add(limit)
	lanes := writeLanes(rate)
	period := time.Second / time.Duration(rate)
	for l := 0; l < lanes; l++ {
		w.wg.Add(1)
		go func() {
			defer w.wg.Done()
			j := 0
			for s := range laneSteps(fmt.Sprintf("%s-%02d", prefix, l)) {
				due := w.t0.Add(time.Duration(j*lanes+l) * period)
				j++
				if !w.waitUntil(ctx, due, deadline) {
					return
				}
				// Not ctx's cancellation: a write cut off in flight may have been made, and its rv
				// would be unknown. Stop ends the lanes between writes.
				rec, err := t.Write(context.WithoutCancel(ctx), ns, s)
				w.wrote(rec, err, due)
			}
		}()
	}
	w.wg.Add(1)
	go func() {
		defer w.wg.Done()
		limit := int64(1)
		for j := 0; ; j++ {
			due := w.t0.Add(time.Duration(j) * time.Second / readsPerSecond)
			if !w.waitUntil(ctx, due, deadline) {
				return
			}
			_, err := cs.CoreV1().ConfigMaps(ns).List(context.WithoutCancel(ctx), metav1.ListOptions{Limit: limit})
			w.read(err, due)
		}
	}()
	return w
}

// laneSteps is one lane's writes: mutator.Cycle on objects of its own.
func laneSteps(prefix string) iter.Seq[mutator.Step] {
	return func(yield func(mutator.Step) bool) {
		for s := range mutator.Cycle() {
			s.Name = prefix + "-" + strings.TrimPrefix(s.Name, "lab-cm-")
			if !yield(s) {
				return
			}
		}
	}
}

// waitUntil waits for due; false when the load is stopped, ctx ends or due is past deadline.
func (w *writeLoad) waitUntil(ctx context.Context, due, deadline time.Time) bool {
	if due.After(deadline) {
		return false
	}
	select {
	case <-w.stop:
		return false
	case <-ctx.Done():
		return false
	case <-time.After(time.Until(due)):
	}
	select {
	case <-w.stop:
		return false
	default:
		return true
	}
}

func (w *writeLoad) wrote(rec record.Record, err error, due time.Time) {
	ms := float64(time.Since(due).Microseconds()) / 1000
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		w.errs++
		if w.firstErr == "" {
			w.firstErr = err.Error()
		}
		return
	}
	w.lat = append(w.lat, ms)
	w.writes = append(w.writes, rec)
}

func (w *writeLoad) read(err error, due time.Time) {
	ms := float64(time.Since(due).Microseconds()) / 1000
	w.mu.Lock()
	defer w.mu.Unlock()
	if err != nil {
		w.rerrs++
		return
	}
	w.rlat = append(w.rlat, ms)
}

// Stop ends the writer and the reader once their writes in flight have returned, and returns
// what they met and the writes made. Stopped already, it returns the same at once.
func (w *writeLoad) Stop(rate int) (WriterStats, []record.Record) {
	w.stopped.Do(func() { close(w.stop) })
	w.wg.Wait()
	w.mu.Lock()
	defer w.mu.Unlock()
	s := WriterStats{Rate: rate, Seconds: time.Since(w.t0).Seconds(), Writes: len(w.writes), Errors: w.errs, Error: w.firstErr,
		Reads: len(w.rlat), ReadErrors: w.rerrs}
	s.P50, s.P99, s.Max = percentile(w.lat, 0.5), percentile(w.lat, 0.99), percentile(w.lat, 1)
	s.ReadP50, s.ReadP99, s.ReadMax = percentile(w.rlat, 0.5), percentile(w.rlat, 0.99), percentile(w.rlat, 1)
	return s, w.writes
}

// percentile is the q-quantile of xs by the nearest rank (q 1: the largest); NaN for none.
func percentile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	s := slices.Clone(xs)
	sort.Float64s(s)
	i := int(math.Ceil(q*float64(len(s)))) - 1
	return s[min(max(i, 0), len(s)-1)]
}

// checkWrites is a writes run's verdict on its informers, from the lab's log (every record) and
// a fresh LIST taken once every informer had the last write: per informer, the events after its
// sync point against the writes after it (analysis.Delivered), and its cache at stop against the
// LIST (analysis.CacheDiff). It returns the problems, none when every informer holds.
func checkWrites(logPath string, tags []string, writes []record.Record, fresh record.Record) ([]string, error) {
	recs, err := readRecords(logPath)
	if err != nil {
		return nil, err
	}
	caches := map[string]*record.Record{}
	for i, r := range recs {
		if r.Kind == record.Setup && r.Step == record.StepStore {
			caches[r.Tag] = &recs[i]
		}
	}
	var problems []string
	for _, tag := range tags {
		if w := analysis.Delivered(tag, recs, writes); w.Mismatch != "" {
			problems = append(problems, fmt.Sprintf("%s: %s", tag, w.Mismatch))
		}
		if d := analysis.CacheDiff(caches[tag], &fresh); d != "" {
			problems = append(problems, fmt.Sprintf("%s: cache at stop differs from a fresh LIST: %s", tag, d))
		}
	}
	return problems, nil
}

// detectorRuns counts the checks client-go's inconsistency detectors made (their warning that a
// check is on, one per check) in a lab's klog records.
func detectorRuns(setups []record.Record) int {
	n := 0
	for _, r := range setups {
		if r.Step == record.StepKlog && strings.Contains(r.Value, "data consistency check for") {
			n++
		}
	}
	return n
}

// readRecords reads a lab's log.
func readRecords(path string) ([]record.Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var recs []record.Record
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 1<<20), 64<<20)
	for i := 1; sc.Scan(); i++ {
		r, err := record.Parse(sc.Bytes())
		if err != nil {
			return nil, fmt.Errorf("%s:%d: %w", path, i, err)
		}
		recs = append(recs, r)
	}
	return recs, sc.Err()
}

// watchCacheMetrics are the kube-apiserver counters a writes run reads before and after, for
// the case's resource (k8s.io/apiserver pkg/storage/cacher/metrics): consistent reads the watch
// cache served, and those it could not in time (fallback="true", sent to etcd); the time reads
// waited for the cache to be fresh; watchers closed for not taking their events in time.
var watchCacheMetrics = []string{
	"apiserver_watch_cache_consistent_read_total",
	"apiserver_watch_cache_read_wait_seconds_sum",
	"apiserver_watch_cache_read_wait_seconds_count",
	"apiserver_terminated_watchers_total",
}

// readMetrics reads watchCacheMetrics for resource from kube-apiserver's /metrics, each series
// under its name and its labels other than the resource's: "apiserver_watch_cache_consistent_read_total{fallback="true",success="true"}".
func readMetrics(ctx context.Context, cs kubernetes.Interface, resource string) (map[string]float64, error) {
	text, err := getMetrics(ctx, cs)
	if err != nil {
		return nil, err
	}
	return parseMetrics(text, resource), nil
}

// getMetrics is kube-apiserver's GET /metrics, in Prometheus's text format.
func getMetrics(ctx context.Context, cs kubernetes.Interface) (string, error) {
	raw, err := cs.CoreV1().RESTClient().Get().AbsPath("/metrics").DoRaw(ctx)
	if err != nil {
		return "", fmt.Errorf("read kube-apiserver's /metrics: %w", err)
	}
	return string(raw), nil
}

// parseMetrics takes the series of watchCacheMetrics labelled with resource from Prometheus's
// text format.
func parseMetrics(text, resource string) map[string]float64 {
	out := map[string]float64{}
	for _, line := range strings.Split(text, "\n") {
		name, rest, ok := strings.Cut(line, "{")
		if !ok || !slices.Contains(watchCacheMetrics, name) {
			continue
		}
		labels, value, ok := strings.Cut(rest, "} ")
		if !ok {
			continue
		}
		var keep []string
		matched := false
		for _, l := range strings.Split(labels, ",") {
			switch l = strings.TrimSpace(l); {
			case l == `resource="`+resource+`"`, l == `resource="/`+resource+`"`:
				// consistent_read_total names a resource by its storage prefix, "/configmaps" in
				// 1.32 (k8s.io/apiserver@v0.32.13 pkg/storage/cacher/cacher.go,
				// "metrics.ConsistentReadTotal.WithLabelValues(c.resourcePrefix, success, fallback)"),
				// the others by its group and resource.
				matched = true
			case strings.HasPrefix(l, "group="), l == "":
			default:
				keep = append(keep, l)
			}
		}
		v, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
		if !matched || err != nil {
			continue
		}
		key := name
		if len(keep) > 0 {
			key += "{" + strings.Join(keep, ",") + "}"
		}
		out[key] += v
	}
	return out
}

// metricDeltas is after minus before, the series that moved.
func metricDeltas(before, after map[string]float64) map[string]float64 {
	d := map[string]float64{}
	for k, v := range after {
		if x := v - before[k]; x != 0 {
			d[k] = x
		}
	}
	return d
}

// detectorEnv switches client-go's inconsistency detectors on (k8s.io/client-go
// util/consistencydetector): after each LIST and each streaming list, the reflector LISTs
// again from etcd at the same rv and panics on a difference.
var detectorEnv = []string{"KUBE_WATCHLIST_INCONSISTENCY_DETECTOR=true", "KUBE_LIST_FROM_CACHE_INCONSISTENCY_DETECTOR=true"}

// startLab starts one run's lab: decoding only its SETUP records, or, in a writes run, every
// record (the harness waits for the last write's event), with the detectors if asked.
func (b *bed) startLab(c Case, name string, args []string, logPath string) (*labproc.Proc, error) {
	errPath := filepath.Join(b.runDir, "runs", name+".stderr")
	switch {
	case c.WriteRate == 0:
		return labproc.StartSetups(b.o.lab, b.bin, args, logPath, errPath)
	case b.o.detectors:
		return labproc.StartEnv(b.o.lab, b.bin, args, detectorEnv, logPath, errPath)
	}
	return labproc.Start(b.o.lab, b.bin, args, logPath, errPath)
}

// lastWrite ends a writes run: one more write once the writer has stopped, which every informer
// must deliver (a watch delivers in rv order: every write before it has been delivered too, or
// never will be), then a fresh LIST, against which each cache at stop is checked. It returns
// the writes with that last one, every DELETE with its rv from the harness's own watch.
func (b *bed) lastWrite(ctx context.Context, p *labproc.Proc, d *deletionWatch, ns, name string, tags []string, writes []record.Record) ([]record.Record, record.Record, error) {
	end, err := b.configMaps.Write(ctx, ns, mutator.Step{Op: mutator.Create, Name: "end-" + name[strings.LastIndex(name, "-k")+1:], Tick: 1})
	if err != nil {
		return nil, record.Record{}, err
	}
	writes = append(writes, end)
	deadline := time.Now().Add(time.Minute)
	for p.Missing([]record.Record{end}, tags...) > 0 {
		if msg := p.Exited(); msg != "" {
			return nil, record.Record{}, errors.New(msg)
		}
		if time.Now().After(deadline) {
			return nil, record.Record{}, fmt.Errorf("the last write (%s) not delivered to every informer after a minute", record.WriteKey(end))
		}
		select {
		case <-ctx.Done():
			return nil, record.Record{}, fmt.Errorf("interrupted: %w", ctx.Err())
		case <-time.After(10 * time.Millisecond):
		}
	}
	if err := d.fill(ctx, writes, end); err != nil {
		return nil, record.Record{}, err
	}
	rv, items, err := b.configMaps.List(ctx, ns, "")
	if err != nil {
		return nil, record.Record{}, err
	}
	return writes, record.Record{Kind: record.Setup, Tag: record.TagFreshList, Step: record.StepStore, RV: rv, Items: items}, nil
}

// writeAlone is a writes case's baseline for repeat rep: on the settled server, the writer and
// the reader for -writes-alone, with no informer starting.
func (b *bed) writeAlone(ctx context.Context, c Case, ns string, rep int) error {
	if b.o.fresh {
		if err := b.restart(ctx); err != nil {
			return err
		}
	}
	if _, _, err := b.settle(ctx); err != nil {
		return err
	}
	load := startWrites(ctx, b.configMaps, b.cs, ns, fmt.Sprintf("w-alone-%d", rep), c.WriteRate, b.o.aloneFor)
	select {
	case <-ctx.Done():
		load.Stop(c.WriteRate)
		return fmt.Errorf("interrupted: %w", ctx.Err())
	case <-time.After(b.o.aloneFor):
	}
	stats, _ := load.Stop(c.WriteRate)
	b.alone = append(b.alone, Result{Server: b.server, Case: c.Name, Rep: rep, Writer: &stats})
	b.say("%s writer alone, repeat %d: %s", c.Name, rep, stats.line())
	return nil
}

// line says what the writer and the reader met.
func (s WriterStats) line() string {
	l := fmt.Sprintf("%d writes in %.1fs at %d/s: p50 %.1f ms, p99 %.1f ms, max %.1f ms; %d consistent LISTs: p99 %.1f ms, max %.1f ms",
		s.Writes, s.Seconds, s.Rate, s.P50, s.P99, s.Max, s.Reads, s.ReadP99, s.ReadMax)
	if s.Errors > 0 || s.ReadErrors > 0 {
		l += fmt.Sprintf("; %d writes and %d reads failed (first: %s)", s.Errors, s.ReadErrors, s.Error)
	}
	return l
}

// deliveryText is a writes run's check in words.
func deliveryText(problems []string) string {
	if len(problems) == 0 {
		return "every informer got every write after its sync point, once, in rv order, and its cache equals a fresh LIST"
	}
	return "PROBLEMS: " + strings.Join(problems, "; ")
}

// Writer metrics: medians over a point's repeats of each run's own figure.
var (
	WriteP99  = Metric{"writer p99 (ms)", 1, func(r Result) float64 { return writerOf(r, func(s WriterStats) float64 { return s.P99 }) }, 0}
	WriteP50  = Metric{"writer p50 (ms)", 1, func(r Result) float64 { return writerOf(r, func(s WriterStats) float64 { return s.P50 }) }, 0}
	WriteMax  = Metric{"writer max (ms)", 1, func(r Result) float64 { return writerOf(r, func(s WriterStats) float64 { return s.Max }) }, 0}
	ReadP99   = Metric{"consistent LIST p99 (ms)", 1, func(r Result) float64 { return writerOf(r, func(s WriterStats) float64 { return s.ReadP99 }) }, 0}
	ReadMax   = Metric{"consistent LIST max (ms)", 1, func(r Result) float64 { return writerOf(r, func(s WriterStats) float64 { return s.ReadMax }) }, 0}
	EtcdReads = Metric{"consistent reads sent to etcd", 0, func(r Result) float64 {
		return r.metricSum("apiserver_watch_cache_consistent_read_total", `fallback="true"`)
	}, 0}
	Closed = Metric{"watchers kube-apiserver closed as unresponsive", 0, func(r Result) float64 {
		return r.metricSum("apiserver_terminated_watchers_total", "")
	}, 0}
	Written = Metric{"writes made", 0, func(r Result) float64 { return writerOf(r, func(s WriterStats) float64 { return float64(s.Writes) }) }, 0}
)

func writerOf(r Result, f func(WriterStats) float64) float64 {
	if r.Writer == nil {
		return math.NaN()
	}
	return f(*r.Writer)
}

// metricSum adds the moves of name's series whose labels hold label ("" for all).
func (r Result) metricSum(name, label string) float64 {
	sum := 0.0
	for k, v := range r.Metrics {
		if (k == name || strings.HasPrefix(k, name+"{")) && strings.Contains(k, label) {
			sum += v
		}
	}
	return sum
}

// WritesTable is the writes cases on one server: per rate, the writer alone, then each mode
// (medians over the repeats): how long the informers took to sync and what they asked for,
// what the writer's and the reader's requests met meanwhile, what kube-apiserver spent and
// counted, and the runs' check.
func WritesTable(rep Report, server string, cases []Case) string {
	header := []string{"writes/s", "informers", "sync s", "requests", "MiB received", "writes", "write p50 / p99 / max ms", "consistent LIST p99 / max ms",
		"apiserver +MiB", "apiserver CPU s", "watchers closed", "reads sent to etcd", "check"}
	var rows [][]string
	for _, c := range cases {
		k := rep.maxK(c)
		writer := func(runs []Result) []string {
			return []string{medianOf(runs, Written), medianOf(runs, WriteP50) + " / " + medianOf(runs, WriteP99) + " / " + medianOf(runs, WriteMax),
				medianOf(runs, ReadP99) + " / " + medianOf(runs, ReadMax)}
		}
		alone := rep.aloneRuns(server, c.Name)
		rows = append(rows, slices.Concat([]string{fmt.Sprint(c.WriteRate), "none (writer alone)", "", "", ""}, writer(alone), []string{"", "", "", "", ""}))
		for _, m := range Modes {
			runs := rep.runsAt(Point{server, c.Name, k, m, false})
			rows = append(rows, slices.Concat([]string{fmt.Sprint(c.WriteRate), fmt.Sprintf("%d, %s", k, m.Title()), medianOf(runs, SyncTime), medianOf(runs, Requests), medianOf(runs, Received)},
				writer(runs),
				[]string{medianOf(runs, APIMem), medianOf(runs, APICPU), medianOf(runs, Closed), medianOf(runs, EtcdReads), checkCell(runs)}))
		}
	}
	return Table(header, rows)
}

// medianOf is m's median over runs, "n/a" for none (a figure a run did not have: NaN).
func medianOf(runs []Result, m Metric) string {
	return fmtMedian(Summarize(values(runs, m)), m.Decimals)
}

// values are m of each run that has it (not NaN).
func values(runs []Result, m Metric) []float64 {
	var xs []float64
	for _, r := range runs {
		if x := m.Of(r); !math.IsNaN(x) {
			xs = append(xs, x)
		}
	}
	return xs
}

// runsAt are the runs of p.
func (rep Report) runsAt(p Point) []Result {
	var runs []Result
	for _, r := range rep.Results {
		if r.Server == p.Server && r.Case == p.Case && r.K == p.K && r.Mode == p.Mode && r.Logged == p.Logged {
			runs = append(runs, r)
		}
	}
	return runs
}

// aloneRuns are a writes case's baselines on server.
func (rep Report) aloneRuns(server, caseName string) []Result {
	var runs []Result
	for _, r := range rep.Alone {
		if r.Server == server && r.Case == caseName {
			runs = append(runs, r)
		}
	}
	return runs
}

// WritesFindings are what the writes runs on server show, by the rule of make bench's findings
// (findings.Costlier: a median at least 1.2 times the other's, every run above every run of the
// other): where streaming took longer to sync than LIST→WATCH, asked for more or received more;
// where the writer's p99 during the sync rose above the writer alone's; and, from any run,
// watchers kube-apiserver closed and consistent reads it sent to etcd.
func WritesFindings(rep Report, server string, cases []Case) []string {
	var out []string
	for _, c := range cases {
		k := rep.maxK(c)
		byMode := map[Mode][]Result{List: rep.runsAt(Point{server, c.Name, k, List, false}), Streaming: rep.runsAt(Point{server, c.Name, k, Streaming, false})}
		var parts []string
		for _, m := range []struct {
			Metric
			what string
		}{{SyncTime, "took longer to sync"}, {Requests, "made more requests"}, {Received, "received more bytes"}} {
			s, l := byMode[Streaming], byMode[List]
			if r, ok := findings.Costlier(values(s, m.Metric), values(l, m.Metric)); ok {
				parts = append(parts, fmt.Sprintf("streaming %s (%s against %s, %s)", m.what, medianOf(s, m.Metric), medianOf(l, m.Metric), FormatRatio(r)))
			}
		}
		alone := values(rep.aloneRuns(server, c.Name), WriteP99)
		for _, m := range Modes {
			if r, ok := findings.Costlier(values(byMode[m], WriteP99), alone); ok {
				parts = append(parts, fmt.Sprintf("the writer's p99 during a %s sync was %s its p99 alone", m.Title(), FormatRatio(r)))
			}
		}
		for _, m := range Modes {
			if n := sum(values(byMode[m], Closed)); n > 0 {
				parts = append(parts, fmt.Sprintf("kube-apiserver closed %.0f watchers as unresponsive in the %d %s runs", n, len(byMode[m]), m.Title()))
			}
			if n := sum(values(byMode[m], EtcdReads)); n > 0 {
				parts = append(parts, fmt.Sprintf("it sent %.0f consistent reads to etcd in the %d %s runs", n, len(byMode[m]), m.Title()))
			}
		}
		if len(parts) > 0 {
			out = append(out, fmt.Sprintf("%s, %d writes/s, K=%d: %s.", server, c.WriteRate, k, strings.Join(parts, "; ")))
		}
	}
	return out
}

func sum(xs []float64) float64 {
	t := 0.0
	for _, x := range xs {
		t += x
	}
	return t
}

// checkCell says how many of a point's runs held (every informer got every write after its
// sync point, in order, and ended equal to a fresh LIST), and the first problem of one that did
// not.
func checkCell(runs []Result) string {
	bad := slices.IndexFunc(runs, func(r Result) bool { return len(r.Problems) > 0 })
	n := 0
	for _, r := range runs {
		if len(r.Problems) == 0 {
			n++
		}
	}
	if bad < 0 {
		return fmt.Sprintf("held in %d of %d", n, len(runs))
	}
	return fmt.Sprintf("held in %d of %d; rep %d: %s", n, len(runs), runs[bad].Rep, runs[bad].Problems[0])
}

// writeCases are the run's writes cases, in order.
func (rep Report) writeCases() []Case {
	return slices.DeleteFunc(slices.Clone(rep.Cases), func(c Case) bool { return c.WriteRate == 0 })
}

// writesSection is docs/bench.md's part on the writes cases.
func writesSection(p func(string, ...any), rep Report, ws []Case) {
	c := ws[0]
	p("### Writes during the initial sync, K=%d\n\n", rep.maxK(c))
	p("%d ConfigMaps of %s seeded; from just before the lab starts until its %d informers have synced, a writer creates, updates and deletes ConfigMaps of its own at a fixed rate (%d lanes at most, each writing its objects in turn), and a reader makes %d consistent LISTs a second (no resourceVersion, limit 1: served from the watch cache once it has caught up with etcd, else from etcd). ",
		c.Objects, FormatBytes(c.Size), rep.maxK(c), writeLanes(5000), readsPerSecond)
	alone := "a few seconds"
	if len(rep.Alone) > 0 {
		alone = fmt.Sprintf("%.0f s", rep.Alone[0].Writer.Seconds)
	}
	p("Latencies count from when each request was due, so a writer held up owes its late writes. *none (writer alone)* is the same writer and reader for %s on the settled server before each repeat, with no informer starting. ", alone)
	p("*reads sent to etcd* is how much kube-apiserver's `apiserver_watch_cache_consistent_read_total{fallback=\"true\"}` for ConfigMaps moved from the baseline to the sync. ")
	if rep.Fresh {
		const at = "k8s.io/apiserver@v0.32.13 pkg/storage/cacher/watch_cache.go"
		p("Each run starts on a kube-apiserver process started just before it (-fresh), as after a restart or an upgrade, when every informer syncs again: its watch cache of ConfigMaps holds the fewest events it can (%s: \"defaultLowerBoundCapacity = 100\"), and it gives each watcher a buffer of at least 10 events (%s: \"minWatchChanSize = 10\"), which grows with that cache, to 100 at most (%s: \"maxWatchChanSizeWithoutIndex = 100\"). ", at, at, at)
	} else {
		p("Every run of a server is on one kube-apiserver process (-fresh=false), whose watch cache of ConfigMaps has grown with the seeding's creates. ")
	}
	p("These runs log the wire (no `-quiet`): *check* says in how many repeats every informer received, after its own sync point (its LIST's body, or its stream's initial-events-end bookmark), every write made after it, once and in resourceVersion order, and ended with its cache equal to a fresh LIST taken once the writer stopped and a last write had reached every informer.\n\n")
	for _, sv := range rep.measuredOn(c) {
		p("kube-apiserver %s:\n\n%s\n", sv, WritesTable(rep, sv, ws))
		if fs := WritesFindings(rep, sv, ws); len(fs) > 0 {
			p("What these runs show (the rule of the findings: a median at least %.1f times the other's, every run above every run of the other; counters from any run):\n\n", findings.CostRatio)
			for _, f := range fs {
				p("- %s\n", f)
			}
			p("\n")
		}
	}
}

// deletionWatch is the harness's own watch of a writes run's namespace, from before the
// writer's first write. kube-apiserver answers a ConfigMap's DELETE with a Status, without the
// deletion's rv (lab/mutator's Apply); this watch's DELETED events give it, from the server and
// not from the informers under test. Without it, a DELETE made before an informer's sync point
// (its object then absent from the informer's initial state) could not be told from one made
// after it and lost.
type deletionWatch struct {
	w       watch.Interface
	done    chan struct{}
	mu      sync.Mutex
	deleted map[string]string // name -> rv of its DELETED event
	added   map[string]string // name -> rv of its ADDED event
}

// watchDeletions starts the watch from the namespace's rv now (a consistent LIST of one item).
func watchDeletions(ctx context.Context, cs kubernetes.Interface, ns string) (*deletionWatch, error) {
	cms := cs.CoreV1().ConfigMaps(ns)
	l, err := cms.List(ctx, metav1.ListOptions{Limit: 1})
	if err != nil {
		return nil, fmt.Errorf("the harness's watch of %s: %w", ns, err)
	}
	// A RetryWatcher watches again from the last rv it saw when kube-apiserver ends the watch: at
	// 500 writes/s beside eight streaming informers, 1.32.13 closed a plain watch of the
	// harness's as unresponsive (measured: the watch ended before the run's last write).
	w, err := watchtools.NewRetryWatcher(l.ResourceVersion, &cache.ListWatch{WatchFunc: func(o metav1.ListOptions) (watch.Interface, error) {
		return cms.Watch(ctx, o)
	}})
	if err != nil {
		return nil, fmt.Errorf("the harness's watch of %s: %w", ns, err)
	}
	d := &deletionWatch{w: w, done: make(chan struct{}), deleted: map[string]string{}, added: map[string]string{}}
	go func() {
		defer close(d.done)
		for ev := range w.ResultChan() {
			m, err := meta.Accessor(ev.Object)
			if err != nil {
				continue
			}
			d.mu.Lock()
			switch ev.Type {
			case watch.Deleted:
				d.deleted[m.GetName()] = m.GetResourceVersion()
			case watch.Added:
				d.added[m.GetName()] = m.GetResourceVersion()
			}
			d.mu.Unlock()
		}
	}()
	return d, nil
}

// fill gives each DELETE of writes without an rv its deletion's, once the watch has seen end
// (the run's last write: every deletion before it has been seen then). It stops the watch.
func (d *deletionWatch) fill(ctx context.Context, writes []record.Record, end record.Record) error {
	defer d.Stop()
	deadline := time.Now().Add(time.Minute)
	for {
		d.mu.Lock()
		seen := d.added[end.Name] == end.RV
		d.mu.Unlock()
		if seen {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("interrupted: %w", ctx.Err())
		case <-d.done:
			return fmt.Errorf("the harness's watch ended before it saw the last write (%s)", record.WriteKey(end))
		case <-time.After(10 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("the harness's watch did not see the last write (%s) in a minute", record.WriteKey(end))
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for i, wr := range writes {
		if wr.Event != record.WriteDelete || wr.RV != "" {
			continue
		}
		rv, ok := d.deleted[wr.Name]
		if !ok {
			return fmt.Errorf("the harness's watch saw no DELETED event for %s/%s, which the writer deleted", wr.Namespace, wr.Name)
		}
		writes[i].RV = rv
	}
	return nil
}

// Stop ends the watch; again, nothing.
func (d *deletionWatch) Stop() {
	d.w.Stop()
	<-d.done
}
