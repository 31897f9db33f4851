package record

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"time"
)

// Writer writes records as JSON lines and/or text lines. It is safe for concurrent use, and
// lines never interleave. Write returns once its line has been written (the output's Write call
// returned), so what was logged with it before a crash is on disk. Lines that several goroutines
// log while a write is under way go out together, in the order logged, in one Write call (a
// group commit), and each record is encoded outside the lock, in its own goroutine.
//
// Later is Write for a record that is one of very many (a watch event of a streaming list of
// thousands): it queues the line and returns, and the line goes out with the next batch, within
// LaterDelay, or with the next Write, Flush or Stop, whichever comes first, in the order
// logged. One system call then carries up to LaterBytes of lines: a lab whose K informers log
// every event of their initial lists makes a few hundred calls a second, not one per event.
type Writer struct {
	Source string
	json   io.Writer // may be nil
	text   io.Writer // may be nil
	now    func() time.Time

	mu       sync.Mutex
	written  *sync.Cond // signalled (on mu) when a batch has been written
	done     bool       // Stop queued the last record
	batch    lines      // queued, not yet being written
	spare    lines      // the buffers of the batch written last, reused
	queued   uint64     // lines queued so far
	flushed  uint64     // lines written so far
	flushing bool       // a goroutine is writing a batch, without mu
	timer    bool       // a flush of what Later queued is due within LaterDelay
}

// What Later holds back: at most LaterDelay, and at most LaterBytes of lines; a Later that finds
// more queued writes them itself, like Write, so a fast producer waits for the output.
const (
	LaterDelay = 20 * time.Millisecond
	LaterBytes = 256 << 10
)

// lines are the bytes of queued lines, for each output.
type lines struct{ json, text []byte }

// NewWriter returns a Writer stamping records with source. Either output may be nil.
func NewWriter(source string, jsonOut, textOut io.Writer) *Writer {
	w := &Writer{Source: source, json: jsonOut, text: textOut, now: time.Now}
	w.written = sync.NewCond(&w.mu)
	return w
}

// Write stamps r with schema, time and source (unless set) and writes it.
func (w *Writer) Write(r Record) { w.write(r, false, true) }

// Later stamps r as Write does and queues it, to be written within LaterDelay (see Writer): a
// crash in that time loses it.
func (w *Writer) Later(r Record) { w.write(r, false, false) }

// write encodes r, queues its lines and, if wait, waits until they are written; last makes r
// the log's last record (Stop), in the same critical section, so that nothing can follow it.
func (w *Writer) write(r Record, last, wait bool) {
	if w == nil {
		return
	}
	r.Schema = Schema
	if r.Time.IsZero() {
		r.Time = w.now()
	}
	if r.Source == "" {
		r.Source = w.Source
	}
	var js []byte
	if w.json != nil {
		if line, err := r.Marshal(); err == nil {
			js = line
		}
	}
	var text string
	if w.text != nil {
		text = r.Text()
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return
	}
	w.done = last
	if js != nil {
		w.batch.json = append(append(w.batch.json, js...), '\n')
	}
	if w.text != nil {
		w.batch.text = append(append(w.batch.text, text...), '\n')
	}
	w.queued++
	if !wait && len(w.batch.json)+len(w.batch.text) < LaterBytes {
		if !w.timer {
			w.timer = true
			time.AfterFunc(LaterDelay, w.flushLater)
		}
		return
	}
	w.flush(w.queued)
}

// Flush returns once every line queued so far, Later's too, has been written.
func (w *Writer) Flush() {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.flush(w.queued)
}

// flushLater writes what Later queued, unless a Write or Stop has already.
func (w *Writer) flushLater() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.timer = false
	w.flush(w.queued)
}

// flush returns, with mu held, once the first n lines queued have been written. Whoever
// finds no write under way writes everything queued so far; the others wait for it, and one
// of those still waiting writes what was queued meanwhile.
func (w *Writer) flush(n uint64) {
	for w.flushed < n {
		if w.flushing {
			w.written.Wait()
			continue
		}
		w.flushing = true
		out, upto := w.batch, w.queued
		w.batch = lines{w.spare.json[:0], w.spare.text[:0]}
		w.mu.Unlock()
		if len(out.json) > 0 {
			w.json.Write(out.json)
		}
		if len(out.text) > 0 {
			w.text.Write(out.text)
		}
		w.mu.Lock()
		w.spare, w.flushed, w.flushing = out, upto, false
		w.written.Broadcast()
	}
}

