package wire

import (
	"io"
	"sync"
	"time"

	"informer-lab/record"
)

// maxPending is how far the wire's decoder may fall behind one response's client: a client
// read that finds more not yet decoded waits for the decoder. It bounds the wire's memory (K
// informers' streaming lists: K of these at most) while letting the client read a burst (a
// streaming list's initial events) without waiting for each frame to be decoded and logged.
const maxPending = 4 << 20

// pending is a pipe with a buffer between a response's client and the wire's decoder: the
// client's read copies its bytes in and returns (io.Pipe would hold it until the decoder had
// taken them, one frame at a time, a goroutine switch each). Each chunk keeps when the client
// read it and how much of the body it had read by then, so that a record says when the client
// had its bytes, not when the decoder got to them (stamp).
type pending struct {
	mu      sync.Mutex
	changed *sync.Cond
	buf     []byte // written, not yet read: buf[off:]
	off     int
	written int64   // bytes written so far
	read    int64   // bytes read so far
	chunks  []chunk // the chunks not yet wholly read, oldest first
	last    stamp   // the chunk of the last byte read
	err     error   // the end, once written: returned when buf is drained
	gone    bool    // the reader stopped: what is written is dropped
	entered int64   // how much had been read when the reader last asked for more (caughtUp)
}

// chunk is one client read's bytes: [start, end) of the stream, and its stamp.
type chunk struct {
	start, end int64
	at         stamp
}

// stamp is when the client had read a chunk and how much of the body by then.
type stamp struct {
	time time.Time
	body record.Body
}

func newPending() *pending {
	p := &pending{}
	p.changed = sync.NewCond(&p.mu)
	return p
}

// write queues b, read by the client at the time and body size at says, and waits while more
// than maxPending is queued.
func (p *pending) write(b []byte, at stamp) {
	p.mu.Lock()
	defer p.mu.Unlock()
	for len(p.buf)-p.off >= maxPending && !p.gone {
		p.changed.Wait()
	}
	if p.gone {
		return
	}
	if p.off > 0 && p.off >= len(p.buf)/2 { // reuse the read half before growing
		p.buf = p.buf[:copy(p.buf, p.buf[p.off:])]
		p.off = 0
	}
	p.buf = append(p.buf, b...)
	p.chunks = append(p.chunks, chunk{start: p.written, end: p.written + int64(len(b)), at: at})
	p.written += int64(len(b))
	p.changed.Broadcast()
}

// closeWithError ends the stream: once what is queued has been read, Read returns err (io.EOF
// if nil). The first end counts.
func (p *pending) closeWithError(err error) {
	if err == nil {
		err = io.EOF
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.err == nil {
		p.err = err
	}
	p.changed.Broadcast()
}

func (p *pending) Read(b []byte) (int, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.entered = p.read
	p.changed.Broadcast()
	for p.off == len(p.buf) && p.err == nil {
		p.changed.Wait()
	}
	if p.off == len(p.buf) {
		return 0, p.err
	}
	n := copy(b, p.buf[p.off:])
	p.off += n
	p.read += int64(n)
	for len(p.chunks) > 0 && p.chunks[0].start < p.read {
		p.last = p.chunks[0].at
		if p.chunks[0].end > p.read {
			break
		}
		p.chunks = p.chunks[1:]
	}
	p.changed.Broadcast()
	return n, nil
}

// Close is the reader's: it stopped reading, and the client's reads no longer wait for it.
func (p *pending) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.gone = true
	p.buf, p.off, p.chunks = nil, 0, nil
	p.changed.Broadcast()
	return nil
}

// stamp is the stamp of the chunk that held the last byte read.
func (p *pending) stamp() stamp {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.last
}

// caughtUp returns once the reader has asked for more after reading every byte written so far,
// or has stopped. The decoder asks for more only when what it holds has no whole frame left:
// it has then logged every event the client had read (its framer, or the gzip reader below it,
// may have read ahead; those bytes are held, not read again).
func (p *pending) caughtUp() {
	p.mu.Lock()
	defer p.mu.Unlock()
	target := p.written
	for !p.gone && p.entered < target {
		p.changed.Wait()
	}
}
