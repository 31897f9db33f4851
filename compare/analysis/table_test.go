package analysis

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	sy "informer-lab/compare/internal/synth"
)

// sevenLabs are make compare's labs with their gates: v0.32 set on by its lab, v0.35 on by
// default.
func sevenLabs() []sy.Lab {
	lab := func(name, clientGo, gate, how string) sy.Lab {
		shape := sy.ListWatch
		if gate == "on" {
			shape = sy.Stream
		}
		return sy.Lab{Name: name, ClientGo: clientGo, Gate: gate, GateHow: how, Shape: shape}
	}
	return []sy.Lab{
		lab("client-v031", "v0.31.14", "off", "client-go default"),
		lab("client-v032", "v0.32.13", "on", "set by this lab (-watch-list=on)"),
		lab("client-v033", "v0.33.13", "off", "client-go default"),
		lab("client-v034", "v0.34.13", "off", "client-go default"),
		lab("client-v035", "v0.35.10", "on", "client-go default"),
		lab("client-v036", "v0.36.6", "on", "client-go default"),
		lab("client-v037", "v0.37.2", "on", "client-go default"),
	}
}

// sevenLabRun is a make compare run of labs on server: eight writes, then the fresh LIST.
// before and after (if not nil) spoil it before and after the writes.
func sevenLabRun(server string, labs []sy.Lab, before, after func(r *sy.Run)) *Report {
	r := sy.New("", server, "", labs...)
	if before != nil {
		before(r)
	}
	r.Writes(8)
	if after != nil {
		after(r)
	}
	r.Stop()
	return analyzeSynth(r)
}

// refused are labs on a server that does not stream (1.33 by default): the gate-on labs fall back.
func refused(labs []sy.Lab) []sy.Lab {
	for i := range labs {
		if labs[i].Shape == sy.Stream {
			labs[i].Shape = sy.Fallback
		}
	}
	return labs
}

// missTwo makes every lab's informer B miss the first two writes.
func missTwo(r *sy.Run) {
	for _, l := range sevenLabs() {
		r.Miss(l.Name, "B", 2)
	}
}

// terminalLines returns the lines of the terminal report that must fit TermWidth: all but the
// diffs' bodies (normalized wire lines, quoted as they are) and the conclusion (one sentence
// the docs quote).
func terminalLines(rep *Report, text string) []string {
	var out []string
	inDiff := false
	for _, line := range strings.Split(text, "\n") {
		switch {
		case strings.HasPrefix(line, "== initial sync: "), strings.HasPrefix(line, "== steady: "):
			inDiff = true
		case line == "":
			inDiff = false
		case inDiff, line == rep.Conclusion():
			continue
		}
		out = append(out, line)
	}
	return out
}

// The terminal report of seven labs (and of the twelve cells of a recorded matrix run), healthy
// or not, keeps to 120 columns, and its verdict has one row per lab.
func TestTerminalReportFitsTheTerminal(t *testing.T) {
	differentB := sevenLabs()
	differentB[2].ShapeB = sy.Stream
	wrongGate := sevenLabs()
	wrongGate[0].Gate = "on" // the lab says on, its informers still LIST
	cases := map[string]*Report{
		"seven labs": sevenLabRun("v1.32.13", sevenLabs(), nil, nil),
		"seven labs, broken": sevenLabRun("v1.32.13", sevenLabs(), func(r *sy.Run) { r.Miss("client-v035", "B", 2) },
			func(r *sy.Run) { r.Forget("client-v036", "A", "seed-cm-1") }),
		"seven labs, B differs":      sevenLabRun("v1.32.13", differentB, nil, nil),
		"seven labs, wrong gate":     sevenLabRun("v1.32.13", wrongGate, nil, nil),
		"seven labs, every B missed": sevenLabRun("v1.32.13", sevenLabs(), missTwo, nil),
		"seven labs, 1.33":           sevenLabRun("v1.33.13", refused(sevenLabs()), nil, nil), // every "on" falls back: the widest shape
	}
	dirs, _ := filepath.Glob("../testdata/runs/real-*")
	for _, dir := range dirs {
		run, err := LoadRun(dir)
		if err != nil {
			t.Fatal(err)
		}
		cases[filepath.Base(dir)] = Analyze(run)
	}
	for name, rep := range cases {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			rep.WriteText(&b)
			widest := ""
			for _, line := range terminalLines(rep, b.String()) {
				if runes(line) > runes(widest) {
					widest = line
				}
			}
			if runes(widest) > TermWidth {
				t.Errorf("want every line of the terminal report at most %d columns, got %d:\n%s\nreport:\n%s", TermWidth, runes(widest), widest, b.String())
			}
			verdict := b.String()[strings.Index(b.String(), "== verdict ==\n"):]
			for _, l := range rep.Labs {
				if !strings.Contains(verdict, "\n"+l.Name+" ") {
					t.Errorf("want a verdict row starting with %s, got:\n%s", l.Name, verdict)
				}
			}
		})
	}
}

