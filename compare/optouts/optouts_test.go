package optouts

import (
	"strings"
	"testing"
)

// The page's findings from a real make opt-outs run (client-v032 and client-v035 against
// kube-apiserver 1.32.13, kept in testdata): which switches turn streaming off, per version.
func TestFindingsFromARealRun(t *testing.T) {
	labs, err := Load("../testdata/optouts")
	if err != nil {
		t.Fatal(err)
	}
	if len(labs) != 2 || labs[0].ClientGo != "v0.32.13" || labs[1].ClientGo != "v0.35.10" {
		t.Fatalf("want client-v032 (v0.32.13) and client-v035 (v0.35.10), got %+v", labs)
	}
	want := map[string][2]bool{ // switch: turned streaming off on v0.32, on v0.35
		"env@start":          {false, true}, // client-v032 sets the gate on in code, which wins
		"code@start":         {true, true},
		"flag@start":         {true, true},
		"flag-unwired@start": {false, false},
		"listwatch@start":    {false, true}, // asked from v0.35 only
		"client@start":       {false, true},
		"env@between":        {false, false}, // read once, for informer A
		"code@between":       {true, true},
	}
	for i, l := range labs {
		if len(l.Runs) != len(want) {
			t.Errorf("%s: %d runs, want %d", l.Name, len(l.Runs), len(want))
		}
		for _, r := range l.Runs {
			w, ok := want[r.Name]
			if !ok {
				t.Errorf("%s: unexpected run %s", l.Name, r.Name)
				continue
			}
			if r.Effect() != w[i] {
				t.Errorf("%s %s: turned streaming off %v, want %v (A %s, B %s)", l.Name, r.Name, r.Effect(), w[i], r.A, r.B)
			}
			if r.Overwrote != (r.Name == "code@between") {
				t.Errorf("%s %s: client-go's warning that its gates were replaced after use: %v", l.Name, r.Name, r.Overwrote)
			}
		}
	}
	page := Render(labs)
	for _, s := range []string{"| `env@start` | **no effect**: gate on · A STREAM · B STREAM · List() STREAM | gate off", "kube-apiserver v1.32.13"} {
		if !strings.Contains(page, s) {
			t.Errorf("page lacks %q", s)
		}
	}
}

func TestLoadRefusesOtherDirectories(t *testing.T) {
	if _, err := Load(t.TempDir()); err == nil || !strings.Contains(err.Error(), "make opt-outs") {
		t.Errorf("an empty directory: %v, want an error that names make opt-outs", err)
	}
}
