package findings

import (
	"cmp"
	"fmt"
	"slices"
	"strings"

	"informer-lab/compare/matrix"
	"informer-lab/record"
)

// fix is what to do about a cause, and how to find, in the results, a hit's setup with the fix
// applied: its witnesses. A fix is said to work for a setup only where it has witnesses and
// none of them shows the symptom.
type fix struct {
	name string
	text string // what to do; a newer-version fix's text holds %s, the version it works from
	of   func(ix *index, h matrix.Hit) []witness
}

// witness is a cell (make bench: a point) of a hit's setup with a fix applied.
type witness struct {
	label, link string
	shows       bool   // it shows the hit's symptom too
	version     string // newer: the client-go it has
}

var (
	fixGateOff = fix{"gate-off", "Turn the client gate off: `KUBE_FEATURE_WatchListClient=false` in the process's environment (client-go v0.35 and later have it on by default; before v0.35 it is on only where set).", gateOffWitnesses}
	fixOptOut  = fix{"opt-out", "Make the hand-written ListWatch say it does not support streaming lists: a method `IsWatchListSemanticsUnSupported() bool` that returns true.", optOutWitnesses}
	// fixStreamingServer's servers are record.ServerStreams's.
	fixStreamingServer = fix{"streaming-server", "A kube-apiserver whose WatchList gate is on: 1.32, and 1.34 or later, by default; 1.33 with `--feature-gates=WatchList=true`.", streamingServerWitnesses}
	// fixStreamingAggregated's are record.KindServerStreams's for the aggregated kind.
	fixStreamingAggregated = fix{"streaming-aggregated", "An aggregated apiserver whose WatchList gate is on, as it is by default when built on k8s.io/apiserver v0.34 or later; kube-apiserver's own gate does not reach it.", streamingServerWitnesses}
	fixNoCompression       = fix{"no-compression", "On kube-apiserver 1.37, `--feature-gates=WatchListCompression=false`: streaming lists then go uncompressed (more bytes on the wire).", noCompressionWitnesses}
)

// fixNewer is a newer client: text says what, %s the version from which the results show it works.
func fixNewer(text string) fix { return fix{"newer: " + text, text, newerWitnesses} }

// index is what the witnesses are looked up in: which grid holds a hit's cell, and which cells
// show which symptom.
type index struct {
	src   *Sources
	grid  map[*matrix.Cell]*Grid
	shows map[matrix.Symptom]map[*matrix.Cell]bool
}

func (src *Sources) index(hits []matrix.Hit) *index {
	ix := &index{src: src, grid: map[*matrix.Cell]*Grid{}, shows: map[matrix.Symptom]map[*matrix.Cell]bool{}}
	for i := range src.Grids {
		g := &src.Grids[i]
		for j := range g.Result.Cells {
			ix.grid[&g.Result.Cells[j]] = g
		}
	}
	for _, h := range hits {
		if ix.shows[h.Symptom] == nil {
			ix.shows[h.Symptom] = map[*matrix.Cell]bool{}
		}
		if h.Cell != nil {
			ix.shows[h.Symptom][h.Cell] = true
		}
	}
	return ix
}

// cellWitness is a cell as a witness of h's setup with a fix: it shows h's symptom when it
// shows the same, or one that hangs or loops.
func (ix *index) cellWitness(h matrix.Hit, c *matrix.Cell) witness {
	label := c.Scenario + " · " + c.Server
	if c.Kind != "" {
		label += " · " + c.Kind
	}
	shows := false
	for _, s := range matrix.Symptoms {
		shows = shows || (s == h.Symptom || s.Hangs()) && ix.shows[s][c]
	}
	return witness{label: label + " · " + c.Client, link: c.Log, shows: shows, version: ix.grid[c].Result.SetupOf(c).ClientGo}
}

// gateOffWitnesses: h's cell with its module's gate off (Result.GateOff); make bench: its
// LIST→WATCH runs.
func gateOffWitnesses(ix *index, h matrix.Hit) []witness {
	if h.Cell == nil {
		return ix.src.benchOf(h).listWitnesses(h)
	}
	if off := ix.grid[h.Cell].Result.GateOff(h.Cell); off != nil {
		return []witness{ix.cellWitness(h, off)}
	}
	return nil
}

// twin is the witness of the cell of h's grid and scenario on server, of kind, for client, where
// the grid has one (h is a cell's hit).
func (ix *index) twin(h matrix.Hit, server, kind, client string) (witness, bool) {
	c := ix.grid[h.Cell].Result.KindCell(h.Cell.Scenario, server, kind, client)
	if c == nil {
		return witness{}, false
	}
	return ix.cellWitness(h, c), true
}

// optOutWitnesses: a custom-listwatch cell's custom-listwatch-optout twin.
func optOutWitnesses(ix *index, h matrix.Hit) []witness {
	if h.Cell == nil || h.Cell.KindName() != record.KindCustomListWatch {
		return nil
	}
	if w, ok := ix.twin(h, h.Cell.Server, record.KindCustomListWatchOptOut, h.Cell.Client); ok {
		return []witness{w}
	}
	return nil
}

