// Package matrix collects the runs of `make matrix` (client cells × server configurations ×
// scenarios, one harness run per server and scenario) into one Result: a cell per client, server
// and scenario saying what was observed, what the gates imply, and whether data was lost. It
// derives the symptoms the cells show (Result.Hits: a hang, a loop, extra requests), renders the
// result as Markdown and as terminal tables with those in its findings, and diffs two results.
package matrix

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"time"

	"informer-lab/compare/analysis"
	"informer-lab/record"
)

// Schema is the version of the Result JSON. Load refuses another.
const Schema = 1

// Result is a whole matrix: what ran, where, and one Cell per scenario, server and client.
type Result struct {
	Schema    int       `json:"schema"` // Save writes this build's Schema
	Date      time.Time `json:"date"`
	GoVersion string    `json:"goVersion"`    // the host's Go, e.g. "go1.26.8"
	CPUs      int       `json:"cpus"`         // the host's cores
	OS        string    `json:"os,omitempty"` // GOOS/GOARCH
	Duration  string    `json:"duration"`     // the whole matrix, wall clock, e.g. "14m3s"
	Clients   []Client  `json:"clients"`      // the rows, in order
	Servers   []Server  `json:"servers"`      // the columns, in order
	Scenarios []string  `json:"scenarios"`    // one table each, in order
	Cells     []Cell    `json:"cells"`
	// Docs says what a scenario of the fault family did, as the harness recorded it: which
	// report its fault reproduces. The other scenarios' tables are described by their entry of
	// record.ScenarioTable (Shows).
	Docs map[string]string `json:"docs,omitempty"`
	// Kinds is the informer-kind axis (record.Kinds, in the order asked) of a grid that has one:
	// each scenario then has one table per server, a column per kind, and every cell names its
	// kind. Empty: every cell is the typed-configmaps kind (make matrix's default grid).
	Kinds []string `json:"kinds,omitempty"`
	// Command is how the grid was made, e.g. "make matrix KINDS=all", when the maker says so.
	Command string `json:"command,omitempty"`
}

// Client is one row: a lab module with one WatchListClient gate setting.
type Client struct {
	Name     string `json:"name"`     // the lab's -name, e.g. "client-v031-off"
	Module   string `json:"module"`   // the lab module, e.g. "client-v031"
	ClientGo string `json:"clientGo"` // linked client-go, e.g. "v0.31.14"
	Gate     string `json:"gate"`     // WatchListClient on|off
	GateHow  string `json:"gateHow"`  // who set it, e.g. "client-go default"
	Default  bool   `json:"default"`  // the gate is at client-go's default
}

// Server is one column: a kube-apiserver version with its feature gates.
type Server struct {
	Name         string `json:"name"`                   // e.g. "1.32.13 WatchList=false"
	Version      string `json:"version"`                // as the harness recorded it, e.g. "v1.32.13"
	FeatureGates string `json:"featureGates,omitempty"` // its settings: feature gates and flags (record.SplitServerSettings), "" for the defaults
}

// Cell is what one client did in one scenario on one server.
type Cell struct {
	Scenario string `json:"scenario"`
	Server   string `json:"server"` // Server.Name
	Client   string `json:"client"` // Client.Name
	// Kind is the informer kind (record.Kinds) in a grid with a kind axis; "" is
	// typed-configmaps, the only kind of a grid without one.
	Kind    string `json:"kind,omitempty"`
	Verdict string `json:"verdict"`
	// NotApplicable says the kind cannot run with this client-go against this server
	// (record.KindNotApplicable): the verdict says why ("n/a: …") and the lab was not started.
	NotApplicable bool `json:"notApplicable,omitempty"`
	// Expected is the startup handshake the gates imply (record.ExpectedShape), "" in other scenarios or
	// when the gate is unknown; Agrees says the verdict is it (true without an expectation).
	Expected string `json:"expected,omitempty"`
	Agrees   bool   `json:"agrees"`
	// Lost is how the informers' caches at stop differ from the harness's fresh LIST: lost or
	// stale data. "" when they are equal.
	Lost string `json:"lost,omitempty"`
	// Failed says why the run of this cell could not be completed (the harness's error): the
	// cell then has no observation. "" for a completed run.
	Failed     string   `json:"failed,omitempty"`
	Problems   []string `json:"problems,omitempty"`   // the run's failures that concern this client (and those of the whole run)
	SeqDiffers bool     `json:"seqDiffers,omitempty"` // steady: its event sequence differs from the other cells of the run
	SyncMillis int64    `json:"syncMillis"`           // initial sync: first request to the sync point on the wire (LIST read, or end bookmark), slowest informer
	// Synced says, in a fault scenario and in a grid with a kind axis, that every informer
	// synced (within the run's sync wait, when it had one).
	Synced bool `json:"synced,omitempty"`
	// SyncWait is how long the run gave the informers to sync before it went on with what synced
	// (fault scenarios, informer kinds other than typed-configmaps), e.g. "1m0s"; "" when the run
	// required every informer to sync.
	SyncWait string `json:"syncWait,omitempty"`
	// RecoverMillis is, in restart and expired, the time from the harness's "recovered" record to
	// the slowest informer being back in sync (negative: back before the harness recorded it);
	// absent when not measured or never back.
	RecoverMillis *int64 `json:"recoverMillis,omitempty"`
	Log           string `json:"log,omitempty"` // the cell's normalized log, relative to the result file
	Run           string `json:"run,omitempty"` // the run directory, relative to the result file
}

