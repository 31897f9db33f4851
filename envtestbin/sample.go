package envtestbin

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// sampleAPIServerModule is Kubernetes' example of an aggregated apiserver: its root is its main
// package, and it serves wardle.example.com's flunders and fischers.
const sampleAPIServerModule = "k8s.io/sample-apiserver"

// SampleAPIServers are the versions of k8s.io/sample-apiserver the project runs as aggregated
// apiservers: the last v0.33 the module proxy serves, whose k8s.io/apiserver has the WatchList
// gate off by default, and the last v0.34, which has it on.
var SampleAPIServers = []string{"0.33.5", "0.34.13"}

// SampleAPIServer returns the path of a k8s.io/sample-apiserver at version (A.B.C; a leading
// "v" is accepted), built from the Go module proxy into the store the first time:
// <StoreRoot>/sample-apiserver/<A.B.C>-<GOOS>-<GOARCH>/sample-apiserver. opts.Version is not
// used; opts.NoBuild makes a missing one an error. A build took 2m17s (0.34.13) and 4m2s
// (0.33.5) on 2 cores with a Go build cache that had kube-apiservers but not these
// k8s.io/apiserver versions.
func SampleAPIServer(ctx context.Context, opts Options, version string) (string, error) {
	opts = opts.withDefaults()
	version = strings.TrimPrefix(version, "v")
	v, err := parseVersion("sample-apiserver version", version)
	if err != nil {
		return "", err
	}
	const name = "sample-apiserver"
	final := filepath.Join(opts.StoreRoot, name, entryName(v.String()))
	if checkBinary(final, name) == nil {
		return filepath.Join(final, name), nil
	}
	if opts.NoBuild {
		return "", fmt.Errorf("%w: sample-apiserver %s is not in %s and building is off; run `make sample-apiservers`",
			ErrMissingBinary, v, final)
	}
	start := time.Now()
	out := opts.Progress
	g, scratch, err := newScratch(ctx)
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(scratch)
	mod, err := g.readModule(ctx, scratch, sampleAPIServerModule, "v"+v.String())
	if err != nil {
		return "", err
	}
	final, unlock, err := lockIn(ctx, g, filepath.Dir(final), filepath.Base(final), name+" "+v.String(), out)
	if err != nil {
		return "", err
	}
	defer unlock()
	if checkBinary(final, name) == nil {
		return filepath.Join(final, name), nil
	}
	tmp, err := entryTemp(final)
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	src := filepath.Join(scratch, name)
	if err := writeScratchModule(src, sampleAPIServerModule, "v"+v.String(), mod, ""); err != nil {
		return "", fmt.Errorf("writing the sample-apiserver scratch module: %w", err)
	}
	fmt.Fprintf(out, "building sample-apiserver v%s (%s; 2 to 4 minutes cold on 2 cores)\n", v, sampleAPIServerModule)
	if err := g.build(ctx, out, name, src, filepath.Join(tmp, name), sampleAPIServerModule, ""); err != nil {
		return "", err
	}
	if err := os.Rename(tmp, final); err != nil {
		return "", fmt.Errorf("installing sample-apiserver into the store: %w", err)
	}
	fmt.Fprintf(out, "sample-apiserver v%s ready in %s (built in %s)\n", v, final, time.Since(start).Round(time.Second))
	return filepath.Join(final, name), nil
}
