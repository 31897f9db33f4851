package main

import (
	"bytes"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"informer-lab/compare/matrix"
)

// saveMatrix writes a one-cell matrix result with the given verdict.
func saveMatrix(t *testing.T, verdict string) string {
	t.Helper()
	r := &matrix.Result{Schema: matrix.Schema, Scenarios: []string{"startup"}, Servers: []matrix.Server{{Name: "1.32.13", Version: "v1.32.13"}},
		Clients: []matrix.Client{{Name: "client-v031-off", Module: "client-v031", Gate: "off"}},
		Cells:   []matrix.Cell{{Scenario: "startup", Server: "1.32.13", Client: "client-v031-off", Verdict: verdict, Expected: "LIST→WATCH", Agrees: verdict == "LIST→WATCH (2 req)"}}}
	file := filepath.Join(t.TempDir(), "matrix.json")
	if err := r.Save(file); err != nil {
		t.Fatal(err)
	}
	return file
}

func TestMatrixDiffCLI(t *testing.T) {
	old := saveMatrix(t, "LIST→WATCH (2 req)")
	same := saveMatrix(t, "LIST→WATCH (2 req)")
	changed := saveMatrix(t, "STREAM (1 req)")
	notJSON := filepath.Join(t.TempDir(), "x.json")
	write(t, notJSON, "nope")
	tests := []struct {
		name       string
		args       []string
		wantCode   int
		wantOut    string // substring of stdout
		wantStderr string // regexp of the one stderr line
	}{
		{"equal", []string{"-matrix", old, same}, 0, "matrix results alike: 1 cells, no difference", ""},
		{"different", []string{"-matrix", old, changed}, 1,
			"matrix results differ (2):\n- startup | 1.32.13 | client-v031-off: verdict \"LIST→WATCH (2 req)\" → \"STREAM (1 req)\"\n- startup | 1.32.13 | client-v031-off: agrees with the expectation true → false\n", ""},
		{"one file", []string{"-matrix", old}, 2, "", `^error: usage: compare`},
		{"with -o", []string{"-matrix", "-o", "x", old, same}, 2, "", `^error: usage: compare`},
		{"missing file", []string{"-matrix", old, filepath.Join(t.TempDir(), "nope.json")}, 2, "", `^error: open .*nope\.json: no such file or directory$`},
		{"not a result", []string{"-matrix", notJSON, old}, 2, "", `^error: .*x\.json: not a matrix result: invalid character`},
		{"a run directory", []string{"-matrix", synthetic, old}, 2, "", `^error: read .*synthetic: is a directory$`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(tt.args, &stdout, &stderr)
			if code != tt.wantCode {
				t.Fatalf("want exit %d, got %d; stdout %q stderr %q", tt.wantCode, code, stdout.String(), stderr.String())
			}
			if !strings.Contains(stdout.String(), tt.wantOut) {
				t.Errorf("want stdout containing %q, got %q", tt.wantOut, stdout.String())
			}
			if tt.wantStderr == "" {
				if stderr.Len() > 0 {
					t.Errorf("want no stderr, got %q", stderr.String())
				}
				return
			}
			first := strings.SplitN(stderr.String(), "\n", 2)[0]
			if !regexp.MustCompile(tt.wantStderr).MatchString(first) {
				t.Errorf("want stderr matching %q, got %q", tt.wantStderr, stderr.String())
			}
			if !strings.HasPrefix(tt.wantStderr, "^error: usage") && strings.Count(stderr.String(), "\n") != 1 {
				t.Errorf("want one stderr line, got %q", stderr.String())
			}
		})
	}
}
