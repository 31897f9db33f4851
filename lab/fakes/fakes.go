// Package fakes holds the test doubles a unit-test author builds informers on, with no
// apiserver: client-go's fake clientset with its informer factory, the dynamic and metadata
// fakes with theirs, an informer of the shape an older informer-gen generated, and
// controller-runtime's fake client and fake informers. Each is started the way a unit test
// starts it, compiled against the client-go its lab module pins, and timed until HasSynced.
//
// What decides the time: with the WatchListClient gate on, a reflector streams its initial
// list and waits for the bookmark that ends it, which no fake sends. From client-go v0.35 the
// fakes say so (IsWatchListSemanticsUnSupported) and the generated factories pass that on
// (cache.ToListWatcherWithWatchListSemantics), so the reflector lists instead; an informer whose
// ListerWatcher does not pass it on waits for ever.
package fakes

import (
	"context"
	"fmt"
	"runtime/debug"
	"sort"
	"time"

	"informer-lab/record"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic/dynamicinformer"
	dynamicfake "k8s.io/client-go/dynamic/fake"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	kubefake "k8s.io/client-go/kubernetes/fake"
	metadatafake "k8s.io/client-go/metadata/fake"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/tools/cache"
	"sigs.k8s.io/controller-runtime/pkg/cache/informertest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	crfake "sigs.k8s.io/controller-runtime/pkg/client/fake"
)

// StandIn is one of record.FakeStandIns with its informer.
type StandIn struct {
	record.FakeStandIn
	start func(ctx context.Context) (cache.SharedIndexInformer, error)
}

// starts are the stand-ins' informers, by record.FakeStandIns' names.
var starts = map[string]func(ctx context.Context) (cache.SharedIndexInformer, error){
	"typed-fake":                      typedFake,
	"dynamic-fake":                    dynamicFake,
	"metadata-fake":                   metadataFake,
	"old-informer-gen":                oldInformerGen(false),
	"old-informer-gen-optout":         oldInformerGen(true),
	"controller-runtime-fake":         controllerRuntimeFake,
	"controller-runtime-informertest": informerTest,
}

// StandIns are record.FakeStandIns with their informers, in that order.
var StandIns = func() []StandIn {
	out := make([]StandIn, len(record.FakeStandIns))
	for i, f := range record.FakeStandIns {
		start, ok := starts[f.Name]
		if !ok {
			panic("lab/fakes: no informer for record.FakeStandIns' " + f.Name)
		}
		out[i] = StandIn{FakeStandIn: f, start: start}
	}
	return out
}()

// Lookup returns the stand-in named name.
func Lookup(name string) (StandIn, bool) {
	for _, s := range StandIns {
		if s.Name == name {
			return s, true
		}
	}
	return StandIn{}, false
}

// ControllerRuntime is the controller-runtime version this binary links.
func ControllerRuntime() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, m := range bi.Deps {
			if m.Path == "sigs.k8s.io/controller-runtime" {
				return m.Version
			}
		}
	}
	return "unknown"
}

// Result is what one run of a stand-in's informer showed.
type Result struct {
	Synced bool
	Took   time.Duration // until HasSynced, or how long it was waited for
	Items  []record.Item // the informer's cache when it synced or the wait ended
}

// Run starts the stand-in's informer, seeded with record.FakeSeeds, and waits until it has synced, wait has
// passed or ctx ended; it stops the informer before it returns.
func (s StandIn) Run(ctx context.Context, wait time.Duration) (Result, error) {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	start := time.Now()
	inf, err := s.start(ctx)
	if err != nil {
		return Result{}, fmt.Errorf("start %s: %w", s.Name, err)
	}
	// Polled every millisecond for the first second, not with cache.WaitForCacheSync, whose
	// 100 ms poll would be the whole measurement for a fake that syncs at once; then every 50 ms
	// (a time past 1 s is to 50 ms): a stall lasts the whole wait, and make test runs 14 stand-ins
	// per lab module at once, whose millisecond polls for the whole wait loaded its two cores.
	deadline := time.NewTimer(wait)
	defer deadline.Stop()
	for !inf.HasSynced() {
		every := time.Millisecond
		if time.Since(start) > time.Second {
			every = 50 * time.Millisecond
		}
		select {
		case <-ctx.Done(): // Ctrl-C: not synced so far
			return Result{Took: time.Since(start), Items: items(inf)}, nil
		case <-deadline.C:
			return Result{Took: time.Since(start), Items: items(inf)}, nil
		case <-time.After(every):
		}
	}
	return Result{Synced: true, Took: time.Since(start), Items: items(inf)}, nil
}

// seeds are the ConfigMaps every fake starts with, named record.FakeSeeds.
func seeds() []runtime.Object {
	objs := make([]runtime.Object, len(record.FakeSeeds))
	for i, name := range record.FakeSeeds {
		objs[i] = &corev1.ConfigMap{
			// The dynamic fake converts typed objects with their kind, which a literal lacks.
			TypeMeta:   metav1.TypeMeta{APIVersion: "v1", Kind: "ConfigMap"},
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
			Data:       map[string]string{"seed": name},
		}
	}
	return objs
}

var configMaps = schema.GroupVersionResource{Version: "v1", Resource: "configmaps"}

func typedFake(ctx context.Context) (cache.SharedIndexInformer, error) {
	f := informers.NewSharedInformerFactory(kubefake.NewSimpleClientset(seeds()...), 0)
	inf := f.Core().V1().ConfigMaps().Informer()
	f.Start(ctx.Done())
	return inf, nil
}

