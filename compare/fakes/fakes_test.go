package fakes

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// The page of two real -fakes runs (make fakes, client-v034 and client-v035): the release that
// made the client-go fakes opt out of streaming lists, and the one before.
func TestRenderRealRuns(t *testing.T) {
	labs, err := Load(filepath.Join("..", "testdata", "fakes"))
	if err != nil {
		t.Fatal(err)
	}
	if len(labs) != 2 || labs[0].ClientGo != "v0.34.13" || labs[1].ClientGo != "v0.35.10" || labs[1].ControllerRuntime != "v0.23.3" {
		t.Fatalf("loaded %+v, want client-v034 then client-v035 with their versions", labs)
	}
	page, err := Render(labs)
	if err != nil {
		t.Fatal(err)
	}
	on := page[strings.Index(page, "WatchListClient **on**"):strings.Index(page, "## What client-go logs")]
	for _, want := range []string{
		"| `typed-fake` | **never** (12.", // v0.34: the fake cannot say it does not stream
		"| `old-informer-gen` | **never** (12.0",
	} {
		if !strings.Contains(on, want) {
			t.Errorf("gate-on table lacks %q:\n%s", want, on)
		}
	}
	if row := line(on, "| `typed-fake` |"); strings.Count(row, "**never**") != 1 {
		t.Errorf("typed-fake with the gate on: want it stalled on v0.34 only, got %s", row)
	}
	logs := page[strings.Index(page, "## What client-go logs"):strings.Index(page, "## The one-line fix")]
	for _, want := range []string{
		"| `typed-fake` | on | client-v034 | `\"Warning: event bookmark expired\" err=\"…: awaiting required bookmark event for initial events stream, no events received for …\"` |",
		"| `typed-fake` | on | client-v035 | `\"The provided ListWatcher doesn't support WatchList semantics.",
		"| `controller-runtime-informertest` | on | client-v034, client-v035 | nothing |",
		"With the gate off, no stand-in logged more than those lines, on any version.",
	} {
		if !strings.Contains(logs, want) {
			t.Errorf("log table lacks %q:\n%s", want, logs)
		}
	}
}

func TestLoadRefusesADirectoryWithoutRuns(t *testing.T) {
	dir := t.TempDir()
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "*.jsonl: run make fakes") {
		t.Errorf("empty directory: got %v", err)
	}
	if err := os.WriteFile(filepath.Join(dir, "x.jsonl"), []byte(`{"schema":1,"time":"2026-12-03T15:34:00Z","source":"client-v035","kind":"SETUP","step":"client-go","value":"v0.35.10"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(dir); err == nil || !strings.Contains(err.Error(), "not a lab -fakes run") {
		t.Errorf("a lab log without fake records: got %v", err)
	}
}

func line(text, prefix string) string {
	for _, l := range strings.Split(text, "\n") {
		if strings.HasPrefix(l, prefix) {
			return l
		}
	}
	return ""
}
