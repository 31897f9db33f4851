package procs

import (
	"os"
	"testing"
	"time"
)

func TestParseCPU(t *testing.T) {
	// A real line of a kube-apiserver, whose comm here holds a space and a ')' to be safe.
	line := "4242 (kube api)server) S 1 4242 4242 0 -1 4194560 81266 0 0 0 1234 567 0 0 20 0 17 0 123 1900000000 90000 18446744073709551615 1 1 0 0 0 0 0 0 2143420159 0 0 0 17 1 0 0 0 0 0\n"
	got, err := parseCPU(line)
	if want := 18010 * time.Millisecond; err != nil || got != want {
		t.Errorf("parseCPU = %v, %v; want %v (utime 1234 + stime 567 ticks at 100 Hz)", got, err, want)
	}
	if _, err := parseCPU("1 (x) S 1 2"); err == nil {
		t.Error("parseCPU of a short line: no error")
	}
}

func TestReadCPUOfItself(t *testing.T) {
	before, err := ReadCPU(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	// Spin until the kernel has counted 50 ms more: on a loaded machine that takes longer than
	// 50 ms of wall time, never 10 s.
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		now, err := ReadCPU(os.Getpid())
		if err != nil {
			t.Fatal(err)
		}
		if now-before >= 50*time.Millisecond {
			return
		}
	}
	t.Error("10 s of busy loop and less than 50 ms of CPU counted")
}