// Stop writes the SETUP stopped record, the log's last: what is written after it is dropped. A
// reader takes "stopped" to mean nothing follows, yet a goroutine the writer's owner cannot join
// may still write (client-go v0.32's reflector leaves its LIST running after its informer stops,
// see lab.Run).
func (w *Writer) Stop(value, detail string) {
	w.write(Record{Kind: Setup, Step: StepStopped, Value: value, Detail: detail}, true, true)
}

// Setup writes a SETUP record.
func (w *Writer) Setup(tag, step, value, detail string) {
	w.Write(Record{Kind: Setup, Tag: tag, Step: step, Value: value, Detail: detail})
}

// KindOf returns the kind of a line that a Writer wrote, without decoding the line: a reader
// that follows only some kinds (the harness, which copies every line of a lab to its log but
// watches only its SETUP, HTTP and WATCH-EVENT records) skips the others at almost no cost.
// Marshal writes the kind as the fourth key, after schema, time and source, whose values (a
// number and two strings, where a quote is always escaped) cannot hold the bytes "kind":", so
// the first of them is the record's own. ok is false for a line without them; Parse tells what
// is wrong with such a line.
func KindOf(line []byte) (kind Kind, ok bool) {
	_, rest, found := bytes.Cut(line, []byte(`"kind":"`))
	if !found {
		return "", false
	}
	value, _, found := bytes.Cut(rest, []byte(`"`))
	if !found {
		return "", false
	}
	return Kind(value), true
}

// ParseError names the file and line a record could not be read from.
type ParseError struct {
	File string
	Line int
	Err  error
}

func (e *ParseError) Error() string { return fmt.Sprintf("%s:%d: %v", e.File, e.Line, e.Err) }
func (e *ParseError) Unwrap() error { return e.Err }

// ErrEmpty is returned for a log with no records.
var ErrEmpty = errors.New("no records")

// ReadFile reads a JSON-lines log. A last line without its newline is reported as truncated:
// the writer was stopped mid-line, and the records before it are returned with the error.
func ReadFile(path string) ([]Record, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	return Read(f, path)
}

// Read reads JSON-lines records from r; name is used in errors.
func Read(r io.Reader, name string) ([]Record, error) {
	var out []Record
	br := bufio.NewReader(r)
	for n := 1; ; n++ {
		line, err := br.ReadBytes('\n')
		if len(line) == 0 && err == io.EOF {
			break
		}
		if err != nil && err != io.EOF {
			return out, &ParseError{name, n, err}
		}
		complete := err == nil
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			if !complete {
				break
			}
			continue
		}
		rec, perr := Parse(line)
		if perr != nil {
			if !complete {
				return out, &ParseError{name, n, fmt.Errorf("truncated last line (the writer stopped mid-line): %w", perr)}
			}
			return out, &ParseError{name, n, perr}
		}
		out = append(out, rec)
		if !complete {
			break
		}
	}
	if len(out) == 0 {
		return nil, &ParseError{name, 1, ErrEmpty}
	}
	return out, nil
}

// MarshalLines renders recs as a log file holds them, one JSON line each, as they are: Read's
// counterpart for logs built in code (tests, a synthetic run), which a Writer would stamp with
// its own schema, time and source.
func MarshalLines(recs []Record) ([]byte, error) {
	var buf []byte
	for _, r := range recs {
		line, err := r.Marshal()
		if err != nil {
			return nil, err
		}
		buf = append(append(buf, line...), '\n')
	}
	return buf, nil
}

// Span is the time of the first and of the last of recs (zero times for none).
func Span(recs []Record) (first, last time.Time) {
	if len(recs) == 0 {
		return first, last
	}
	return recs[0].Time, recs[len(recs)-1].Time
}

// Files are the files that pattern (filepath.Glob's) matches, in name order; none is an error
// that says which command makes them.
func Files(pattern, madeBy string) ([]string, error) {
	files, err := filepath.Glob(pattern)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", pattern, err)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("no file matches %s: run %s", pattern, madeBy)
	}
	sort.Strings(files)
	return files, nil
}