// streamingServerWitnesses: h's client, scenario and kind on every server of the grid that runs
// that kind and whose WatchList gate, or its aggregated apiserver's for the aggregated kind, is on.
func streamingServerWitnesses(ix *index, h matrix.Hit) []witness {
	var out []witness
	for _, sv := range ix.servers(h) {
		kind := h.Cell.Kind
		if kind == "" {
			kind = record.DefaultKind(sv.FeatureGates)
		}
		if kind != h.Setup.Kind || !record.KindServerStreams(kind, sv.FeatureGates, sv.Version) {
			continue
		}
		if w, ok := ix.twin(h, sv.Name, h.Cell.KindName(), h.Cell.Client); ok {
			out = append(out, w)
		}
	}
	return out
}

// servers are the servers of h's grid, none for make bench's hits.
func (ix *index) servers(h matrix.Hit) []matrix.Server {
	if h.Cell == nil {
		return nil
	}
	return ix.grid[h.Cell].Result.Servers
}

// newerWitnesses: h's scenario, server and kind with a newer client-go at the same gate, from the
// oldest version on whose cells and all newer ones do not show the symptom; every newer cell
// when there is no such version (the fix does not work).
func newerWitnesses(ix *index, h matrix.Hit) []witness {
	if h.Cell == nil {
		return nil
	}
	var newer []witness
	for _, cl := range ix.grid[h.Cell].Result.Clients {
		if cl.Gate != h.Setup.Gate || record.Minor(cl.ClientGo) <= record.Minor(h.Setup.ClientGo) {
			continue
		}
		if w, ok := ix.twin(h, h.Cell.Server, h.Cell.KindName(), cl.Name); ok {
			newer = append(newer, w)
		}
	}
	slices.SortStableFunc(newer, func(a, b witness) int { return cmp.Compare(record.Minor(a.version), record.Minor(b.version)) })
	from := len(newer)
	for from > 0 && !newer[from-1].shows {
		from--
	}
	if from == len(newer) {
		return newer
	}
	return newer[from:]
}

// noCompressionWitnesses: make bench's point on the same server with WatchListCompression=false.
func noCompressionWitnesses(ix *index, h matrix.Hit) []witness {
	if h.Cell != nil {
		return nil
	}
	return ix.src.benchOf(h).noCompressionWitnesses(h)
}

// FixOf is one fix of a finding: the setups of the finding whose causes it is a fix for, and
// of those, the ones the results show it works and does not work for.
type FixOf struct {
	Text         string
	Setups       int // the finding's setups it is a fix for
	Works, Fails []matrix.Setup
	Witnesses    []witness // one of each setup it works for
}

// fixesOf are the fixes of a finding's causes that work for at least one of the setups they
// are a fix for, in the order of its causes.
func (ix *index) fixesOf(g matrix.Group) []FixOf {
	var fixes []fix
	hits := map[string][]matrix.Hit{} // by fix name: the hits of the causes it is a fix for
	for _, c := range causesOf(g) {
		for _, f := range c.Fixes {
			if _, ok := hits[f.name]; !ok {
				fixes = append(fixes, f)
			}
			for _, h := range g.Hits {
				if slices.Contains(causeKeys(h), c.Key) && !slices.ContainsFunc(hits[f.name], func(o matrix.Hit) bool { return o == h }) {
					hits[f.name] = append(hits[f.name], h)
				}
			}
		}
	}
	var out []FixOf
	for _, f := range fixes {
		if fo := ix.evaluate(f, matrix.Group{Symptom: g.Symptom, Hits: hits[f.name]}); len(fo.Works) > 0 {
			out = append(out, fo)
		}
	}
	return out
}

// evaluate finds, for each setup of the group, whether the fix works: no witness of any of its
// hits shows the symptom, and some hit has witnesses. A setup without witnesses is in neither
// list.
func (ix *index) evaluate(f fix, g matrix.Group) FixOf {
	const none, works, fails = 1, 2, 3 // a setup's state: the worst of its hits'
	state := map[matrix.Setup]int{}
	witnesses := map[matrix.Setup][]witness{}
	for _, h := range g.Hits {
		ws := f.of(ix, h)
		switch {
		case len(ws) == 0:
			state[h.Setup] = max(state[h.Setup], none)
		case slices.ContainsFunc(ws, func(w witness) bool { return w.shows }):
			state[h.Setup] = max(state[h.Setup], fails)
		default:
			state[h.Setup] = max(state[h.Setup], works)
			witnesses[h.Setup] = append(witnesses[h.Setup], ws...)
		}
	}
	fo := FixOf{Text: f.text, Setups: len(g.Setups())}
	version := ""
	for _, s := range g.Setups() {
		switch state[s] {
		case works:
			fo.Works = append(fo.Works, s)
			fo.Witnesses = append(fo.Witnesses, witnesses[s][0])
			if v := witnesses[s][0].version; record.Minor(v) > record.Minor(version) {
				version = v
			}
		case fails:
			fo.Fails = append(fo.Fails, s)
		}
	}
	if strings.Contains(fo.Text, "%s") {
		fo.Text = fmt.Sprintf(fo.Text, version)
	}
	return fo
}
