package matrix

import (
	"slices"
	"strings"
	"testing"
)

func TestDiff(t *testing.T) {
	base := func() *Result {
		return &Result{Schema: Schema, Scenarios: []string{"startup", "restart"}, Servers: []Server{{Name: "1.32.13"}}, Clients: []Client{{Name: "c1"}, {Name: "c2"}},
			Cells: []Cell{
				{Scenario: "startup", Server: "1.32.13", Client: "c1", Verdict: "LIST→WATCH (2 req)", Expected: "LIST→WATCH", Agrees: true, SyncMillis: 80},
				{Scenario: "startup", Server: "1.32.13", Client: "c2", Verdict: "STREAM (1 req)", Expected: "STREAM", Agrees: true, SyncMillis: 40},
				{Scenario: "restart", Server: "1.32.13", Client: "c1", Verdict: "WATCH(error)×2→WATCH (3 req)", Agrees: true,
					Problems: []string{"A: #3 want MODIFIED default/x rv=120, got MODIFIED default/x rv=121"}},
			}}
	}
	a, b := base(), base()
	if d := Diff(a, b); len(d) != 0 {
		t.Errorf("want no differences between equal results, got %q", d)
	}

	// What varies from run to run is not a difference: times, retry counts, rvs.
	b.Cells[0].SyncMillis = 300
	b.Cells[2].Verdict = "WATCH(error)×3→WATCH (4 req)"
	b.Cells[2].Problems = []string{"A: #3 want MODIFIED default/x rv=220, got MODIFIED default/x rv=221"}
	if d := Diff(a, b); len(d) != 0 {
		t.Errorf("want timing, counts and rvs ignored, got %q", d)
	}
	b.Cells[2].Verdict = "WATCH→WATCH (2 req)" // no retry at all: the shape changed
	if d := Diff(a, b); len(d) != 1 || !strings.Contains(d[0], `restart | 1.32.13 | c1: verdict "WATCH(error)×2→WATCH (3 req)" → "WATCH→WATCH (2 req)"`) {
		t.Errorf("want the verdict change, got %q", d)
	}

	b = base()
	b.Cells[1].Verdict, b.Cells[1].Agrees = "STREAM→fallback: blueprint annotation missing (3 req)", false
	b.Cells[0].Lost = "A: missing default/x"
	b.Cells[2].Problems = nil
	b.Cells = append(b.Cells, Cell{Scenario: "restart", Server: "1.33.13", Client: "c1", Verdict: "WATCH (1 req)"})
	a.Cells = append(a.Cells, Cell{Scenario: "steady", Server: "1.32.13", Client: "c2", Verdict: "8/8 writes, same rvs"})
	want := []string{
		`startup | 1.32.13 | c1: lost "" → "A: missing default/x"`,
		`startup | 1.32.13 | c2: verdict "STREAM (1 req)" → "STREAM→fallback: blueprint annotation missing (3 req)"`,
		`startup | 1.32.13 | c2: agrees with the expectation true → false`,
		`restart | 1.32.13 | c1: problem gone: A: #3 want MODIFIED default/x rv=120, got MODIFIED default/x rv=121`,
		`only in OLD: steady | 1.32.13 | c2: 8/8 writes, same rvs`,
		`only in NEW: restart | 1.33.13 | c1: WATCH (1 req)`,
	}
	if d := Diff(a, b); !slices.Equal(d, want) {
		t.Errorf("want\n%s\ngot\n%s", strings.Join(want, "\n"), strings.Join(d, "\n"))
	}
}
