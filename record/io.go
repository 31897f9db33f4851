package record

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"
)

// Writer writes records as JSON lines and/or text lines. It is safe for concurrent use and
// writes each line with one Write call, unbuffered, so what was logged before a crash is on disk.
type Writer struct {
	Source string
	mu     sync.Mutex
	json   io.Writer // may be nil
	text   io.Writer // may be nil
	now    func() time.Time
	done   bool // Stop wrote the last record
}

// NewWriter returns a Writer stamping records with source. Either output may be nil.
func NewWriter(source string, jsonOut, textOut io.Writer) *Writer {
	return &Writer{Source: source, json: jsonOut, text: textOut, now: time.Now}
}

// Write stamps r with schema, time and source (unless set) and writes it.
func (w *Writer) Write(r Record) {
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
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.done {
		return
	}
	if w.json != nil {
		if line, err := r.Marshal(); err == nil {
			w.json.Write(append(line, '\n'))
		}
	}
	if w.text != nil {
		io.WriteString(w.text, r.Text()+"\n")
	}
}

// Stop writes the SETUP stopped record, the log's last: what is written after it is dropped. A
// reader takes "stopped" to mean nothing follows, yet a goroutine the writer's owner cannot join
// may still write (client-go v0.32's reflector leaves its LIST running after its informer stops,
// see lab.Run).
func (w *Writer) Stop(value, detail string) {
	if w == nil {
		return
	}
	w.Setup("", StepStopped, value, detail)
	w.mu.Lock()
	w.done = true
	w.mu.Unlock()
}

// Setup writes a SETUP record.
func (w *Writer) Setup(tag, step, value, detail string) {
	w.Write(Record{Kind: Setup, Tag: tag, Step: step, Value: value, Detail: detail})
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
