package lab

import (
	"errors"
	"io"
	"strings"
	"testing"
)

// -opt-out's combinations that cannot mean anything are usage errors (exit 2) that say what to
// do; the others parse. The cell's own gate counts as -watch-list (client-v032 sets it on).
func TestOptOutFlags(t *testing.T) {
	on := Cell{WatchList: GateOn}
	def := Cell{WatchList: GateDefault}
	for _, tc := range []struct {
		cell Cell
		args string
		want string // "" for none; else the start of the error
	}{
		{def, "-opt-out env", ""},
		{on, "-opt-out env", ""}, // allowed: the records show the gate set in code winning
		{def, "-opt-out code", ""},
		{on, "-opt-out code -watch-list default", ""},
		{on, "-opt-out flag -opt-out-at between", ""},
		{on, "-opt-out listwatch", ""},
		{def, "-opt-out client -resource secrets", ""},
		{def, "-opt-out nope", `-opt-out must be one of env, code, flag, flag-unwired, listwatch, client, got "nope"`},
		{def, "-opt-out-at between", "-opt-out-at between goes with -opt-out"},
		{def, "-opt-out env -opt-out-at later", `-opt-out-at must be start or between, got "later"`},
		{def, "-opt-out code -opt-out-at between -informers 1", "-opt-out-at between switches once informer A synced and before B starts: it needs -informers 2 or more"},
		{on, "-opt-out code", "-opt-out code replaces client-go's feature gates at start, which -watch-list on cannot set: use -watch-list default"},
		{def, "-opt-out flag -watch-list off", "-opt-out flag replaces client-go's feature gates at start, which -watch-list off cannot set"},
		{def, "-opt-out listwatch -kind metadata", "-opt-out listwatch builds the typed informers itself: it works with -kind typed-configmaps only, got -kind metadata"},
		{def, "-opt-out listwatch -resource secrets", "-opt-out listwatch watches configmaps only, got -resource secrets"},
	} {
		_, err := parseFlags("client-v0xx", tc.cell, strings.Fields(tc.args), io.Discard)
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%s (cell gate %s): %v, want no error", tc.args, tc.cell.WatchList, err)
		case tc.want != "" && (err == nil || !errors.As(err, new(usageError)) || !strings.HasPrefix(err.Error(), tc.want) || strings.Contains(err.Error(), "\n")):
			t.Errorf("%s (cell gate %s): got %v, want one usage error line starting %q", tc.args, tc.cell.WatchList, err, tc.want)
		}
	}
}
