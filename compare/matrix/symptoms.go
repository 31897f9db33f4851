package matrix

import (
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"

	"informer-lab/compare/analysis"
	"informer-lab/record"
)

// Symptom is what a user of a setup sees, as the results show it. The cells' symptoms are
// derived here (Result.Hits); make bench's (MoreMemory, MoreCPU) by compare/findings.
type Symptom string

const (
	NeverSyncs    Symptom = "never syncs"
	HotLoop       Symptom = "re-streams in a hot loop"
	ListHangs     Symptom = "a typed List() hangs"
	SyncsLate     Symptom = "syncs late"
	ExtraRequests Symptom = "falls back with extra requests"
	ListExtra     Symptom = "a typed List() falls back with extra requests"
	MoreMemory    Symptom = "streaming costs kube-apiserver more memory"
	MoreCPU       Symptom = "streaming costs kube-apiserver more CPU"
)

// Symptoms are every symptom, those that hang or loop first: the order of findings that hit as
// many setups.
var Symptoms = []Symptom{NeverSyncs, HotLoop, ListHangs, SyncsLate, ExtraRequests, ListExtra, MoreMemory, MoreCPU}

// Hangs reports a symptom that leaves the user waiting or loops: the others cost more.
func (s Symptom) Hangs() bool { return s == NeverSyncs || s == HotLoop || s == ListHangs }

// Icon is the symptom's Markdown marker: 🔴 for a hang or a loop, ⚠ for a cost.
func (s Symptom) Icon() string {
	if s.Hangs() {
		return "🔴"
	}
	return "⚠"
}

// Title is the symptom as a heading: its first letter upper case.
func (s Symptom) Title() string { return strings.ToUpper(string(s[:1])) + string(s[1:]) }

// Anchor is the fragment GitHub gives the heading Title (Slug).
func (s Symptom) Anchor() string { return Slug(s.Title()) }

// Slug is the fragment GitHub gives a Markdown heading: lower case, letters, digits, hyphens and
// underscores kept, spaces turned into hyphens, everything else ("()", ".", "×") dropped.
func Slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(heading) {
		switch {
		case r == ' ':
			b.WriteRune('-')
		case r == '-' || r == '_' || unicode.IsLetter(r) || unicode.IsMark(r) || unicode.IsNumber(r):
			b.WriteRune(r)
		}
	}
	return b.String()
}

// Setup is who a symptom hits: one client-go with its WatchListClient gate, one kube-apiserver,
// one informer kind, one fault (make bench: one case). A cell is a setup in one scenario.
type Setup struct {
	ClientGo string // e.g. "v0.35.10"
	Module   string // its lab module, e.g. "client-v035"; "" for make bench
	Gate     string // WatchListClient on|off
	Default  bool   // the gate is at client-go's default
	Server   string // Server.Name, e.g. "1.32.13 WatchList=false"
	// ServerStreams says the WatchList gate of the server that answers the kind's requests is on
	// (record.KindServerStreams).
	ServerStreams bool
	// Upgrade is the second kube-apiserver's version behind the balancer (record.UpgradeOf), ""
	// for one server.
	Upgrade string
	Kind    string // the informer kind (record.Kinds), "" for make bench
	Fault   string // the fault scenario's fault ("no-end-bookmark"), "" outside the fault family
	Case    string // make bench's case ("secrets"), "" outside make bench
}

// Hit is one cell (or make bench point) that shows a symptom.
type Hit struct {
	Symptom Symptom
	Setup   Setup
	Cell    *Cell  // nil for make bench
	Link    string // the cell's log (Cell.Log), "" for make bench
	// Table is the page and fragment of the table that shows the hit, relative to the docs
	// directory, where the page is known (compare/findings sets it).
	Table  string
	Detail string // what it shows, e.g. "3083 requests in 1m0s"
}

