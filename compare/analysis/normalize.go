package analysis

import (
	"maps"
	"slices"
	"sort"

	"informer-lab/record"
)

// splitPhases cuts a lab's records after the SETUP synced record of the last of its informers
// (the tags that made HTTP requests) to sync. Informers that never synced are returned: their
// lab has no steady phase.
func splitPhases(recs []record.Record) (initial, steady []record.Record, unsynced []string) {
	waiting := map[string]bool{}
	for _, r := range recs {
		if r.Kind == record.HTTP && r.Tag != "" {
			waiting[r.Tag] = true
		}
	}
	end := -1 // index of the record that closes the initial phase
	if len(waiting) == 0 {
		return nil, recs, nil
	}
	for i, r := range recs {
		if r.Kind == record.Setup && r.Step == record.StepSynced && waiting[r.Tag] {
			delete(waiting, r.Tag)
			if len(waiting) == 0 {
				end = i
				break
			}
		}
	}
	if end < 0 {
		return recs, nil, sortedSet(waiting)
	}
	return recs[:end+1], recs[end+1:], nil
}

// syncRVs returns the rvs an initial phase settled on, per tag: the LIST collection rv and the
// rv of the initial-events-end bookmark. They are the same kind of value in both handshakes.
func syncRVs(initial []record.Record) map[string]map[string]bool {
	out := map[string]map[string]bool{}
	add := func(tag, rv string) {
		if rv == "" {
			return
		}
		if out[tag] == nil {
			out[tag] = map[string]bool{}
		}
		out[tag][rv] = true
	}
	for _, r := range initial {
		switch {
		case r.Kind == record.List:
			add(r.Tag, r.RV)
		case record.IsEndBookmark(r):
			add(r.Tag, r.RV)
		}
	}
	return out
}

// rvMapper rewrites one rv for a normalized line (record.Normalized).
type rvMapper = func(rv string) string

// initialRV maps the rvs of an initial phase to placeholders: sync rvs to <RV0>, others to <RV>.
func initialRV(sync map[string]bool) rvMapper {
	return func(rv string) string {
		switch {
		case rv == "" || rv == "0": // "0" asks for the watch cache: part of the request's shape
			return rv
		case sync[rv]:
			return record.PlaceholderSyncRV
		default:
			return record.PlaceholderRV
		}
	}
}

// phaseLines renders a phase as normalized lines grouped by tag: untagged records first, then
// all of A, then all of B; within a tag, what came over the wire first, then the handler calls.
// Two informers run concurrently, and a lab logs wire events and handler calls from different
// goroutines, so their interleaving differs from run to run; grouping keeps those races out of
// the diff while the order within each group (the subject) stays as it happened.
//
// sortHandlers sorts each tag's handler calls: in the initial sync, a streaming reflector hands
// its objects to the store from a map (client-go v0.32), so their order is random by design.
func phaseLines(recs []record.Record, keep func(record.Record) bool, rv func(tag string) rvMapper, sortHandlers bool) []string {
	wire, handlers := map[string][]string{}, map[string][]string{}
	for _, r := range recs {
		if !keep(r) {
			continue
		}
		line := r.Normalized(rv(r.Tag))
		switch {
		case r.Kind == record.Handler:
			handlers[r.Tag] = append(handlers[r.Tag], line)
		case r.Kind == record.Setup && r.Step == record.StepSynced:
			// synced closes the tag's group, after its handler calls
		default:
			wire[r.Tag] = append(wire[r.Tag], line)
		}
	}
	tags := map[string]bool{}
	for t := range wire {
		tags[t] = true
	}
	for t := range handlers {
		tags[t] = true
	}
	var out []string
	for _, tag := range sortedSet(tags) { // "" sorts first
		out = append(out, wire[tag]...)
		if sortHandlers {
			sort.Strings(handlers[tag])
		}
		out = append(out, handlers[tag]...)
		for _, r := range recs {
			if r.Tag == tag && r.Kind == record.Setup && r.Step == record.StepSynced && keep(r) {
				out = append(out, r.Normalized(rv(tag)))
			}
		}
	}
	return out
}

// initialLines are the normalized lines of an initial phase: every record.
func initialLines(initial []record.Record) []string {
	sync := syncRVs(initial)
	return phaseLines(initial, func(record.Record) bool { return true },
		func(tag string) rvMapper { return initialRV(sync[tag]) }, true)
}

// steadyLines are the normalized lines of a steady phase: only what the watchers and handlers
// saw, without the periodic bookmarks.
func steadyLines(steady []record.Record) []string {
	keep := func(r record.Record) bool {
		return (r.Kind == record.WatchEvent && !record.IsPeriodicBookmark(r)) || r.Kind == record.Handler
	}
	return phaseLines(steady, keep, func(string) rvMapper { return record.KeepRV }, false)
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

func sortedSet(m map[string]bool) []string { return sortedKeys(m) }

// SplitPhases cuts a lab's records where the diffs do: the initial phase ends with the SETUP
// synced record of the last informer to sync. A lab that never synced has no steady phase.
func SplitPhases(recs []record.Record) (initial, steady []record.Record) {
	initial, steady, _ = splitPhases(recs)
	return initial, steady
}

// InitialQuery renders the query of request r, one of the records of initial, as the
// initial-sync diff shows it: parameters sorted, timeouts <T>, the rv the informer synced at <RV0>.
func InitialQuery(r record.Record, initial []record.Record) string {
	return record.NormalizeQuery(r.Query, initialRV(syncRVs(initial)[r.Tag]))
}

// InitialRV renders an rv of record r, one of the records of initial, as the initial-sync diff
// does: <RV0> for the rv its informer synced at, <RV> for any other.
func InitialRV(r record.Record, initial []record.Record) string {
	return initialRV(syncRVs(initial)[r.Tag])(r.RV)
}

// NormalizeRecord renders a record as the steady-phase diff does: rvs kept, hosts, times and
// random timeouts replaced.
func NormalizeRecord(r record.Record) string { return r.Normalized(record.KeepRV) }
