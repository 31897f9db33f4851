package rundir

import (
	"path/filepath"
	"testing"
	"time"
)

func TestNewNeverReuses(t *testing.T) {
	parent := t.TempDir()
	now := time.Date(2026, 11, 29, 17, 0, 0, 0, time.UTC)
	seen := map[string]bool{}
	for i := 0; i < 3; i++ {
		d, err := New(parent, "bench-", now)
		if err != nil {
			t.Fatal(err)
		}
		if seen[d] {
			t.Fatalf("run directory %s handed out twice", d)
		}
		seen[d] = true
	}
	for _, want := range []string{"bench-20261129-170000", "bench-20261129-170000-2", "bench-20261129-170000-3"} {
		if !seen[filepath.Join(parent, want)] {
			t.Errorf("want %s among %v", want, seen)
		}
	}
}
