package app

import (
	"bytes"
	"context"
	"flag"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"informer-lab/compare/analysis"
	"informer-lab/lab/labtest"
	"informer-lab/record"
)

var updateDocs = flag.Bool("update-docs", false, "copy the screenshot of TestReportInBrowser's run to docs/report.png")

// browsers are where Chrome or Chromium lives on Debian, other Linux systems and macOS.
var browsers = []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable",
	"/Applications/Google Chrome.app/Contents/MacOS/Google Chrome", "/Applications/Chromium.app/Contents/MacOS/Chromium"}

// chromium is the first browser found, "" without one.
var chromium = func() string {
	for _, b := range browsers {
		if p, err := exec.LookPath(b); err == nil {
			return p
		}
	}
	return ""
}()

var (
	arrowTag  = regexp.MustCompile(`<g class="arrow[^"]*" data-lab="([^"]*)" data-tag="[^"]*"`)
	jsErrors  = regexp.MustCompile(`data-js-errors="([^"]*)"`)
	consoleLn = regexp.MustCompile(`(?m)^.*:CONSOLE.*$`)
)

// A real run's report.html, in a real browser: the page Chromium built has one arrow per
// initial-sync record of each lab, shows the verdict, throws no error, and renders to a screenshot
// kept in the run directory.
func TestReportInBrowser(t *testing.T) {
	if chromium == "" {
		// CI has one (hack/test.sh installs it): there the test must run.
		if os.Getenv("CI") == "true" {
			t.Fatal("no Chrome or Chromium found, and CI=true: hack/test.sh installs chromium with apt-get")
		}
		t.Skip("no Chrome or Chromium found: install one (apt-get install chromium, or Google Chrome on macOS) to run this test")
	}
	t.Run("error detection", func(t *testing.T) {
		// The checks below must see an error when there is one: a page that throws.
		page := filepath.Join(t.TempDir(), "broken.html")
		os.WriteFile(page, []byte(`<html><head><script>window.onerror = function (m) { document.documentElement.setAttribute("data-js-errors", m); };</script></head>`+
			`<body><script>throw new Error("boom");</script></body></html>`), 0o644)
		dom, log := browse(t, "--dump-dom", "file://"+page)
		if !strings.Contains(jsErrorsOf(dom), "boom") || !strings.Contains(log, "boom") {
			t.Errorf("a thrown error must show in data-js-errors and on the console log; dom:\n%s\nlog:\n%s", dom, log)
		}
	})

	out := t.TempDir()
	var stdout, stderr bytes.Buffer
	// Two labs draw every kind of arrow (LIST→WATCH and STREAM); more would only add time.
	if code := Run(context.Background(), []string{"-out", out, "-labs", "client-v031,client-v032"}, &stdout, &stderr); code != 0 {
		t.Fatalf("harness exit code %d, want 0\nstdout:\n%s\nstderr:\n%s", code, stdout.String(), stderr.String())
	}
	runs, _ := filepath.Glob(filepath.Join(out, "*"))
	if len(runs) != 1 {
		t.Fatalf("want one run directory in %s, got %v", out, runs)
	}
	runDir := runs[0]
	page := filepath.Join(runDir, "report.html")
	run, err := analysis.LoadRun(runDir)
	if err != nil {
		t.Fatal(err)
	}

	dom, log := browse(t, "--dump-dom", "file://"+page)
	got := map[string]int{}
	for _, m := range arrowTag.FindAllStringSubmatch(dom, -1) {
		got[m[1]]++
	}
	for _, lab := range run.Labs {
		want := 0
		initial, _ := analysis.SplitPhases(lab.Records)
		for _, r := range initial {
			if r.Kind == record.HTTP || r.Kind == record.List || r.Kind == record.WatchEvent {
				want++
			}
		}
		if want == 0 || got[lab.Name] != want {
			t.Errorf("%s: %d arrows in the browser's DOM, want %d (one per initial-phase HTTP, LIST and WATCH-EVENT record, and some)", lab.Name, got[lab.Name], want)
		}
	}
	if !strings.Contains(dom, "VERDICT: holds") {
		t.Errorf("the browser's DOM lacks %q", "VERDICT: holds")
	}
	if e := jsErrorsOf(dom); e != "" {
		t.Errorf("JavaScript errors on the page: %s", e)
	}
	if c := consoleLn.FindAllString(log, -1); len(c) > 0 {
		t.Errorf("console messages while loading the page, want none:\n%s", strings.Join(c, "\n"))
	}

	shot := filepath.Join(runDir, "report.png")
	browse(t, "--screenshot="+shot, "--window-size=1400,2000", "file://"+page)
	f, err := os.Open(shot)
	if err != nil {
		t.Fatalf("no screenshot: %v", err)
	}
	defer f.Close()
	cfg, err := png.DecodeConfig(f)
	if st, _ := f.Stat(); err != nil || cfg.Width != 1400 || cfg.Height != 2000 || st.Size() < 50_000 {
		t.Errorf("screenshot %s: want a 1400×2000 PNG of some content, got %dx%d, %d bytes, %v", shot, cfg.Width, cfg.Height, st.Size(), err)
	}
	labtest.CheckNoChildren(t)
	if *updateDocs {
		data, err := os.ReadFile(shot)
		if err == nil {
			err = os.WriteFile(filepath.Join("..", "..", "..", "docs", "report.png"), data, 0o644)
		}
		if err != nil {
			t.Fatalf("update docs/report.png: %v", err)
		}
	}
}

// browse runs headless Chromium with args and returns its stdout and its log (stderr).
func browse(t *testing.T, args ...string) (stdout, log string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, chromium, append([]string{"--headless", "--no-sandbox", "--disable-gpu",
		"--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update",
		"--disable-sync", "--user-data-dir=" + t.TempDir(), "--enable-logging=stderr", "--v=0"}, args...)...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	if err := cmd.Run(); err != nil {
		t.Fatalf("chromium %s: %v\n%s", strings.Join(args, " "), err, errOut.String())
	}
	return out.String(), errOut.String()
}

// jsErrorsOf returns what the page's window.onerror recorded on <html>.
func jsErrorsOf(dom string) string {
	if m := jsErrors.FindStringSubmatch(dom); m != nil {
		return m[1]
	}
	return ""
}
