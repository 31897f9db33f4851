package optouts

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// Bad input is one line and exit 2, before anything is built or booted.
func TestBadInput(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"-labs", "client-v099"}, `-labs: unknown lab "client-v099": the labs are client-v031,`},
		{[]string{"-wait", "0s"}, "-wait must be positive"},
		{[]string{"extra"}, `unexpected argument "extra"`},
	} {
		var stdout, stderr bytes.Buffer
		code := Run(context.Background(), append([]string{"-root", "../../.."}, tc.args...), &stdout, &stderr)
		if code != 2 || !strings.Contains(stderr.String(), tc.want) || strings.Count(strings.TrimSpace(stderr.String()), "\n") > 0 {
			t.Errorf("%v: exit %d, stderr %q; want 2 and one line with %q", tc.args, code, stderr.String(), tc.want)
		}
		if strings.Contains(stdout.String(), "building") {
			t.Errorf("%v: built something before refusing: %s", tc.args, stdout.String())
		}
	}
}
