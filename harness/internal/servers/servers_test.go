package servers

import (
	"errors"
	"strings"
	"testing"
)

func TestParseList(t *testing.T) {
	got, err := ParseList("1.32.13, 1.37.2:WatchListCompression=false,WatchList=true,1.33.13,1.32.13")
	if err != nil {
		t.Fatal(err)
	}
	want := []Server{{"1.32.13", ""}, {"1.37.2", "WatchListCompression=false,WatchList=true"}, {"1.33.13", ""}}
	if len(got) != len(want) {
		t.Fatalf("ParseList = %v, want %v (the second gate belongs to 1.37.2, the repeated 1.32.13 is dropped)", got, want)
	}
	for i := range want {
		if got[i] != want[i] {
			t.Errorf("server %d = %+v, want %+v", i, got[i], want[i])
		}
	}
	if n, s := got[1].Name(), got[1].Slug(); n != "1.37.2 WatchListCompression=false,WatchList=true" || s != "1.37.2-WatchListCompression=false-WatchList=true" {
		t.Errorf("Name %q, Slug %q", n, s)
	}
	for _, bad := range []string{"1.37", "v1.32.13", "latest", "WatchList=true"} {
		if _, err := ParseList(bad); err == nil || !strings.Contains(err.Error(), "want a version X.Y.Z") {
			t.Errorf("ParseList(%q) = %v, want the X.Y.Z error", bad, err)
		}
	}
	// A flag among the settings: one server, named by both.
	got, err = ParseList("1.34.4:WatchList=true,watch-cache=false,1.37.2:watch-cache=false")
	if err != nil || len(got) != 2 || got[0].Name() != "1.34.4 WatchList=true,watch-cache=false" || got[1].Slug() != "1.37.2-watch-cache=false" {
		t.Errorf("ParseList with flags = %+v, %v; want 1.34.4 WatchList=true,watch-cache=false and 1.37.2 watch-cache=false", got, err)
	}
	for _, bad := range []string{"1.34.4:etcd-servers=http://x", "1.34.4:watch-cache=false,audit-log-path=/tmp/x", "1.34.4:watchcache"} {
		if _, err := ParseList(bad); err == nil || !strings.Contains(err.Error(), "watch-cache") && !strings.Contains(err.Error(), "want Gate=bool") {
			t.Errorf("ParseList(%q) = %v, want an error naming the flags a server may set", bad, err)
		}
	}
}

func TestProvisionRefusesAVersionNotServed(t *testing.T) {
	var said []string
	err := Provision(t.Context(), []Server{{Version: "1.99.0"}}, func(f string, a ...any) { said = append(said, f) }, &strings.Builder{})
	if !errors.Is(err, ErrUsage) {
		t.Errorf("Provision(1.99.0) = %v, want ErrUsage (the user's input, exit 2)", err)
	}
}
