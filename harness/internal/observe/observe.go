// Package observe is make observe: any client (kubectl, a controller binary, a lab) run
// against kube-apiserver through a recording proxy, and the same analysis of what it did on the
// wire as a lab gets of its own log: per resource the initial-sync handshake, re-establishments,
// content types and bytes, and report.html.
package observe

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"informer-lab/compare/observed"
	"informer-lab/compare/report"
	"informer-lab/envtestbin"
	"informer-lab/harness/internal/cli"
	"informer-lab/harness/internal/proxy"
	"informer-lab/harness/internal/rundir"
	"informer-lab/record"
)

// exitRun is the exit code of a run that failed (as make compare's); bad input is cli.ExitUsage.
const exitRun = 3

// LogFile is the proxy's record of every client's traffic, in the run directory.
const LogFile = "observed.jsonl"

// KubeconfigArg in the command's arguments is replaced by the path of the proxy's kubeconfig.
const KubeconfigArg = "{kubeconfig}"

type options struct {
	root, out, dir                string
	kubeconfig, context           string
	serverVersion, serverGates    string
	duration, interval, stopGrace time.Duration
	writes                        int
	cmd                           []string
}

// Run is make observe's main; it returns the process exit code.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, err := parseFlags(args, stderr)
	if code, ok := cli.Parsed(err, stderr); !ok {
		return code
	}
	dir, err := run(ctx, o, stdout, stderr)
	if dir != "" {
		fmt.Fprintf(stderr, "run directory: %s\n", dir)
	}
	if err != nil {
		fmt.Fprintln(stderr, "error:", record.OneLine(err))
		if cli.IsUsage(err) {
			return cli.ExitUsage
		}
		return exitRun
	}
	return 0
}

func parseFlags(args []string, stderr io.Writer) (options, error) {
	var o options
	fs := flag.NewFlagSet("observe", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: observe [flags] -- CMD [ARGS...]\n\nRuns CMD with KUBECONFIG (and %s in ARGS) pointing at a recording proxy in front of\nenvtest or -kubeconfig's cluster, then analyzes what CMD did on the wire.\n\n", KubeconfigArg)
		fs.PrintDefaults()
	}
	fs.StringVar(&o.root, "root", "", "repository root (default: found from the working directory)")
	fs.StringVar(&o.out, "out", "", "parent of run directories (default: <root>/out)")
	fs.StringVar(&o.dir, "dir", "", "working directory of CMD (default: this one)")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "observe against this cluster instead of envtest, in a namespace of its own that is deleted at the end")
	fs.StringVar(&o.context, "context", "", "the -kubeconfig context to use (default: its current context)")
	fs.StringVar(&o.serverVersion, "server-version", envtestbin.DefaultVersion, "Kubernetes version of the envtest server, and of kubectl when CMD is kubectl")
	fs.StringVar(&o.serverGates, "server-feature-gates", "", `kube-apiserver --feature-gates for envtest, e.g. "WatchList=true"`)
	fs.DurationVar(&o.duration, "for", 20*time.Second, "how long CMD may run before it is stopped (SIGINT, then SIGKILL after -stop-grace), and longer while the -writes are still under way (then until one -interval after the last); it may end sooner by itself, or by Ctrl-C: either way what it did until then is analyzed")
	fs.DurationVar(&o.stopGrace, "stop-grace", 5*time.Second, "how long CMD may take to stop after SIGINT")
	fs.IntVar(&o.writes, "writes", 6, "ConfigMap writes (creates, updates, deletes) in CMD's namespace while it runs, from an -interval after the answer to its first LIST or WATCH, so that a watch has something to deliver; 0 for none")
	fs.DurationVar(&o.interval, "interval", time.Second, "time between the writes")
	if err := fs.Parse(args); err != nil {
		return o, err
	}
	o.cmd = fs.Args()
	if len(o.cmd) == 0 || strings.TrimSpace(o.cmd[0]) == "" {
		return o, errors.New(`no command to observe: give it after the flags, e.g. make observe CMD="kubectl get configmaps -w", or observe -- kubectl get configmaps -w`)
	}
	for name, d := range map[string]time.Duration{"-for": o.duration, "-interval": o.interval, "-stop-grace": o.stopGrace} {
		if d <= 0 {
			return o, fmt.Errorf("%s must be positive, got %s", name, d)
		}
	}
	if o.writes < 0 {
		return o, fmt.Errorf("-writes must not be negative, got %d", o.writes)
	}
	if o.context != "" && o.kubeconfig == "" {
		return o, errors.New("-context needs -kubeconfig (envtest has one context)")
	}
	var err error
	o.root, o.out, err = rundir.Defaults(o.root, o.out)
	return o, err
}

