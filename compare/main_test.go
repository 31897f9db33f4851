package main

import (
	"bytes"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

var update = flag.Bool("update", false, "rewrite testdata/runs/*/want.txt")

const synthetic = "testdata/runs/synthetic"

// copyRun copies the synthetic run into a temp dir, for a test to break.
func copyRun(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for _, name := range []string{"harness.jsonl", "client-v031.jsonl", "client-v032.jsonl"} {
		data, err := os.ReadFile(filepath.Join(synthetic, name))
		if err != nil {
			t.Fatal(err)
		}
		write(t, filepath.Join(dir, name), string(data))
	}
	return dir
}

func write(t *testing.T, path, data string) {
	t.Helper()
	if err := os.WriteFile(path, []byte(data), 0o644); err != nil {
		t.Fatal(err)
	}
}

func read(t *testing.T, path string) string {
	t.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(data)
}

func TestRunExitCodes(t *testing.T) {
	tests := []struct {
		name     string
		args     func(t *testing.T) []string
		wantCode int
		wantErr  string // regexp the one stderr line must match
	}{
		{"verdict holds", func(t *testing.T) []string { return []string{synthetic} }, 0, ``},
		{"no argument", func(t *testing.T) []string { return nil }, 2, `usage: compare`},
		{"missing dir", func(t *testing.T) []string { return []string{filepath.Join(t.TempDir(), "nope")} }, 2,
			`^error: run directory: stat .*nope: no such file or directory$`},
		{"no harness log", func(t *testing.T) []string {
			dir := copyRun(t)
			os.Remove(filepath.Join(dir, "harness.jsonl"))
			return []string{dir}
		}, 2, `: no harness\.jsonl: not a run directory`},
		{"no lab logs", func(t *testing.T) []string {
			dir := copyRun(t)
			os.Remove(filepath.Join(dir, "client-v031.jsonl"))
			os.Remove(filepath.Join(dir, "client-v032.jsonl"))
			write(t, filepath.Join(dir, "client-v031.stderr"), "ignored\n")
			return []string{dir}
		}, 2, `: no lab logs \(<lab>\.jsonl\) beside harness\.jsonl$`},
		{"empty lab log", func(t *testing.T) []string {
			dir := copyRun(t)
			write(t, filepath.Join(dir, "client-v032.jsonl"), "")
			return []string{dir}
		}, 2, `client-v032\.jsonl:1: no records$`},
		{"truncated last line", func(t *testing.T) []string {
			dir := copyRun(t)
			p := filepath.Join(dir, "client-v031.jsonl")
			data := read(t, p)
			write(t, p, data+`{"schema":1,"time":"2025-01-02T03:04:06Z","source":"client-v031","kind":"HAND`)
			return []string{dir}
		}, 2, `client-v031\.jsonl:` + strconv.Itoa(strings.Count(read(t, filepath.Join(synthetic, "client-v031.jsonl")), "\n")+1) + `: truncated last line`},
		{"unknown schema", func(t *testing.T) []string {
			dir := copyRun(t)
			p := filepath.Join(dir, "client-v032.jsonl")
			lines := strings.SplitAfter(read(t, p), "\n")
			lines[2] = strings.Replace(lines[2], `"schema":1`, `"schema":2`, 1)
			write(t, p, strings.Join(lines, ""))
			return []string{dir}
		}, 2, `client-v032\.jsonl:3: record schema 2, this build reads schema 1`},
		{"lab log copied under another lab's name", func(t *testing.T) []string {
			dir := copyRun(t)
			write(t, filepath.Join(dir, "client-v032.jsonl"), "\n"+read(t, filepath.Join(dir, "client-v031.jsonl")))
			return []string{dir}
		}, 2, `client-v032\.jsonl:2: record source "client-v031", but the file is named for "client-v032"`},
		{"two servers", func(t *testing.T) []string {
			dir := copyRun(t)
			p := filepath.Join(dir, "harness.jsonl")
			write(t, p, read(t, p)+`{"schema":1,"time":"2025-01-02T03:04:06Z","source":"harness","kind":"SETUP","step":"server","value":"v1.33.13"}`+"\n")
			return []string{dir}
		}, 2, `harness\.jsonl:9: a second server v1\.33\.13`},
		{"verdict fails: a watcher missed a write", func(t *testing.T) []string {
			dir := copyRun(t)
			p := filepath.Join(dir, "client-v032.jsonl")
			var kept []string
			for _, l := range strings.SplitAfter(read(t, p), "\n") {
				if !(strings.Contains(l, `"tag":"B","event":"MODIFIED","namespace":"default","name":"lab-cm-2"`) && strings.Contains(l, "WATCH-EVENT")) {
					kept = append(kept, l)
				}
			}
			write(t, p, strings.Join(kept, ""))
			return []string{dir}
		}, 1, ``},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run(tt.args(t), &stdout, &stderr)
			if code != tt.wantCode {
				t.Fatalf("want exit %d, got %d; stderr: %s", tt.wantCode, code, stderr.String())
			}
			if tt.wantErr == "" {
				if stderr.Len() > 0 {
					t.Errorf("want no stderr, got %q", stderr.String())
				}
				return
			}
			first := strings.SplitN(stderr.String(), "\n", 2)[0]
			if !regexp.MustCompile(tt.wantErr).MatchString(first) {
				t.Errorf("want stderr matching %q, got %q", tt.wantErr, stderr.String())
			}
			if tt.wantCode == 2 && tt.name != "no argument" && strings.Count(stderr.String(), "\n") != 1 {
				t.Errorf("want one stderr line, got %q", stderr.String())
			}
		})
	}
}