func dynamicFake(ctx context.Context) (cache.SharedIndexInformer, error) {
	scheme := runtime.NewScheme()
	if err := corev1.AddToScheme(scheme); err != nil {
		return nil, err
	}
	f := dynamicinformer.NewDynamicSharedInformerFactory(dynamicfake.NewSimpleDynamicClient(scheme, seeds()...), 0)
	inf := f.ForResource(configMaps).Informer()
	f.Start(ctx.Done())
	return inf, nil
}

func metadataFake(ctx context.Context) (cache.SharedIndexInformer, error) {
	scheme := metadatafake.NewTestScheme()
	if err := metav1.AddMetaToScheme(scheme); err != nil {
		return nil, err
	}
	var objs []runtime.Object
	for _, o := range seeds() {
		cm := o.(*corev1.ConfigMap)
		objs = append(objs, &metav1.PartialObjectMetadata{TypeMeta: cm.TypeMeta, ObjectMeta: cm.ObjectMeta})
	}
	f := metadatainformer.NewSharedInformerFactory(metadatafake.NewSimpleMetadataClient(scheme, objs...), 0)
	inf := f.ForResource(configMaps).Informer()
	f.Start(ctx.Done())
	return inf, nil
}

// oldInformerGen runs newFilteredConfigMapInformer on the typed fake, as a unit test runs a
// generated informer it got outside a factory; optOut gives its ListWatch the method a v0.35+
// reflector asks for.
func oldInformerGen(optOut bool) func(ctx context.Context) (cache.SharedIndexInformer, error) {
	return func(ctx context.Context) (cache.SharedIndexInformer, error) {
		inf := newFilteredConfigMapInformer(kubefake.NewSimpleClientset(seeds()...), "", 0,
			cache.Indexers{cache.NamespaceIndex: cache.MetaNamespaceIndexFunc}, optOut)
		go inf.Run(ctx.Done())
		return inf, nil
	}
}

// newFilteredConfigMapInformer is informer-gen's NewFilteredConfigMapInformer as client-go v0.31
// to v0.34 ship it (k8s.io/client-go/informers/core/v1/configmap.go; from v0.34 it also sets the
// ...WithContext funcs, which change nothing here), the shape every project's informers had that
// informer-gen generated before v0.35 and that were not generated again: its ListWatch does not
// say whether its client can stream. The tweakListOptions argument is left out.
func newFilteredConfigMapInformer(client kubernetes.Interface, namespace string, resyncPeriod time.Duration, indexers cache.Indexers, optOut bool) cache.SharedIndexInformer {
	var lw cache.ListerWatcher = &cache.ListWatch{
		ListFunc: func(options metav1.ListOptions) (runtime.Object, error) {
			return client.CoreV1().ConfigMaps(namespace).List(context.TODO(), options)
		},
		WatchFunc: func(options metav1.ListOptions) (watch.Interface, error) {
			return client.CoreV1().ConfigMaps(namespace).Watch(context.TODO(), options)
		},
	}
	if optOut {
		lw = cannotStream{lw}
	}
	return cache.NewSharedIndexInformer(lw, &corev1.ConfigMap{}, resyncPeriod, indexers)
}

// cannotStream is a ListerWatcher that tells a v0.35+ reflector (k8s.io/client-go/util/watchlist,
// DoesClientNotSupportWatchListSemantics) that it cannot serve a streaming list.
type cannotStream struct{ cache.ListerWatcher }

func (cannotStream) IsWatchListSemanticsUnSupported() bool { return true }

// controllerRuntimeFake is a client-go informer on controller-runtime's fake client, the only
// way to put one on it: controller-runtime's cache (cache.New) takes a rest.Config and builds
// its clients from it.
func controllerRuntimeFake(ctx context.Context) (cache.SharedIndexInformer, error) {
	var objs []client.Object
	for _, o := range seeds() {
		objs = append(objs, o.(*corev1.ConfigMap))
	}
	c := crfake.NewClientBuilder().WithObjects(objs...).Build()
	lw := &cache.ListWatch{
		ListFunc: func(options metav1.ListOptions) (runtime.Object, error) {
			var l corev1.ConfigMapList
			err := c.List(ctx, &l, &client.ListOptions{Raw: &options})
			return &l, err
		},
		WatchFunc: func(options metav1.ListOptions) (watch.Interface, error) {
			return c.Watch(ctx, &corev1.ConfigMapList{}, &client.ListOptions{Raw: &options})
		},
	}
	inf := cache.NewSharedIndexInformer(lw, &corev1.ConfigMap{}, 0, cache.Indexers{})
	go inf.Run(ctx.Done())
	return inf, nil
}

// informerTest is controller-runtime's cache double: GetInformer hands out a FakeInformer that
// runs nothing and reports the Synced it was built with.
func informerTest(ctx context.Context) (cache.SharedIndexInformer, error) {
	fi := &informertest.FakeInformers{}
	inf, err := fi.FakeInformerFor(ctx, &corev1.ConfigMap{})
	if err != nil {
		return nil, err
	}
	go fi.Start(ctx)
	return inf, nil
}

// items are what inf's cache holds, by namespace/name; none for an informer without a store
// (controller-runtime's FakeInformer).
func items(inf cache.SharedIndexInformer) []record.Item {
	out := []record.Item{}
	store := inf.GetStore()
	if store == nil {
		return out
	}
	for _, obj := range store.List() {
		if m, err := meta.Accessor(obj); err == nil {
			out = append(out, record.Item{Namespace: m.GetNamespace(), Name: m.GetName(), RV: m.GetResourceVersion()})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].Namespace+"/"+out[i].Name < out[j].Namespace+"/"+out[j].Name
	})
	return out
}
