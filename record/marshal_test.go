package record

import (
	"bytes"
	"encoding/json"
	"math/rand/v2"
	"testing"
	"time"
)

// Marshal must write what json.Marshal writes, byte for byte: every reader parses the lines with
// encoding/json, and KindOf reads the kind where json.Marshal puts it.
func TestMarshalIsJSONMarshal(t *testing.T) {
	odd := []string{"", "A", "default/lab-cm-1", `say "hi"\now`, "tab\there\nnl\r\b\f\x00\x1f\x7f", "<a & b>",
		"\xff\xfeinvalid", "ok\u2028line\u2029sep", "héllo wörld ✓ 😀", "k8s.io/initial-events-end", "a\xe2\x80"}
	pick := func(rng *rand.Rand) string { return odd[rng.IntN(len(odd))] }
	zones := []*time.Location{time.UTC, time.FixedZone("x", 5*3600+30*60), time.FixedZone("y", -7*3600)}
	rng := rand.New(rand.NewPCG(1, 2))
	var recs []Record
	for i := range 2000 {
		r := Record{Schema: rng.IntN(3), Source: pick(rng), Kind: Kind(pick(rng)), Tag: pick(rng), Step: pick(rng), Value: pick(rng),
			Detail: pick(rng), Method: pick(rng), Path: pick(rng), Query: pick(rng), Accept: pick(rng), Status: rng.IntN(3) * 200,
			ContentType: pick(rng), Encoding: pick(rng), Error: pick(rng), Millis: int64(rng.IntN(3) - 1), Server: pick(rng),
			Event: pick(rng), Namespace: pick(rng), Name: pick(rng), RV: pick(rng), Tick: rng.IntN(3) - 1,
			Time: time.Date(1990+rng.IntN(50), 12, 3, 15, 20, 1, rng.IntN(3)*123456000, zones[rng.IntN(len(zones))])}
		switch i % 7 { // every so often one of the fields json.Marshal itself writes
		case 1:
			r.Annotations = map[string]string{"k8s.io/initial-events-end": "true", "b": pick(rng)}
		case 2:
			r.Items = []Item{{Namespace: pick(rng), Name: pick(rng), RV: "1"}}
		case 3:
			r.Stats = &Stats{Requests: 2, Bytes: 100}
		}
		recs = append(recs, r)
	}
	recs = append(recs, Record{}, benchEvent, Record{Time: time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), Kind: Setup})
	for _, r := range recs {
		got, gotErr := r.Marshal()
		want, wantErr := json.Marshal(r)
		if (gotErr != nil) != (wantErr != nil) || !bytes.Equal(got, want) {
			t.Fatalf("Marshal(%#v)\n got %s (%v)\nwant %s (%v)", r, got, gotErr, want, wantErr)
		}
	}
}

// BenchmarkMarshal: encoding one watch event's record, the most frequent line a lab writes.
func BenchmarkMarshal(b *testing.B) {
	b.ReportAllocs()
	for range b.N {
		if _, err := benchEvent.Marshal(); err != nil {
			b.Fatal(err)
		}
	}
}
