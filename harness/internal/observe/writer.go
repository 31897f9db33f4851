package observe

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"time"

	"informer-lab/compare/analysis"
	"informer-lab/lab/mutator"
	"informer-lab/lab/wire"
	"informer-lab/record"

	"k8s.io/client-go/rest"
)

// seeds are the ConfigMaps that exist before the command starts: its initial sync has them.
const seeds = 2

// writer is the run's own client, straight to the server (not through the proxy): it seeds
// ConfigMaps in the command's namespace and writes while the command watches, all on the
// harness's log.
type writer struct {
	t      *target
	out    *record.Writer
	log    *os.File
	target *mutator.Target
	cancel context.CancelFunc
	ctx    context.Context
}

func newWriter(ctx context.Context, t *target, dir string) (*writer, error) {
	log, err := os.OpenFile(filepath.Join(dir, analysis.HarnessFile), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	w := &writer{t: t, log: log, out: record.NewWriter("harness", log, nil)}
	w.ctx, w.cancel = context.WithCancel(ctx)
	w.out.Setup("", record.StepServer, t.describe, "observed through the recording proxy")
	cfg := rest.CopyConfig(t.cfg)
	cfg.Wrap(wire.Wrap(record.TagWriter, w.out))
	if w.target, err = mutator.TargetFor(cfg, mutator.ConfigMaps); err != nil {
		w.close()
		return nil, err
	}
	w.target.Labels = t.labels
	for i := 1; i <= seeds; i++ {
		obj := w.target.Object(t.namespace, fmt.Sprintf("observe-seed-%d", i), true, map[string]string{"seed": "true"})
		if _, err := w.target.Create(ctx, obj); err != nil {
			w.close()
			return nil, fmt.Errorf("seed ConfigMaps in namespace %s: %w", t.namespace, err)
		}
	}
	return w, nil
}

// play makes n writes of the seeded script, one every interval, the first an interval after
// started says the command has had the answer to its first LIST or WATCH (a command may take
// seconds to start: go run compiles first; then it reads discovery), so that they come while it
// watches, not before its list; the channel closes when it is done or stopped.
func (w *writer) play(n int, interval time.Duration, started func() bool, say func(string, ...any)) <-chan struct{} {
	done := make(chan struct{})
	go func() {
		defer close(done)
		for !started() {
			select {
			case <-w.ctx.Done():
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
		steps := mutator.Script(1, n/3+1) // at least n writes
		if n < len(steps) {
			steps = steps[:n]
		}
		mutator.Play(w.ctx, w.target, w.t.namespace, slices.Values(steps), interval, nil, func(rec record.Record, err error) error {
			if err != nil && w.ctx.Err() != nil {
				return err // stopped mid-write: nothing to record
			}
			w.out.Write(rec)
			if err != nil {
				say("write %s %s: %v", rec.Event, rec.Name, err)
			}
			return err
		})
	}()
	return done
}

func (w *writer) stopWriting() { w.cancel() }

func (w *writer) close() {
	w.cancel()
	w.out.Stop("observe complete", "")
	w.log.Close()
}
