package analysis

import (
	"bytes"
	"slices"
	"strings"
	"testing"

	sy "informer-lab/compare/internal/synth"
	"informer-lab/record"
)

// receivedRun is seven labs whose informers read until their sync what each lab of the real
// runs might: a LIST gzipped (1.32, above 128 KiB), a stream gzipped (1.37's
// WatchListCompression), one not, an old log without WireBytes, an informer that never synced,
// one without stats, and two informers of one lab that differ.
func receivedRun() *Report {
	return sevenLabRun("v1.32.13", sevenLabs(), func(r *sy.Run) {
		r.Received("client-v031", "", 310<<10, 1229<<10, record.TokenList) // 310 KiB of 1.2 MiB
		r.Received("client-v032", "", 2085, 2085, "")                      // counted, not compressed
		r.Received("client-v033", "", 0, 1712, "")                         // a log from before WireBytes
		r.Received("client-v034", "", 1712, 1712, "")
		r.Unsync("client-v034", "B")
		// client-v035: no stats at all
		r.Received("client-v036", "", 1130, 2085, record.TokenStream)
		r.Received("client-v037", "A", 2085, 2085, "")
		r.Received("client-v037", "B", 1130, 2085, record.TokenStream)
	}, nil)
}

func TestReceivedCells(t *testing.T) {
	rep := receivedRun()
	v := rep.Verdict()
	const note = "Content-Encoding until sync: "
	tests := []struct {
		lab            int
		want, wantNote string
	}{
		{0, "1.2 MiB", note + "gzip for the LIST; none for the WATCH (310 KiB on the wire, 1.2 MiB decoded)"},
		{1, "2.0 KiB", ""},
		{2, "1.7 KiB", ""}, // no WireBytes: Wire() is Bytes, nothing said about compression
		{3, "A=1.7 KiB B=-", ""},
		{4, "?", ""},
		{5, "2.0 KiB", note + "gzip for the STREAM (1.1 KiB on the wire, 2.0 KiB decoded)"},
		{6, "2.0 KiB", note + "A=none for the STREAM B=gzip for the STREAM (1.1 KiB on the wire, 2.0 KiB decoded)"},
	}
	for _, tt := range tests {
		c := cellOf(t, v, tt.lab, "received to sync")
		var notes []string
		for _, n := range c.Notes {
			notes = append(notes, v.Notes[n-1].Text)
		}
		if c.Text != tt.want || strings.Join(notes, "|") != tt.wantNote {
			t.Errorf("%s: want %q with note %q, got %q with %q", rep.Labs[tt.lab].Name, tt.want, tt.wantNote, c.Text, notes)
		}
	}

	var detail bytes.Buffer
	rep.WriteDetail(&detail)
	for _, want := range []string{
		"| received until sync         | 1258496 B decoded, 317440 B on the wire (2 req) ",
		"| A=1712 B decoded (2 req) B=never synced ",
		"| ? (no stats in its SETUP synced record) ",
		"| Content-Encoding until sync | gzip for the LIST; none for the WATCH ",
		"| none for the STREAM (B differs: gzip for the STREAM) ",
	} {
		if !strings.Contains(detail.String(), want) {
			t.Errorf("want the full table to hold %q, got:\n%s", want, detail.String())
		}
	}

	// Logs from before the labs counted bytes: no column, no rows.
	old := sevenLabRun("v1.32.13", sevenLabs(), nil, nil)
	if cols := strings.Join(old.Verdict().Columns, "|"); strings.Contains(cols, "received") {
		t.Errorf("want no received column without stats, got %q", cols)
	}
	for _, row := range old.Table() {
		if strings.Contains(row[0], "until sync") {
			t.Errorf("want no row %q without stats", row[0])
		}
	}
}

// Seven labs of make compare keep their verdict whole, no cell cut to fit: on the default server
// (1.32: nothing compressed, small LISTs) and on 1.37, whose watch-list streams come gzipped:
// the labs that stream share one footnote.
func TestReceivedColumnFits(t *testing.T) {
	for _, server := range []string{"v1.32.13", "v1.37.2"} {
		rep := sevenLabRun(server, sevenLabs(), func(r *sy.Run) {
			for _, l := range sevenLabs() {
				switch {
				case l.Shape == sy.Stream && server == "v1.37.2":
					r.Received(l.Name, "", 1130, 2085, record.TokenStream)
				case l.Shape == sy.Stream:
					r.Received(l.Name, "", 2085, 2085, "")
				default:
					r.Received(l.Name, "", 2704, 2704, "")
				}
			}
		}, nil)
		v := rep.Verdict()
		lines := v.Lines(TermWidth)
		for _, line := range lines {
			if runes(line) > TermWidth || strings.Contains(line, "…") {
				t.Errorf("%s: want every line whole within %d columns, got %d: %q", server, TermWidth, runes(line), line)
			}
		}
		want := "2.0 KiB"
		if server == "v1.37.2" {
			want += "[1]"
			if len(v.Notes) != 1 || !strings.HasPrefix(v.Notes[0].String(), "[1] client-v032, client-v035, client-v036, client-v037: Content-Encoding until sync: gzip for the STREAM (") {
				t.Errorf("%s: want one footnote for the four streaming labs, got %q", server, v.Notes)
			}
		}
		if !strings.Contains(lines[3], "  2.6 KiB  ") || !strings.Contains(lines[4], "  "+want+"  ") {
			t.Errorf("%s: want 2.6 KiB for the LIST and %s for the stream, got:\n%s", server, want, strings.Join(lines, "\n"))
		}
	}
}

// TestTerminalVerdictDropsReceivedFirst: fourteen cells of a matrix run do not fit with the
// received column; the terminal leaves it out rather than cut the handshake cells, and the
// full verdict (report.html) keeps it.
func TestTerminalVerdictDropsReceivedFirst(t *testing.T) {
	labs := append(sevenLabs(), sevenLabs()...)
	for i := range labs[7:] {
		labs[7+i].Name += "-twin-with-a-long-name"
	}
	rep := sevenLabRun("v1.37.2", labs, func(r *sy.Run) {
		for _, l := range labs {
			r.Received(l.Name, "", 2704, 2704, "")
		}
	}, nil)
	if total(rep.Verdict().natural()) <= TermWidth {
		t.Fatalf("the test's run fits %d columns with the received column; it must not", TermWidth)
	}
	full, term := rep.Verdict(), rep.TerminalVerdict(TermWidth)
	if !slices.Contains(full.Columns, receivedTitle) || slices.Contains(term.Columns, receivedTitle) || len(term.Columns) != len(full.Columns)-1 {
		t.Errorf("columns: full %q, terminal %q; want the terminal's without %q only", full.Columns, term.Columns, receivedTitle)
	}
	for _, line := range term.Lines(TermWidth) {
		if strings.Contains(line, "STREAM (1") && !strings.Contains(line, "STREAM (1 req)") {
			t.Errorf("a handshake cell was cut: %q", line)
		}
	}
}

func TestFormatBytes(t *testing.T) {
	for _, tt := range []struct {
		wire, decoded int64
		want          string
	}{
		{870, 870, "870 B"},
		{2704, 2704, "2.6 KiB"},
		{310 << 10, 310 << 10, "310 KiB"},
		{5 << 30, 5 << 30, "5.0 GiB"},
		{1130, 2085, "1.1 KiB on the wire, 2.0 KiB decoded"},
	} {
		if got := Size(tt.wire, tt.decoded); got != tt.want {
			t.Errorf("Size(%d, %d) = %q, want %q", tt.wire, tt.decoded, got, tt.want)
		}
	}
}
