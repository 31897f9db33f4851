// Package envtestbin provisions the control-plane binaries that envtest needs
// (kube-apiserver and etcd) for a Kubernetes version, and on request kubectl.
//
// setup-envtest downloads prebuilt binaries from sites that many sandboxes and
// CI runners cannot reach. They are plain Go programs, so this package builds
// them from the Go module proxy instead and installs them in setup-envtest's
// store layout (<root>/k8s/<X.Y.Z>-<GOOS>-<GOARCH>, one directory holding all
// three, as setup-envtest's tarballs do), where a later Lookup or Kubectl
// finds them without building again.
//
// The package uses only the standard library and the `go` command: module
// metadata comes from `go list -m -json` and `go mod edit -json`.
package envtestbin

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
)

// DefaultVersion is the Kubernetes version the project tests against.
const DefaultVersion = "1.32.13"

// UpgradeVersion is the second kube-apiserver of make check's upgrade in progress (beside
// DefaultVersion, on one etcd): the next minor, whose WatchList default differs.
const UpgradeVersion = "1.33.13"

// Options selects what to provision and where.
type Options struct {
	// Version is the Kubernetes version, X.Y.Z; a leading "v" is accepted.
	// Empty means DefaultVersion.
	Version string
	// EtcdVersion overrides the etcd version (A.B.C). If empty, $ETCD_VERSION
	// is used, else the go.etcd.io/etcd version that k8s.io/kubernetes requires.
	EtcdVersion string
	// StoreRoot defaults to setup-envtest's store: ~/Library/Application
	// Support/io.kubebuilder.envtest on macOS, else
	// ${XDG_DATA_HOME:-$HOME/.local/share}/kubebuilder-envtest.
	StoreRoot string
	// Progress receives status lines; nil discards them.
	Progress io.Writer
	// NoBuild makes Lookup and Kubectl fail instead of building missing binaries.
	NoBuild bool
}

// withDefaults fills the empty fields. The version must already be valid.
func (o Options) withDefaults() Options {
	o.Version = strings.TrimPrefix(o.Version, "v")
	if o.Version == "" {
		o.Version = DefaultVersion
	}
	if o.StoreRoot == "" {
		o.StoreRoot = defaultStoreRoot()
	}
	if o.Progress == nil {
		o.Progress = io.Discard
	}
	return o
}

func defaultStoreRoot() string {
	home, err := os.UserHomeDir()
	if err != nil {
		// No home: fall back to a relative path rather than panicking;
		// the build then reports a clear filesystem error if it fails.
		home = "."
	}
	return storeRoot(runtime.GOOS, home, os.Getenv("XDG_DATA_HOME"))
}

// storeRoot is where setup-envtest keeps its store on goos, as its
// store.DefaultStoreDir decides (sigs.k8s.io/controller-runtime/tools/setup-envtest,
// store/helpers.go): "OSX: ~/Library/Application Support/io.kubebuilder.envtest",
// "Others: ${XDG_DATA_HOME:-~/.local/share}/kubebuilder-envtest".
func storeRoot(goos, home, xdgDataHome string) string {
	if goos == "darwin" {
		return filepath.Join(home, "Library", "Application Support", "io.kubebuilder.envtest")
	}
	if xdgDataHome == "" {
		xdgDataHome = filepath.Join(home, ".local", "share")
	}
	return filepath.Join(xdgDataHome, "kubebuilder-envtest")
}

// StoreDir is the store entry for opts.Version:
// <StoreRoot>/k8s/<X.Y.Z>-<GOOS>-<GOARCH>, the layout setup-envtest uses.
func StoreDir(opts Options) string {
	opts = opts.withDefaults()
	return filepath.Join(opts.StoreRoot, "k8s", entryName(opts.Version))
}

func entryName(version string) string {
	return version + "-" + runtime.GOOS + "-" + runtime.GOARCH
}

// semver is a parsed X.Y.Z version without prefix.
type semver struct{ major, minor, patch int }

func (v semver) String() string { return fmt.Sprintf("%d.%d.%d", v.major, v.minor, v.patch) }

// parseVersion accepts "X.Y.Z" or "vX.Y.Z"; field names the value in the
// error. Pre-releases are rejected: the staging modules are replaced by their
// v0.Y.Z releases, which exist only for final releases.
func parseVersion(field, s string) (semver, error) {
	parts := strings.Split(strings.TrimPrefix(s, "v"), ".")
	var n [3]int
	ok := len(parts) == 3
	for i := 0; ok && i < 3; i++ {
		x, err := strconv.Atoi(parts[i])
		ok = err == nil && x >= 0 && parts[i] == strconv.Itoa(x)
		n[i] = x
	}
	if !ok {
		return semver{}, fmt.Errorf("%w: %s %q is not X.Y.Z (for example %s)", ErrBadVersion, field, s, DefaultVersion)
	}
	return semver{n[0], n[1], n[2]}, nil
}