// run observes one command: the server, the recording proxy, the command with the proxy's
// kubeconfig, the writes, then the analysis. Everything it starts it stops, in reverse.
func run(ctx context.Context, o options, stdout, stderr io.Writer) (dir string, err error) {
	say := func(format string, a ...any) { fmt.Fprintf(stderr, "[observe] "+format+"\n", a...) }
	workDir := o.dir
	if workDir == "" {
		if workDir, err = os.Getwd(); err != nil {
			return "", err
		}
	}
	// The command is found before anything starts: a typo costs nothing.
	argv := append([]string(nil), o.cmd...)
	kubectl := argv[0] == "kubectl"
	if !kubectl {
		if argv[0], err = lookPath(argv[0], workDir); err != nil {
			return "", cli.Usage(err)
		}
	}

	t, err := connect(ctx, o, say)
	if err != nil {
		return "", err
	}
	defer t.stop()
	if kubectl {
		// kubectl of the server's version, built like kube-apiserver from k8s.io/kubernetes.
		path, err := envtestbin.Kubectl(ctx, envtestbin.Options{Version: t.kubectlVersion, Progress: cli.Lines(say)})
		if err != nil {
			return "", fmt.Errorf("kubectl %s: %w", t.kubectlVersion, err)
		}
		argv[0] = path
	}

	if dir, err = rundir.New(o.out, "observe-", time.Now()); err != nil {
		return "", err
	}
	if err := observe(ctx, o, t, argv, workDir, dir, stderr, say); err != nil {
		return dir, err
	}
	return dir, analyze(dir, stdout)
}

// observe runs the proxy and the command until the command ends, -for passes or ctx ends, and
// closes the log: after it returns, every record the proxy will write is on disk.
func observe(ctx context.Context, o options, t *target, argv []string, workDir, dir string, stderr io.Writer, say func(string, ...any)) error {
	logFile, err := os.OpenFile(filepath.Join(dir, LogFile), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer logFile.Close()
	rec := proxy.NewRecorder(logFile)
	px, err := proxy.Start(t.cfg, proxy.Options{Record: rec})
	if err != nil {
		return fmt.Errorf("start the recording proxy: %w", err)
	}
	defer px.Close() // before the log closes: the watch taps write their last events on Close
	kubeconfig, err := proxyKubeconfig(px, t.namespace, t.tmp)
	if err != nil {
		return err
	}
	say("recording proxy at %s in front of %s; %s runs with KUBECONFIG=%s (namespace %s)", px.URL(), t.describe, filepath.Base(argv[0]), kubeconfig, t.namespace)

	w, err := newWriter(ctx, t, dir)
	if err != nil {
		return err
	}
	defer w.close()
	c, err := startCommand(argv, kubeconfig, workDir, dir, stderr)
	if err != nil {
		return cli.Usage(err)
	}
	defer c.stop(o.stopGrace, say)
	say("running %s for up to %s", strings.Join(o.cmd, " "), o.duration)

	timer := time.NewTimer(o.duration)
	defer timer.Stop()
	writes := w.play(o.writes, o.interval, rec.AnsweredCollection, say)
	select {
	case <-c.Done():
		say("%s ended by itself: %s", filepath.Base(argv[0]), c.how())
	case <-timer.C:
		if rec.AnsweredCollection() {
			// The writes began at the command's first answer, which on a loaded machine may
			// come late in -for: the command sees every write before it is stopped.
			waitWrites(ctx, writes, c.Done(), o.interval)
		}
		say("%s passed: stopping %s", o.duration, filepath.Base(argv[0]))
	case <-ctx.Done():
		// Ctrl-C is how one ends a command that never does (kubectl get -w): what was recorded
		// until then is the observation.
		say("interrupted: stopping %s; what it did until now follows", filepath.Base(argv[0]))
	}
	c.stop(o.stopGrace, say)
	w.stopWriting()
	<-writes
	for _, cl := range rec.Clients() {
		say("client %s: %s", cl.Name, cl.UserAgent)
	}
	return nil
}

// waitWrites waits until the writes are done and one interval more, for their events to reach
// the command, unless the command or ctx ends first.
func waitWrites(ctx context.Context, writes, cmdDone <-chan struct{}, interval time.Duration) {
	select {
	case <-writes:
	case <-cmdDone:
		return
	case <-ctx.Done():
		return
	}
	select {
	case <-time.After(interval):
	case <-cmdDone:
	case <-ctx.Done():
	}
}

// analyze reads the proxy's log back and writes what the clients did: on the terminal, in
// observe.txt with every request, and as report.html.
func analyze(dir string, stdout io.Writer) error {
	obs, err := observed.Load(filepath.Join(dir, LogFile))
	if err != nil {
		return fmt.Errorf("read what the proxy recorded: %w", err)
	}
	rep := observed.Analyze(obs)
	rep.WriteText(stdout)
	f, err := os.Create(filepath.Join(dir, "observe.txt"))
	if err != nil {
		return err
	}
	defer f.Close()
	rep.WriteDetail(f)
	page, err := os.Create(filepath.Join(dir, "report.html"))
	if err != nil {
		return err
	}
	defer page.Close()
	return report.WriteObserved(page, obs, rep)
}

// lookPath finds the command as the shell would in workDir: a name with a slash is a path
// (relative to workDir), any other is looked up in PATH.
func lookPath(name, workDir string) (string, error) {
	if strings.Contains(name, "/") {
		p := name
		if !filepath.IsAbs(p) {
			p = filepath.Join(workDir, p)
		}
		if st, err := os.Stat(p); err != nil || st.IsDir() || st.Mode()&0o111 == 0 {
			return "", fmt.Errorf("command %q: no executable file %s: check the path", name, p)
		}
		return p, nil
	}
	p, err := exec.LookPath(name)
	if err != nil {
		return "", fmt.Errorf("command %q not found in PATH: install it or give its path", name)
	}
	return p, nil
}
