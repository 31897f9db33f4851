package wire

import (
	"bytes"
	"io"
	"testing"
	"time"

	"informer-lab/record"
)

// The decoder reads what the client read, in order, each byte with the stamp of the client read
// that brought it; the client's reads wait only while maxPending is queued; caughtUp returns
// once the decoder has asked for more after reading everything written, and the end comes
// after the bytes.
func TestPending(t *testing.T) {
	p := newPending()
	t0 := time.Date(2026, 12, 4, 0, 0, 0, 0, time.UTC)
	p.write([]byte("abc"), stamp{time: t0, body: record.Body{Wire: 3}})
	p.write([]byte("defg"), stamp{time: t0.Add(time.Second), body: record.Body{Wire: 7}})

	buf := make([]byte, 2)
	if n, _ := p.Read(buf); string(buf[:n]) != "ab" || p.stamp().time != t0 {
		t.Errorf("first read %q at %v, want \"ab\" of the first write", buf[:n], p.stamp().time)
	}
	if n, _ := p.Read(buf); string(buf[:n]) != "cd" || p.stamp().body.Wire != 7 {
		t.Errorf("second read %q with body %+v, want \"cd\" ending in the second write (7 bytes)", buf[:n], p.stamp().body)
	}

	caught := make(chan struct{})
	go func() { p.caughtUp(); close(caught) }()
	select {
	case <-caught:
		t.Fatal("caughtUp returned with 3 bytes unread")
	case <-time.After(50 * time.Millisecond):
	}
	rest := make([]byte, 8)
	if n, _ := p.Read(rest); string(rest[:n]) != "efg" {
		t.Errorf("third read %q, want \"efg\"", rest[:n])
	}
	select {
	case <-caught:
		t.Fatal("caughtUp returned before the decoder asked for more")
	case <-time.After(50 * time.Millisecond):
	}
	read := make(chan string)
	go func() { // asks for more: caught up; then reads what comes next
		b, _ := io.ReadAll(p)
		read <- string(b)
	}()
	select {
	case <-caught:
	case <-time.After(10 * time.Second):
		t.Fatal("caughtUp did not return once the decoder waited for more")
	}

	full := make(chan struct{})
	go func() { // more than maxPending: returns once the reader has taken some
		p.write(bytes.Repeat([]byte("x"), maxPending), stamp{})
		p.write([]byte("y"), stamp{})
		p.closeWithError(nil)
		close(full)
	}()
	select {
	case <-full:
	case <-time.After(10 * time.Second):
		t.Fatal("writes did not return while the reader read")
	}
	if got := <-read; len(got) != maxPending+1 || got[len(got)-1] != 'y' {
		t.Errorf("after the end the reader got %d bytes ending %q, want %d ending \"y\"", len(got), got[len(got)-1:], maxPending+1)
	}

	gone := newPending()
	gone.Close()
	done := make(chan struct{})
	go func() { gone.write(bytes.Repeat([]byte("z"), 2*maxPending), stamp{}); close(done) }()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("a write waited for a reader that had stopped")
	}
}