// -o writes the full report (as the harness's compare.txt), which -detail prints; stdout has the
// terminal report, which is the full one without its table of every fact.
func TestRunWritesReportFile(t *testing.T) {
	out := filepath.Join(t.TempDir(), "report.txt")
	var stdout, detail, stderr bytes.Buffer
	if code := run([]string{"-o", out, synthetic}, &stdout, &stderr); code != 0 {
		t.Fatalf("want exit 0, got %d: %s", code, stderr.String())
	}
	if code := run([]string{"-detail", synthetic}, &detail, &stderr); code != 0 {
		t.Fatalf("-detail: want exit 0, got %d: %s", code, stderr.String())
	}
	got := read(t, out)
	if got != detail.String() {
		t.Errorf("want the -o file equal to what -detail prints; file has %d bytes, -detail %d", len(got), detail.Len())
	}
	const section = "\n== verdict, every fact (one column per lab) ==\n"
	before, rest, ok := strings.Cut(got, section)
	if !ok || !strings.Contains(rest, "| Accept → content type ") {
		t.Fatalf("want the file to hold %q with every fact, got:\n%s", section, got)
	}
	_, after, _ := strings.Cut(rest, "\nfan-out skew")
	if before+"fan-out skew"+after != stdout.String() {
		t.Errorf("want stdout to be the file without its table of every fact; stdout:\n%s\nfile:\n%s", stdout.String(), got)
	}
}

func TestRunWritesHTML(t *testing.T) {
	out := filepath.Join(t.TempDir(), "report.html")
	var stdout, stderr bytes.Buffer
	if code := run([]string{"-html", out, synthetic}, &stdout, &stderr); code != 0 {
		t.Fatalf("want exit 0, got %d: %s", code, stderr.String())
	}
	if got := read(t, out); !strings.HasPrefix(got, "<!DOCTYPE html>") || !strings.Contains(got, "VERDICT: holds") {
		t.Errorf("want an HTML page with the verdict in %s, got %d bytes starting %.40q", out, len(got), got)
	}
	code := run([]string{"-html", filepath.Join(t.TempDir(), "no", "such", "dir", "r.html"), synthetic}, &stdout, &stderr)
	if code != 2 || !strings.Contains(stderr.String(), "no such file or directory") {
		t.Errorf("unwritable -html: want exit 2 naming the error, got %d: %q", code, stderr.String())
	}
}

var (
	rvField = regexp.MustCompile(`rv=(\d+)`)
	millis  = regexp.MustCompile(`\d+(?:\.\d+)? ms\b`)
)

// maskVolatile rewrites what differs between two runs of the same scenario: steady rvs become
// rv1, rv2... by first appearance, skew figures become <N> ms.
func maskVolatile(s string) string {
	ids := map[string]string{}
	s = rvField.ReplaceAllStringFunc(s, func(m string) string {
		rv := m[len("rv="):]
		if ids[rv] == "" {
			ids[rv] = "rv" + strconv.Itoa(len(ids)+1)
		}
		return "rv=" + ids[rv]
	})
	return millis.ReplaceAllString(s, "<N> ms")
}

// TestGolden runs compare over every run in testdata/runs and compares the report, volatile
// fields masked, with the run's want.txt.
func TestGolden(t *testing.T) {
	dirs, _ := filepath.Glob("testdata/runs/*")
	if len(dirs) == 0 {
		t.Fatal("no runs under testdata/runs")
	}
	for _, dir := range dirs {
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			continue
		}
		t.Run(filepath.Base(dir), func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := run([]string{dir}, &stdout, &stderr)
			if code == 2 {
				t.Fatalf("want a report, got exit 2: %s", stderr.String())
			}
			got := maskVolatile(stdout.String())
			wantPath := filepath.Join(dir, "want.txt")
			if *update {
				if err := os.WriteFile(wantPath, []byte(got), 0o644); err != nil {
					t.Fatal(err)
				}
				return
			}
			want, err := os.ReadFile(wantPath)
			if err != nil {
				t.Fatalf("%v (run go test -run TestGolden -update)", err)
			}
			if got != string(want) {
				t.Errorf("report differs from %s (run with -update and read the git diff):\n%s", wantPath, got)
			}
		})
	}
}

func TestMaskVolatile(t *testing.T) {
	in := "A rv=521 B rv=530 A rv=521 rv=<RV0> skew min 0.4 ms, max 12 ms"
	want := "A rv=rv1 B rv=rv2 A rv=rv1 rv=<RV0> skew min <N> ms, max <N> ms"
	if got := maskVolatile(in); got != want {
		t.Errorf("want %q, got %q", want, got)
	}
}

// FuzzParseLine feeds one arbitrary line as a lab log through the loader and, when it loads,
// through the analysis: neither may panic, and a refusal must name the file and line.
func FuzzParseLine(f *testing.F) {
	harness, err := os.ReadFile(filepath.Join(synthetic, "harness.jsonl"))
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		dir := t.TempDir()
		write(t, filepath.Join(dir, "harness.jsonl"), string(harness))
		write(t, filepath.Join(dir, "client-x.jsonl"), string(line))
		var stdout, stderr bytes.Buffer
		switch code := run([]string{dir}, &stdout, &stderr); code {
		case 0, 1:
		case 2:
			if !strings.Contains(stderr.String(), "client-x.jsonl:") {
				t.Errorf("want the error to name client-x.jsonl:<line>, got %q", stderr.String())
			}
			if strings.Count(stderr.String(), "\n") != 1 {
				t.Errorf("want one stderr line, got %q", stderr.String())
			}
		default:
			t.Errorf("want exit 0, 1 or 2, got %d", code)
		}
	})
}
