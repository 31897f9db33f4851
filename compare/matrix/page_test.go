package matrix

import (
	"bytes"
	"strings"
	"testing"

	"informer-lab/record"
)

// A grid is published as the page its axes make: kinds, faults alone, servers that all run with
// a flag; any other grid, a server with gates alone among them too, is the matrix.
func TestPage(t *testing.T) {
	plain, gates := Server{Name: "1.37.2"}, Server{Name: "1.32.13 WatchList=false", FeatureGates: "WatchList=false"}
	noCache := Server{Name: "1.37.2 watch-cache=false", FeatureGates: "watch-cache=false"}
	for _, tc := range []struct {
		r    Result
		want string
	}{
		{Result{Servers: []Server{plain, gates}, Scenarios: []string{record.ScenarioStartup}}, PageMatrix},
		{Result{Servers: []Server{plain}, Scenarios: []string{record.ScenarioStartup}, Kinds: []string{record.KindTypedConfigMaps}}, PageKinds},
		{Result{Servers: []Server{plain}, Scenarios: []string{record.ScenarioFaultPrefix + "no-end-bookmark"}}, PageFaults},
		{Result{Servers: []Server{noCache}, Scenarios: []string{record.ScenarioStartup}}, PageVariants},
		{Result{Servers: []Server{noCache, plain}, Scenarios: []string{record.ScenarioStartup}}, PageMatrix},
	} {
		if got := tc.r.Page(); got != tc.want {
			t.Errorf("%+v: want %s, got %s", tc.r.Servers, tc.want, got)
		}
	}
	var md bytes.Buffer
	r := Result{Servers: []Server{noCache}, Scenarios: []string{record.ScenarioStartup}}
	if err := r.Markdown(&md); err != nil {
		t.Fatal(err)
	}
	flag, _ := record.ServerFlagOf("watch-cache")
	if !strings.HasPrefix(md.String(), "# informer-lab servers:") || strings.Count(md.String(), flag.Doc) != 1 {
		t.Errorf("want the servers page, saying once what watch-cache=false is, got:\n%s", md.String())
	}
}
