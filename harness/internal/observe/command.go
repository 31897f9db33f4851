package observe

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"time"

	"informer-lab/harness/internal/labproc"
)

// command is the observed command, running in a process group of its own.
type command struct {
	cmd  *exec.Cmd
	done chan struct{} // closed once it exited and its output was copied
	err  error
	once sync.Once
}

// startCommand runs argv (argv[0] the executable's path) in workDir with KUBECONFIG set to
// kubeconfig (and KubeconfigArg in its arguments replaced by it). Its output goes to cmd.stdout and cmd.stderr in the run
// directory and, line by line, to the terminal.
func startCommand(argv []string, kubeconfig, workDir, dir string, term io.Writer) (*command, error) {
	args := make([]string, len(argv)-1)
	for i, a := range argv[1:] {
		args[i] = strings.ReplaceAll(a, KubeconfigArg, kubeconfig)
	}
	path := argv[0]
	cmd := exec.Command(path, args...)
	cmd.Dir = workDir
	cmd.Env = append(os.Environ(), "KUBECONFIG="+kubeconfig)
	var copies sync.WaitGroup
	for _, s := range []struct {
		name string
		pipe func() (io.ReadCloser, error)
	}{{"stdout", cmd.StdoutPipe}, {"stderr", cmd.StderrPipe}} {
		r, err := s.pipe()
		if err != nil {
			return nil, err
		}
		f, err := os.Create(filepath.Join(dir, "cmd."+s.name))
		if err != nil {
			return nil, err
		}
		copies.Add(1)
		go func() {
			defer copies.Done()
			defer f.Close()
			sc := bufio.NewScanner(r)
			sc.Buffer(make([]byte, 64<<10), 1<<20)
			for sc.Scan() {
				fmt.Fprintln(f, sc.Text())
				fmt.Fprintf(term, "[CMD] %s\n", sc.Text())
			}
		}()
	}
	if err := labproc.Spawn(cmd, "observed command "+filepath.Base(path), true); err != nil {
		return nil, err
	}
	c := &command{cmd: cmd, done: make(chan struct{})}
	go func() {
		copies.Wait() // the pipes must be read to the end before Wait closes them
		c.err = cmd.Wait()
		close(c.done)
	}()
	return c, nil
}

// how says how the command ended.
func (c *command) how() string {
	if c.err == nil {
		return "exit 0"
	}
	return c.err.Error()
}

// stop asks the command's whole group to stop (SIGINT, what Ctrl-C at a terminal sends it),
// then kills the group after grace. A second call does nothing.
func (c *command) stop(grace time.Duration, say func(string, ...any)) {
	c.once.Do(func() {
		select {
		case <-c.done:
			return
		default:
		}
		pgid := c.cmd.Process.Pid
		syscall.Kill(-pgid, syscall.SIGINT)
		select {
		case <-c.done:
		case <-time.After(grace):
			say("%s did not stop within %s after SIGINT: killed", filepath.Base(c.cmd.Path), grace)
			syscall.Kill(-pgid, syscall.SIGKILL)
			<-c.done
		}
		// What the command left in its group (a child that ignored SIGINT) goes too.
		syscall.Kill(-pgid, syscall.SIGKILL)
	})
}
