package record

import (
	"bytes"
	"sync"
	"testing"
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
