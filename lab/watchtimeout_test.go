package lab

import (
	"errors"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"
)

type lastRequest struct{ url string }

func (l *lastRequest) RoundTrip(req *http.Request) (*http.Response, error) {
	l.url = req.URL.String()
	return &http.Response{StatusCode: http.StatusOK, Body: http.NoBody, Request: req}, nil
}

// -watch-timeout rewrites the timeout of the reflector's watches, and of nothing else: a LIST,
// and a watch that asked for no timeout, go as they came.
func TestShortWatches(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"/api/v1/configmaps?allowWatchBookmarks=true&resourceVersion=39&timeout=5m31s&timeoutSeconds=331&watch=true",
			"/api/v1/configmaps?allowWatchBookmarks=true&resourceVersion=39&timeout=5s&timeoutSeconds=5&watch=true"},
		{"/api/v1/namespaces/n/configmaps?allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&sendInitialEvents=true&timeout=9m59s&timeoutSeconds=599&watch=true",
			"/api/v1/namespaces/n/configmaps?allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&sendInitialEvents=true&timeout=5s&timeoutSeconds=5&watch=true"},
		{"/api/v1/configmaps?limit=500&resourceVersion=0", "/api/v1/configmaps?limit=500&resourceVersion=0"},
		{"/api/v1/configmaps?watch=true", "/api/v1/configmaps?watch=true"},
	} {
		next := &lastRequest{}
		req, _ := http.NewRequest(http.MethodGet, "https://127.0.0.1:6443"+tc.in, nil)
		if _, err := shortWatches(5 * time.Second)(next).RoundTrip(req); err != nil {
			t.Fatal(err)
		}
		if got := strings.TrimPrefix(next.url, "https://127.0.0.1:6443"); got != tc.want {
			t.Errorf("%s\nwent as %s\nwant    %s", tc.in, got, tc.want)
		}
		if req.URL.RequestURI() != tc.in {
			t.Errorf("the caller's request changed: %s", req.URL.RequestURI())
		}
	}
	for _, args := range []string{"-watch-timeout 1500ms", "-watch-timeout -1s"} {
		_, err := parseFlags("client-v0xx", Cell{WatchList: "default"}, strings.Fields(args), io.Discard)
		if err == nil || !errors.As(err, new(usageError)) || !strings.HasPrefix(err.Error(), "-watch-timeout must be whole seconds") {
			t.Errorf("%s: %v, want one usage line about -watch-timeout", args, err)
		}
	}
}