// cellOf returns a lab's cell in the column whose title starts with title.
func cellOf(t *testing.T, v Verdict, lab int, title string) Cell {
	t.Helper()
	for i, c := range v.Columns {
		if strings.HasPrefix(strings.ReplaceAll(c, "\n", " "), title) {
			return v.Rows[lab][i]
		}
	}
	t.Fatalf("no column %q in %q", title, v.Columns)
	return Cell{}
}

func TestVerdictCells(t *testing.T) {
	differentB := sevenLabs()
	differentB[2].ShapeB = sy.Stream
	wrongGate := sevenLabs()
	wrongGate[0].Gate = "on"
	blueprint := sevenLabs()
	blueprint[1].Shape = sy.Blueprint
	tests := []struct {
		name     string
		rep      *Report
		lab      int    // row
		column   string // its title's start
		want     string // the cell's text
		wantNote string // in its footnote, "" for none
	}{
		{"list", sevenLabRun("v1.32.13", sevenLabs(), nil, nil), 0, "initial sync", "LIST→WATCH (2 req)", ""},
		{"stream", sevenLabRun("v1.32.13", sevenLabs(), nil, nil), 4, "initial sync", "STREAM (1 req)", ""},
		{"list body", sevenLabRun("v1.32.13", sevenLabs(), nil, nil), 0, "objects", "3 items", ""},
		{"streamed objects", sevenLabRun("v1.32.13", sevenLabs(), nil, nil), 6, "objects", "3 ADDED + end BOOKMARK", ""},
		{"as the gates imply", sevenLabRun("v1.32.13", sevenLabs(), nil, nil), 3, "expected by gates", "yes", ""},
		{"writes seen", sevenLabRun("v1.32.13", sevenLabs(), nil, nil), 5, "events /calls", "8/8", ""},
		{"rvs are the writes", sevenLabRun("v1.32.13", sevenLabs(), nil, nil), 5, "rvs = writes", "yes", ""},
		{"cache is the LIST", sevenLabRun("v1.32.13", sevenLabs(), nil, nil), 5, "cache = LIST", "yes", ""},
		{"the server refuses to stream", sevenLabRun("v1.33.13", refused(sevenLabs()), nil, nil), 4, "initial sync", "STREAM→422→LIST→WATCH (4 req)", ""},
		{"informer B differs", sevenLabRun("v1.32.13", differentB, nil, nil), 2, "initial sync", "LIST→WATCH (2 req)",
			"informer B: initial sync STREAM (1 req), not A's LIST→WATCH (2 req)"},
		{"not the gate's handshake", sevenLabRun("v1.32.13", wrongGate, nil, nil), 0, "expected by gates", "NO", "not the handshake the gates imply: A: expected STREAM, saw LIST→WATCH (2 req)"},
		{"missed writes", sevenLabRun("v1.32.13", sevenLabs(), func(r *sy.Run) { r.Miss("client-v035", "B", 2) }, nil), 4, "events /calls", "A=8/8 B=6/6", ""},
		{"missed writes, rvs", sevenLabRun("v1.32.13", sevenLabs(), func(r *sy.Run) { r.Miss("client-v035", "B", 2) }, nil), 4, "rvs = writes", "NO",
			"steady events are not the harness's writes: B: #1 want ADDED default/lab-cm-1"},
		{"lost object", sevenLabRun("v1.32.13", sevenLabs(), nil, func(r *sy.Run) { r.Forget("client-v036", "A", "seed-cm-1") }), 5, "cache = LIST", "NO",
			"cache at stop differs from a fresh LIST: A: missing default/seed-cm-1"},
		{"blueprint fallback", sevenLabRun("v1.34.4", blueprint, nil, nil), 1, "initial sync", "STREAM→LIST→WATCH (3 req)",
			"initial sync: the stream was given up for a LIST: blueprint annotation missing"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			v := tt.rep.Verdict()
			c := cellOf(t, v, tt.lab, tt.column)
			if c.Text != tt.want {
				t.Errorf("%s, %s: want %q, got %q", tt.rep.Labs[tt.lab].Name, tt.column, tt.want, c.Text)
			}
			var notes []string
			for _, n := range c.Notes {
				notes = append(notes, v.Notes[n-1].Text)
			}
			switch {
			case tt.wantNote == "" && len(notes) > 0:
				t.Errorf("%s, %s: want no footnote, got %q", tt.rep.Labs[tt.lab].Name, tt.column, notes)
			case tt.wantNote != "" && !strings.Contains(strings.Join(notes, "\n"), tt.wantNote):
				t.Errorf("%s, %s: want a footnote with %q, got %q", tt.rep.Labs[tt.lab].Name, tt.column, tt.wantNote, notes)
			}
		})
	}
}

