package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// compare -findings DOCS_DIR writes findings.md and the pages' findings sections, and prints the
// findings; a directory without results is unusable input.
func TestFindingsCLI(t *testing.T) {
	docs := t.TempDir()
	write(t, filepath.Join(docs, "faults.md"), "# faults\n\n## Findings\n\n- None: all 2 cells agree\n")
	data, err := os.ReadFile(filepath.Join("..", "docs", "faults", "faults.json"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(docs, "faults"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(docs, "faults", "faults.json"), string(data))
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-findings", docs}, &stdout, &stderr); code != 0 || stderr.Len() > 0 {
		t.Fatalf("want exit 0, got %d: %s", code, stderr.String())
	}
	if !strings.Contains(stdout.String(), "- never syncs: 102 setups (45 at client-go's default gate) in 102 cells;") || !strings.HasSuffix(stdout.String(), "wrote findings.md, faults.md\n") {
		t.Errorf("want the findings and the files written, got:\n%s", stdout.String())
	}
	page, _ := os.ReadFile(filepath.Join(docs, "faults.md"))
	if !strings.HasPrefix(string(page), "# faults\n\n## Findings\n\n- 🔴 never syncs: 102 setups") || strings.Contains(string(page), "None") {
		t.Errorf("want the page's findings section replaced, got:\n%s", page)
	}
	stdout.Reset()
	if code := run([]string{"-findings", docs}, &stdout, &stderr); code != 0 || !strings.HasSuffix(stdout.String(), "findings.md and every findings section already say so\n") {
		t.Errorf("want nothing more to write, got %d:\n%s", code, stdout.String())
	}
	for _, args := range [][]string{{"-findings"}, {"-findings", "-detail", docs}, {"-findings", t.TempDir()}} {
		stderr.Reset()
		if code := run(args, &stdout, &stderr); code != 2 || !strings.HasPrefix(stderr.String(), "error: ") {
			t.Errorf("run(%q): want exit 2 and an error, got %d: %q", args, code, stderr.String())
		}
	}
}