// detectors derive each cell symptom; each returns what the cell shows of it, and whether it does.
var detectors = []struct {
	symptom Symptom
	detect  func(r *Result, c *Cell) (string, bool)
}{
	{NeverSyncs, neverSyncs}, {HotLoop, hotLoop}, {ListHangs, listHangs},
	{SyncsLate, syncsLate}, {ExtraRequests, extraRequests}, {ListExtra, listExtra},
}

// Hits are the symptoms the cells show, in table order: a cell not applicable or whose run
// failed shows none.
func (r *Result) Hits() []Hit {
	var out []Hit
	r.eachCell(func(c *Cell) {
		if c.NotApplicable || c.Failed != "" {
			return
		}
		for _, d := range detectors {
			if detail, ok := d.detect(r, c); ok {
				out = append(out, Hit{Symptom: d.symptom, Setup: r.SetupOf(c), Cell: c, Link: c.Log, Detail: detail})
			}
		}
	})
	return out
}

// SetupOf is the setup of a cell: its client's row, its server, its kind and its fault.
func (r *Result) SetupOf(c *Cell) Setup {
	cl := r.client(c.Client)
	s := Setup{ClientGo: cl.ClientGo, Module: cl.Module, Gate: cl.Gate, Default: cl.Default, Server: c.Server, Kind: c.KindName()}
	for _, sv := range r.Servers {
		if sv.Name == c.Server {
			if c.Kind == "" { // a grid without a kind axis: the kind its server runs by default
				s.Kind = record.DefaultKind(sv.FeatureGates)
			}
			s.ServerStreams = record.KindServerStreams(s.Kind, sv.FeatureGates, sv.Version)
			s.Upgrade = record.UpgradeOf(sv.FeatureGates)
		}
	}
	if record.IsFaultScenario(c.Scenario) {
		s.Fault = strings.TrimPrefix(c.Scenario, record.ScenarioFaultPrefix)
	}
	return s
}

// client is a row by name; a cell that names no row gets one with its name alone.
func (r *Result) client(name string) Client {
	for _, cl := range r.Clients {
		if cl.Name == name {
			return cl
		}
	}
	return Client{Name: name}
}

// GateOff is the cell of c's scenario, server and kind whose client is c's lab module with the
// gate off: c's setup with KUBE_FEATURE_WatchListClient=false. nil when c's gate is not on, or
// the grid has no such cell.
func (r *Result) GateOff(c *Cell) *Cell {
	cl := r.client(c.Client)
	if cl.Gate != "on" {
		return nil
	}
	for _, o := range r.Clients {
		if o.Module == cl.Module && o.Gate == "off" {
			return r.KindCell(c.Scenario, c.Server, c.KindName(), o.Name)
		}
	}
	return nil
}

// syncRecorded says the cell records whether its informers synced (Synced): in a fault scenario,
// and in a grid with a kind axis. Elsewhere the run required every informer to sync.
func (c *Cell) syncRecorded() bool {
	return c.Kind != "" || record.ScenarioOf(c.Scenario).Check == record.CheckFault
}

// parts splits the verdict into what the informers did and what the lab's direct List() did
// (direct false when the cell says nothing of one): a fault verdict holds both (faultVerdict),
// a direct-list verdict the List() alone, the others the informers alone. The verdict is read
// back because the result keeps no request counts of its own.
func (c *Cell) parts() (informers, list string, direct bool) {
	if record.ScenarioOf(c.Scenario).Check == record.CheckDirectList {
		return "", c.Verdict, true
	}
	informers, list, direct = strings.Cut(c.Verdict, directPart)
	return informers, list, direct
}

// requests is the most requests one informer (or the List()) made in a spelled text, 0 when it
// spells none.
func requests(text string) int { return slices.Max(append(analysis.SpelledRequests(text), 0)) }

