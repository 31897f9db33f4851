package wire_test

import (
	"bytes"
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"informer-lab/lab/controlplane"
	"informer-lab/lab/crd"
	"informer-lab/lab/mutator"
	"informer-lab/lab/wire"
	"informer-lab/record"

	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/discovery"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/rest"
)

const endAnnotation = record.AnnotationInitialEventsEnd

var (
	widgets    = crd.GVR
	configMaps = mutator.ConfigMaps
)

// The dynamic client (custom resources, unstructured JSON) and the metadata client
// (PartialObjectMetadata, protobuf or JSON) read through the wire from a real apiserver: a LIST,
// a WATCH from its rv with three writes, and a streaming list (sendInitialEvents) up to its end
// bookmark. The wire must record what each client decoded, object for object.
func TestDynamicAndMetadataClients(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cp, admin := seeded(t, ctx, "")

	// The server's Content-Type names the format only, not the "as=PartialObjectMetadataList"
	// the client asked for, and a custom resource's metadata comes as protobuf too: the server
	// converts it to PartialObjectMetadata, a built-in type, before encoding.
	const (
		protobuf      = "application/vnd.kubernetes.protobuf"
		protobufWatch = "application/vnd.kubernetes.protobuf;stream=watch"
		json          = "application/json"
	)
	tests := []struct {
		name string
		// jsonOnly drops the protobuf alternatives from the metadata client's Accept, as a
		// client that never asks for protobuf would send it
		jsonOnly            bool
		client              func(cfg *rest.Config) (resource, error)
		write               func(ctx context.Context, op, name string, tick int) error
		writeName           string // the object the writes create, update and delete
		wantList, wantWatch string // the responses' content types
	}{
		{"dynamic widgets", false, dynamicClient(widgets), admin.writeWidget, "dyn", json, json},
		{"metadata configmaps", false, metadataClient(configMaps), admin.writeConfigMap, "meta", protobuf, protobufWatch},
		{"metadata configmaps json", true, metadataClient(configMaps), admin.writeConfigMap, "meta-json", json, json},
		{"metadata widgets", false, metadataClient(widgets), admin.writeWidget, "meta", protobuf, protobufWatch},
	}
	t.Run("discovery", func(t *testing.T) { checkDiscovery(t, cp.Config) })
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			logs := &bytes.Buffer{}
			cfg := rest.CopyConfig(cp.Config)
			cfg.Wrap(wire.Wrap("T", record.NewWriter("test", logs, nil)))
			if tt.jsonOnly {
				cfg.Wrap(func(next http.RoundTripper) http.RoundTripper { return jsonOnly{next} })
			}
			c, err := tt.client(cfg)
			if err != nil {
				t.Fatal(err)
			}
			c.write, c.writeName = tt.write, tt.writeName
			read := exercise(t, ctx, c)
			recs := checkRecords(t, logs, read)
			checkContentTypes(t, recs, tt.wantList, tt.wantWatch)
		})
	}
}

// Aggregated discovery (what a RESTMapper reads through the lab's wire) is a list too, of API
// groups: the wire must not record it as an informer's LIST, nor fault on it.
func checkDiscovery(t *testing.T, cfg *rest.Config) {
	logs := &bytes.Buffer{}
	cfg = rest.CopyConfig(cfg)
	cfg.Wrap(wire.Wrap("T", record.NewWriter("test", logs, nil)))
	dc, err := discovery.NewDiscoveryClientForConfig(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := dc.ServerGroupsAndResources(); err != nil {
		t.Fatal(err)
	}
	recs, err := record.Read(logs, t.Name())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		t.Log(r.Text())
		if r.Kind != record.HTTP {
			t.Errorf("discovery: %s", r.Text())
		}
	}
}

// resource is one client's view of one collection (through the wire) and a writer of it
// (around the wire).
type resource struct {
	list      func(ctx context.Context, opts metav1.ListOptions) (runtime.Object, error)
	watch     func(ctx context.Context, opts metav1.ListOptions) (watch.Interface, error)
	write     func(ctx context.Context, op, name string, tick int) error
	writeName string
}

func dynamicClient(gvr schema.GroupVersionResource) func(*rest.Config) (resource, error) {
	return func(cfg *rest.Config) (resource, error) {
		dc, err := dynamic.NewForConfig(cfg)
		if err != nil {
			return resource{}, err
		}
		ri := dc.Resource(gvr).Namespace("default")
		return resource{
			list:  func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return ri.List(ctx, o) },
			watch: ri.Watch,
		}, nil
	}
}

