//go:build !unix

package envtestbin

import (
	"context"
	"errors"
	"os"
	"os/exec"
)

// Building needs flock and statfs; the control-plane binaries are unix-only
// anyway (envtest on Windows uses other assets).
func lockStore(ctx context.Context, path string, waiting func(string)) (func(), error) {
	return nil, errors.New("envtestbin: building is only supported on unix; set KUBEBUILDER_ASSETS")
}

func freeBytes(path string) (uint64, error) { return 0, errors.ErrUnsupported }

func interruptGroup(cmd *exec.Cmd) {
	cmd.Cancel = func() error { return cmd.Process.Signal(os.Interrupt) }
}
