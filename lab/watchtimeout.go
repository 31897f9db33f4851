package lab

import (
	"net/http"
	"strconv"
	"time"

	"informer-lab/record"
)

// shortWatches is -watch-timeout: every watch request asks kube-apiserver to end it after d
// (timeoutSeconds, which the server counts from when it starts serving the watch), in place of
// the 5 to 10 minutes the reflector picks. The reflector offers no shorter one: its
// MinWatchTimeout option takes only values above its default (k8s.io/client-go@v0.32.13
// tools/cache/reflector.go, "if options.MinWatchTimeout > defaultMinWatchTimeout {"). The
// request is rewritten on its way out, outside the wire's RoundTripper, so the wire logs the
// timeout the server got; the client's own deadline (the timeout parameter, which the reflector
// sets alike) is rewritten with it.
func shortWatches(d time.Duration) func(http.RoundTripper) http.RoundTripper {
	return func(next http.RoundTripper) http.RoundTripper {
		return &watchTimeout{seconds: int64(d / time.Second), next: next}
	}
}

type watchTimeout struct {
	seconds int64
	next    http.RoundTripper
}

func (w *watchTimeout) RoundTrip(req *http.Request) (*http.Response, error) {
	q := req.URL.Query()
	if !record.ClassifyRequest(req.URL.Path, req.URL.RawQuery).Watch || q.Get("timeoutSeconds") == "" {
		return w.next.RoundTrip(req)
	}
	q.Set("timeoutSeconds", strconv.FormatInt(w.seconds, 10))
	if q.Has("timeout") {
		q.Set("timeout", (time.Duration(w.seconds) * time.Second).String())
	}
	sent := req.Clone(req.Context())
	sent.URL.RawQuery = q.Encode()
	return w.next.RoundTrip(sent)
}