func metadataClient(gvr schema.GroupVersionResource) func(*rest.Config) (resource, error) {
	return func(cfg *rest.Config) (resource, error) {
		mc, err := metadata.NewForConfig(cfg)
		if err != nil {
			return resource{}, err
		}
		ri := mc.Resource(gvr).Namespace("default")
		return resource{
			list:  func(ctx context.Context, o metav1.ListOptions) (runtime.Object, error) { return ri.List(ctx, o) },
			watch: ri.Watch,
		}, nil
	}
}

// jsonOnly removes the protobuf alternatives from a request's Accept.
type jsonOnly struct{ next http.RoundTripper }

func (j jsonOnly) RoundTrip(req *http.Request) (*http.Response, error) {
	var keep []string
	for _, alt := range strings.Split(req.Header.Get("Accept"), ",") {
		if !strings.Contains(alt, "protobuf") {
			keep = append(keep, alt)
		}
	}
	req = req.Clone(req.Context())
	req.Header.Set("Accept", strings.Join(keep, ","))
	return j.next.RoundTrip(req)
}

// clientRead is what a client itself decoded, one line per LIST or event, in the form
// wireLine renders the records.
type clientRead struct {
	list          string
	watch, stream []string
}

func (c clientRead) lines() []string {
	return append(append([]string{c.list}, c.watch...), c.stream...)
}

// exercise LISTs, WATCHes from the list's rv while the writer creates, updates and deletes
// one object, then opens a streaming list and reads it up to its end bookmark.
func exercise(t *testing.T, ctx context.Context, c resource) clientRead {
	t.Helper()
	var read clientRead
	list, err := c.list(ctx, metav1.ListOptions{})
	if err != nil {
		t.Fatalf("LIST: %v", err)
	}
	read.list, err = listLine(list)
	if err != nil {
		t.Fatal(err)
	}
	lm, err := meta.ListAccessor(list)
	if err != nil {
		t.Fatal(err)
	}

	w, err := c.watch(ctx, metav1.ListOptions{ResourceVersion: lm.GetResourceVersion()})
	if err != nil {
		t.Fatalf("WATCH: %v", err)
	}
	for i, op := range []string{"create", "update", "delete"} {
		if err := c.write(ctx, op, c.writeName, i+2); err != nil {
			t.Fatal(err)
		}
	}
	read.watch = readEvents(t, ctx, w, func(lines []string, _ watch.Event) bool { return len(lines) == 3 })

	w, err = c.watch(ctx, metav1.ListOptions{SendInitialEvents: ptr(true), ResourceVersionMatch: metav1.ResourceVersionMatchNotOlderThan, AllowWatchBookmarks: true})
	if err != nil {
		t.Fatalf("streaming WATCH: %v", err)
	}
	read.stream = readEvents(t, ctx, w, func(_ []string, ev watch.Event) bool {
		m, err := meta.Accessor(ev.Object)
		return ev.Type == watch.Bookmark && err == nil && m.GetAnnotations()[endAnnotation] == "true"
	})
	return read
}

// readEvents reads w until done says so, then stops it. Stop closes the body, and closing
// waits for the wire's decoder: every event the client read is in the log when this returns.
func readEvents(t *testing.T, ctx context.Context, w watch.Interface, done func([]string, watch.Event) bool) []string {
	t.Helper()
	defer w.Stop()
	var lines []string
	for {
		select {
		case ev, ok := <-w.ResultChan():
			if !ok {
				t.Fatalf("watch ended after %v", lines)
			}
			m, err := meta.Accessor(ev.Object)
			if err != nil {
				t.Fatalf("event %s of a %T: %v", ev.Type, ev.Object, err)
			}
			var annotations map[string]string
			if ev.Type == watch.Bookmark {
				annotations = m.GetAnnotations()
			}
			lines = append(lines, eventLine(string(ev.Type), m.GetNamespace(), m.GetName(), m.GetResourceVersion(), annotations))
			if done(lines, ev) {
				return lines
			}
		case <-ctx.Done():
			t.Fatalf("client saw only %v", lines)
		}
	}
}

func eventLine(typ, ns, name, rv string, annotations map[string]string) string {
	line := fmt.Sprintf("%s %s/%s rv=%s", typ, ns, name, rv)
	if len(annotations) > 0 {
		line += fmt.Sprintf(" %v", annotations)
	}
	return line
}

func listLine(list runtime.Object) (string, error) {
	lm, err := meta.ListAccessor(list)
	if err != nil {
		return "", err
	}
	var items []record.Item
	err = meta.EachListItem(list, func(o runtime.Object) error {
		m, err := meta.Accessor(o)
		if err == nil {
			items = append(items, record.Item{Namespace: m.GetNamespace(), Name: m.GetName(), RV: m.GetResourceVersion()})
		}
		return err
	})
	return fmt.Sprintf("LIST rv=%s items=%v", lm.GetResourceVersion(), items), err
}

