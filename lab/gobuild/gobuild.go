// Package gobuild is how the project compiles one of its modules: outside the go.work
// workspace (GOWORK=off), so that the module's own go.mod decides every version it links, and
// into one cache folder per checkout, where the next run finds the binary and go build relinks
// only a module whose code changed.
package gobuild

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"informer-lab/lab/process"
)

// module compiles the main package of the module in dir into bin, with GOWORK=off.
func module(ctx context.Context, dir, bin string) error {
	if out, err := goCommand(ctx, dir, "build", "-o", bin, "."); err != nil {
		return fmt.Errorf("build %s (GOWORK=off go build in %s): %w\n%s", filepath.Base(dir), dir, err, out)
	}
	return nil
}

// goCommand runs the go command in dir with GOWORK=off and returns its output, stdout and
// stderr as they came. It runs as a process.Process in a group of its own: go build's
// compilers and linker are its children, and a cancelled context, or this process killed, must
// end them too (exec.CommandContext would kill only the go command, and only on a cancel).
func goCommand(ctx context.Context, dir string, args ...string) ([]byte, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GOWORK=off")
	var mu sync.Mutex
	var out []byte
	keep := func(line []byte) {
		mu.Lock()
		defer mu.Unlock()
		out = append(out, line...)
	}
	p, err := process.Start(cmd, process.Options{What: "go " + args[0] + " in " + dir, Group: true, Stdout: keep, Stderr: keep, StopSignal: syscall.SIGTERM})
	if err != nil {
		return nil, err
	}
	select {
	case <-p.Done():
	case <-ctx.Done():
		p.Stop(5 * time.Second)
		return out, ctx.Err()
	}
	p.Stop(0) // ends what the go command may have left in its group
	_, err = p.Exited()
	return out, err
}

// Cached compiles the module in dir (module) into the cache folder of the checkout that holds
// it, <user cache dir>/informer-lab/bin/<checkout hash>/<module>, and returns the binary's path.
// Builds of the same module wait for each other (test packages build the same modules at once).
func Cached(ctx context.Context, dir string) (string, error) {
	binDir, err := cacheDir(dir)
	if err != nil {
		return "", err
	}
	bin := filepath.Join(binDir, filepath.Base(dir))
	unlock, err := lock(bin + ".lock")
	if err != nil {
		return "", err
	}
	defer unlock()
	// go build itself finds a binary up to date, but only after loading every package it
	// links: about 1.3 CPU-seconds a lab, paid by every harness run for every lab. The
	// fingerprint of what go build reads is a few milliseconds.
	sum, err := fingerprint(ctx, dir)
	if err != nil {
		return "", err
	}
	if prev, err := os.ReadFile(bin + ".sum"); err == nil && string(prev) == sum {
		if _, err := os.Stat(bin); err == nil {
			return bin, nil
		}
	}
	if err := module(ctx, dir, bin); err != nil {
		return "", err
	}
	if err := os.WriteFile(bin+".sum", []byte(sum), 0o644); err != nil {
		return "", fmt.Errorf("modules' binaries: %w", err)
	}
	return bin, nil
}

// cacheDir is where the binaries of the checkout that holds module dir are kept.
func cacheDir(dir string) (string, error) {
	abs, err := filepath.Abs(filepath.Dir(dir))
	if err != nil {
		return "", err
	}
	cache, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("where to keep the modules' binaries: %w", err)
	}
	sum := sha256.Sum256([]byte(abs))
	d := filepath.Join(cache, "informer-lab", "bin", hex.EncodeToString(sum[:6]))
	if err := os.MkdirAll(d, 0o755); err != nil {
		return "", fmt.Errorf("modules' binaries: %w", err)
	}
	return d, nil
}

// lock holds an exclusive lock on path until unlock is called.
func lock(path string) (unlock func(), err error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	return func() { f.Close() }, nil // closing the file releases the lock
}

// Progress calls say with the time elapsed every period until stop is called: a cold build
// compiles a client-go for minutes, which must not look like a hang.
func Progress(period time.Duration, say func(elapsed time.Duration)) (stop func()) {
	start := time.Now()
	tick := time.NewTicker(period)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-tick.C:
				say(time.Since(start).Round(time.Second))
			case <-done:
				return
			}
		}
	}()
	return func() { tick.Stop(); close(done) }
}
