package envtestbin

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
)

// binaries are the files envtest needs in one directory.
var binaries = []string{"kube-apiserver", "etcd"}

// Lookup returns a directory holding executable kube-apiserver and etcd:
//  1. $KUBEBUILDER_ASSETS if set (it must hold both; its version is not checked);
//  2. else the store entry StoreDir(opts) if it holds both;
//  3. else what Build returns, unless opts.NoBuild.
func Lookup(ctx context.Context, opts Options) (string, error) {
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" {
		if err := checkDir(dir); err != nil {
			return "", fmt.Errorf("KUBEBUILDER_ASSETS: %w; fix or unset it", err)
		}
		return dir, nil
	}
	opts = opts.withDefaults()
	if _, err := parseVersion("Kubernetes version", opts.Version); err != nil {
		return "", err
	}
	dir := StoreDir(opts)
	if checkDir(dir) == nil {
		return dir, nil
	}
	if opts.NoBuild {
		return "", fmt.Errorf("%w: kube-apiserver and etcd for %s are not in %s and building is off; run `go run ./cmd/provision -version %s` in envtestbin, or set KUBEBUILDER_ASSETS",
			ErrMissingBinary, opts.Version, dir, opts.Version)
	}
	return Build(ctx, opts)
}

// checkDir reports the first binary that dir lacks. kubectl is not one of
// them: Lookup serves envtest, and entries built before Kubectl existed lack it.
func checkDir(dir string) error {
	fi, err := os.Stat(dir)
	if err != nil || !fi.IsDir() {
		return fmt.Errorf("%w: directory %s does not exist", ErrMissingBinary, dir)
	}
	for _, name := range binaries {
		if err := checkBinary(dir, name); err != nil {
			return err
		}
	}
	return nil
}

// checkBinary reports whether dir holds an executable file name.
func checkBinary(dir, name string) error {
	fi, err := os.Stat(filepath.Join(dir, name))
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		return fmt.Errorf("%w: no executable %s in %s", ErrMissingBinary, name, dir)
	}
	return nil
}
