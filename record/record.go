// Package record defines the one line format every lab, the harness and compare share:
// a wire-log record, written as one JSON object per line and rendered as the lab's text line.
package record

import (
	"encoding/json"
	"fmt"
	"sort"
	"strings"
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

// Steps of Setup records that readers act on.
const (
	StepClientGo  = "client-go"     // Value: linked client-go version; Detail: the pin
	StepGate      = "gate"          // Value: WatchListClient on|off
	StepServer    = "server"        // Value: kube-apiserver version
	StepSynced    = "synced"        // Tag: the informer that reported HasSynced
	StepFault     = "fault"         // something went wrong; Detail says what
	StepStopped   = "stopped"       // the writer of this log stopped cleanly
	StepWriteDone = "writes-done"   // the mutator made its last write
	StepStore     = "store"         // Tag: an informer's cache at stop, in Items
	StepHealth    = "health"        // the writer's own process: Health
	StepInjected  = "injected"      // the harness injected a fault on purpose; Value names it
	StepRecovered = "recovered"     // the run came back from an injected fault; Detail says how
	StepBroken    = "stream-broken" // Tag: a watch stream ended mid-frame (server gone); Detail: error
	StepScenario  = "scenario"      // harness: Value: the matrix scenario (startup|direct-list|steady|reconnect|restart|expired); Detail: what it does
	StepProxy     = "proxy"         // harness: Value: what the proxy between labs and apiserver does, e.g. "watch timeout 4s"
	StepDirect    = "direct-list"   // Tag TagDirect: the lab's one typed List() outside its informers; Value: what it returned, or "failed" and Detail the error
	StepWarning   = "klog"          // Tag: whose call it was; Value: a warning client-go logged through klog during it
)

// TagDirect tags a lab's direct typed List() call (-direct-list): its requests are not an
// informer's, so readers keep them apart from the informers' tags (A, B, ...).
const TagDirect = "DIRECT"

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
	Error       string `json:"error,omitempty"`
	Millis      int64  `json:"ms,omitempty"` // time to response headers

	// LIST, WATCH-EVENT, MUTATOR, HANDLER
	Event       string            `json:"event,omitempty"` // ADDED MODIFIED DELETED BOOKMARK ERROR; CREATE UPDATE DELETE for writes
	Namespace   string            `json:"namespace,omitempty"`
	Name        string            `json:"name,omitempty"`
	RV          string            `json:"rv,omitempty"`
	Annotations map[string]string `json:"annotations,omitempty"` // bookmarks' annotations only
	Items       []Item            `json:"items,omitempty"`       // LIST: the objects in the body
	Tick        int               `json:"tick,omitempty"`        // MUTATOR: data.tick written

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
	Requests int   `json:"requests"`
	Bytes    int64 `json:"bytes"`  // response body bytes the client read
	Events   int   `json:"events"` // watch events decoded (0 in -quiet mode, which does not decode)
}

// Item is one object of a LIST body.
type Item struct {
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
	RV        string `json:"rv"`
}

// Marshal renders r as one JSON line, without the trailing newline.
func (r Record) Marshal() ([]byte, error) {
	return json.Marshal(r)
}

// Parse decodes one JSON line and checks it is a record this package can read.
func Parse(line []byte) (Record, error) {
	var r Record
	dec := json.NewDecoder(strings.NewReader(string(line)))
	if err := dec.Decode(&r); err != nil {
		return Record{}, fmt.Errorf("not a JSON record: %w", err)
	}
	if dec.More() {
		return Record{}, fmt.Errorf("more than one JSON value on the line")
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

// Text renders the human line, the one the original informer-lab printed, e.g.
// "[WATCH-EVENT][A] type=MODIFIED name=lab-cm-1 rv=521".
func (r Record) Text() string {
	var b strings.Builder
	b.WriteString("[" + string(r.Kind) + "]")
	if r.Tag != "" {
		b.WriteString("[" + r.Tag + "]")
	}
	b.WriteByte(' ')
	switch r.Kind {
	case HTTP:
		b.WriteString(r.Method + " " + r.Path)
		if r.Query != "" {
			b.WriteString("?" + r.Query)
		}
		if r.Error != "" {
			b.WriteString(" -> error: " + r.Error)
			break
		}
		fmt.Fprintf(&b, " -> %d %s", r.Status, r.ContentType)
		if r.Accept != "" {
			b.WriteString(" (accept " + r.Accept + ")")
		}
		if r.Detail != "" {
			b.WriteString(": " + r.Detail)
		}
	case List:
		fmt.Fprintf(&b, "initial LIST returned collection resourceVersion=%s items=%d", r.RV, len(r.Items))
		names := make([]string, 0, len(r.Items))
		for _, it := range r.Items {
			names = append(names, it.Name)
		}
		if len(names) > 0 {
			if len(names) > 8 {
				names = append(names[:8], "...")
			}
			b.WriteString(" [" + strings.Join(names, " ") + "]")
		}
	case WatchEvent:
		fmt.Fprintf(&b, "type=%s name=%s rv=%s", r.Event, r.Name, r.RV)
		for _, k := range sortedKeys(r.Annotations) {
			fmt.Fprintf(&b, " %s=%q", k, r.Annotations[k])
		}
		if r.Detail != "" {
			b.WriteString(" " + r.Detail)
		}
	case Mutator:
		fmt.Fprintf(&b, "writing: %s %s", r.Event, r.Name)
		if r.Event == "UPDATE" || r.Event == "CREATE" {
			fmt.Fprintf(&b, " (data.tick=%d)", r.Tick)
		}
		if r.RV != "" {
			b.WriteString(" -> rv=" + r.RV)
		}
		if r.Error != "" {
			b.WriteString(" -> error: " + r.Error)
		}
	case Handler:
		fmt.Fprintf(&b, "informer handler fired: event=%s name=%s rv=%s", r.Event, r.Name, r.RV)
	default:
		b.WriteString(r.Step)
		if r.Value != "" {
			b.WriteString(": " + r.Value)
		}
		if r.Detail != "" {
			b.WriteString(" (" + r.Detail + ")")
		}
		if r.Health != nil {
			fmt.Fprintf(&b, " rss=%dKiB goroutines=%d fds=%d", r.Health.RSSKiB, r.Health.Goroutines, r.Health.FDs)
		}
		if r.Step == StepStore {
			fmt.Fprintf(&b, " items=%d", len(r.Items))
		}
		if r.Stats != nil {
			fmt.Fprintf(&b, " requests=%d bytes=%d events=%d", r.Stats.Requests, r.Stats.Bytes, r.Stats.Events)
		}
	}
	return b.String()
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
