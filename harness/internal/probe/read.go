package probe

import (
	"context"
	"io"
	"net/http"
	"sync/atomic"
	"time"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
)

// read collects a stream's events until the end bookmark (annotated), an ERROR, the stream's
// end, ctx's end (timeout) or maxObjects objects.
func read(ctx context.Context, w watch.Interface, timeout time.Duration, maxObjects int) stream {
	var s stream
	objects := 0
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				if ctx.Err() != nil {
					s.timeout = timeout
				} else {
					s.ended = true
				}
				return s
			}
			s.events = append(s.events, ev)
			switch ev.Type {
			case watch.Error:
				return s
			case watch.Bookmark:
				if m, err := meta.Accessor(ev.Object); err != nil || m.GetAnnotations()[metav1.InitialEventsAnnotationKey] == "true" {
					return s
				}
			case watch.Added:
				if objects++; objects >= maxObjects {
					s.capped = maxObjects
					return s
				}
			}
		case <-ctx.Done():
			s.timeout = timeout
			return s
		}
	}
}

// countingTransport counts the bytes of the response bodies read through it, and takes the
// Retry-After header off every answer: client-go's rest client would retry such an answer up to
// ten times, a second or more apart, before the probe saw it (rest/with_retry.go), and the probe
// grades the server's first answer within its -timeout.
type countingTransport struct {
	rt   http.RoundTripper
	read *atomic.Int64
}

func (t countingTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := t.rt.RoundTrip(req)
	if err == nil {
		resp.Header.Del("Retry-After")
		resp.Body = countingBody{resp.Body, t.read}
	}
	return resp, err
}

type countingBody struct {
	io.ReadCloser
	read *atomic.Int64
}

func (b countingBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	b.read.Add(int64(n))
	return n, err
}
