package apf

import (
	"context"
	"testing"
	"time"

	"informer-lab/envtestbin"
	"informer-lab/harness/internal/rundir"
	"informer-lab/harness/internal/servers"
	"informer-lab/lab/labtest"
)

func TestMain(m *testing.M) { labtest.Main(m) }

// TestChargesOnARealServer starts K informers of client-v035 twice (LIST→WATCH, then streaming)
// as a user that a FlowSchema puts in a small priority level of its own, on one real
// kube-apiserver, and checks what its request log says APF charged each request.
func TestChargesOnARealServer(t *testing.T) {
	if testing.Short() {
		t.Skip("boots a kube-apiserver")
	}
	root, err := rundir.FindRoot()
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	// 250 ConfigMaps: more than one seat's worth (100 objects a seat), fewer than the priority
	// level's largest charge (ceil(15% of its 19 seats) = 3) would cut.
	o := Options{Servers: []servers.Server{{Version: envtestbin.DefaultVersion}}, Objects: 250, Informers: 3, Shares: []int32{8}, QueueLength: 50,
		PollPeriod: time.Second, SyncTimeout: time.Minute}
	servers, err := Measure(ctx, o, root, t.TempDir(), t.Logf)
	if err != nil {
		t.Fatal(err)
	}
	s := servers[0]
	seats := map[string][]int{}
	for _, m := range s.Levels[0].Modes {
		if !m.Synced {
			t.Errorf("-watch-list %s: the informers did not sync", m.WatchList)
		}
		for _, r := range m.Requests {
			if r.FlowSchema != Name || r.PriorityLevel != Name {
				t.Errorf("-watch-list %s: %s %s landed in flow schema %q, priority level %q; want %q for both", m.WatchList, r.Verb, r.URI, r.FlowSchema, r.PriorityLevel, Name)
			}
			if r.Status != 200 {
				t.Errorf("-watch-list %s: %s %s answered %d, want 200", m.WatchList, r.Verb, r.URI, r.Status)
			}
			seats[r.Kind()] = append(seats[r.Kind()], r.InitialSeats)
		}
	}
	t.Logf("initial seats by request kind: %v (priority level: %s seats)", seats, s.Levels[0].NominalSeats)
	for _, kind := range []string{KindList, KindWatch, KindStream} {
		if len(seats[kind]) < o.Informers {
			t.Errorf("%d %s requests logged, want at least %d (one per informer)", len(seats[kind]), kind, o.Informers)
		}
	}
	for _, n := range seats[KindWatch] {
		if n != 1 {
			t.Errorf("a %s was charged %d seats, want 1 (a watch without initial events costs the minimum)", KindWatch, n)
		}
	}
	for _, kind := range []string{KindList, KindStream} {
		for _, n := range seats[kind] {
			if n < 2 {
				t.Errorf("a %s over %d ConfigMaps was charged %d seats, want more than 1", kind, o.Objects, n)
			}
		}
	}
	if l, st := seats[KindList], seats[KindStream]; len(l) > 0 && len(st) > 0 && l[0] != st[0] {
		t.Logf("LIST charged %d seats, the streaming watch %d", l[0], st[0])
	}
}
