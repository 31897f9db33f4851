package envtestbin

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"time"
)

// Kubectl returns the path of a kubectl for opts.Version:
//  1. $KUBEBUILDER_ASSETS/kubectl if it is executable (setup-envtest's entries
//     hold one; its version is not checked, as Lookup does not check the
//     server's);
//  2. else kubectl in the store entry StoreDir(opts);
//  3. else one built from k8s.io/kubernetes's cmd/kubectl at opts.Version and
//     added to that entry, unless opts.NoBuild.
//
// It does not need kube-apiserver and etcd: an entry that holds only kubectl
// is completed by a later Build, which keeps the kubectl. A build takes about
// 2 minutes on 2 cores with an empty Go build cache, and half a minute after
// kube-apiserver of the same version, which shares most of its packages.
func Kubectl(ctx context.Context, opts Options) (string, error) {
	opts = opts.withDefaults()
	k8sVer, err := parseVersion("Kubernetes version", opts.Version)
	if err != nil {
		return "", err
	}
	name := kubectlCommand.name
	if dir := os.Getenv("KUBEBUILDER_ASSETS"); dir != "" && checkBinary(dir, name) == nil {
		return filepath.Join(dir, name), nil
	}
	dir := StoreDir(opts)
	if checkBinary(dir, name) == nil {
		return filepath.Join(dir, name), nil
	}
	if opts.NoBuild {
		return "", fmt.Errorf("%w: kubectl for %s is not in %s and building is off; run `go run ./cmd/provision -version %s -kubectl` in envtestbin",
			ErrMissingBinary, opts.Version, dir, opts.Version)
	}
	return buildKubectl(ctx, opts, k8sVer)
}

// buildKubectl builds kubectl like Build builds kube-apiserver, under the same
// store lock, and moves it into the entry, which it creates if need be.
func buildKubectl(ctx context.Context, opts Options, k8sVer semver) (string, error) {
	start := time.Now()
	out := opts.Progress
	g, scratch, k8sMod, err := startBuild(ctx, k8sVer)
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(scratch)

	final, unlock, err := lockEntry(ctx, g, opts.StoreRoot, k8sVer, out)
	if err != nil {
		return "", err
	}
	defer unlock()
	bin := filepath.Join(final, kubectlCommand.name)
	if checkBinary(final, kubectlCommand.name) == nil {
		fmt.Fprintf(out, "kubectl for %s was installed by another process in %s\n", k8sVer, final)
		return bin, nil
	}

	// Built in the entry's temp dir, so that moving the binary in is an
	// atomic rename: kubectl in the entry is always a verified one.
	tmp, err := entryTemp(final)
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)
	tmpBin := filepath.Join(tmp, kubectlCommand.name)
	if err := g.buildKube(ctx, out, scratch, kubectlCommand, k8sVer, k8sMod, tmpBin); err != nil {
		return "", err
	}
	if err := os.MkdirAll(final, 0o755); err != nil {
		return "", fmt.Errorf("creating the store entry: %w", err)
	}
	if err := os.Rename(tmpBin, bin); err != nil {
		return "", fmt.Errorf("installing kubectl into the store: %w", err)
	}
	fmt.Fprintf(out, "kubectl v%s ready in %s (built in %s; %s)\n",
		k8sVer, final, time.Since(start).Round(time.Second), fileSize(bin))
	return bin, nil
}
