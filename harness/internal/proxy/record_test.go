package proxy

import (
	"context"
	"flag"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/rest"
)

var record = flag.Bool("record", false, "record real streaming-list responses of an envtest apiserver into testdata/ (TestRecordWatchStreams)")

// The recordings the frame-rewriting tests run on: the raw bytes of a streaming-list response
// of kube-apiserver 1.32.13, in each content type client-go asks for.
var recordings = []struct {
	file, accept, contentType string
}{
	{"testdata/watchlist.json", "application/json", "application/json"},
	{"testdata/watchlist.protobuf", "application/vnd.kubernetes.protobuf,application/json", "application/vnd.kubernetes.protobuf;stream=watch"},
}

// recordedNames are the ConfigMaps of the recordings: three before the watch (its initial
// events), one created after the end bookmark (a later event).
var recordedNames = []string{"rec-a", "rec-b", "rec-c"}

const recordedLater = "rec-later"

// TestRecordWatchStreams (go test -run TestRecordWatchStreams -record) boots envtest, creates
// the ConfigMaps in default (no credentials: the data is a counter), and records, straight from
// the apiserver (no proxy), what a streaming list of them returns: the three ADDED events, the
// end bookmark, the ADDED of a ConfigMap created 1 s after the bookmark, the bookmark sent 2 s
// before the watch's timeout (timeoutSeconds=4), then the end of the stream.
func TestRecordWatchStreams(t *testing.T) {
	if !*record {
		t.Skip("records testdata only with -record")
	}
	cp, admin, ns := sharedServer(t)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	for _, name := range recordedNames {
		if _, err := admin.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: name}, Data: map[string]string{"n": "0"}},
			metav1.CreateOptions{FieldManager: "informer-lab-recorder"}); err != nil {
			t.Fatal(err)
		}
	}
	hc, err := rest.HTTPClientFor(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	base, _, err := rest.DefaultServerUrlFor(cp.Config)
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range recordings {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, strings.TrimRight(base.String(), "/")+"/api/v1/namespaces/"+ns+
			"/configmaps?allowWatchBookmarks=true&resourceVersionMatch=NotOlderThan&sendInitialEvents=true&timeoutSeconds=4&watch=true", nil)
		req.Header.Set("Accept", rec.accept)
		req.Header.Set("Accept-Encoding", "identity")
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		if resp.StatusCode != http.StatusOK || resp.Header.Get("Content-Type") != rec.contentType || resp.Header.Get("Content-Encoding") != "" {
			t.Fatalf("%s: %s, Content-Type %q, Content-Encoding %q", rec.file, resp.Status, resp.Header.Get("Content-Type"), resp.Header.Get("Content-Encoding"))
		}
		later := recordedLater
		go func() {
			time.Sleep(time.Second)
			if _, err := admin.CoreV1().ConfigMaps(ns).Create(ctx, &corev1.ConfigMap{ObjectMeta: metav1.ObjectMeta{Name: later}, Data: map[string]string{"n": "0"}},
				metav1.CreateOptions{FieldManager: "informer-lab-recorder"}); err != nil {
				t.Error(err)
			}
		}()
		body, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		if err != nil {
			t.Fatal(err)
		}
		if err := os.MkdirAll(filepath.Dir(rec.file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(rec.file, body, 0o644); err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d bytes, %s", rec.file, len(body), rec.contentType)
		// the later ConfigMap goes, so that the next recording starts from the same three
		if err := admin.CoreV1().ConfigMaps(ns).Delete(ctx, later, metav1.DeleteOptions{}); err != nil {
			t.Fatal(err)
		}
	}
}
