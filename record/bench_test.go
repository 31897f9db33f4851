package record

import (
	"io"
	"testing"
	"time"
)

// A watch event's record as a lab logs it, once per event and informer: what a Writer encodes
// and a reader (the harness, compare) parses back.
var benchEvent = Record{Schema: Schema, Time: time.Date(2026, 12, 3, 15, 20, 0, 123456789, time.UTC), Source: "client-v032",
	Kind: WatchEvent, Tag: "P", Event: EventAdded, Namespace: "bench-small-x7k2q", Name: "bench-012345", RV: "123456"}

// BenchmarkWriter: K goroutines log events at once through one Writer to a discarding output;
// the cost per record of encoding it and of the group commit.
//
//	cd record && GOWORK=off go test -run '^$' -bench . -benchmem
func BenchmarkWriter(b *testing.B) {
	w := NewWriter("client-v032", io.Discard, nil)
	b.SetParallelism(8) // 16 goroutines on 2 CPUs, as a lab's K=16 informers
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			w.Write(benchEvent)
		}
	})
}

// BenchmarkParse: the cost per line of reading a record back.
func BenchmarkParse(b *testing.B) {
	line, err := benchEvent.Marshal()
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if _, err := Parse(line); err != nil {
			b.Fatal(err)
		}
	}
}