// One text for several labs is one footnote naming them; for all of them, "every lab".
func TestVerdictNotesShared(t *testing.T) {
	some := func(r *sy.Run) {
		for _, l := range sevenLabs()[1:] {
			r.Miss(l.Name, "B", 2)
		}
	}
	v := sevenLabRun("v1.32.13", sevenLabs(), some, nil).Verdict()
	if len(v.Notes) != 1 || len(v.Notes[0].Labs) != 6 || v.Notes[0].Every || !strings.HasPrefix(v.Notes[0].String(), "[1] client-v032, client-v033, ") {
		t.Errorf("want one footnote for the six labs whose B missed the same writes, got %+v", v.Notes)
	}
	v = sevenLabRun("v1.32.13", sevenLabs(), missTwo, nil).Verdict()
	if len(v.Notes) != 1 || !v.Notes[0].Every || !strings.HasPrefix(v.Notes[0].String(), "[1] every lab: ") {
		t.Errorf("want one footnote for every lab, got %+v", v.Notes)
	}
	for i, row := range v.Rows {
		if m := cellOf(t, v, i, "rvs = writes").Mark(); m != "[1]" || row[0].Mark() != "" {
			t.Errorf("%s: want its rvs cell marked [1], and no mark on its name, got %q, %q", v.Rows[i][0].Text, m, row[0].Mark())
		}
	}
}

// A table too wide for the terminal is narrowed column by column: cells are cut with "…", their
// footnote marks kept whole.
func TestVerdictLinesNarrowed(t *testing.T) {
	long := strings.Repeat("x", 70)
	v := Verdict{
		Columns: []string{"lab", "a\nlong one", "b"},
		Rows: [][]Cell{
			{{Text: "client-v031"}, {Text: long, Notes: []int{1}}, {Text: long}},
			{{Text: "client-v032"}, {Text: "short"}, {Text: "yes"}},
		},
		Notes: []Note{{Number: 1, Labs: []string{"client-v031"}, Text: strings.Repeat("word ", 40)}},
	}
	lines := v.Lines(80)
	for _, l := range lines {
		if runes(l) > 80 {
			t.Errorf("want lines of at most 80 columns, got %d: %q", runes(l), l)
		}
	}
	if !strings.Contains(lines[3], "…[1]") || !strings.HasSuffix(lines[3], "x…") {
		t.Errorf("want the long cells cut with … and the mark kept, got %q", lines[3])
	}
	if lines[0] != "             a" || !strings.HasPrefix(lines[1], "lab          long one") {
		t.Errorf("want a two-line header, got %q, %q", lines[0], lines[1])
	}
	if !strings.HasPrefix(lines[5], "[1] client-v031: word") || !strings.HasPrefix(lines[len(lines)-1], "    word") {
		t.Errorf("want the footnote wrapped under the rows, got:\n%s", strings.Join(lines, "\n"))
	}
}

func TestWrap(t *testing.T) {
	tests := []struct {
		s     string
		width int
		want  []string
	}{
		{"short line", 20, []string{"short line"}},
		{"one two three four", 9, []string{"one two", "  three", "  four"}},
		{"averyveryverylongword and more", 8, []string{"averyveryverylongword", "  and", "  more"}},
		{"", 10, []string{""}},
	}
	for _, tt := range tests {
		if got := Wrap(tt.s, tt.width, "  "); strings.Join(got, "|") != strings.Join(tt.want, "|") {
			t.Errorf("Wrap(%q, %d): want %q, got %q", tt.s, tt.width, tt.want, got)
		}
	}
}

// The detail (compare.txt) is the terminal report with every fact in full added after the verdict.
func TestWriteDetail(t *testing.T) {
	rep := sevenLabRun("v1.32.13", sevenLabs(), func(r *sy.Run) { r.Miss("client-v035", "B", 2) }, nil)
	var text, detail bytes.Buffer
	rep.WriteText(&text)
	rep.WriteDetail(&detail)
	const head = "\n== verdict, every fact (one column per lab) ==\n"
	before, rest, ok := strings.Cut(detail.String(), head)
	if !ok {
		t.Fatalf("want a section %q in the detail, got:\n%s", head, detail.String())
	}
	var table bytes.Buffer
	writeTable(&table, rep.Table())
	after, ok := strings.CutPrefix(rest, table.String())
	if !ok {
		t.Fatalf("want the full table right after %q, got:\n%s", head, rest)
	}
	if before+after != text.String() {
		t.Errorf("want the detail to be the terminal report plus the full table; without the table it is:\n%s\nthe terminal report is:\n%s", before+after, text.String())
	}
	if !strings.Contains(table.String(), "| steady rvs = harness writes |") || !strings.Contains(table.String(), "NO: B: #1 want ADDED default/lab-cm-1") {
		t.Errorf("want every fact in full in the detail table, got:\n%s", table.String())
	}
}
