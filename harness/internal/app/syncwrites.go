package app

import (
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"informer-lab/lab/mutator"
	"informer-lab/record"
)

// syncWriteInterval is the pace of the writes the labs sync among: 50 a second, so that each
// informer's sync point, whatever its handshake, falls among them on a 2-core machine, where
// the labs of a run take a second or more to sync.
const syncWriteInterval = 20 * time.Millisecond

// syncWriter writes while the labs sync (a DuringSync scenario): mutator.Cycle on objects of
// its own (sync-cm-N), one every syncWriteInterval, from before the labs start until stopped.
type syncWriter struct {
	stop atomic.Bool
	done chan error
}

// startSyncWrites starts the writes the labs will sync among. They end with the scenario
// (stopSyncWrites) or, if the run fails first, before the server stops.
func (e *env) startSyncWrites() {
	w := &syncWriter{done: make(chan error, 1)}
	steps := func(yield func(mutator.Step) bool) {
		for s := range mutator.Cycle() {
			s.Name = "sync-" + strings.TrimPrefix(s.Name, "lab-")
			if w.stop.Load() || !yield(s) {
				return
			}
		}
	}
	e.Say("writing while the labs start and sync (one every %s)", syncWriteInterval)
	// Not delivered: a write before an informer's sync point is in its initial state, not an
	// event. compare holds each informer to the writes after its own (analysis.Delivered).
	wrote, first := e.wrote(false), make(chan struct{})
	var once sync.Once
	go func() {
		w.done <- mutator.Play(e.ctx, e.writer, e.t.namespace, steps, syncWriteInterval, nil, func(rec record.Record, err error) error {
			once.Do(func() { close(first) })
			return wrote(rec, err)
		})
	}()
	e.syncWrites = w
	e.onClose(func() { e.stopSyncWrites() })
	// The labs start once the first write is made: however fast they sync, a write comes before.
	select {
	case <-first:
	case <-e.ctx.Done():
	}
}

// stopSyncWrites ends the writes between two of them, and returns how they ended: nil, or why
// a write failed. Stopped already, it returns nil.
func (e *env) stopSyncWrites() error {
	w := e.syncWrites
	if w == nil {
		return nil
	}
	e.syncWrites = nil
	w.stop.Store(true)
	return <-w.done
}

// writesDuringSync ends the writes the labs synced among, then plays the seeded script, whose
// writes every watcher must deliver as events: they come after every informer's sync point.
func writesDuringSync(e *env) error {
	if err := e.stopSyncWrites(); err != nil {
		return err
	}
	e.Say("%d writes while the labs synced", e.writes)
	return e.write(e.script(), e.Interval, nil)
}
