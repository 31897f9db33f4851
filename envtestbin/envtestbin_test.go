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

// Bad versions are rejected before the go command runs: with no go on PATH
// and GOPROXY=off, anything that got further would fail differently.
func TestBadVersion(t *testing.T) {
	t.Setenv("PATH", "")
	t.Setenv("GOPROXY", "off")
	t.Setenv("KUBEBUILDER_ASSETS", "")
	for _, v := range []string{"1.32", "latest", "1.32.x", "v1.32.13-rc.0", "1.032.1", " 1.32.13", "1.32.13.1"} {
		for _, f := range []func(context.Context, Options) (string, error){Lookup, Build} {
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
	_, err := Lookup(context.Background(), Options{Version: "1.99.0", StoreRoot: root})
	if errors.Is(err, ErrProxyUnreachable) {
		t.Skipf("module proxy unreachable: %v", err)
	}
	if !errors.Is(err, ErrNotServed) || !strings.Contains(err.Error(), "k8s.io/kubernetes@v1.99.0") {
		t.Fatalf("err = %v, want %v naming k8s.io/kubernetes@v1.99.0", err, ErrNotServed)
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
// builds if missing (about 4-5 min cold on 2 cores, 1-2 min with a warm Go
// build cache; run with -timeout 20m) and reuses the store otherwise.
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
