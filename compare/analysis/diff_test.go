package analysis

import (
	"fmt"
	"testing"
)

func TestUnifiedDiff(t *testing.T) {
	many := func(n int) []string {
		var out []string
		for i := 1; i <= n; i++ {
			out = append(out, fmt.Sprintf("line %d", i))
		}
		return out
	}
	changed := many(12)
	changed[5] = "line six"
	tests := []struct {
		name string
		a, b []string
		want string
	}{
		{"equal", many(3), many(3), ""},
		{"both empty", nil, nil, ""},
		{"one changed line in the middle: context of 3", many(12), changed,
			"--- a\n+++ b\n@@ -3 +3 @@\n line 3\n line 4\n line 5\n-line 6\n+line six\n line 7\n line 8\n line 9\n"},
		{"added at the end", many(2), many(3), "--- a\n+++ b\n@@ -1 +1 @@\n line 1\n line 2\n+line 3\n"},
		{"all new", nil, []string{"x"}, "--- a\n+++ b\n@@ -1 +1 @@\n+x\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := unifiedDiff("a", "b", tt.a, tt.b); got != tt.want {
				t.Errorf("want:\n%s\ngot:\n%s", tt.want, got)
			}
		})
	}
}

func TestUnifiedDiffTwoHunks(t *testing.T) {
	a := []string{"1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11", "12", "13", "14", "15", "16"}
	b := append([]string{"0"}, a...)
	b[len(b)-1] = "sixteen"
	want := "--- a\n+++ b\n@@ -1 +1 @@\n+0\n 1\n 2\n 3\n@@ -13 +14 @@\n 13\n 14\n 15\n-16\n+sixteen\n"
	if got := unifiedDiff("a", "b", a, b); got != want {
		t.Errorf("want:\n%s\ngot:\n%s", want, got)
	}
}
