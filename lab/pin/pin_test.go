package pin

import (
	"runtime/debug"
	"strings"
	"testing"
)

func TestPinned(t *testing.T) {
	for _, tc := range []struct{ gomod, want, err string }{
		{"module x\n\nrequire (\n\tk8s.io/client-go v0.31.14 // indirect\n)\n", "v0.31.14", ""},
		{"module x\nrequire k8s.io/client-go v0.32.13\n", "v0.32.13", ""},
		{"module x\nrequire k8s.io/client-gox v1.0.0\n", "", "does not require k8s.io/client-go"},
	} {
		got, err := Pinned([]byte(tc.gomod))
		if got != tc.want || (err == nil) != (tc.err == "") || (err != nil && !strings.Contains(err.Error(), tc.err)) {
			t.Errorf("Pinned(%q) = %q, %v; want %q, %q", tc.gomod, got, err, tc.want, tc.err)
		}
	}
}

func TestLinkedIn(t *testing.T) {
	bi := &debug.BuildInfo{Path: "x", Deps: []*debug.Module{{Path: "k8s.io/client-go", Version: "v0.32.13"}}}
	if v, _ := LinkedIn(bi); v != "v0.32.13" {
		t.Errorf("got %s", v)
	}
	bi.Deps[0].Replace = &debug.Module{Path: "k8s.io/client-go", Version: "v0.31.14"}
	if v, _ := LinkedIn(bi); v != "v0.31.14" {
		t.Errorf("a replace must win, got %s", v)
	}
	if _, err := LinkedIn(&debug.BuildInfo{Path: "x"}); err == nil {
		t.Error("no client-go linked: want an error")
	}
}

func TestMismatchSaysWhatToRun(t *testing.T) {
	msg := (&MismatchError{Linked: "v0.32.13", Pinned: "v0.31.14", ModuleDir: "/repo/client-v031"}).Error()
	if !strings.Contains(msg, "cd /repo/client-v031 && GOWORK=off go run .") {
		t.Errorf("message lacks the command that works: %s", msg)
	}
}
