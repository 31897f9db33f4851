package envtestbin

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

const (
	kubernetesModule = "k8s.io/kubernetes"
	etcdServerModule = "go.etcd.io/etcd/server/v3" // its root is etcd's main package (3.5 and 3.6)
	etcdClientModule = "go.etcd.io/etcd/client/v3"

	// minFree is what a cold build needs: module zips, build cache, binaries.
	minFree = 3 << 30
	// progressEvery is how often a running build reports.
	progressEvery = 15 * time.Second
)

// kubeCommand is one of k8s.io/kubernetes's commands (cmd/<name>), built from
// the same scratch module and checked by the version it reports.
type kubeCommand struct {
	name        string   // the binary, and its directory under cmd/
	versionArgs []string // arguments that make it print its version
	versionLine string   // the line they print; %s is "v1.32.13"
	cold        string   // a cold build's time on 2 cores, for the progress line
}

var (
	kubeAPIServer = kubeCommand{"kube-apiserver", []string{"--version"}, "Kubernetes %s", "5-14 min cold on 2 cores"}
	// --client: no server to ask, and no kubeconfig is read.
	kubectlCommand = kubeCommand{"kubectl", []string{"version", "--client"}, "Client Version: %s", "about 2 min cold"}
)

// Build builds kube-apiserver and etcd for opts.Version from the Go module
// proxy and installs them in StoreDir(opts), unless another process has
// installed them by the time the store lock is held. It returns that
// directory. A cold build took 9 to 14 minutes on 2 cores from empty Go caches, 5 to 7
// for each further version (measured with make docs). A kubectl that
// Kubectl put into an incomplete entry is kept.
func Build(ctx context.Context, opts Options) (string, error) {
	start := time.Now()
	opts = opts.withDefaults()
	k8sVer, err := parseVersion("Kubernetes version", opts.Version)
	if err != nil {
		return "", err
	}
	out := opts.Progress

	g, scratch, k8sMod, err := startBuild(ctx, k8sVer)
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(scratch)

	// etcd's module too is read before anything is created in the store.
	etcdVer, err := etcdVersion(opts, k8sMod)
	if err != nil {
		return "", err
	}
	etcdMod, err := g.readModule(ctx, scratch, etcdServerModule, "v"+etcdVer.String())
	if err != nil {
		return "", err
	}

	final, unlock, err := lockEntry(ctx, g, opts.StoreRoot, k8sVer, out)
	if err != nil {
		return "", err
	}
	defer unlock()
	if checkDir(final) == nil {
		fmt.Fprintf(out, "kube-apiserver and etcd for %s were installed by another process in %s\n", k8sVer, final)
		return final, nil
	}

	// The deferred RemoveAll cleans up after any failure and is a no-op
	// after the rename.
	tmp, err := entryTemp(final)
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(tmp)

	etcdBin := filepath.Join(tmp, "etcd")
	etcdSrc := filepath.Join(scratch, "etcd")
	if err := writeScratchModule(etcdSrc, etcdServerModule, "v"+etcdVer.String(), etcdMod, ""); err != nil {
		return "", fmt.Errorf("writing the etcd scratch module: %w", err)
	}
	fmt.Fprintf(out, "building etcd %s (%s)\n", etcdVer, etcdServerModule)
	if err := g.build(ctx, out, "etcd", etcdSrc, etcdBin, etcdServerModule, ""); err != nil {
		return "", err
	}
	if err := verify(ctx, "etcd Version: "+etcdVer.String(), etcdBin, "--version"); err != nil {
		return "", err
	}

	if err := g.buildKube(ctx, out, scratch, kubeAPIServer, k8sVer, k8sMod, filepath.Join(tmp, "kube-apiserver")); err != nil {
		return "", err
	}

	if err := installEntry(tmp, final); err != nil {
		return "", err
	}
	fmt.Fprintf(out, "kube-apiserver v%s and etcd %s ready in %s (built in %s; %s, %s)\n",
		k8sVer, etcdVer, final, time.Since(start).Round(time.Second),
		fileSize(filepath.Join(final, "kube-apiserver")), fileSize(filepath.Join(final, "etcd")))
	return final, nil
}

