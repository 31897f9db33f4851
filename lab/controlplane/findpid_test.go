package controlplane

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestFindPID(t *testing.T) {
	proc := t.TempDir()
	write := func(pid string, args ...string) {
		os.MkdirAll(filepath.Join(proc, pid), 0o755)
		os.WriteFile(filepath.Join(proc, pid, "cmdline"), []byte(strings.Join(args, "\x00")+"\x00"), 0o644)
	}
	write("100", "/bin/kube-apiserver", "--etcd-servers=http://127.0.0.1:2379", "--secure-port=6443")
	write("101", "/bin/kube-apiserver", "--secure-port=7443") // another envtest's apiserver
	write("102", "/bin/etcd", "--secure-port=6443")           // another binary
	os.MkdirAll(filepath.Join(proc, "self"), 0o755)

	if pid, err := FindPID(proc, "/bin/kube-apiserver", "--secure-port=6443"); err != nil || pid != 100 {
		t.Errorf("FindPID = %d, %v; want 100", pid, err)
	}
	if _, err := FindPID(proc, "/bin/kube-apiserver", "--secure-port=8443"); err == nil {
		t.Error("FindPID of a port nobody serves: no error")
	}
	write("103", "/bin/kube-apiserver", "--secure-port=6443")
	if _, err := FindPID(proc, "/bin/kube-apiserver", "--secure-port=6443"); err == nil || !strings.Contains(err.Error(), "2 processes") {
		t.Errorf("FindPID with two matches: %v, want an error saying so", err)
	}
}