// wireLine renders a LIST or WATCH-EVENT record as the client's line; "" for other records.
func wireLine(r record.Record) string {
	switch r.Kind {
	case record.List:
		return fmt.Sprintf("LIST rv=%s items=%v", r.RV, r.Items)
	case record.WatchEvent:
		return eventLine(r.Event, r.Namespace, r.Name, r.RV, r.Annotations)
	}
	return ""
}

// checkRecords reads the wire's log and compares its LIST and event records with what the
// client read; any SETUP record (a fault: something not decoded) fails the test.
func checkRecords(t *testing.T, logs *bytes.Buffer, read clientRead) []record.Record {
	t.Helper()
	recs, err := record.Read(logs, t.Name())
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range recs {
		t.Log(r.Text())
		if r.Kind == record.Setup {
			t.Errorf("wire: %s", r.Text())
		}
		if l := wireLine(r); l != "" {
			got = append(got, l)
		}
	}
	want := read.lines()
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("the wire's records differ from what the client read:\nwire:\n  %s\nclient:\n  %s", strings.Join(got, "\n  "), strings.Join(want, "\n  "))
	}
	if n := len(read.stream); n == 0 || !strings.Contains(read.stream[n-1], endAnnotation+":true") {
		t.Errorf("the streaming list did not end with the %s bookmark: %v", endAnnotation, read.stream)
	}
	return recs
}

// checkContentTypes checks the Content-Type of the LIST and of both WATCH responses.
func checkContentTypes(t *testing.T, recs []record.Record, wantList, wantWatch string) {
	t.Helper()
	n := 0
	for _, r := range recs {
		if r.Kind != record.HTTP {
			continue
		}
		n++
		want := wantList
		if record.IsWatch(r) {
			want = wantWatch
		}
		if r.ContentType != want {
			t.Errorf("%s %s?%s answered %q, want %q", r.Method, r.Path, r.Query, r.ContentType, want)
		}
	}
	if n != 3 {
		t.Errorf("%d requests on the wire, want 3 (LIST, WATCH, streaming WATCH)", n)
	}
}

func startControlPlane(t *testing.T, ctx context.Context, featureGates string) *controlplane.ControlPlane {
	t.Helper()
	start := time.Now()
	cp, err := controlplane.Start(ctx, controlplane.Options{Settings: featureGates})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cp.Stop() })
	t.Logf("kube-apiserver %s (feature gates %q) up in %s", cp.ServerVersion, featureGates, time.Since(start).Round(time.Millisecond))
	return cp
}

// seeded starts a control plane with the lab's custom resource (lab/crd) served, and two
// ConfigMaps and two Widgets in it, seed-1 and seed-2.
func seeded(t *testing.T, ctx context.Context, featureGates string) (*controlplane.ControlPlane, admin) {
	t.Helper()
	cp := startControlPlane(t, ctx, featureGates)
	if err := crd.Install(ctx, cp.Config); err != nil {
		t.Fatal(err)
	}
	admin := newAdmin(t, cp.Config)
	for _, name := range []string{"seed-1", "seed-2"} {
		if err := admin.writeWidget(ctx, "create", name, 1); err != nil {
			t.Fatal(err)
		}
		if err := admin.writeConfigMap(ctx, "create", name, 1); err != nil {
			t.Fatal(err)
		}
	}
	return cp, admin
}

// admin writes around the wire, with the control plane's admin credentials, as the lab's
// writer does.
type admin struct{ configMaps, widgets *mutator.Target }

func newAdmin(t *testing.T, cfg *rest.Config) admin {
	t.Helper()
	cms, err := mutator.TargetFor(cfg, mutator.ConfigMaps)
	if err != nil {
		t.Fatal(err)
	}
	ws, err := mutator.TargetFor(cfg, mutator.Widgets)
	if err != nil {
		t.Fatal(err)
	}
	return admin{cms, ws}
}

// writeConfigMap creates, updates (data.tick) or deletes ConfigMap default/name.
func (a admin) writeConfigMap(ctx context.Context, op, name string, tick int) error {
	return write(ctx, a.configMaps, op, name, tick)
}

// writeWidget creates, updates (spec.tick) or deletes Widget default/name.
func (a admin) writeWidget(ctx context.Context, op, name string, tick int) error {
	return write(ctx, a.widgets, op, name, tick)
}

func write(ctx context.Context, to *mutator.Target, op, name string, tick int) error {
	ops := map[string]mutator.Op{"create": mutator.Create, "update": mutator.Update, "delete": mutator.Delete}
	_, err := to.Apply(ctx, "default", mutator.Step{Op: ops[op], Name: name, Tick: tick})
	return err
}

func ptr[T any](v T) *T { return &v }