// Key identifies a cell across results; the kind is part of it when it is not typed-configmaps,
// so that a grid without a kind axis and the typed-configmaps column of one compare alike.
func (c Cell) Key() string {
	k := c.Scenario + " | " + c.Server + " | " + c.Client
	if kind := c.KindName(); kind != record.KindTypedConfigMaps {
		k += " | " + kind
	}
	return k
}

// KindName is the cell's informer kind, typed-configmaps when it names none.
func (c Cell) KindName() string {
	if c.Kind == "" {
		return record.KindTypedConfigMaps
	}
	return c.Kind
}

// New starts a result dated now on this host.
func New(now time.Time) *Result {
	return &Result{Schema: Schema, Date: now.UTC(), GoVersion: runtime.Version(), CPUs: runtime.NumCPU(), OS: runtime.GOOS + "/" + runtime.GOARCH}
}

// LogSuffix names a cell's log beside its run's logs: <run>/<lab>.cell.log.
const LogSuffix = ".cell.log"

// Add adds one analyzed run (one server, one scenario) to the result: its server, its labs as
// clients and one cell per lab. run is the run directory relative to the result file; the cells'
// logs are expected at run/<lab>.cell.log (WriteCellLogs writes them).
func (r *Result) Add(scenario string, rep *analysis.Report, run string) {
	r.add(scenario, "", ServerOf(rep), rep, run)
}

// AddKind adds one analyzed run under the server column srv, which may not be what the run's
// own server record says: of an informer kind to a grid with a kind axis (r.Kinds), whose run's
// server may have had more feature gates, those the kind needs (record.KindServerGates), which
// its cells' logs name; every such cell says whether its informers synced, the way a fault
// scenario's cells do, whatever the kind. With kind "", a run of a grid without a kind axis, as
// Add adds it: make matrix names the column of a user's cluster itself.
func (r *Result) AddKind(scenario, kind string, srv Server, rep *analysis.Report, run string) {
	r.add(scenario, kind, srv, rep, run)
}

// AddNotApplicable adds the cell of a client that was not started for a kind on a server:
// reason says why (record.KindNotApplicable, "n/a: …").
func (r *Result) AddNotApplicable(scenario, kind, server, client, reason string) {
	r.Cells = append(r.Cells, Cell{Scenario: scenario, Server: server, Client: client, Kind: kind, Verdict: reason, NotApplicable: true, Agrees: true})
}

func (r *Result) add(scenario, kind string, srv Server, rep *analysis.Report, run string) {
	if !slices.ContainsFunc(r.Servers, func(s Server) bool { return s.Name == srv.Name }) {
		r.Servers = append(r.Servers, srv)
	}
	if !slices.Contains(r.Scenarios, scenario) {
		r.Scenarios = append(r.Scenarios, scenario)
	}
	if harnessDocumented(record.ScenarioOf(scenario)) && rep.ScenarioDoc != "" {
		if r.Docs == nil {
			r.Docs = map[string]string{}
		}
		r.Docs[scenario] = rep.ScenarioDoc
	}
	for _, l := range rep.Labs {
		if !slices.ContainsFunc(r.Clients, func(c Client) bool { return c.Name == l.Name }) {
			r.Clients = append(r.Clients, ClientOf(l))
		}
	}
	cells := Cells(scenario, rep)
	if kind != "" {
		cells = kindCells(scenario, kind, rep)
	}
	for _, c := range cells {
		c.Server = srv.Name
		if run != "" {
			c.Run = run
			c.Log = path.Join(run, c.Client+LogSuffix)
		}
		r.Cells = append(r.Cells, c)
	}
}

