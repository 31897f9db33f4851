// Package record defines the one line format every lab, the harness and compare share:
// a wire-log record, written as one JSON object per line and rendered as the lab's text line.
package record

import (
	"encoding/json"
	"fmt"
	"time"
)

// Schema is the version of the record format. Readers refuse records of another schema
// instead of guessing what their fields mean.
const Schema = 1

// Kind is the prefix of a text line: what produced the record.
type Kind string

const (
	Setup      Kind = "SETUP"       // facts about the run: versions, gates, readiness
	HTTP       Kind = "HTTP"        // one request and its response status
	List       Kind = "LIST"        // a LIST response decoded from the wire
	WatchEvent Kind = "WATCH-EVENT" // one event decoded from a watch stream
	Mutator    Kind = "MUTATOR"     // a write by the single writer
	Handler    Kind = "HANDLER"     // an informer event handler fired
)

// Record is one line of a wire log. Fields irrelevant to a Kind stay empty.
type Record struct {
	Schema int       `json:"schema"`
	Time   time.Time `json:"time"`
	Source string    `json:"source"` // who wrote it: a lab cell ("client-v031") or "harness"
	Kind   Kind      `json:"kind"`
	Tag    string    `json:"tag,omitempty"` // the informer or writer: A, B, MUT

	// Setup
	Step   string `json:"step,omitempty"`
	Value  string `json:"value,omitempty"`
	Detail string `json:"detail,omitempty"`

	// HTTP
	Method      string `json:"method,omitempty"`
	Path        string `json:"path,omitempty"`
	Query       string `json:"query,omitempty"` // raw query string, as sent
	Accept      string `json:"accept,omitempty"`
	Status      int    `json:"status,omitempty"`
	ContentType string `json:"contentType,omitempty"`
	Encoding    string `json:"encoding,omitempty"` // the response's Content-Encoding as the server sent it ("gzip"), before the client's transport decompressed it
	Error       string `json:"error,omitempty"`
	Millis      int64  `json:"ms,omitempty"` // time to response headers; SETUP fake: to HasSynced, or how long it was waited for
	// Server is the kube-apiserver that answered, where a balancer in front of several named it
	// (ServerHeader): its version.
	Server string `json:"server,omitempty"`

	// LIST, WATCH-EVENT, MUTATOR, HANDLER
	Event       string            `json:"event,omitempty"` // ADDED MODIFIED DELETED BOOKMARK ERROR; CREATE UPDATE DELETE for writes
	Namespace   string            `json:"namespace,omitempty"`
	Name        string            `json:"name,omitempty"`
	RV          string            `json:"rv,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"` // bookmarks' annotations only
	Items       []Item            `json:"items,omitempty"`       // LIST: the objects in the body
	Tick        int               `json:"tick,omitempty"`        // MUTATOR: the tick written (a ConfigMap's data.tick, a Widget's spec.tick)
	// LIST: its whole body; the initial-events-end BOOKMARK: its stream up to and with it.
	Body *Body `json:"body,omitempty"`

	// Counts of one informer's traffic so far (SETUP synced and stopped), kept also in -quiet mode.
	Stats *Stats `json:"stats,omitempty"`
	// The lab process's own resources (SETUP health).
	Health *Health `json:"health,omitempty"`
}

// Health is a process's resource use at one moment.
type Health struct {
	RSSKiB     int64 `json:"rssKiB"`
	Goroutines int   `json:"goroutines"`
	FDs        int   `json:"fds"`
}

// Stats counts what one informer's client sent and received.
type Stats struct {
	Requests  int   `json:"requests"`
	Bytes     int64 `json:"bytes"`               // response body bytes the client read, after decompression
	WireBytes int64 `json:"wireBytes,omitempty"` // the same bodies as they came off the connection (compressed where the server gzipped them); 0 in records older than this field
	Events    int   `json:"events"`              // watch events decoded (0 in -quiet mode, which does not decode)
	// ContentTypes are the media types (parameters dropped) of the bodies of its 200 responses,
	// each once, in the order first seen: what the server encoded them in, "application/cbor"
	// for a LIST and "application/cbor-seq" for a watch where it served CBOR.
	ContentTypes []string `json:"contentTypes,omitempty"`
}

// Body is the size of one response body (or of a stream so far) two ways: as it came off the
// connection, Content-Encoding applied, and as the client decoded it. HTTP/2 framing and TLS
// are not counted. Wire equals Decoded when the server did not compress.
type Body struct {
	Wire    int64 `json:"wire"`
	Decoded int64 `json:"decoded"`
}

// Wire returns the bytes off the connection, Bytes where a record predates WireBytes.
func (s Stats) Wire() int64 {
	if s.WireBytes == 0 {
		return s.Bytes
	}
	return s.WireBytes
}

// Item is one object of a LIST body.
type Item struct {
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	RV        string `json:"rv"`
}

// Parse decodes one JSON line and checks it is a record this package can read.
func Parse(line []byte) (Record, error) {
	var r Record
	// Unmarshal, not a Decoder over a copy of the line: the harness parses every line a lab
	// writes, and a second value on the line fails it as well ("after top-level value").
	if err := json.Unmarshal(line, &r); err != nil {
		return Record{}, fmt.Errorf("not a JSON record: %w", err)
	}
	switch {
	case r.Schema == 0:
		return Record{}, fmt.Errorf("no schema field: not an informer-lab record")
	case r.Schema != Schema:
		return Record{}, fmt.Errorf("record schema %d, this build reads schema %d: re-run the producer with this build", r.Schema, Schema)
	case r.Kind == "":
		return Record{}, fmt.Errorf("record has no kind")
	case r.Time.IsZero():
		return Record{}, fmt.Errorf("record has no time")
	}
	return r, nil
}
