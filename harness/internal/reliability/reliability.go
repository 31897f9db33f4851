// Package reliability is the suite that runs the harness and the labs into faults, bad input
// and long runs, as real processes, and checks what a user would: the exit code, a clear
// one-line error, the logs kept, and no process left behind.
package reliability

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"syscall"
	"time"

	"informer-lab/harness/internal/labproc"
	"informer-lab/lab/gobuild"
	"informer-lab/lab/process"
	"informer-lab/lab/procs"
	"informer-lab/lab/reaper"
	"informer-lab/record"
)

// Env is what the scenarios run: the harness binary, lab binaries, and where runs go.
type Env struct {
	Root    string // repository root
	Harness string // harness binary
	Compare string // compare binary
	Labs    map[string]string
	Out     string // parent of the run directories
	Tmp     string
	Soak    time.Duration // how long each lab runs alone in the long-run scenario
}

// Result is one scenario's outcome.
type Result struct {
	Name, Group, Expected, Observed string
	Pass                            bool
	Took                            time.Duration
}

// Scenario is one check.
type Scenario struct {
	Name, Group, Expected string
	Run                   func(ctx context.Context, e *Env) (observed string, err error)
}

// Prepare builds the harness, compare and the two lab modules the scenarios run (GOWORK=off,
// into the checkout's binary cache, where an unchanged module is not linked again); the runs
// write into tmp.
func Prepare(ctx context.Context, root, tmp string) (*Env, error) {
	e := &Env{Root: root, Labs: map[string]string{}, Out: filepath.Join(tmp, "out"), Tmp: tmp, Soak: time.Minute}
	var err error
	if e.Harness, err = gobuild.Cached(ctx, filepath.Join(root, "harness")); err != nil {
		return nil, err
	}
	if e.Compare, err = gobuild.Cached(ctx, filepath.Join(root, "compare")); err != nil {
		return nil, err
	}
	for _, lab := range []string{"client-v031", "client-v032"} {
		bin, _, err := labproc.Build(ctx, filepath.Join(root, lab))
		if err != nil {
			return nil, err
		}
		e.Labs[lab] = bin
	}
	return e, nil
}

// RunAll runs the scenarios one after another (they share two cores), printing progress.
func RunAll(ctx context.Context, e *Env, scenarios []Scenario, progress io.Writer) []Result {
	var results []Result
	for i, s := range scenarios {
		fmt.Fprintf(progress, "[%d/%d] %s: %s ... ", i+1, len(scenarios), s.Group, s.Name)
		start := time.Now()
		observed, err := runClean(ctx, e, s)
		r := Result{Name: s.Name, Group: s.Group, Expected: s.Expected, Observed: observed, Pass: err == nil, Took: time.Since(start)}
		if err != nil {
			r.Observed = strings.TrimSpace(observed + " FAILED: " + err.Error())
		}
		fmt.Fprintf(progress, "%s (%s)\n", map[bool]string{true: "pass", false: "FAIL"}[r.Pass], r.Took.Round(time.Second))
		results = append(results, r)
	}
	return results
}

// runClean runs one scenario with a temporary directory of its own (TMPDIR, which every process
// it starts inherits), and checks that whatever the scenario did, nothing it started outlived it
// nor left a file there: etcd's data and the kubeconfigs hold credentials.
func runClean(ctx context.Context, e *Env, s Scenario) (string, error) {
	tmp, err := os.MkdirTemp(e.Tmp, "tmp-")
	if err != nil {
		return "", err
	}
	defer os.Setenv("TMPDIR", os.Getenv("TMPDIR"))
	os.Setenv("TMPDIR", tmp)
	observed, err := s.Run(ctx, e)
	if left := procs.WaitNoChildren(10*time.Second, reaper.PID()); len(left) > 0 { // its reaper lives as long as it does
		if err == nil {
			err = fmt.Errorf("processes left behind: %s", strings.Join(left, "; "))
		}
		for _, l := range left {
			var pid int
			fmt.Sscanf(l, "%d", &pid)
			syscall.Kill(pid, syscall.SIGKILL)
		}
	}
	if files, _ := os.ReadDir(tmp); len(files) > 0 && err == nil {
		var names []string
		for _, f := range files {
			names = append(names, f.Name())
		}
		err = fmt.Errorf("left in the temporary directory: %s", strings.Join(names, ", "))
	}
	return observed, err
}

// proc is a finished (or killed) process's output.
type proc struct {
	code           int
	stdout, stderr string
}

// run runs bin with args to completion (bounded by timeout).
// twoLabs are the labs of every harness run here: faults, bad input and credentials do not
// depend on how many lab modules there are, and two keep the suite's time flat as modules come.
const twoLabs = "client-v031,client-v032"

func run(ctx context.Context, timeout time.Duration, bin string, args ...string) proc {
	var o, e bytes.Buffer
	p, err := process.Start(exec.Command(bin, args...), process.Options{What: filepath.Base(bin),
		Stdout: func(l []byte) { o.Write(l) }, Stderr: func(l []byte) { e.Write(l) }})
	if err != nil {
		return proc{code: -1, stderr: err.Error()}
	}
	select {
	case <-p.Done():
	case <-ctx.Done():
	case <-time.After(timeout):
	}
	p.Stop(20 * time.Second) // SIGINT, as Ctrl-C: it stops what it started
	_, werr := p.Exited()
	r := proc{stdout: o.String(), stderr: e.String()}
	if ee, ok := werr.(*exec.ExitError); ok {
		r.code = ee.ExitCode()
	} else if werr != nil {
		r.code = -1
		r.stderr += "\n" + werr.Error()
	}
	return r
}