// ServerOf names the server of a run: its version without the "v", then its feature gates.
func ServerOf(rep *analysis.Report) Server {
	name := strings.TrimPrefix(rep.Server, "v")
	if rep.ServerGates != "" {
		name += " " + rep.ServerGates
	}
	return Server{Name: name, Version: rep.Server, FeatureGates: rep.ServerGates}
}

// ClientOf describes a lab as a matrix row. Its module is its name without the gate suffix
// ("client-v031-off" → "client-v031").
func ClientOf(l *analysis.LabReport) Client {
	module := l.Name
	for _, suffix := range []string{"-on", "-off", "-default"} {
		if m, ok := strings.CutSuffix(module, suffix); ok {
			module = m
			break
		}
	}
	return Client{Name: l.Name, Module: module, ClientGo: l.ClientGo, Gate: l.Gate, GateHow: l.GateHow, Default: isDefault(l.Gate, l.GateHow)}
}

// isDefault reads the lab's gate detail: "client-go default", or "set by this lab (...; client-go
// default off)", which is the default again when the lab set it to the default value.
func isDefault(gate, how string) bool {
	if strings.HasPrefix(how, "client-go default") {
		return true
	}
	return gate != "" && strings.Contains(how, "client-go default "+gate)
}

// Label is the row's title, e.g. "client-v031 off (default)".
func (c Client) Label() string {
	name := c.Module
	if name == "" {
		name = c.Name
	}
	s := name + " " + orQ(c.Gate)
	if c.Default {
		s += " (default)"
	}
	return s
}

// Cell returns the typed-configmaps cell of a scenario, server and client, or nil.
func (r *Result) Cell(scenario, server, client string) *Cell {
	return r.KindCell(scenario, server, record.KindTypedConfigMaps, client)
}

// KindCell returns the cell of a scenario, server, informer kind and client, or nil.
func (r *Result) KindCell(scenario, server, kind, client string) *Cell {
	for i := range r.Cells {
		if c := &r.Cells[i]; c.Scenario == scenario && c.Server == server && c.Client == client && c.KindName() == kind {
			return c
		}
	}
	return nil
}

// Save writes the result as indented JSON, with this build's schema.
func (r *Result) Save(file string) error {
	r.Schema = Schema
	data, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(file, append(data, '\n'), 0o644)
}

// Load reads a result written by Save and checks it can be compared: its schema, and cells that
// name a scenario, server and client, each key once.
func Load(file string) (*Result, error) {
	data, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var r Result
	if err := dec.Decode(&r); err != nil {
		return nil, fmt.Errorf("%s: not a matrix result: %w", file, err)
	}
	switch {
	case r.Schema == 0:
		return nil, fmt.Errorf("%s: no schema field: not a matrix result", file)
	case r.Schema != Schema:
		return nil, fmt.Errorf("%s: matrix schema %d, this build reads schema %d", file, r.Schema, Schema)
	}
	seen := map[string]bool{}
	for i, c := range r.Cells {
		if c.Scenario == "" || c.Server == "" || c.Client == "" {
			return nil, fmt.Errorf("%s: cell %d lacks a scenario, server or client", file, i+1)
		}
		if seen[c.Key()] {
			return nil, fmt.Errorf("%s: two cells for %s", file, c.Key())
		}
		seen[c.Key()] = true
	}
	return &r, nil
}

// WriteCellLogs writes every lab's cell log into dir (the run directory) as <lab>.cell.log.
func WriteCellLogs(dir string, rep *analysis.Report) error {
	var errs []error
	for _, l := range rep.Labs {
		errs = append(errs, os.WriteFile(filepath.Join(dir, l.Name+LogSuffix), []byte(CellLog(rep, l)), 0o644))
	}
	return errors.Join(errs...)
}

func orQ(s string) string {
	if s == "" {
		return "?"
	}
	return s
}
