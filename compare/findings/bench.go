package findings

import (
	"cmp"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"time"

	"informer-lab/compare/matrix"
	"informer-lab/record"
)

// make bench's results and pages in the docs directory (harness/internal/bench's DocsResults
// and docFiles): docs/bench.md, one run of every dimension, and docs/bench-servers.md, the plain
// shapes on more server versions.
const (
	BenchResults        = "bench-results.json"
	BenchPage           = "bench.md"
	BenchServersResults = "bench-servers-results.json"
	BenchServersPage    = "bench-servers.md"
)

type benchFile struct{ name, result, page string }

// benchFiles are make bench's results that findings reads, each with its page and name.
var benchFiles = []benchFile{
	{"bench", BenchResults, BenchPage},
	{"bench, servers", BenchServersResults, BenchServersPage},
}

// Bench is what findings reads of make bench's results: the fields of harness/internal/bench's
// Report and Result it needs, under their JSON names (compare imports no harness package).
type Bench struct {
	Page     string `json:"-"` // the page showing it, where its findings link; "" is BenchPage
	Started  time.Time
	Versions struct{ ClientGo string }
	Results  []BenchRun
}

// BenchRun is one run of make bench: K informers of one case on one server, LIST→WATCH or
// streaming.
type BenchRun struct {
	Server       string  `json:"server"`
	Case         string  `json:"case"`
	K            int     `json:"k"`
	Mode         string  `json:"mode"` // benchStreaming (the lab's gate on), or "list" (off)
	Logged       bool    `json:"logged"`
	APIPeakHWM   int64   `json:"apiPeakHWM"`
	APICPUMillis float64 `json:"apiCPUMillis"`
}

// benchStreaming is harness/internal/bench's Streaming mode as its results spell it.
const benchStreaming = "streaming"

// ReadBench reads make bench's results (its results.json).
func ReadBench(data []byte) (*Bench, error) {
	var b Bench
	if err := json.Unmarshal(data, &b); err != nil {
		return nil, fmt.Errorf("not make bench's results: %w", err)
	}
	if len(b.Results) == 0 {
		return nil, fmt.Errorf("not make bench's results: no run")
	}
	return &b, nil
}

