package observe

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"informer-lab/lab/process"
)

// command is the observed command, running in a process group of its own.
type command struct {
	*process.Process
	name string
}

// startCommand runs argv (argv[0] the executable's path) in workDir with KUBECONFIG set to
// kubeconfig (and KubeconfigArg in its arguments replaced by it). Its output goes to cmd.stdout
// and cmd.stderr in the run directory and, line by line, to the terminal.
func startCommand(argv []string, kubeconfig, workDir, dir string, term io.Writer) (*command, error) {
	args := make([]string, len(argv)-1)
	for i, a := range argv[1:] {
		args[i] = strings.ReplaceAll(a, KubeconfigArg, kubeconfig)
	}
	cmd := exec.Command(argv[0], args...)
	cmd.Dir = workDir
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	var files []*os.File
	var tees []func([]byte)
	for _, stream := range []string{"stdout", "stderr"} {
		f, err := os.Create(filepath.Join(dir, "cmd."+stream))
		if err != nil {
			closeAll(files)
			return nil, fmt.Errorf("observed command's %s: %w", stream, err)
		}
		files = append(files, f)
		tees = append(tees, func(line []byte) {
			f.Write(line)
			fmt.Fprintf(term, "[CMD] %s\n", strings.TrimRight(string(line), "\n"))
		})
	}
	name := filepath.Base(argv[0])
	p, err := process.Start(cmd, process.Options{What: "observed command " + name, Group: true, Stdout: tees[0], Stderr: tees[1]})
	if err != nil {
		closeAll(files)
		return nil, err
	}
	go func() {
		<-p.Done()
		closeAll(files)
	}()
	return &command{Process: p, name: name}, nil
}

func closeAll(files []*os.File) {
	for _, f := range files {
		f.Close()
	}
}

// how says how the command ended.
func (c *command) how() string {
	if _, err := c.Exited(); err != nil {
		return err.Error()
	}
	return "exit 0"
}

// stop asks the command's whole group to stop (SIGINT, what Ctrl-C at a terminal sends it),
// then kills the group after grace. A second call does nothing.
func (c *command) stop(grace time.Duration, say func(string, ...any)) {
	if err := c.Stop(grace); errors.Is(err, process.ErrKilled) {
		say("%s did not stop within %s after SIGINT: killed", c.name, grace)
	}
}
