// Package optouts is make opt-outs: every lab module run attached to one envtest kube-apiserver
// once per way a user turns client-go's streaming lists off (lab/optout.Runs), each run's
// records kept, and the page of what each switch did on the wire (compare/optouts).
package optouts

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"informer-lab/compare/optouts"
	"informer-lab/harness/internal/cli"
	"informer-lab/harness/internal/labproc"
	"informer-lab/harness/internal/rundir"
	"informer-lab/lab/controlplane"
	"informer-lab/lab/optout"
	"informer-lab/lab/process"
	"informer-lab/record"
)

type options struct {
	root, out, labs, serverVersion string
	docs                           bool
	wait                           time.Duration
}

// Run is make opt-outs.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseFlags(args, stderr)
	if code, ok := cli.Parsed(err, stderr); !ok {
		return code
	}
	if err := run(ctx, o, stdout); err != nil {
		fmt.Fprintln(stderr, "error:", record.OneLine(err))
		if cli.IsUsage(err) {
			return cli.ExitUsage
		}
		return 1
	}
	return 0
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := cli.NewFlags("opt-outs", "go.work and the client-v* modules", stderr)
	fs.StringVar(&o.labs, "labs", "", "comma-separated lab modules (default: every client-v* module)")
	fs.StringVar(&o.serverVersion, "server-version", "", "kube-apiserver version of the one envtest server every run attaches to (default: the project's)")
	fs.BoolVar(&o.docs, "docs", false, "also write docs/opt-outs.md from the run")
	fs.DurationVar(&o.wait, "wait", 20*time.Second, "how long each run's informers and direct List() may take")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	if o.wait <= 0 {
		return o, fmt.Errorf("-wait must be positive, got %s", o.wait)
	}
	var err error
	o.root, o.out, err = fs.Dirs()
	return o, err
}

func run(ctx context.Context, o options, stdout io.Writer) error {
	say := func(f string, a ...any) { fmt.Fprintf(stdout, "[opt-outs] "+f+"\n", a...) }
	mods, err := labproc.Modules(o.root, o.labs)
	if err != nil {
		return cli.Usage(fmt.Errorf("-labs: %w", err))
	}
	dir, err := rundir.New(o.out, "opt-outs-", time.Now())
	if err != nil {
		return err
	}
	bins := map[string]string{}
	for _, m := range mods {
		say("building %s", filepath.Base(m))
		if bins[m], _, err = labproc.Build(ctx, m); err != nil {
			return err
		}
	}
	cp, err := controlplane.Start(ctx, controlplane.Options{Version: o.serverVersion, Progress: cli.Lines(say)})
	if err != nil {
		return err
	}
	defer cp.Stop()
	kc, err := cp.AdminKubeconfig("informer-lab-opt-outs")
	if err != nil {
		return err
	}
	tmp, err := os.MkdirTemp("", "informer-lab-opt-outs-") // credentials: not in the run directory
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	kubeconfig := filepath.Join(tmp, "kubeconfig")
	if err := os.WriteFile(kubeconfig, kc, 0o600); err != nil {
		return err
	}
	for _, m := range mods {
		name := filepath.Base(m)
		say("%s: %d runs at once, each until its informers and its direct List() are done (at most %s)", name, len(optout.Runs), o.wait)
		if err := runModule(ctx, bins[m], kubeconfig, filepath.Join(dir, name), o.wait); err != nil {
			return fmt.Errorf("%s: %w", name, err)
		}
	}
	page := filepath.Join(dir, "opt-outs.md")
	if err := optouts.WriteFile(dir, page); err != nil {
		return err
	}
	say("wrote %s", page)
	if o.docs {
		docs := filepath.Join(o.root, "docs", "opt-outs.md")
		if err := optouts.WriteFile(dir, docs); err != nil {
			return err
		}
		say("wrote %s", docs)
	}
	return ctx.Err()
}

// runModule runs one lab module's runs at once, each writing its records to
// dir/NN-MODE@AT.jsonl (NN keeps optout.Runs' order), and stops each once its informers A and B
// synced and its direct List() returned, or wait is up (what it did by then is its result).
func runModule(ctx context.Context, bin, kubeconfig, dir string, wait time.Duration) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	var wg sync.WaitGroup
	errs := make([]error, len(optout.Runs))
	for i, r := range optout.Runs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = runOne(ctx, bin, r, kubeconfig, filepath.Join(dir, fmt.Sprintf("%02d-%s.jsonl", i+1, r)), wait)
		}()
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

func runOne(ctx context.Context, bin string, r optout.Run, kubeconfig, path string, wait time.Duration) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer f.Close()
	var (
		mu     sync.Mutex
		done   = map[string]bool{}
		all    = make(chan struct{})
		closed bool
	)
	cmd := exec.Command(bin, r.Args(kubeconfig)...)
	cmd.Env = append(os.Environ(), r.Env...)
	var stderr strings.Builder
	cmd.Stderr = &stderr
	p, err := process.Start(cmd, process.Options{What: "lab " + filepath.Base(bin) + " " + r.String(), Stdout: func(line []byte) {
		f.Write(line)
		rec, err := record.Parse(line)
		if err != nil || rec.Kind != record.Setup {
			return
		}
		mu.Lock()
		defer mu.Unlock()
		switch {
		case rec.Step == record.StepSynced:
			done[rec.Tag] = true
		case rec.Step == record.StepDirect:
			done[record.TagDirect] = true
		}
		if done["A"] && done["B"] && done[record.TagDirect] && !closed {
			close(all)
			closed = true
		}
	}})
	if err != nil {
		return err
	}
	select {
	case <-all:
	case <-time.After(wait):
	case <-ctx.Done():
	case <-p.Done():
		return fmt.Errorf("lab %s exited before its informers synced: %s", r, strings.TrimSpace(stderr.String()))
	}
	return p.Stop(10 * time.Second)
}
