// Package mutator is the single writer: it creates, patches and deletes ConfigMaps (or the lab's
// Widgets), so that every watcher has the same writes to report.
package mutator

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"math/rand"
	"slices"
	"sort"
	"strconv"
	"time"

	"informer-lab/record"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/rest"
)

// Op is a write: CREATE, UPDATE (a merge patch of data.tick, a Widget's spec.tick or a
// Flunder's tick annotation) or DELETE.
type Op string

const (
	Create Op = "CREATE"
	Update Op = "UPDATE"
	Delete Op = "DELETE"
)

// Step is one write of a scenario.
type Step struct {
	Op   Op
	Name string
	Tick int
}

// Cycle is the standalone lab's endless sequence: create lab-cm-N, update it twice, delete it,
// go on with lab-cm-N+1. The tick counts every write.
func Cycle() iter.Seq[Step] {
	return func(yield func(Step) bool) {
		for n, tick := 1, 1; ; n++ {
			name := fmt.Sprintf("lab-cm-%d", n)
			for _, op := range []Op{Create, Update, Update, Delete} {
				if !yield(Step{Op: op, Name: name, Tick: tick}) {
					return
				}
				tick++
			}
		}
	}
}

// Script returns a fixed scenario for a seed: writes over a few ConfigMaps in an order the
// seed decides, with at least min writes of each kind. The same seed gives the same script.
func Script(seed int64, min int) []Step {
	rng := rand.New(rand.NewSource(seed))
	var steps []Step
	live := []string{}
	next, tick := 1, 0
	count := map[Op]int{}
	for count[Create] < min || count[Update] < min || count[Delete] < min || len(live) > 0 {
		tick++
		var op Op
		switch {
		case len(live) == 0:
			op = Create
		case count[Create] < min && rng.Intn(3) == 0:
			op = Create
		case count[Update] < min || rng.Intn(2) == 0:
			op = Update
		default:
			op = Delete
		}
		if count[Create] >= min && count[Update] >= min && len(live) > 0 && op == Create {
			op = Delete
		}
		var name string
		switch op {
		case Create:
			name = fmt.Sprintf("lab-cm-%d", next)
			next++
			live = append(live, name)
		case Update:
			name = live[rng.Intn(len(live))]
		case Delete:
			i := rng.Intn(len(live))
			name = live[i]
			live = append(live[:i], live[i+1:]...)
		}
		count[op]++
		steps = append(steps, Step{Op: op, Name: name, Tick: tick})
	}
	return steps
}

// Target is the resource the writer writes: core/v1 ConfigMaps, the lab's own Widgets
// (lab/crd), or an aggregated apiserver's Flunders. One code path, the dynamic client's, writes
// each, so the script means the same writes whatever the informers watch.
type Target struct {
	GVR schema.GroupVersionResource
	// Labels go on every object the target creates, beside the selector label: on a user's
	// cluster, the run's own label (record.RunLabel), by which the harness finds what it made.
	Labels map[string]string
	kind   string   // the objects' kind
	field  []string // where the tick goes: a ConfigMap's data, a Widget's spec, a Flunder's annotations
	dyn    dynamic.Interface
	raw    rest.Interface
}

// ConfigMaps, Widgets and Flunders (an aggregated sample-apiserver's, lab/aggregated) are the
// resources a writer can write.
var (
	ConfigMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}
	Widgets    = schema.GroupVersionResource{Group: record.CRDGroup, Version: record.CRDVersion, Resource: record.CRDResource}
	Flunders   = schema.GroupVersionResource{Group: record.AggregatedGroup, Version: record.AggregatedVersion, Resource: record.AggregatedResource}
)

// Watched is the resource the informers of kind watch, and so what their writer writes.
// resource "" is the kind's own: Widgets for the kinds on the lab's CRD
// (record.KindWatchesCRD), Flunders for the aggregated kind, else ConfigMaps. A core resource
// named instead (a lab's -resource configmaps or secrets) is watched by the same kind of
// informer: the dynamic and cbor kinds on ConfigMaps get the objects the typed one gets, in JSON
// and CBOR beside its protobuf.
func Watched(kind, resource string) schema.GroupVersionResource {
	switch {
	case resource != "":
		return schema.GroupVersionResource{Version: "v1", Resource: resource}
	case record.KindWatchesCRD(kind):
		return Widgets
	case kind == record.KindAggregated:
		return Flunders
	}
	return ConfigMaps
}

