package controlplane

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"time"
)

// bootSlot waits until fewer envtest boots than the machine has cores are under way, in any
// process of this user, and returns the function that frees its slot. Booting is the costly part
// of a control plane's life (about 4 CPU-seconds of kube-apiserver and etcd): make test starts a
// few dozen, and a dozen at once on 2 cores took 1m45s each instead of 6 s, long enough for the
// tests waiting on them to time out. Taken one core each, they finish in turn instead. A slot is
// an flock on a file, so a process that dies frees its slot with it.
func bootSlot(ctx context.Context, progress io.Writer) (release func(), err error) {
	dir := filepath.Join(os.TempDir(), fmt.Sprintf("informer-lab-boot-%d", os.Getuid()))
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("boot slots: %w", err)
	}
	slots := max(1, runtime.NumCPU())
	said := false
	for {
		for i := range slots {
			if release, ok := tryLock(filepath.Join(dir, fmt.Sprintf("slot-%d", i))); ok {
				return release, nil
			}
		}
		if !said {
			fmt.Fprintf(progress, "waiting for one of %d envtest boots on this machine to end (one a core)\n", slots)
			said = true
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("waiting to boot envtest: %w", ctx.Err())
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// tryLock takes an exclusive flock on path without waiting.
func tryLock(path string) (release func(), ok bool) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, false
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, false
	}
	return func() { f.Close() }, true // closing the file releases the lock
}
