package procs

import (
	"strings"
	"testing"
)

func TestParseStatus(t *testing.T) {
	status := "Name:\tkube-apiserver\nVmPeak:\t 2125504 kB\nVmHWM:\t  832244 kB\nVmRSS:\t  219944 kB\nThreads:\t12\n"
	got, err := parseStatus(strings.NewReader(status))
	if want := (Mem{RSS: 219944 << 10, HWM: 832244 << 10}); err != nil || got != want {
		t.Errorf("parseStatus = %+v, %v; want %+v", got, err, want)
	}
	if _, err := parseStatus(strings.NewReader("Name:\tkthreadd\n")); err == nil {
		t.Error("parseStatus of a kernel thread's status: no error")
	}
}
