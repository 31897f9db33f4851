// Command compare reads a harness run directory and reports how the labs' informers differ:
// phase diffs against the first lab, a verdict table and a conclusion.
//
//	go run ./compare [-o report.txt] [-html report.html] out/<run>
//
// Exit status: 0 the expected relations hold, 1 they do not, 2 unusable input or usage.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"informer-lab/compare/analysis"
	"informer-lab/compare/report"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// run is main without os.Exit, so tests can call it.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "also write the report to `FILE`")
	htmlOut := fs.String("html", "", "also write the report as one self-contained HTML page to `FILE`")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "error: usage: compare [-o FILE] [-html FILE] RUN_DIR")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return 2
	}
	r, err := analysis.LoadRun(fs.Arg(0))
	if err != nil {
		fmt.Fprintf(stderr, "error: %s\n", oneLine(err))
		return 2
	}
	rep := analysis.Analyze(r)
	var buf bytes.Buffer
	rep.WriteText(&buf)
	stdout.Write(buf.Bytes())
	if *out != "" {
		if err := os.WriteFile(*out, buf.Bytes(), 0o644); err != nil {
			fmt.Fprintf(stderr, "error: %s\n", oneLine(err))
			return 2
		}
	}
	if *htmlOut != "" {
		var page bytes.Buffer
		err := report.Write(&page, r, rep)
		if err == nil {
			err = os.WriteFile(*htmlOut, page.Bytes(), 0o644)
		}
		if err != nil {
			fmt.Fprintf(stderr, "error: %s\n", oneLine(err))
			return 2
		}
	}
	return rep.ExitCode()
}

// oneLine keeps an error to one line of stderr even if a log line quoted in it had newlines.
func oneLine(err error) string { return strings.ReplaceAll(err.Error(), "\n", " ") }
