package envtestbin

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// fakeBins writes tiny executable scripts named names into a new temp dir.
func fakeBins(t *testing.T, dir string, names ...string) string {
	t.Helper()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, n := range names {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("#!/bin/sh\necho fake "+n+"\n"), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestLookupOrder(t *testing.T) {
	const version = "1.32.13"
	tests := []struct {
		name      string
		assets    []string // binaries in KUBEBUILDER_ASSETS; nil = variable unset
		noAssets  bool     // KUBEBUILDER_ASSETS points at a missing directory
		store     []string // binaries in the store entry
		wantDir   string   // "assets" or "store"
		wantErrIs error
		wantErr   []string // substrings of the error
	}{
		{name: "assets win over store", assets: binaries, store: binaries, wantDir: "assets"},
		{name: "assets without etcd", assets: []string{"kube-apiserver"}, store: binaries,
			wantErrIs: ErrMissingBinary, wantErr: []string{"KUBEBUILDER_ASSETS", "etcd"}},
		{name: "assets without kube-apiserver", assets: []string{"etcd"},
			wantErrIs: ErrMissingBinary, wantErr: []string{"kube-apiserver"}},
		{name: "assets dir missing", noAssets: true,
			wantErrIs: ErrMissingBinary, wantErr: []string{"does not exist"}},
		{name: "store when no env", store: binaries, wantDir: "store"},
		{name: "NoBuild with empty store", wantErrIs: ErrMissingBinary, wantErr: []string{"not in", "building is off"}},
		{name: "NoBuild with half a store entry", store: []string{"kube-apiserver"},
			wantErrIs: ErrMissingBinary, wantErr: []string{"not in"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmp := t.TempDir()
			opts := Options{Version: "v" + version, StoreRoot: filepath.Join(tmp, "store"), NoBuild: true}
			storeDir := filepath.Join(opts.StoreRoot, "k8s", entryName(version))
			if got := StoreDir(opts); got != storeDir {
				t.Fatalf("StoreDir = %s, want %s", got, storeDir)
			}
			if tt.store != nil {
				fakeBins(t, storeDir, tt.store...)
			}
			assetsDir := filepath.Join(tmp, "assets")
			switch {
			case tt.assets != nil:
				fakeBins(t, assetsDir, tt.assets...)
				t.Setenv("KUBEBUILDER_ASSETS", assetsDir)
			case tt.noAssets:
				t.Setenv("KUBEBUILDER_ASSETS", assetsDir)
			default:
				t.Setenv("KUBEBUILDER_ASSETS", "")
			}

			dir, err := Lookup(context.Background(), opts)
			if tt.wantErrIs != nil {
				if !errors.Is(err, tt.wantErrIs) {
					t.Fatalf("err = %v, want %v", err, tt.wantErrIs)
				}
				for _, s := range tt.wantErr {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not mention %q", err, s)
					}
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			want := map[string]string{"assets": assetsDir, "store": storeDir}[tt.wantDir]
			if dir != want {
				t.Errorf("Lookup = %s, want %s", dir, want)
			}
		})
	}
}

// Kubectl finds kubectl in KUBEBUILDER_ASSETS or the store entry, fails
// clearly with NoBuild when neither has it, and leaves Lookup alone: an entry
// without kubectl still serves kube-apiserver and etcd.
func TestKubectlNoBuild(t *testing.T) {
	const version = "1.32.13"
	tests := []struct {
		name    string
		assets  []string // binaries in KUBEBUILDER_ASSETS; nil = variable unset
		store   []string // binaries in the store entry
		want    string   // "assets" or "store"; "" = the NoBuild error
		wantErr []string // substrings of that error
	}{
		{name: "entry without kubectl", store: binaries,
			wantErr: []string{"kubectl for " + version + " is not in", "building is off", "-kubectl"}},
		{name: "no entry", wantErr: []string{"kubectl for " + version + " is not in"}},
		{name: "kubectl in the entry", store: append([]string{"kubectl"}, binaries...), want: "store"},
		{name: "entry with only kubectl", store: []string{"kubectl"}, want: "store"},
		{name: "kubectl in assets wins", assets: append([]string{"kubectl"}, binaries...), store: []string{"kubectl"}, want: "assets"},
		{name: "assets without kubectl fall back to the store", assets: binaries, store: []string{"kubectl"}, want: "store"},
		{name: "assets without kubectl, none in the store", assets: binaries, wantErr: []string{"is not in"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tmp := t.TempDir()
			opts := Options{Version: version, StoreRoot: filepath.Join(tmp, "store"), NoBuild: true}
			storeDir := StoreDir(opts)
			if tt.store != nil {
				fakeBins(t, storeDir, tt.store...)
			}
			assetsDir := filepath.Join(tmp, "assets")
			t.Setenv("KUBEBUILDER_ASSETS", "")
			if tt.assets != nil {
				fakeBins(t, assetsDir, tt.assets...)
				t.Setenv("KUBEBUILDER_ASSETS", assetsDir)
			}

			got, err := Kubectl(context.Background(), opts)
			if tt.want == "" {
				if !errors.Is(err, ErrMissingBinary) {
					t.Fatalf("err = %v, want %v", err, ErrMissingBinary)
				}
				for _, s := range append(tt.wantErr, storeDir) {
					if !strings.Contains(err.Error(), s) {
						t.Errorf("error %q does not mention %q", err, s)
					}
				}
			} else {
				if err != nil {
					t.Fatal(err)
				}
				want := filepath.Join(map[string]string{"assets": assetsDir, "store": storeDir}[tt.want], "kubectl")
				if got != want {
					t.Errorf("Kubectl = %s, want %s", got, want)
				}
			}

			// Lookup depends on kube-apiserver and etcd only.
			t.Setenv("KUBEBUILDER_ASSETS", "")
			_, err = Lookup(context.Background(), opts)
			if hasServer := tt.store != nil && checkDir(storeDir) == nil; hasServer != (err == nil) {
				t.Errorf("Lookup with store %v: err = %v", tt.store, err)
			}
		})
	}
}

// A non-executable kubectl in the entry does not count.
func TestKubectlNotExecutable(t *testing.T) {
	t.Setenv("KUBEBUILDER_ASSETS", "")
	opts := Options{StoreRoot: t.TempDir(), NoBuild: true}
	dir := fakeBins(t, StoreDir(opts), binaries...)
	if err := os.WriteFile(filepath.Join(dir, "kubectl"), []byte("#!/bin/sh\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Kubectl(context.Background(), opts); !errors.Is(err, ErrMissingBinary) {
		t.Fatalf("err = %v, want %v", err, ErrMissingBinary)
	}
}

// Build's install step keeps a kubectl that Kubectl put into an entry
// before kube-apiserver and etcd were there, and replaces the rest.
func TestInstallEntryKeepsKubectl(t *testing.T) {
	root := t.TempDir()
	final := fakeBins(t, filepath.Join(root, "entry"), "kubectl", "kube-apiserver") // etcd deleted
	if err := os.WriteFile(filepath.Join(final, "kubectl"), []byte("#!/bin/sh\necho the built kubectl\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	tmp := fakeBins(t, filepath.Join(root, ".entry.tmp-1"), binaries...)
	if err := installEntry(tmp, final); err != nil {
		t.Fatal(err)
	}
	if err := checkDir(final); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(filepath.Join(final, "kubectl"))
	if err != nil || !strings.Contains(string(got), "the built kubectl") {
		t.Errorf("kubectl after install = %q (err %v), want the one that was there", got, err)
	}
	if _, err := os.Stat(tmp); !os.IsNotExist(err) {
		t.Errorf("temp dir %s still there (err %v)", tmp, err)
	}
}

// Bad versions are rejected before the go command runs: with no go on PATH
// and GOPROXY=off, anything that got further would fail differently.
func TestBadVersion(t *testing.T) {
	t.Setenv("PATH", "")
	t.Setenv("GOPROXY", "off")
	t.Setenv("KUBEBUILDER_ASSETS", "")
	for _, v := range []string{"1.32", "latest", "1.32.x", "v1.32.13-rc.0", "1.032.1", " 1.32.13", "1.32.13.1"} {
		for _, f := range []func(context.Context, Options) (string, error){Lookup, Build, Kubectl} {
			_, err := f(context.Background(), Options{Version: v, StoreRoot: t.TempDir()})
			if !errors.Is(err, ErrBadVersion) || !strings.Contains(err.Error(), "X.Y.Z") {
				t.Errorf("version %q: err = %v, want %v", v, err, ErrBadVersion)
			}
		}
	}
	_, err := Build(context.Background(), Options{EtcdVersion: "3.5", StoreRoot: t.TempDir()}) // "" = DefaultVersion
	if !errors.Is(err, ErrNoGo) {                                                              // the etcd version is checked after go is found
		t.Errorf("no go on PATH: err = %v, want %v", err, ErrNoGo)
	}
}

// An unserved version fails fast and leaves nothing behind (the lock file is
// allowed).
func TestUnservedVersion(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go on PATH")
	}
	t.Setenv("KUBEBUILDER_ASSETS", "")
	tmpdir := t.TempDir()
	t.Setenv("TMPDIR", tmpdir)
	root := t.TempDir()
	for _, f := range []func(context.Context, Options) (string, error){Lookup, Kubectl} {
		_, err := f(context.Background(), Options{Version: "1.99.0", StoreRoot: root})
		if errors.Is(err, ErrProxyUnreachable) {
			t.Skipf("module proxy unreachable: %v", err)
		}
		if !errors.Is(err, ErrNotServed) || !strings.Contains(err.Error(), "k8s.io/kubernetes@v1.99.0") || !strings.Contains(err.Error(), "1.99.x") {
			t.Fatalf("err = %v, want %v naming k8s.io/kubernetes@v1.99.0 and the served 1.99.x releases", err, ErrNotServed)
		}
	}
	entries, _ := os.ReadDir(filepath.Join(root, "k8s"))
	for _, e := range entries {
		if !strings.HasSuffix(e.Name(), ".lock") {
			t.Errorf("left behind in the store: %s", e.Name())
		}
	}
	scratch, _ := filepath.Glob(filepath.Join(tmpdir, "envtestbin-*"))
	if len(scratch) > 0 {
		t.Errorf("left behind in TMPDIR: %v", scratch)
	}
}

// TestDefaultVersionReal provisions DefaultVersion in the real store: it
// builds if missing (9-14 min cold on 2 cores, 5-7 min for a version after
// another; run with -timeout 20m) and reuses the store otherwise.
// Skipped with -short.
func TestDefaultVersionReal(t *testing.T) {
	if testing.Short() {
		t.Skip("builds kube-apiserver and etcd; skipped with -short")
	}
	t.Setenv("KUBEBUILDER_ASSETS", "")
	start := time.Now()
	dir, err := Lookup(context.Background(), Options{Progress: tWriter{t}})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("Lookup(%s) = %s in %s", DefaultVersion, dir, time.Since(start))
	for bin, want := range map[string]string{
		"kube-apiserver": "Kubernetes v" + DefaultVersion,
		"etcd":           "etcd Version: 3.5.16",
	} {
		out, err := exec.Command(filepath.Join(dir, bin), "--version").CombinedOutput()
		if err != nil || !strings.Contains(string(out), want+"\n") {
			t.Errorf("%s --version = %q (err %v), want %q", bin, out, err, want)
		}
	}
}

// tWriter sends progress lines to the test log.
type tWriter struct{ t *testing.T }

func (w tWriter) Write(p []byte) (int, error) {
	w.t.Log(strings.TrimRight(string(p), "\n"))
	return len(p), nil
}

// The store is setup-envtest's on each system, so that binaries either tool installed are
// found by the other.
func TestStoreRootPerSystem(t *testing.T) {
	for _, tt := range []struct{ goos, xdg, want string }{
		{"darwin", "", "/Users/me/Library/Application Support/io.kubebuilder.envtest"},
		{"darwin", "/x", "/Users/me/Library/Application Support/io.kubebuilder.envtest"}, // setup-envtest ignores XDG there
		{"linux", "", "/Users/me/.local/share/kubebuilder-envtest"},
		{"linux", "/data", "/data/kubebuilder-envtest"},
	} {
		if got := storeRoot(tt.goos, "/Users/me", tt.xdg); got != tt.want {
			t.Errorf("storeRoot(%s, XDG_DATA_HOME=%q) = %s, want %s", tt.goos, tt.xdg, got, tt.want)
		}
	}
}