// installEntry renames the built directory tmp to the entry final, replacing
// an incomplete final (someone deleted a binary, or Kubectl came first), which
// would make the rename fail. A kubectl in it moves over: the lock holder
// installed it verified, and it takes minutes to build again.
func installEntry(tmp, final string) error {
	if err := os.Chmod(tmp, 0o755); err != nil {
		return err
	}
	if checkBinary(final, kubectlCommand.name) == nil {
		if err := os.Rename(filepath.Join(final, kubectlCommand.name), filepath.Join(tmp, kubectlCommand.name)); err != nil {
			return fmt.Errorf("keeping the kubectl of the incomplete %s: %w", final, err)
		}
	}
	if err := os.RemoveAll(final); err != nil {
		return fmt.Errorf("removing the incomplete %s: %w", final, err)
	}
	if err := os.Rename(tmp, final); err != nil {
		return fmt.Errorf("installing into the store: %w", err)
	}
	return nil
}

// startBuild finds the go command, creates the scratch directory of one
// build, which the caller removes, and reads k8s.io/kubernetes's go.mod at
// version from the proxy. go's own work files (a 130 MB a.out while linking)
// go into scratch too, so that an interrupted build leaves nothing in
// $TMPDIR. The proxy is asked first: an unserved version fails in a second,
// before anything is created in the store.
func startBuild(ctx context.Context, version semver) (*goTool, string, *goMod, error) {
	g, scratch, err := newScratch(ctx)
	if err != nil {
		return nil, "", nil, err
	}
	k8sMod, err := g.readModule(ctx, scratch, kubernetesModule, "v"+version.String())
	if err != nil {
		os.RemoveAll(scratch)
		return nil, "", nil, err
	}
	return g, scratch, k8sMod, nil
}

// newScratch is the go command a build runs and the scratch directory it builds in (its go
// temporary files too), which the caller removes.
func newScratch(ctx context.Context) (*goTool, string, error) {
	g, err := newGoTool(ctx)
	if err != nil {
		return nil, "", err
	}
	scratch, err := os.MkdirTemp("", "envtestbin-")
	if err != nil {
		return nil, "", fmt.Errorf("creating a scratch directory: %w", err)
	}
	goTmp := filepath.Join(scratch, "gotmp")
	if err := os.Mkdir(goTmp, 0o700); err != nil {
		os.RemoveAll(scratch)
		return nil, "", fmt.Errorf("creating a scratch directory: %w", err)
	}
	g.env = append(g.env, "GOTMPDIR="+goTmp)
	return g, scratch, nil
}

// lockEntry creates the store, checks its disk space and takes the lock of
// version's entry, which every build into the entry holds. It returns the
// entry's directory, which need not exist yet.
func lockEntry(ctx context.Context, g *goTool, storeRoot string, version semver, out io.Writer) (string, func(), error) {
	return lockIn(ctx, g, filepath.Join(storeRoot, "k8s"), entryName(version.String()), version.String(), out)
}

// lockIn creates the store directory dir, checks its disk space and takes the
// lock of its entry name (what names it in messages), removing what a killed
// build of it left. It returns the entry's directory, which need not exist yet.
func lockIn(ctx context.Context, g *goTool, dir, name, what string, out io.Writer) (string, func(), error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", nil, fmt.Errorf("creating the store: %w", err)
	}
	if err := checkDisk(map[string]string{"store": dir, "GOCACHE": g.gocache, "GOMODCACHE": g.modache}); err != nil {
		return "", nil, err
	}
	unlock, err := lockStore(ctx, filepath.Join(dir, "."+name+".lock"), func(path string) {
		fmt.Fprintf(out, "waiting for another build of %s (lock %s)\n", what, path)
	})
	if err != nil {
		return "", nil, err
	}
	// Whoever builds holds the lock, so a temp dir of this entry (entryTemp)
	// seen now was left by a build that was killed (SIGKILL skips cleanup):
	// remove it, and say so.
	if stale, _ := filepath.Glob(filepath.Join(dir, tempPrefix(name)+"*")); len(stale) > 0 {
		for _, d := range stale {
			os.RemoveAll(d)
		}
		fmt.Fprintf(out, "removed %d unfinished build(s) of %s left by a killed process\n", len(stale), what)
	}
	return filepath.Join(dir, name), unlock, nil
}