// LoadBench reads a file of make bench's results.
func LoadBench(file string) (*Bench, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	b, err := ReadBench(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	return b, nil
}

// benchMetric is a kube-apiserver cost make bench measures, and the symptom of paying more of it.
type benchMetric struct {
	symptom matrix.Symptom
	unit    string
	of      func(BenchRun) float64
}

var benchMetrics = []benchMetric{
	{matrix.MoreMemory, "MiB peak RSS", func(r BenchRun) float64 { return float64(r.APIPeakHWM) / (1 << 20) }},
	{matrix.MoreCPU, "CPU seconds", func(r BenchRun) float64 { return r.APICPUMillis / 1000 }},
}

// CostRatio is how many times one set of runs' median the other's must be, every run of the
// other also above every run of the one, for the other to cost more (Costlier): streaming
// against LIST→WATCH here, an encoding against JSON in make bench's encodings page.
const CostRatio = 1.2

// point is one server, case and K of make bench, measured with the gate off (LIST→WATCH) and on.
type point struct {
	server, kase string
	k            int
}

// points are the measured points in the order of the results, the wire-logging runs left out.
func (b *Bench) points() []point {
	var out []point
	for _, r := range b.Results {
		if p := (point{r.Server, r.Case, r.K}); !r.Logged && !slices.Contains(out, p) {
			out = append(out, p)
		}
	}
	return out
}

// values are a metric's values at p, of the streaming runs or of the LIST→WATCH ones, sorted.
func (b *Bench) values(p point, m benchMetric, streaming bool) []float64 {
	var xs []float64
	for _, r := range b.Results {
		if (point{r.Server, r.Case, r.K}) == p && !r.Logged && (r.Mode == benchStreaming) == streaming {
			xs = append(xs, m.of(r))
		}
	}
	slices.Sort(xs)
	return xs
}

func median(xs []float64) float64 {
	n := len(xs)
	if n%2 == 0 {
		return (xs[n/2-1] + xs[n/2]) / 2
	}
	return xs[n/2]
}

// costlier says how streaming costs more of m at p than LIST→WATCH: its median at least
// CostRatio times theirs, and every streaming run above every LIST→WATCH run.
func (b *Bench) costlier(p point, m benchMetric) (string, bool) {
	s, l := b.values(p, m, true), b.values(p, m, false)
	if _, ok := Costlier(s, l); !ok {
		return "", false
	}
	return fmt.Sprintf("K=%d: %.1f %s streaming, %.1f with LIST→WATCH (%.2f×; medians of %d and %d runs, every streaming run above every LIST→WATCH run)",
		p.k, median(s), m.unit, median(l), median(s)/median(l), len(s), len(l)), true
}

// Costlier reports whether the runs xs cost more than the runs ys, by the rule of every finding
// of make bench: the median of xs at least CostRatio times that of ys, and every x above every
// y. It returns the ratio of the medians.
func Costlier(xs, ys []float64) (float64, bool) {
	xs, ys = slices.Sorted(slices.Values(xs)), slices.Sorted(slices.Values(ys))
	if len(xs) == 0 || len(ys) == 0 || median(ys) <= 0 {
		return 0, false
	}
	r := median(xs) / median(ys)
	return r, r >= CostRatio && xs[0] > ys[len(ys)-1]
}

// Hits are the points where streaming costs kube-apiserver more than LIST→WATCH. The setup is
// the bench lab's client-go with the gate set on, on one server, in one case: its typed
// informers are the typed-configmaps kind's (record: -resource secrets for the secrets case).
func (b *Bench) Hits() []matrix.Hit {
	var out []matrix.Hit
	for _, m := range benchMetrics {
		for _, p := range b.points() {
			if detail, ok := b.costlier(p, m); ok {
				out = append(out, matrix.Hit{Symptom: m.symptom, Setup: b.setup(p), Table: b.anchor(p.server), Detail: detail})
			}
		}
	}
	slices.SortStableFunc(out, func(a, b matrix.Hit) int { return cmp.Compare(a.Setup.Server, b.Setup.Server) })
	return out
}

func (b *Bench) setup(p point) matrix.Setup {
	return matrix.Setup{ClientGo: b.Versions.ClientGo, Gate: "on", Server: p.server, Kind: record.KindTypedConfigMaps, Case: p.kase}
}

// anchor links a server's tables in b's page ("### kube-apiserver 1.37.2").
func (b *Bench) anchor(server string) string {
	return cmp.Or(b.Page, BenchPage) + "#" + matrix.Slug("kube-apiserver "+server)
}

// hitPoints are the points of h's setup where streaming costs more, as the hit's symptom says.
func (b *Bench) hitPoints(h matrix.Hit) []point {
	var out []point
	for _, p := range b.points() {
		if b.setup(p) == h.Setup && b.shows(p, h.Symptom) {
			out = append(out, p)
		}
	}
	return out
}

func (b *Bench) shows(p point, s matrix.Symptom) bool {
	for _, m := range benchMetrics {
		if _, ok := b.costlier(p, m); ok && m.symptom == s {
			return true
		}
	}
	return false
}

// noCompression is the server variant of make bench whose streaming lists go uncompressed.
const noCompression = "WatchListCompression=false"

// compresses says whether a make bench server gzips streaming lists: kube-apiserver 1.37 or
// later, unless its variant turns WatchListCompression off.
func compresses(server string) bool {
	return record.Minor(server) >= 37 && !strings.HasSuffix(server, " "+noCompression)
}

// listWitnesses: the gate off is make bench's LIST→WATCH runs at the same points, which cost
// less there by what makes the hit.
func (b *Bench) listWitnesses(h matrix.Hit) []witness {
	var out []witness
	for _, p := range b.hitPoints(h) {
		out = append(out, witness{label: fmt.Sprintf("LIST→WATCH on %s, %s K=%d", p.server, p.kase, p.k), link: b.anchor(p.server)})
	}
	return out
}

// noCompressionWitnesses: the same points on the same kube-apiserver with
// WatchListCompression=false, where make bench measured one.
func (b *Bench) noCompressionWitnesses(h matrix.Hit) []witness {
	const gate = " " + noCompression
	if strings.HasSuffix(h.Setup.Server, gate) {
		return nil
	}
	var out []witness
	for _, p := range b.hitPoints(h) {
		q := point{p.server + gate, p.kase, p.k}
		if len(b.values(q, benchMetrics[0], true)) > 0 {
			out = append(out, witness{label: fmt.Sprintf("streaming on %s, %s K=%d", q.server, q.kase, q.k), link: b.anchor(q.server), shows: b.shows(q, h.Symptom)})
		}
	}
	return out
}