// TargetFor is the writer of gvr: ConfigMaps, Widgets or Flunders (Watched).
func TargetFor(cfg *rest.Config, gvr schema.GroupVersionResource) (*Target, error) {
	t := &Target{GVR: gvr}
	switch gvr {
	case ConfigMaps:
		t.kind, t.field = "ConfigMap", []string{"data"}
	case Widgets:
		t.kind, t.field = record.CRDKind, []string{"spec"}
	case Flunders:
		// A Flunder's spec holds references that are validated; its annotations take any tick.
		t.kind, t.field = record.AggregatedKind, []string{"metadata", "annotations"}
	default:
		return nil, fmt.Errorf("no writer writes %s: the lab writes ConfigMaps, %s and %s", gvr.GroupResource(), Widgets.GroupResource(), Flunders.GroupResource())
	}
	var err error
	if t.dyn, err = dynamic.NewForConfig(cfg); err != nil {
		return nil, fmt.Errorf("writer for %s: %w", t.GVR.Resource, err)
	}
	// The dynamic client's Delete drops the response body, which is the deleted object stamped
	// with the deletion's resourceVersion: the rv watchers see on DELETED. A REST client with
	// the dynamic client's own configuration keeps it.
	if t.raw, err = rest.UnversionedRESTClientFor(dynamic.ConfigFor(cfg)); err != nil {
		return nil, fmt.Errorf("writer for %s: %w", t.GVR.Resource, err)
	}
	return t, nil
}

// Object is a new object of the target's kind named name in ns, labelled with
// record.SelectorLabel (the selector kind's informers select on it) when labelled is true,
// holding fields (data.tick or spec.tick).
func (t *Target) Object(ns, name string, labelled bool, fields map[string]string) *unstructured.Unstructured {
	obj := &unstructured.Unstructured{Object: map[string]any{}}
	obj.SetAPIVersion(t.GVR.GroupVersion().String())
	obj.SetKind(t.kind)
	obj.SetNamespace(ns)
	obj.SetName(name)
	labels := map[string]string{}
	for k, v := range t.Labels {
		labels[k] = v
	}
	if labelled {
		labels[record.SelectorLabel] = record.SelectorValue
	}
	if len(labels) > 0 {
		obj.SetLabels(labels)
	}
	values := map[string]any{}
	for k, v := range fields {
		values[k] = v
	}
	_ = unstructured.SetNestedMap(obj.Object, values, t.field...) // only maps on the way
	return obj
}

// Create makes obj and returns its resourceVersion.
func (t *Target) Create(ctx context.Context, obj *unstructured.Unstructured) (string, error) {
	got, err := t.dyn.Resource(t.GVR).Namespace(obj.GetNamespace()).Create(ctx, obj, metav1.CreateOptions{})
	if err != nil {
		return "", fmt.Errorf("create %s %s/%s: %w", t.kind, obj.GetNamespace(), obj.GetName(), err)
	}
	return got.GetResourceVersion(), nil
}

