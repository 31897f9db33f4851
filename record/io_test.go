package record

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// KindOf reads the kind of every record as Parse does, also where a value before or after it
// (the source, a detail, a bookmark's annotations) holds the same bytes.
func TestKindOf(t *testing.T) {
	for _, k := range []Kind{Setup, HTTP, List, WatchEvent, Mutator, Handler} {
		r := Record{Schema: Schema, Source: `lab","kind":"HANDLER`, Kind: k, Detail: `"kind":"LIST"`,
			Annotations: map[string]string{"kind": "MUTATOR", `"kind":"SETUP"`: "x"}}
		line, err := r.Marshal()
		if err != nil {
			t.Fatal(err)
		}
		if got, ok := KindOf(line); !ok || got != k {
			t.Errorf("KindOf(%s) = %q, %v; want %q", line, got, ok, k)
		}
	}
	for _, line := range []string{"", "hello", `{"schema":1}`, `{"schema":1,"kind":"SET`} {
		if got, ok := KindOf([]byte(line)); ok {
			t.Errorf("KindOf(%q) = %q, want none", line, got)
		}
	}
}

// Records written at once by many goroutines come out whole, one per line, each once.
func TestWriterConcurrent(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter("lab", &buf, nil)
	const writers, each = 16, 500
	var wg sync.WaitGroup
	for i := 0; i < writers; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for j := 0; j < each; j++ {
				w.Write(Record{Kind: WatchEvent, Tag: string(rune('A' + i)), Event: EventAdded, Name: "cm", RV: "1"})
			}
		}()
	}
	wg.Wait()
	w.Stop("stopped", "")
	w.Write(Record{Kind: Handler, Tag: "A"})
	recs, err := Read(&buf, "log")
	if err != nil {
		t.Fatal(err)
	}
	per := map[string]int{}
	for _, r := range recs[:len(recs)-1] {
		per[r.Tag]++
	}
	if len(recs) != writers*each+1 || recs[len(recs)-1].Step != StepStopped {
		t.Fatalf("%d records, last %+v; want %d ending with stopped", len(recs), recs[len(recs)-1], writers*each+1)
	}
	for tag, n := range per {
		if n != each {
			t.Errorf("informer %s: %d records, want %d", tag, n, each)
		}
	}
}

// Later holds its lines back until the next Write (which writes them first, in order), Flush or
// Stop, or until LaterDelay has passed; past LaterBytes queued, it writes them itself.
func TestWriterLater(t *testing.T) {
	out, err := os.Create(filepath.Join(t.TempDir(), "log")) // the timer's flush writes to it too
	if err != nil {
		t.Fatal(err)
	}
	lines := func() int {
		b, err := os.ReadFile(out.Name())
		if err != nil {
			t.Fatal(err)
		}
		return bytes.Count(b, []byte("\n"))
	}
	w := NewWriter("lab", out, nil)
	w.Later(Record{Kind: WatchEvent, Tag: "A", Event: EventAdded, Name: "one", RV: "1"})
	w.Later(Record{Kind: WatchEvent, Tag: "A", Event: EventAdded, Name: "two", RV: "2"})
	if n := lines(); n != 0 {
		t.Errorf("%d lines written at once, want Later's held back", n)
	}
	w.Setup("A", StepSynced, "informer cache synced", "")
	if n := lines(); n != 3 {
		t.Errorf("%d lines after a Write, want the two held back and its own", n)
	}
	w.Later(Record{Kind: WatchEvent, Tag: "A", Event: EventModified, Name: "one", RV: "3"})
	deadline := time.Now().Add(10 * time.Second)
	for lines() != 4 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if n := lines(); n != 4 {
		t.Errorf("%d lines after LaterDelay, want the one held back written", n)
	}
	for i := 0; lines() < 5; i++ { // a burst larger than LaterBytes goes out without a timer
		w.Later(Record{Kind: WatchEvent, Tag: "B", Event: EventAdded, Name: fmt.Sprintf("cm-%06d", i), RV: "4"})
		if i > LaterBytes/50 {
			t.Fatalf("%d records of over 50 bytes queued with nothing written", i)
		}
	}
	w.Later(Record{Kind: WatchEvent, Tag: "B", Event: EventDeleted, Name: "last", RV: "5"})
	w.Stop("informers stopped", "")
	recs, err := ReadFile(out.Name())
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"one", "two", "", "one"}
	for i, name := range want {
		if recs[i].Name != name {
			t.Errorf("record %d: %s, want %q", i, recs[i].Text(), name)
		}
	}
	if n := len(recs); recs[n-2].Name != "last" || recs[n-1].Step != StepStopped {
		t.Errorf("the log ends with %s, %s; want the last Later, then stopped", recs[n-2].Text(), recs[n-1].Text())
	}
}
