package controlplane

import (
	"slices"
	"strings"
	"testing"
)

// A server's settings reach kube-apiserver's command line: the gates as --feature-gates, each
// flag as its own (what a matrix column "1.34.4 watch-cache=false" is run with).
func TestEnvironmentSettings(t *testing.T) {
	env := environment("/bin-dir", t.TempDir(), "WatchList=true,WatchListCompression=false", "watch-cache=false")
	args := env.ControlPlane.GetAPIServer().Configure()
	if got := args.Get("feature-gates").Get(nil); !slices.Equal(got, []string{"WatchList=true,WatchListCompression=false"}) {
		t.Errorf("--feature-gates %q, want the gates", got)
	}
	if got := args.Get("watch-cache").Get(nil); !slices.Equal(got, []string{"false"}) {
		t.Errorf("--watch-cache %q, want false", got)
	}
	plain := environment("/bin-dir", t.TempDir(), "", "").ControlPlane.GetAPIServer().Configure()
	for _, flag := range []string{"feature-gates", "watch-cache"} {
		if got := plain.Get(flag).Get(nil); len(got) != 0 {
			t.Errorf("no settings, yet --%s %s", flag, strings.Join(got, ","))
		}
	}
}
