package matrix

import (
	"bytes"
	"fmt"
	"strings"
	"testing"
	"time"
	"unicode/utf8"
)

func TestTerminal(t *testing.T) {
	res := sample(t)
	var plain, colored bytes.Buffer
	if err := res.Terminal(&plain, false); err != nil {
		t.Fatal(err)
	}
	res.Terminal(&colored, true)
	out := plain.String()
	if strings.Contains(out, "\x1b[") {
		t.Errorf("want no ANSI without color, got:\n%s", out)
	}
	for _, s := range []string{
		"informer-lab matrix · 2026-11-30 10:00 UTC",
		"\n* 1.33.13 WatchList=true\n",
		"== startup ==\nclient                    | 1.33.13* | 1.34.4\n",
		"\nclient-v031 off (default) | a 2ms    | a 2ms\n",
		"\nclient-v032 on            | b 2ms    | c 2ms!\n",
		"\na = LIST→WATCH (2 req) · b = STREAM (1 req) · c = STREAM→fallback: blueprint annotation missing (3 req)\n" +
			"the time: the slowest informer's sync; !: named in the findings below\n",
		"\nclient-v032 on            | a        | a!\n",
		"\nFindings:\n- startup · 1.34.4 · client-v032-on: expected STREAM",
		"\n- reconnect · 1.34.4 · client-v032-on: LOST data, the cache at stop differs from a fresh LIST: A: missing\n  default/seed-cm-1\n",
	} {
		if !strings.Contains(out, s) {
			t.Errorf("want the terminal grid to contain %q, got:\n%s", s, out)
		}
	}
	checkAligned(t, out)
	for _, s := range []string{ansiRed + "c 2ms!" + ansiReset, ansiRed + "a!" + ansiReset, ansiRed + "- reconnect · 1.34.4"} {
		if !strings.Contains(colored.String(), s) {
			t.Errorf("want %q in red, got:\n%s", s, colored.String())
		}
	}
}

// checkAligned: every row of a table is as wide as its rule up to the last column.
func checkAligned(t *testing.T, out string) {
	t.Helper()
	lines := strings.Split(out, "\n")
	for i, l := range lines {
		if !strings.HasPrefix(l, "----") {
			continue
		}
		col := utf8.RuneCountInString(l[:strings.LastIndex(l, "-+-")])
		for j := i - 1; j < len(lines) && (j == i-1 || strings.Contains(lines[j], " | ")); j++ {
			if j == i {
				continue
			}
			row := lines[j]
			if k := strings.LastIndex(row, " | "); k < 0 || utf8.RuneCountInString(row[:k]) != col {
				t.Errorf("want rows aligned with the rule %q, got %q", l, row)
			}
		}
	}
}

// bigResult is a matrix as large as make matrix's, or larger: 14 client cells, one server with
// feature gates (as make matrix has), the longest verdicts and times seen, a cell with lost data.
func bigResult(servers int) *Result {
	res := &Result{Date: time.Date(2026, 11, 30, 10, 0, 0, 0, time.UTC), GoVersion: "go1.26.8", CPUs: 2, OS: "linux/amd64", Duration: "7m7s",
		Scenarios: []string{"startup", "expired"}}
	for v := 31; v <= 37; v++ {
		for _, gate := range []string{"off", "on"} {
			res.Clients = append(res.Clients, Client{Name: fmt.Sprintf("client-v0%d-%s", v, gate), Module: fmt.Sprintf("client-v0%d", v),
				ClientGo: fmt.Sprintf("v0.%d.13", v), Gate: gate, Default: gate == "off"})
		}
	}
	for i := range servers {
		s := Server{Name: fmt.Sprintf("1.%d.13", 31+i), Version: fmt.Sprintf("v1.%d.13", 31+i)}
		if i == 2 {
			s.FeatureGates = "WatchList=false"
			s.Name += " " + s.FeatureGates
		}
		res.Servers = append(res.Servers, s)
	}
	back := int64(12345)
	for _, sc := range res.Scenarios {
		for _, s := range res.Servers {
			for i, cl := range res.Clients {
				c := Cell{Scenario: sc, Server: s.Name, Client: cl.Name, Agrees: true, SyncMillis: 987}
				switch {
				case sc == "startup" && i%2 == 1:
					c.Verdict = "STREAM→fallback: blueprint annotation missing (3 req)"
				case sc == "startup":
					c.Verdict = "LIST→WATCH (2 req)"
				default:
					c.Verdict, c.RecoverMillis = "WATCH→410→STREAM(422)×2→LIST→WATCH (5 req)", &back
				}
				if i == 3 {
					c.Lost = "A: missing default/seed-cm-1"
				}
				res.Cells = append(res.Cells, c)
			}
		}
	}
	return res
}

// The grid of make matrix (14 client cells × 8 servers, and a larger one) keeps to 120 columns:
// servers that do not fit go to a second table with the client column again.
func TestTerminalFits(t *testing.T) {
	full, err := Load("../../docs/matrix/matrix.json")
	if err != nil {
		t.Fatalf("the published full grid: %v", err)
	}
	for name, tt := range map[string]struct {
		res    *Result
		blocks int // tables per scenario
	}{
		"docs/matrix.md's grid": {full, 1},
		"14 × 8":                {bigResult(8), 1},
		"14 × 14":               {bigResult(14), 2},
	} {
		t.Run(name, func(t *testing.T) {
			var b bytes.Buffer
			tt.res.Terminal(&b, false)
			out := b.String()
			for _, l := range strings.Split(out, "\n") {
				if n := utf8.RuneCountInString(l); n > termWidth {
					t.Errorf("want lines of at most %d columns, got %d: %q", termWidth, n, l)
				}
			}
			if n, want := strings.Count(out, "\nclient                    | "), tt.blocks*len(tt.res.Scenarios); n != want {
				t.Errorf("want %d tables (%d per scenario), got %d:\n%s", want, tt.blocks, n, out)
			}
			for _, cl := range tt.res.Clients {
				if n, want := strings.Count(out, "\n"+cl.Label()+" "), tt.blocks*len(tt.res.Scenarios); n != want {
					t.Errorf("want %d rows for %s, got %d", want, cl.Label(), n)
				}
			}
			checkAligned(t, out)
		})
	}
}

func TestCode(t *testing.T) {
	for i, want := range map[int]string{0: "a", 1: "b", 25: "z", 26: "aa", 27: "ab", 51: "az", 52: "ba"} {
		if got := code(i); got != want {
			t.Errorf("code(%d): want %q, got %q", i, want, got)
		}
	}
}