// entryTemp creates the directory that a build fills and then renames to the
// entry final. It is next to final, on the store's filesystem, so that the
// rename is atomic: what is in the entry is always verified.
func entryTemp(final string) (string, error) {
	tmp, err := os.MkdirTemp(filepath.Dir(final), tempPrefix(filepath.Base(final)))
	if err != nil {
		return "", fmt.Errorf("creating a temp dir in the store: %w", err)
	}
	return tmp, nil
}

// tempPrefix starts the names of the temp dirs of the entry name: hidden, so
// that nothing takes them for an entry.
func tempPrefix(name string) string { return "." + name + ".tmp-" }

// buildKube builds c at version into bin from a scratch module under scratch
// that requires k8s.io/kubernetes (whose go.mod is k8sMod), and verifies the
// version the binary reports.
func (g *goTool) buildKube(ctx context.Context, out io.Writer, scratch string, c kubeCommand, version semver, k8sMod *goMod, bin string) error {
	src := filepath.Join(scratch, c.name)
	staging := fmt.Sprintf("v0.%d.%d", version.minor, version.patch)
	if err := writeScratchModule(src, kubernetesModule, "v"+version.String(), k8sMod, staging); err != nil {
		return fmt.Errorf("writing the %s scratch module: %w", c.name, err)
	}
	pkg := kubernetesModule + "/cmd/" + c.name
	fmt.Fprintf(out, "building %s v%s (%s, staging modules %s; %s)\n", c.name, version, pkg, staging, c.cold)
	if err := g.build(ctx, out, c.name, src, bin, pkg, versionLDFlags(version)); err != nil {
		return err
	}
	return verify(ctx, fmt.Sprintf(c.versionLine, "v"+version.String()), bin, c.versionArgs...)
}

// versionLDFlags stamps version into both version packages, as kubernetes'
// hack/lib/version.sh does: without them a binary reports v0.0.0-master, and
// clients that look at the server version misbehave. kube-apiserver and
// `kubectl version` report component-base's; client-go's goes into the
// User-Agent that kubectl sends.
func versionLDFlags(version semver) string {
	var flags []string
	for _, pkg := range []string{"k8s.io/client-go/pkg/version.", "k8s.io/component-base/version."} {
		flags = append(flags,
			"-X "+pkg+"gitVersion=v"+version.String(),
			fmt.Sprintf("-X %sgitMajor=%d", pkg, version.major),
			fmt.Sprintf("-X %sgitMinor=%d", pkg, version.minor),
			"-X "+pkg+"gitTreeState=clean",
			"-X "+pkg+"buildDate="+time.Now().UTC().Format(time.RFC3339),
		)
	}
	return strings.Join(flags, " ")
}

// etcdVersion picks the etcd version: the option, $ETCD_VERSION, or the etcd
// version that kubernetes' go.mod requires (the server of the same version
// pairs with the client the apiserver links).
func etcdVersion(opts Options, k8s *goMod) (semver, error) {
	if opts.EtcdVersion != "" {
		return parseVersion("etcd version", opts.EtcdVersion)
	}
	if env := os.Getenv("ETCD_VERSION"); env != "" {
		return parseVersion("ETCD_VERSION", env)
	}
	v, ok := k8s.require(etcdServerModule, etcdClientModule)
	if !ok {
		return semver{}, fmt.Errorf("%w: k8s.io/kubernetes v%s requires neither %s nor %s; set EtcdVersion (-etcd-version)", ErrBuildFailed, opts.Version, etcdServerModule, etcdClientModule)
	}
	return parseVersion("etcd version", v)
}