// Apply makes one write in namespace ns and returns the resourceVersion the apiserver gave it.
// For a DELETE that is the deletion's rv, which watchers see on their DELETED event, only where
// the apiserver answers with the deleted object; it answers a ConfigMap's or a custom
// resource's with a Status, which has none (k8s.io/apiserver's generic store returns the object
// only when a resource's storage sets ReturnDeletedObject, and theirs do not): then "", and the
// deletion's rv is on the watchers' DELETED events alone (compare's resolveDeleteRVs).
func (t *Target) Apply(ctx context.Context, ns string, s Step) (string, error) {
	res := t.dyn.Resource(t.GVR).Namespace(ns)
	switch s.Op {
	case Create:
		return t.Create(ctx, t.Object(ns, s.Name, true, map[string]string{"tick": strconv.Itoa(s.Tick)}))
	case Update:
		patch := map[string]any{}
		_ = unstructured.SetNestedField(patch, strconv.Itoa(s.Tick), append(slices.Clone(t.field), "tick")...)
		body, err := json.Marshal(patch)
		if err != nil {
			return "", err
		}
		got, err := res.Patch(ctx, s.Name, types.MergePatchType, body, metav1.PatchOptions{})
		if err != nil {
			return "", fmt.Errorf("patch %s %s/%s: %w", t.kind, ns, s.Name, err)
		}
		return got.GetResourceVersion(), nil
	case Delete:
		body, err := t.raw.Delete().AbsPath(t.path(ns), s.Name).Body(&metav1.DeleteOptions{}).Do(ctx).Raw()
		if err != nil {
			return "", fmt.Errorf("delete %s %s/%s: %w", t.kind, ns, s.Name, err)
		}
		var deleted unstructured.Unstructured
		if err := deleted.UnmarshalJSON(body); err != nil {
			return "", nil // deleted; only its rv is unknown
		}
		return deleted.GetResourceVersion(), nil
	}
	return "", fmt.Errorf("unknown write %q", s.Op)
}

// List is a fresh LIST of the resource in ns ("" for all), with a label selector if not empty:
// what every informer's cache is checked against. Items are sorted by namespace/name.
func (t *Target) List(ctx context.Context, ns, selector string) (rv string, items []record.Item, err error) {
	l, err := t.dyn.Resource(t.GVR).Namespace(ns).List(ctx, metav1.ListOptions{LabelSelector: selector})
	if err != nil {
		return "", nil, fmt.Errorf("list %s: %w", t.GVR.Resource, err)
	}
	items = []record.Item{}
	for _, o := range l.Items {
		items = append(items, record.Item{Namespace: o.GetNamespace(), Name: o.GetName(), RV: o.GetResourceVersion()})
	}
	sort.Slice(items, func(i, j int) bool {
		return items[i].Namespace+"/"+items[i].Name < items[j].Namespace+"/"+items[j].Name
	})
	return l.GetResourceVersion(), items, nil
}

// DeleteAll deletes every object of the resource in ns.
func (t *Target) DeleteAll(ctx context.Context, ns string) error {
	return t.dyn.Resource(t.GVR).Namespace(ns).DeleteCollection(ctx, metav1.DeleteOptions{}, metav1.ListOptions{})
}

func (t *Target) path(ns string) string {
	prefix := "/api/" + t.GVR.Version
	if t.GVR.Group != "" {
		prefix = "/apis/" + t.GVR.Group + "/" + t.GVR.Version
	}
	return prefix + "/namespaces/" + ns + "/" + t.GVR.Resource
}

// Write makes one write in namespace ns (Apply) and returns its MUTATOR record: with the rv the
// apiserver gave it, or with the error, which it returns too.
func (t *Target) Write(ctx context.Context, ns string, s Step) (record.Record, error) {
	rv, err := t.Apply(ctx, ns, s)
	return Record(ns, s, rv, err), err
}

// Play is the one write loop, the standalone lab's, the harness's and make observe's: it writes
// steps into namespace ns, each one interval after the one before (the first one interval after
// the call, as a ticker would: watchers get that long to start). Before step i it calls before,
// when set; after each write it hands wrote that write's MUTATOR record and error. A non-nil
// error from before or wrote ends the play and is returned; so is ctx's own error, as is, when
// ctx ends while Play waits. Play returns nil once the steps end.
func Play(ctx context.Context, t *Target, ns string, steps iter.Seq[Step], interval time.Duration,
	before func(i int, s Step) error, wrote func(rec record.Record, err error) error) error {
	i := 0
	for s := range steps {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(interval):
		}
		if before != nil {
			if err := before(i, s); err != nil {
				return err
			}
		}
		if err := wrote(t.Write(ctx, ns, s)); err != nil {
			return err
		}
		i++
	}
	return nil
}

// Record is the MUTATOR record of a write.
func Record(ns string, s Step, rv string, err error) record.Record {
	r := record.Record{Kind: record.Mutator, Tag: record.TagWriter, Event: string(s.Op), Namespace: ns, Name: s.Name, Tick: s.Tick, RV: rv}
	if err != nil {
		r.Error = err.Error()
	}
	return r
}
