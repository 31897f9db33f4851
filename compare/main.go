// Command compare reads a harness run directory and reports how the labs' informers differ:
// phase diffs against the first lab, a verdict table and a conclusion.
//
//	go run ./compare [-detail] [-o compare.txt] [-html report.html] out/<run>
//	go run ./compare -matrix OLD.json NEW.json
//	go run ./compare -findings docs
//	go run ./compare -fakes out/fakes-<time> docs/fakes.md
//	go run ./compare -opt-outs out/opt-outs-<time> docs/opt-outs.md
//
// It prints what make compare prints at the end of a run: the verdict with labs as rows, no
// wider than a terminal. -detail prints the full report the harness keeps in the run
// directory as compare.txt (every fact, one column per lab); -o writes that to a file.
//
// Exit status: 0 the expected relations hold, 1 they do not, 2 unusable input or usage.
// With -matrix it prints how two matrix results differ, cell by cell: exit 0 when they do not,
// 1 when they do, 2 when a file cannot be read as a matrix result.
// With -findings it derives the findings from the committed results in a docs directory (every
// grid's and make bench's), writes findings.md there and each page's findings section, and
// prints the findings, one line each: exit 0, or 2 when a result cannot be read.
package main

import (
	"bytes"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"informer-lab/compare/analysis"
	"informer-lab/compare/fakes"
	"informer-lab/compare/findings"
	"informer-lab/compare/matrix"
	"informer-lab/compare/optouts"
	"informer-lab/compare/report"
	"informer-lab/record"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

// run is main without os.Exit, so tests can call it.
func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("compare", flag.ContinueOnError)
	fs.SetOutput(stderr)
	out := fs.String("o", "", "also write the full report (as compare.txt: every fact, one column per lab) to `FILE`")
	detail := fs.Bool("detail", false, "print the full report (as compare.txt) instead of the terminal one")
	htmlOut := fs.String("html", "", "also write the report as one self-contained HTML page to `FILE`")
	diffMatrix := fs.Bool("matrix", false, "compare two matrix results: compare -matrix OLD.json NEW.json")
	derive := fs.Bool("findings", false, "derive the findings from the results in a docs directory and write its findings.md and pages' findings sections: compare -findings DOCS_DIR")
	fakePage := fs.Bool("fakes", false, "write the page of lab -fakes runs (one RUN_DIR/*.jsonl per lab module, as make fakes leaves them): compare -fakes RUN_DIR PAGE")
	optOutPage := fs.Bool("opt-outs", false, "write the page of a make opt-outs run again (RUN_DIR/MODULE/NN-MODE@AT.jsonl): compare -opt-outs RUN_DIR PAGE")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "error: usage: compare [-detail] [-o FILE] [-html FILE] RUN_DIR | compare -matrix OLD.json NEW.json | compare -findings DOCS_DIR | compare -fakes RUN_DIR PAGE | compare -opt-outs RUN_DIR PAGE")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if *fakePage || *optOutPage {
		if fs.NArg() != 2 || *out != "" || *htmlOut != "" || *detail || *diffMatrix || *derive || (*fakePage && *optOutPage) {
			fs.Usage()
			return 2
		}
		write := fakes.WriteFile
		if *optOutPage {
			write = optouts.WriteFile
		}
		if err := write(fs.Arg(0), fs.Arg(1)); err != nil {
			fmt.Fprintf(stderr, "error: %s\n", record.OneLine(err))
			return 2
		}
		return 0
	}
	if *derive {
		if fs.NArg() != 1 || *out != "" || *htmlOut != "" || *detail || *diffMatrix {
			fs.Usage()
			return 2
		}
		return writeFindings(fs.Arg(0), stdout, stderr)
	}
	if *diffMatrix {
		if fs.NArg() != 2 || *out != "" || *htmlOut != "" || *detail {
			fs.Usage()
			return 2
		}
		return matrixDiff(fs.Arg(0), fs.Arg(1), stdout, stderr)
	}
	if fs.NArg() != 1 {
		fs.Usage()
		return 2
	}
	return compareRun(fs.Arg(0), *detail, *out, *htmlOut, stdout, stderr)
}

// compareRun prints the report of a run directory (its full report with detail), and writes
// it to out and as HTML to htmlOut where they are given.
func compareRun(dir string, detail bool, out, htmlOut string, stdout, stderr io.Writer) int {
	r, err := analysis.LoadRun(dir)
	if err != nil {
		fmt.Fprintf(stderr, "error: %s\n", record.OneLine(err))
		return 2
	}
	rep := analysis.Analyze(r)
	var text, full bytes.Buffer
	rep.WriteText(&text)
	rep.WriteDetail(&full)
	if detail {
		stdout.Write(full.Bytes())
	} else {
		stdout.Write(text.Bytes())
	}
	if out != "" {
		if err := os.WriteFile(out, full.Bytes(), 0o644); err != nil {
			fmt.Fprintf(stderr, "error: %s\n", record.OneLine(err))
			return 2
		}
	}
	if htmlOut != "" {
		var page bytes.Buffer
		err := report.Write(&page, r, rep)
		if err == nil {
			err = os.WriteFile(htmlOut, page.Bytes(), 0o644)
		}
		if err != nil {
			fmt.Fprintf(stderr, "error: %s\n", record.OneLine(err))
			return 2
		}
	}
	return rep.ExitCode()
}

// matrixDiff prints the differences between two matrix results.
func matrixDiff(oldFile, newFile string, stdout, stderr io.Writer) int {
	var results [2]*matrix.Result
	for i, f := range []string{oldFile, newFile} {
		r, err := matrix.Load(f)
		if err != nil {
			fmt.Fprintf(stderr, "error: %s\n", record.OneLine(err))
			return 2
		}
		results[i] = r
	}
	diffs := matrix.Diff(results[0], results[1])
	if len(diffs) == 0 {
		fmt.Fprintf(stdout, "matrix results alike: %d cells, no difference\n", len(results[1].Cells))
		return 0
	}
	fmt.Fprintf(stdout, "matrix results differ (%d):\n", len(diffs))
	for _, d := range diffs {
		fmt.Fprintf(stdout, "- %s\n", d)
	}
	return 1
}

// writeFindings writes the findings of a docs directory's results and prints them.
func writeFindings(docs string, stdout, stderr io.Writer) int {
	fs, changed, err := findings.Write(docs)
	if err != nil {
		fmt.Fprintf(stderr, "error: %s\n", record.OneLine(err))
		return 2
	}
	fmt.Fprintf(stdout, "%d findings, by the setups they hit (at client-go's default gate first):\n", len(fs))
	for _, f := range fs {
		fmt.Fprintf(stdout, "- %s: %s\n", f.Symptom, f.Who())
	}
	if len(changed) == 0 {
		fmt.Fprintf(stdout, "%s and every findings section already say so\n", findings.Page)
		return 0
	}
	fmt.Fprintf(stdout, "wrote %s\n", strings.Join(changed, ", "))
	return 0
}
