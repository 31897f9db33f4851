// Package pin makes sure a lab runs with the client-go version its go.mod pins.
//
// A go.work workspace builds every module with one build list, so `go run ./client-v031`
// typed at the repository root links the newest client-go any workspace module requires.
// A lab that silently studied the wrong client-go would teach the wrong thing.
package pin

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"informer-lab/lab/gobuild"
	"os"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strings"
	"syscall"
)

const clientGo = "k8s.io/client-go"

// reexecMarker is set in the environment of a lab re-run outside the workspace, so that a
// second mismatch stops instead of looping.
const reexecMarker = "INFORMER_LAB_REEXEC"

// Pinned returns the client-go version required by a go.mod file's contents.
func Pinned(gomod []byte) (string, error) {
	sc := bufio.NewScanner(bytes.NewReader(gomod))
	for sc.Scan() {
		f := strings.Fields(strings.TrimPrefix(strings.TrimSpace(sc.Text()), "require "))
		if len(f) >= 2 && f[0] == clientGo {
			return f[1], nil
		}
	}
	return "", fmt.Errorf("go.mod does not require %s", clientGo)
}

// Linked returns the client-go version linked into the running binary.
func Linked() (string, error) {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return "", errors.New("binary has no build info")
	}
	return LinkedIn(bi)
}

// LinkedIn returns the client-go version recorded in build info (a replace wins).
func LinkedIn(bi *debug.BuildInfo) (string, error) {
	for _, d := range bi.Deps {
		if d.Path == clientGo {
			if d.Replace != nil {
				return d.Replace.Version, nil
			}
			return d.Version, nil
		}
	}
	return "", fmt.Errorf("%s is not linked into %s", clientGo, bi.Path)
}

// MismatchError says which client-go was linked instead of the pin, and how to run the lab right.
type MismatchError struct {
	Linked, Pinned, ModuleDir string
}

func (e *MismatchError) Error() string {
	dir := e.ModuleDir
	if dir == "" {
		dir = "<the lab's module directory>"
	}
	return fmt.Sprintf("client-go %s is linked but this lab pins %s (a go.work workspace builds every module with one build list); run it outside the workspace: cd %s && GOWORK=off go run .",
		e.Linked, e.Pinned, dir)
}

// Ensure returns nil when the linked client-go is the pin. Otherwise it rebuilds the lab
// outside the workspace and replaces the current process with that build (it does not
// return), or returns a *MismatchError with the command that works.
func Ensure(gomod []byte, say func(string)) error {
	pinned, err := Pinned(gomod)
	if err != nil {
		return err
	}
	linked, err := Linked()
	if err != nil {
		return err
	}
	if linked == pinned {
		return nil
	}
	mismatch := &MismatchError{Linked: linked, Pinned: pinned, ModuleDir: mainDir()}
	if os.Getenv(reexecMarker) != "" || mismatch.ModuleDir == "" {
		return mismatch
	}
	say(fmt.Sprintf("client-go %s was linked (go.work build list), not the pin %s: rebuilding in %s with GOWORK=off and re-running", linked, pinned, mismatch.ModuleDir))
	bin, err := build(mismatch.ModuleDir)
	if err != nil {
		return fmt.Errorf("%w (rebuild failed: %v)", mismatch, err)
	}
	env := append(os.Environ(), reexecMarker+"=1")
	// Exec replaces this process: same pid, same terminal, signals go straight to the lab.
	if err := syscall.Exec(bin, append([]string{bin}, os.Args[1:]...), env); err != nil {
		return fmt.Errorf("%w (exec %s: %v)", mismatch, bin, err)
	}
	return nil
}

// mainDir is the source directory of package main, known when the binary was built from
// source on this machine (go run, go build without -trimpath).
func mainDir() string {
	pcs := make([]uintptr, 64)
	n := runtime.Callers(0, pcs)
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		if f.Function == "main.main" {
			dir := filepath.Dir(f.File)
			if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
				return dir
			}
			return ""
		}
		if !more {
			return ""
		}
	}
}

// build compiles the module in dir outside the workspace into the project's cache of lab
// binaries (lab/gobuild), where the next run reuses it.
func build(dir string) (string, error) { return gobuild.Cached(context.Background(), dir) }