var panicked = regexp.MustCompile(`(?m)^(panic:|goroutine \d+ \[)`)

// badInput checks the answer to bad input: the wanted exit code, one line on stderr starting
// "error:" that contains want, and no panic.
func badInput(p proc, code int, want string) (string, error) {
	lines := nonEmpty(p.stderr)
	var errLines []string
	for _, l := range lines {
		if strings.HasPrefix(l, "error:") {
			errLines = append(errLines, l)
		}
	}
	observed := fmt.Sprintf("exit %d", p.code)
	if len(errLines) > 0 {
		observed += ": " + clip(errLines[0], 160)
	}
	switch {
	case panicked.MatchString(p.stderr):
		return observed, fmt.Errorf("panicked")
	case p.code != code:
		return observed, fmt.Errorf("exit %d, want %d; stderr: %s", p.code, code, clip(p.stderr, 400))
	case len(errLines) != 1:
		return observed, fmt.Errorf("want exactly one error line, got %d: %s", len(errLines), clip(p.stderr, 400))
	case !strings.Contains(errLines[0], want):
		return observed, fmt.Errorf("error line lacks %q", want)
	}
	return observed, nil
}

func nonEmpty(s string) []string {
	var out []string
	for _, l := range strings.Split(s, "\n") {
		if strings.TrimSpace(l) != "" {
			out = append(out, l)
		}
	}
	return out
}

func clip(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) > n {
		return s[:n] + "…"
	}
	return s
}

// runDir returns the run directory a harness printed on its last stderr line.
func runDir(p proc) string {
	for _, l := range nonEmpty(p.stderr) {
		if d, ok := strings.CutPrefix(l, "run directory: "); ok {
			return strings.TrimSpace(d)
		}
	}
	return ""
}

// credentialMarks are what key material, certificates and tokens look like in a file.
var credentialMarks = []string{"PRIVATE KEY", "BEGIN CERTIFICATE", "LS0tLS1CRUdJTi", "client-key-data", "client-certificate-data", "Bearer ", "Authorization"}

// scanCredentials returns the files under dir that hold credential material.
func scanCredentials(dir string) []string {
	var bad []string
	filepath.Walk(dir, func(path string, info os.FileInfo, err error) error {
		if err != nil || info.IsDir() {
			return nil
		}
		b, _ := os.ReadFile(path)
		for _, m := range credentialMarks {
			if bytes.Contains(b, []byte(m)) {
				bad = append(bad, fmt.Sprintf("%s (%q)", path, m))
			}
		}
		return nil
	})
	return bad
}

// startUntil starts bin and returns once a line of its output contains marker: a line of
// stderr, or of stdout when the marker starts with "stdout:". The lines seen so far are in the
// buffer, to be read once the process is done.
func startUntil(bin string, marker string, timeout time.Duration, args ...string) (*process.Process, *bytes.Buffer, error) {
	var seen bytes.Buffer
	found := make(chan struct{})
	var once sync.Once
	watch := func(l []byte) {
		seen.Write(l)
		if strings.Contains(string(l), marker) {
			once.Do(func() { close(found) })
		}
	}
	opts := process.Options{What: filepath.Base(bin), Stderr: watch}
	if m, ok := strings.CutPrefix(marker, "stdout:"); ok {
		marker = m
		opts = process.Options{What: filepath.Base(bin), Stdout: watch, Stderr: func([]byte) {}}
	}
	p, err := process.Start(exec.Command(bin, args...), opts)
	if err != nil {
		return nil, nil, err
	}
	select {
	case <-found:
		return p, &seen, nil
	case <-p.Done():
		return p, &seen, fmt.Errorf("%s ended before printing %q", filepath.Base(bin), marker)
	case <-time.After(timeout):
		p.Signal(syscall.SIGKILL)
		<-p.Done()
		return p, &seen, fmt.Errorf("%s did not print %q within %s", filepath.Base(bin), marker, timeout)
	}
}

// readLog reads a run's JSON-lines log, as compare would.
func readLog(path string) ([]record.Record, error) { return record.ReadFile(path) }

// childRunning waits for a child of process parent whose binary's path ends in suffix and
// that has an argument starting with arg, and says which it is.
func childRunning(parent int, suffix, arg string, timeout time.Duration) (string, error) {
	for deadline := time.Now().Add(timeout); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		for _, pid := range procs.ChildrenOf(parent) {
			args := strings.Split(procs.Cmdline(pid), "\x00")
			if strings.HasSuffix(args[0], suffix) && slices.ContainsFunc(args, func(a string) bool { return strings.HasPrefix(a, arg) }) {
				return fmt.Sprintf("%s (pid %d)", filepath.Base(args[0]), pid), nil
			}
		}
	}
	return "", fmt.Errorf("no child of pid %d ran *%s with %s within %s", parent, suffix, arg, timeout)
}
