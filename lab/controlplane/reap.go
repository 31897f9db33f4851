package controlplane

import (
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"informer-lab/lab/procs"
	"informer-lab/lab/reaper"
)

// startReaping hands etcd and kube-apiserver to this process's reaper as soon as each runs, not
// once envtest's Start returns: kube-apiserver may take minutes to become healthy on a loaded
// machine, and a lab killed in that time would otherwise leave both running (envtest starts
// them in process groups of their own, so no signal to ours reaches them). bins maps each
// binary's path to its name. Call the returned function once Start has returned: it looks a
// last time and says what could not be handed over.
func startReaping(bins map[string]string) (stop func() error) {
	var (
		mu     sync.Mutex
		handed = map[int]bool{}
		found  = map[string]bool{}
		failed error
	)
	look := func() {
		mu.Lock()
		defer mu.Unlock()
		for _, pid := range procs.ChildrenOf(os.Getpid()) {
			what, ok := bins[strings.SplitN(procs.Cmdline(pid), "\x00", 2)[0]]
			if !ok || handed[pid] {
				continue
			}
			handed[pid], found[what] = true, true
			if err := reaper.Watch(pid, what); err != nil && failed == nil {
				failed = fmt.Errorf("hand %s to the reaper: %w", what, err)
			}
		}
	}
	done, stopped := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(stopped)
		for {
			look()
			select {
			case <-done:
				return
			case <-time.After(100 * time.Millisecond):
			}
		}
	}()
	return func() error {
		close(done)
		<-stopped
		look()
		mu.Lock()
		defer mu.Unlock()
		for _, what := range bins {
			if failed == nil && !found[what] {
				failed = fmt.Errorf("hand %s to the reaper: no child process of this one runs it", what)
			}
		}
		return failed
	}
}
