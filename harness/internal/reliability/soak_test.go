package reliability

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"

	"informer-lab/record"
)

// soakStats counts only writes that happened and events after both informers synced.
func TestSoakStatsCountsSteadyEventsOnly(t *testing.T) {
	var buf bytes.Buffer
	w := record.NewWriter("client-v032", &buf, nil)
	h := func(rss int64, g int) {
		w.Write(record.Record{Kind: record.Setup, Step: record.StepHealth, Value: "periodic", Health: &record.Health{RSSKiB: rss, Goroutines: g, FDs: 18}})
	}
	h(40000, 12)
	for _, tag := range []string{"A", "B"} {
		w.Write(record.Record{Kind: record.WatchEvent, Tag: tag, Event: "ADDED", Name: "initial"})
		w.Setup(tag, record.StepSynced, "", "")
	}
	for i := 0; i < 4; i++ {
		h(41000, 28)
		w.Write(record.Record{Kind: record.Mutator, Event: "CREATE", Name: "x"})
		for _, tag := range []string{"A", "B"} {
			w.Write(record.Record{Kind: record.WatchEvent, Tag: tag, Event: "ADDED", Name: "x"})
		}
	}
	w.Write(record.Record{Kind: record.Mutator, Event: "CREATE", Name: "last"})
	w.Write(record.Record{Kind: record.Mutator, Event: "CREATE", Name: "last", Error: "context canceled"})
	h(41000, 28)
	path := filepath.Join(t.TempDir(), "soak.jsonl")
	os.WriteFile(path, buf.Bytes(), 0o644)
	s, err := soakStats(path)
	if err != nil {
		t.Fatal(err)
	}
	if s.Writes != 4 || s.EventsA != 4 || s.EventsB != 4 {
		t.Errorf("want 4 writes and 4 steady events per watcher, got %+v", s)
	}
}
