package procs

import (
	"encoding/binary"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
)

// macOS's readers, run here through Linux's procps (ps.go): the same flags mean the same there.

func TestPsAgreesWithProc(t *testing.T) {
	me := os.Getpid()
	if !psAlive(me) {
		t.Error("psAlive(this process) = false")
	}
	m, err := psMem(me)
	if err != nil {
		t.Fatal(err)
	}
	if m.RSS <= 0 || m.HWM != -1 {
		t.Errorf("psMem = %+v, want RSS > 0 and HWM -1 (not measured)", m)
	}
	if _, err := psCPU(me); err != nil {
		t.Error(err)
	}

	sleep := exec.Command("sleep", "60")
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	pid := sleep.Process.Pid
	kids := psChildren(me)
	if !slices.Contains(kids, psChild{pid: pid}) {
		t.Errorf("psChildren = %v, want the sleep %d among them", kids, pid)
	}
	all, err := psPids()
	if err != nil || !slices.Contains(all, pid) {
		t.Errorf("psPids = %d pids, %v; want the sleep %d among them", len(all), err, pid)
	}
	sleep.Process.Kill()
	// Killed but not waited for: a zombie, which is not alive.
	deadline := time.Now().Add(5 * time.Second)
	for psAlive(pid) && time.Now().Before(deadline) {
		time.Sleep(20 * time.Millisecond)
	}
	if psAlive(pid) {
		t.Errorf("psAlive(killed sleep) = true")
	}
	if !slices.Contains(psChildren(me), psChild{pid: pid, zombie: true}) {
		t.Errorf("psChildren does not show the killed sleep %d as a zombie", pid)
	}
	sleep.Wait()
	if _, err := psMem(pid); err == nil {
		t.Error("psMem of a process that is gone: no error")
	}
}

func TestParsePsTime(t *testing.T) {
	for in, want := range map[string]time.Duration{
		"00:00:01":    time.Second, // procps
		"1-02:03:04":  26*time.Hour + 3*time.Minute + 4*time.Second,
		"0:01.23":     1230 * time.Millisecond, // macOS
		"12:03:04.50": 12*time.Hour + 3*time.Minute + 4500*time.Millisecond,
	} {
		if got, err := parsePsTime(in); err != nil || got != want {
			t.Errorf("parsePsTime(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, bad := range []string{"", "12", "a:b", "1:2:3:4"} {
		if _, err := parsePsTime(bad); err == nil {
			t.Errorf("parsePsTime(%q): no error", bad)
		}
	}
}

// kern.procargs2 cannot be asked on Linux; its layout is parsed from a buffer built as
// macOS's kernel lays it out.
func TestParseProcArgs2(t *testing.T) {
	args := []string{"/Users/me/Library/Application Support/io.kubebuilder.envtest/k8s/1.32.13-darwin-arm64/kube-apiserver", "--secure-port=6443", ""}
	buf := binary.NativeEndian.AppendUint32(nil, uint32(len(args)))
	buf = append(buf, args[0]...)
	buf = append(buf, 0, 0, 0, 0)
	for _, a := range args {
		buf = append(buf, a...)
		buf = append(buf, 0)
	}
	buf = append(buf, "HOME=/Users/me\x00"...)
	got, err := parseProcArgs2(buf)
	if err != nil || !slices.Equal(got, args) {
		t.Errorf("parseProcArgs2 = %q, %v; want %q", got, err, args)
	}
	if _, err := parseProcArgs2(buf[:len(buf)-40]); err == nil {
		t.Error("parseProcArgs2 of a cut buffer: no error")
	}
}

func TestFindIn(t *testing.T) {
	proc := t.TempDir()
	write := func(pid string, args ...string) {
		os.MkdirAll(filepath.Join(proc, pid), 0o755)
		os.WriteFile(filepath.Join(proc, pid, "cmdline"), []byte(strings.Join(args, "\x00")+"\x00"), 0o644)
	}
	write("100", "/bin/kube-apiserver", "--etcd-servers=http://127.0.0.1:2379", "--secure-port=6443")
	write("101", "/bin/kube-apiserver", "--secure-port=7443") // another envtest's apiserver
	write("102", "/bin/etcd", "--secure-port=6443")           // another binary
	os.MkdirAll(filepath.Join(proc, "self"), 0o755)
	if got, err := findIn(proc, "/bin/kube-apiserver", "--secure-port=6443"); err != nil || !slices.Equal(got, []int{100}) {
		t.Errorf("findIn = %v, %v; want [100]", got, err)
	}
	none, _ := findIn(proc, "/bin/kube-apiserver", "--secure-port=8443")
	if _, err := one(none, "/bin/kube-apiserver", "--secure-port=8443"); err == nil {
		t.Errorf("FindOne of a port nobody serves: no error")
	}
	write("103", "/bin/kube-apiserver", "--secure-port=6443")
	two, _ := findIn(proc, "/bin/kube-apiserver", "--secure-port=6443")
	if _, err := one(two, "/bin/kube-apiserver", "--secure-port=6443"); err == nil || !strings.Contains(err.Error(), "2 processes") {
		t.Errorf("FindOne with two matches: %v, want an error saying so", err)
	}
}

// FindOne is what controlplane uses, through /proc here and ps + sysctl on macOS.
func TestFindItself(t *testing.T) {
	// sh stays (": " after sleep), with the marker as its $0: sleep would reject it as a duration.
	sleep := exec.Command("sh", "-c", "sleep 60; :", "informer-lab-find-me")
	sleep.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // its sleep goes with it
	if err := sleep.Start(); err != nil {
		t.Fatal(err)
	}
	defer func() { syscall.Kill(-sleep.Process.Pid, syscall.SIGKILL); sleep.Wait() }()
	// argv[0] as it was given. Polled: a loaded machine may show the child's new command line late.
	var got int
	var err error
	for deadline := time.Now().Add(5 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		if got, err = FindOne("sh", "informer-lab-find-me"); err == nil {
			break
		}
	}
	if err != nil || got != sleep.Process.Pid {
		t.Errorf("FindOne = %v, %v; want %d", got, err, sleep.Process.Pid)
	}
}