// neverSyncs: a cell that records whether its informers synced and says they did not.
func neverSyncs(_ *Result, c *Cell) (string, bool) {
	if !c.syncRecorded() || c.Synced {
		return "", false
	}
	if wait := c.syncWait(); wait > 0 {
		return notSyncedAfter + wait.String(), true
	}
	return "not synced", true
}

// HotRate is the rate of requests, per second of the sync wait, at which an informer that never
// syncs is in a hot loop: a new stream as soon as the last one ended, not one per backoff.
const HotRate = 10

// hotLoop: a cell that never syncs whose informers made HotRate requests a second or more.
func hotLoop(r *Result, c *Cell) (string, bool) {
	if _, never := neverSyncs(r, c); !never {
		return "", false
	}
	informers, _, _ := c.parts()
	n, wait := requests(informers), c.syncWait()
	if wait <= 0 || float64(n) < HotRate*wait.Seconds() {
		return "", false
	}
	return fmt.Sprintf("%d requests in %s, %.0f a second", n, wait, float64(n)/wait.Seconds()), true
}

// syncWait is the run's sync wait: SyncWait, or, in a result older than that field, what the
// verdict says ("not synced after 1m0s: …"); 0 when neither says.
func (c *Cell) syncWait() time.Duration {
	text := c.SyncWait
	if text == "" {
		_, after, _ := strings.Cut(c.Verdict, notSyncedAfter)
		text, _, _ = strings.Cut(after, ":")
	}
	d, _ := time.ParseDuration(text)
	return d
}

// lateFactor is how many times the gate-off sync time a late sync is, at least a second.
const lateFactor = 10

// syncsLate: a cell that synced lateFactor times later than its setup with the gate off.
func syncsLate(r *Result, c *Cell) (string, bool) {
	off := r.GateOff(c)
	if off == nil || c.time() != syncTime || off.time() != syncTime || c.SyncMillis < 1000 || c.SyncMillis < lateFactor*off.SyncMillis {
		return "", false
	}
	return fmt.Sprintf("synced in %s, in %s with the gate off", millis(c.SyncMillis), millis(off.SyncMillis)), true
}

func millis(ms int64) string { return (time.Duration(ms) * time.Millisecond).String() }

// extraRequests: a cell whose informers synced with more requests than its setup with the gate
// off, a stream among them: a streaming list refused or given up, then LIST→WATCH.
func extraRequests(r *Result, c *Cell) (string, bool) {
	informers, _, _ := c.parts()
	off := r.GateOff(c)
	if _, never := neverSyncs(r, c); never || off == nil || !strings.Contains(informers, record.TokenStream) {
		return "", false
	}
	// The watches that failed while a server was down (restart, restart-gap) are as many with
	// either gate, give or take a retry: counting them would make the fallback come and go.
	offInformers, _, _ := off.parts()
	return moreRequests(requests(informers)-analysis.SpelledFailedWatches(informers),
		requests(offInformers)-analysis.SpelledFailedWatches(offInformers))
}

// listHangs: a cell whose direct List() had not returned when the lab stopped.
func listHangs(_ *Result, c *Cell) (string, bool) {
	_, list, direct := c.parts()
	if !direct || !strings.HasPrefix(list, directNoAnswer) {
		return "", false
	}
	wait, _, _ := strings.Cut(list, ":")
	return wait, true
}

// listExtra: a cell whose direct List() returned after more requests than its setup's with the
// gate off.
func listExtra(r *Result, c *Cell) (string, bool) {
	_, list, direct := c.parts()
	off := r.GateOff(c)
	if !direct || off == nil || strings.HasPrefix(list, directNoAnswer) {
		return "", false
	}
	_, offList, _ := off.parts()
	return moreRequests(requests(list), requests(offList))
}

// moreRequests says n requests are more than off's, when both are known.
func moreRequests(n, off int) (string, bool) {
	if off == 0 || n <= off {
		return "", false
	}
	return fmt.Sprintf("%d requests, %d with the gate off", n, off), true
}