// build runs `go build -v -o bin pkg` in the scratch module srcDir and
// reports progress. -mod=mod lets go fill in go.sum for the fresh module
// (and keeps the user's other GOFLAGS).
func (g *goTool) build(ctx context.Context, out io.Writer, name, srcDir, bin, pkg, ldflags string) error {
	args := []string{"build", "-mod=mod", "-v", "-o", bin}
	if ldflags != "" {
		args = append(args, "-ldflags", ldflags)
	}
	args = append(args, pkg)
	cmd := g.command(ctx, srcDir, args...)
	pr, pw, err := os.Pipe()
	if err != nil {
		return err
	}
	cmd.Stdout, cmd.Stderr = pw, pw
	start := time.Now()
	if err := cmd.Start(); err != nil {
		pw.Close()
		pr.Close()
		return fmt.Errorf("%w: starting go build: %v", ErrBuildFailed, err)
	}
	pw.Close() // the child holds its own copy

	// go build -v prints one line per package it compiles, plus
	// "go: downloading" lines; counting the former shows it is moving.
	lineCh := make(chan string)
	go func() {
		defer close(lineCh)
		sc := bufio.NewScanner(pr)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			lineCh <- sc.Text()
		}
	}()
	var output []string
	packages := 0
	tick := time.NewTicker(progressEvery)
	defer tick.Stop()
loop:
	for {
		select {
		case l, ok := <-lineCh:
			if !ok {
				break loop
			}
			output = append(output, l)
			if !strings.HasPrefix(l, "go: ") {
				packages++
			}
		case <-tick.C:
			fmt.Fprintf(out, "  %s: %s, %d packages compiled\n", name, time.Since(start).Round(time.Second), packages)
		}
	}
	pr.Close()
	if err := cmd.Wait(); err != nil {
		if ctx.Err() != nil {
			return fmt.Errorf("building %s: interrupted: %w", name, ctx.Err())
		}
		return goFailure("building "+name+" ("+pkg+")", output, err, g.goproxy)
	}
	fmt.Fprintf(out, "  %s: built in %s (%d packages compiled)\n", name, time.Since(start).Round(time.Second), packages)
	return nil
}

// verify runs bin with args and requires want in its output, as a whole
// line or followed by a line end: "Kubernetes v1.32.13", "etcd Version: 3.5.16".
func verify(ctx context.Context, want, bin string, args ...string) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	got, err := cmd.CombinedOutput()
	for _, l := range lines(string(got)) {
		if strings.TrimSpace(l) == want {
			return nil
		}
	}
	return fmt.Errorf("%w: %s does not report %q (got %q, err %v); the module proxy served something unexpected",
		ErrBuildFailed, strings.Join(append([]string{filepath.Base(bin)}, args...), " "), want, strings.TrimSpace(string(got)), err)
}

func fileSize(path string) string {
	fi, err := os.Stat(path)
	if err != nil {
		return "?"
	}
	return fmt.Sprintf("%d MB", (fi.Size()+500_000)/1_000_000) // decimal, like ls --si
}

// checkDisk requires minFree on each filesystem a build writes to.
func checkDisk(paths map[string]string) error {
	for what, p := range paths {
		if p == "" || p == "off" {
			continue
		}
		free, err := freeBytes(existingAncestor(p))
		if err != nil {
			continue // unknown: let the build try, and recognize ENOSPC if it comes
		}
		if free < minFree {
			return fmt.Errorf("%w: %s (%s) has %.1f GiB free, a cold build needs about %d GiB; free some space (for example `go clean -cache`)",
				ErrDiskFull, what, p, float64(free)/(1<<30), minFree>>30)
		}
	}
	return nil
}

func existingAncestor(p string) string {
	for {
		if _, err := os.Stat(p); err == nil {
			return p
		}
		parent := filepath.Dir(p)
		if parent == p {
			return p
		}
		p = parent
	}
}
