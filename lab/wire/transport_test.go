package wire_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"informer-lab/lab/lifecycle"
	"informer-lab/lab/wire"
	"informer-lab/record"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// A JSON client and a protobuf client LIST and WATCH the same writes on a real apiserver:
// the logging RoundTripper must decode both wire formats to the same records, and the clients
// must read exactly what they would read without it.
// The tests start etcd and kube-apiserver: this binary is their reaper if it is killed.
func TestMain(m *testing.M) { lifecycle.TestMain(m) }

func TestJSONAndProtobufDecodeAlike(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cp := startControlPlane(t, ctx, "")
	admin := newAdmin(t, cp.Config)
	if err := admin.writeConfigMap(ctx, "create", "seed", 1); err != nil {
		t.Fatal(err)
	}

	formats := []struct{ name, contentType, wantWatchType string }{
		{"json", "application/json", "application/json"},
		{"protobuf", "application/vnd.kubernetes.protobuf", "application/vnd.kubernetes.protobuf;stream=watch"},
	}
	type client struct {
		logs    *bytes.Buffer
		watcher watch.Interface
		seen    []string // what the client itself decoded
	}
	clients := make([]*client, len(formats))
	var listRV string
	for i, f := range formats {
		c := &client{logs: &bytes.Buffer{}}
		cfg := rest.CopyConfig(cp.Config)
		cfg.ContentType = f.contentType
		cfg.AcceptContentTypes = f.contentType
		cfg.Wrap(wire.Wrap(f.name, record.NewWriter("test", c.logs, nil)))
		cs, err := kubernetes.NewForConfig(cfg)
		if err != nil {
			t.Fatal(err)
		}
		// The second client lists at the first one's rv: the apiserver's own writes (leases)
		// may move the current rv between the two LISTs on a loaded machine.
		opts := metav1.ListOptions{}
		if listRV != "" {
			opts = metav1.ListOptions{ResourceVersion: listRV, ResourceVersionMatch: metav1.ResourceVersionMatchExact}
		}
		list, err := cs.CoreV1().ConfigMaps("default").List(ctx, opts)
		if err != nil {
			t.Fatal(err)
		}
		if listRV == "" {
			listRV = list.ResourceVersion
		}
		c.watcher, err = cs.CoreV1().ConfigMaps("default").Watch(ctx, metav1.ListOptions{ResourceVersion: listRV})
		if err != nil {
			t.Fatal(err)
		}
		defer c.watcher.Stop()
		clients[i] = c
	}

	steps := []string{"create", "update", "delete"}
	for i, op := range steps {
		if err := admin.writeConfigMap(ctx, op, "cm", i+2); err != nil {
			t.Fatal(err)
		}
	}
	for _, c := range clients {
		for len(c.seen) < len(steps) {
			select {
			case ev := <-c.watcher.ResultChan():
				m := ev.Object.(metav1.Object)
				c.seen = append(c.seen, fmt.Sprintf("%s %s rv=%s", ev.Type, m.GetName(), m.GetResourceVersion()))
			case <-ctx.Done():
				t.Fatalf("client saw only %v", c.seen)
			}
		}
		// Stop closes the body, and closing waits for the logger's decoder: every event the
		// client read is in the log now, with no wait.
		c.watcher.Stop()
	}

	var got [][]string
	for i, c := range clients {
		recs, err := record.Read(c.logs, formats[i].name)
		if err != nil {
			t.Fatal(err)
		}
		var lines, events []string
		for _, r := range recs {
			switch r.Kind {
			case record.HTTP:
				if strings.Contains(r.Query, "watch=true") && r.ContentType != formats[i].wantWatchType {
					t.Errorf("%s: watch response content type %q, want %q", formats[i].name, r.ContentType, formats[i].wantWatchType)
				}
			case record.List:
				lines = append(lines, fmt.Sprintf("LIST rv=%s items=%v", r.RV, r.Items))
			case record.WatchEvent:
				line := fmt.Sprintf("%s %s rv=%s", r.Event, r.Name, r.RV)
				lines = append(lines, line)
				events = append(events, line)
			}
		}
		if strings.Join(events, "\n") != strings.Join(c.seen, "\n") {
			t.Errorf("%s: the log's events differ from what the client read:\nlog:    %v\nclient: %v", formats[i].name, events, c.seen)
		}
		got = append(got, lines)
	}
	if a, b := strings.Join(got[0], "\n"), strings.Join(got[1], "\n"); a != b || len(got[0]) != 1+len(steps) {
		t.Errorf("JSON and protobuf records differ (want 1 LIST + %d events each):\njson:\n%s\nprotobuf:\n%s", len(steps), a, b)
	}
}

// Behind a balancer that names the kube-apiserver that answered (record.ServerHeader), the HTTP
// record says which one, and its line shows it; without the header, neither does.
func TestRecordsTheAnsweringServer(t *testing.T) {
	for _, server := range []string{"1.33.13", ""} {
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if server != "" {
				w.Header().Set(record.ServerHeader, server)
			}
			w.Header().Set("Content-Type", "application/json")
			fmt.Fprint(w, `{"kind":"Status","apiVersion":"v1","status":"Failure","message":"no","code":404}`)
		}))
		var logs, text bytes.Buffer
		rt := wire.Wrap("A", record.NewWriter("test", &logs, &text))(http.DefaultTransport)
		req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, srv.URL+"/api/v1/namespaces/default/configmaps/x", nil)
		if err != nil {
			t.Fatal(err)
		}
		resp, err := rt.RoundTrip(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		srv.Close()
		recs, err := record.Read(&logs, "log")
		if err != nil || len(recs) != 1 {
			t.Fatalf("records %v, %v: want one", recs, err)
		}
		if recs[0].Server != server {
			t.Errorf("header %q: record's server %q", server, recs[0].Server)
		}
		if got := strings.Contains(text.String(), " from "+server); got != (server != "") {
			t.Errorf("header %q: line %q", server, text.String())
		}
	}
}
