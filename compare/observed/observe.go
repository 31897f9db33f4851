// Package observed reads what make observe recorded: the traffic of clients it did not build
// (kubectl, a controller, a lab), seen from a proxy in front of kube-apiserver, in one log of
// wire records (record.StepClient and the record vocabulary's HTTP, LIST and WATCH-EVENT
// records). It tells, per client and resource, how the client synced and what it did after;
// an observed client does not say when it synced, so the sync point is inferred from the wire.
package observed

import (
	"errors"
	"fmt"

	"informer-lab/record"
)

// File is the log make observe writes in its run directory.
const File = "observed.jsonl"

// Observation is one observed log as read from disk.
type Observation struct {
	Path    string
	Clients []*Client       // in the order of their SETUP client records
	Setup   []record.Record // SETUP records of other steps, should a proxy write any: shown, not analyzed
}

// Client is one client as the proxy told it apart: one User-Agent on one connection.
type Client struct {
	Name      string          // as the proxy named it: "kubectl", "kubectl-2"
	UserAgent string          // in full
	Conn      string          // which connection, e.g. "connection 3 (127.0.0.1:41234)"
	Records   []record.Record // its HTTP, LIST and WATCH-EVENT records, in log order
}

// Load reads an observed log. It refuses a file it cannot read honestly: a missing or empty
// one, a line that is no record, and a log make observe did not write (a lab's or the
// harness's: records of a source no SETUP client record introduced, writes, handler calls).
func Load(path string) (*Observation, error) {
	recs, err := record.ReadFile(path)
	switch {
	case errors.Is(err, record.ErrEmpty):
		return nil, fmt.Errorf("%s: empty: no records (did the client make any request through the proxy?)", path)
	case err != nil:
		return nil, fmt.Errorf("observed log: %w", err) // an os error or a *record.ParseError: both name the file
	}
	obs, err := group(recs)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	obs.Path = path
	return obs, nil
}

// group sorts records by client. A record whose source no SETUP client record introduced is
// not the proxy's: make observe names a client before its first request.
func group(recs []record.Record) (*Observation, error) {
	obs := &Observation{}
	byName := map[string]*Client{}
	for i, r := range recs {
		switch {
		case r.Kind == record.Setup && r.Step == record.StepClient:
			c := byName[r.Source]
			if c != nil && (c.UserAgent != r.Value || c.Conn != r.Detail) {
				return nil, fmt.Errorf("record %d: a second client named %q (%s, %s; the first: %s, %s)",
					i+1, r.Source, r.Value, r.Detail, c.UserAgent, c.Conn)
			}
			if c == nil {
				c = &Client{Name: r.Source, UserAgent: r.Value, Conn: r.Detail}
				byName[r.Source] = c
				obs.Clients = append(obs.Clients, c)
			}
		case r.Kind == record.Setup:
			obs.Setup = append(obs.Setup, r)
		case r.Kind == record.HTTP || r.Kind == record.List || r.Kind == record.WatchEvent:
			if r.Kind == record.HTTP && r.Tag == "" {
				r.Tag = record.ResourceOf(r.Path) // what the proxy tags it with
			}
			c := byName[r.Source]
			if c == nil {
				return nil, fmt.Errorf("record %d: %s record of %q, which no SETUP %s record introduced: not a log make observe wrote (a lab's or the harness's? compare reads those from their run directory)",
					i+1, r.Kind, r.Source, record.StepClient)
			}
			c.Records = append(c.Records, r)
		default:
			return nil, fmt.Errorf("record %d: a %s record of %q: a lab's or the harness's log, not one make observe wrote", i+1, r.Kind, r.Source)
		}
	}
	if len(obs.Clients) == 0 {
		return nil, fmt.Errorf("no SETUP %s record: not a log make observe wrote", record.StepClient)
	}
	return obs, nil
}
