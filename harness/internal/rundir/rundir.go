// Package rundir finds the repository and makes run directories that are never reused.
package rundir

import (
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// New makes <parent>/<prefix><timestamp>; two runs in the same second, or at once, get -2, -3, ...
// so a run directory is never overwritten.
func New(parent, prefix string, now time.Time) (string, error) {
	if err := os.MkdirAll(parent, 0o755); err != nil {
		return "", err
	}
	base := filepath.Join(parent, prefix+now.Format("20060102-150405"))
	dir := base
	for i := 2; ; i++ {
		err := os.Mkdir(dir, 0o755)
		if err == nil {
			return dir, nil
		}
		if !os.IsExist(err) {
			return "", err
		}
		dir = fmt.Sprintf("%s-%d", base, i)
	}
}

// FindRoot returns the repository root: the first directory holding go.work, upwards from the
// working directory.
func FindRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.work")); err == nil {
			return d, nil
		}
		if filepath.Dir(d) == d {
			return "", fmt.Errorf("no go.work above %s: run from the informer-lab repository or pass -root", dir)
		}
	}
}

// Defaults fills in the repository root (found from the working directory) and the parent of
// run directories (<root>/out) where the user gave none.
func Defaults(root, out string) (string, string, error) {
	if root == "" {
		r, err := FindRoot()
		if err != nil {
			return "", "", err
		}
		root = r
	}
	if out == "" {
		out = filepath.Join(root, "out")
	}
	return root, out, nil
}
