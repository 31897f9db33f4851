// Package kind builds a lab's informers of each kind (record.Kinds): the typed factory of the
// original lab, and the other ways controllers watch, each on the same writes. Every kind
// reports the same records (HANDLER events, the cache at stop), so the harness and compare read
// them alike; what differs is what goes over the wire.
package kind

import (
	"context"
	"fmt"
	"sort"
	"sync"

	"informer-lab/lab/mutator"
	"informer-lab/record"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/watch"
	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/dynamic/dynamicinformer"
	"k8s.io/client-go/features"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/metadata"
	"k8s.io/client-go/metadata/metadatainformer"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/cache"
	crcache "sigs.k8s.io/controller-runtime/pkg/cache"
	"sigs.k8s.io/controller-runtime/pkg/client/apiutil"
)

// Informer is one informer of some kind, whatever builds it.
type Informer interface {
	Start(ctx context.Context) // returns at once; the informer runs until ctx ends or Shutdown
	HasSynced() bool
	Items() []record.Item // the cache's objects, by namespace/name
	Shutdown()            // stops it and waits until it has
}

// Options say where an informer watches and how it reports.
type Options struct {
	Namespace string         // "" for all
	Tag       string         // the informer's tag in the records: A, B, ...
	Out       *record.Writer // HANDLER records go here, unless Quiet
	Quiet     bool
	// Logged, if set, returns once the wire has logged the events the informer has read
	// (wire.Counters.CaughtUp): a HANDLER record then follows its WATCH-EVENT in the log.
	Logged   func()
	Resource string // "" for the kind's own (mutator.Watched); record.ResourceSecrets or ResourcePods for the typed kind, record.ResourceConfigMaps for any
	// Discovery is the config controller-runtime's REST mapper discovers with: its requests are
	// not the informer's, and stay off its tag.
	Discovery *rest.Config
	// OptOut is a per-informer -opt-out mode (optout.ListWatch or optout.Client; "" for none):
	// the typed informer says it does not support watch-list semantics (optout.go).
	OptOut string
}

// New builds an informer of kind on cfg (whose transport is the informer's own, logged under
// o.Tag). SetUp must have run for the kind.
func New(kind string, cfg *rest.Config, o Options) (Informer, error) {
	var (
		inf Informer
		err error
	)
	switch kind {
	case record.KindTypedConfigMaps, record.KindSelector:
		if inf, err = optedOut(cfg, o); inf == nil && err == nil {
			inf, err = typed(cfg, o, kind == record.KindSelector)
		}
	case record.KindMetadata:
		inf, err = metadataOnly(cfg, o)
	case record.KindDynamicCRD, record.KindCBOR, record.KindAggregated:
		inf, err = dynamicOn(cfg, o, mutator.Watched(kind, o.Resource))
	case record.KindCustomListWatch, record.KindCustomListWatchOptOut:
		inf, err = customListWatch(cfg, o, kind == record.KindCustomListWatchOptOut)
	case record.KindCR:
		inf, err = controllerRuntime(cfg, o)
	default:
		return nil, fmt.Errorf("unknown informer kind %q: the kinds are %v", kind, record.Kinds)
	}
	if err != nil {
		return nil, fmt.Errorf("%s informer %s: %w", kind, o.Tag, err)
	}
	return inf, nil
}

// SetUp does what a kind needs once per process, before any informer exists, and says what it
// did: the cbor kind switches client-go's CBOR gates on, which client-go before v0.32 does not
// have (the error says so).
func SetUp(kind string) (string, error) {
	if kind != record.KindCBOR {
		return "", nil
	}
	settable, ok := features.FeatureGates().(interface {
		Set(features.Feature, bool) error
	})
	if !ok {
		return "", fmt.Errorf("-kind cbor: this client-go's feature gates cannot be set in code")
	}
	for _, gate := range []features.Feature{"ClientsAllowCBOR", "ClientsPreferCBOR"} {
		if err := settable.Set(gate, true); err != nil {
			return "", fmt.Errorf("-kind cbor needs client-go v0.32 or later (the ClientsAllowCBOR gate): %w", err)
		}
	}
	return "ClientsAllowCBOR=true, ClientsPreferCBOR=true (set by this lab)", nil
}

// Selector is the label selector of the selector kind's informers, and of the fresh LIST their
// caches are checked against.
func Selector(kind string) string {
	if kind == record.KindSelector {
		return record.SelectorLabel + "=" + record.SelectorValue
	}
	return ""
}

// newFactory is an informer made by one of client-go's informer factories: started with a stop
// channel, whose Shutdown then waits for its informers to stop.
func newFactory(start func(<-chan struct{}), shutdown func(), inf cache.SharedIndexInformer, o Options) (Informer, error) {
	run := func(ctx context.Context) {
		start(ctx.Done())
		<-ctx.Done()
		shutdown()
	}
	return handled(&running{run: run, synced: inf.HasSynced, list: storeItems(inf)}, inf, o)
}

// storeItems lists what an informer's store holds.
func storeItems(inf cache.SharedIndexInformer) func() []record.Item {
	return func() []record.Item { return items(inf.GetStore().List()) }
}

func typed(cfg *rest.Config, o Options, selected bool) (Informer, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	opts := []informers.SharedInformerOption{informers.WithNamespace(o.Namespace)}
	if selected {
		opts = append(opts, informers.WithTweakListOptions(func(l *metav1.ListOptions) { l.LabelSelector = Selector(record.KindSelector) }))
	}
	f := informers.NewSharedInformerFactoryWithOptions(clientFor(cs, o), 0, opts...)
	// Asking the factory for an informer registers it, and Start starts every one registered:
	// ask for the one watched only.
	var inf cache.SharedIndexInformer
	switch o.Resource {
	case record.ResourceSecrets:
		inf = f.Core().V1().Secrets().Informer()
	case record.ResourcePods:
		inf = f.Core().V1().Pods().Informer()
	default:
		inf = f.Core().V1().ConfigMaps().Informer()
	}
	return newFactory(f.Start, f.Shutdown, inf, o)
}

func metadataOnly(cfg *rest.Config, o Options) (Informer, error) {
	mc, err := metadata.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	f := metadatainformer.NewFilteredSharedInformerFactory(mc, 0, o.Namespace, nil)
	return newFactory(f.Start, f.Shutdown, f.ForResource(mutator.Watched(record.KindMetadata, "")).Informer(), o)
}

// dynamicOn is a dynamicinformer on gvr, as controllers watch what they have no types for.
func dynamicOn(cfg *rest.Config, o Options, gvr schema.GroupVersionResource) (Informer, error) {
	dc, err := dynamic.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	f := dynamicinformer.NewFilteredDynamicSharedInformerFactory(dc, 0, o.Namespace, nil)
	return newFactory(f.Start, f.Shutdown, f.ForResource(gvr).Informer(), o)
}

// running is an informer that runs in a goroutine of its own until its context ends or
// Shutdown cancels it.
type running struct {
	run    func(ctx context.Context)
	synced func() bool
	list   func() []record.Item
	mu     sync.Mutex
	cancel context.CancelFunc
	done   chan struct{}
}

func (r *running) Start(parent context.Context) {
	ctx, cancel := context.WithCancel(parent)
	r.mu.Lock()
	r.cancel, r.done = cancel, make(chan struct{})
	r.mu.Unlock()
	go func() { defer close(r.done); r.run(ctx) }()
}

func (r *running) Shutdown() {
	r.mu.Lock()
	cancel, done := r.cancel, r.done
	r.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
}

func (r *running) HasSynced() bool      { return r.synced() }
func (r *running) Items() []record.Item { return r.list() }

// customListWatch is what many projects write by hand: a cache.ListWatch over a typed client,
// whose WatchFunc builds the watch's options anew from the fields it knows. Before streaming
// lists that lost nothing the server needed; a v0.35+ reflector's streaming list loses
// sendInitialEvents, resourceVersionMatch and allowWatchBookmarks on the way, so the server
// answers a plain watch and the end bookmark the reflector waits for never comes.
//
// optOut is the fix client-go v0.35 documents (k8s.io/client-go/util/watchlist,
// DoesClientNotSupportWatchListSemantics): the ListWatch says it does not support watch-list
// semantics, and the reflector lists and watches. Reflectors before v0.35 do not ask.
func customListWatch(cfg *rest.Config, o Options, optOut bool) (Informer, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, err
	}
	cms := cs.CoreV1().ConfigMaps(o.Namespace)
	var lw cache.ListerWatcher = &cache.ListWatch{
		ListFunc: func(opts metav1.ListOptions) (runtime.Object, error) {
			return cms.List(context.TODO(), opts)
		},
		WatchFunc: func(opts metav1.ListOptions) (watch.Interface, error) {
			return cms.Watch(context.TODO(), metav1.ListOptions{ResourceVersion: opts.ResourceVersion, TimeoutSeconds: opts.TimeoutSeconds})
		},
	}
	if optOut {
		lw = noWatchList{lw}
	}
	inf := cache.NewSharedIndexInformer(lw, &corev1.ConfigMap{}, 0, cache.Indexers{})
	return handled(&running{run: func(ctx context.Context) { inf.Run(ctx.Done()) }, synced: inf.HasSynced, list: storeItems(inf)}, inf, o)
}

// noWatchList is a ListerWatcher that tells a v0.35+ reflector it does not support watch-list
// semantics.
type noWatchList struct{ cache.ListerWatcher }

func (noWatchList) IsWatchListSemanticsUnSupported() bool { return true }

// controllerRuntime is the informer a controller-runtime manager's cache makes for ConfigMaps:
// the path most controllers use, with the controller-runtime version the module pins.
func controllerRuntime(cfg *rest.Config, o Options) (Informer, error) {
	disc, err := rest.HTTPClientFor(o.Discovery)
	if err != nil {
		return nil, err
	}
	mapper, err := apiutil.NewDynamicRESTMapper(o.Discovery, disc)
	if err != nil {
		return nil, err
	}
	opts := crcache.Options{Mapper: mapper}
	if o.Namespace != "" {
		opts.DefaultNamespaces = map[string]crcache.Config{o.Namespace: {}}
	}
	c, err := crcache.New(cfg, opts)
	if err != nil {
		return nil, err
	}
	inf, err := c.GetInformer(context.Background(), &corev1.ConfigMap{})
	if err != nil {
		return nil, err
	}
	list := func() []record.Item {
		// The cache's own List waits until the informer has synced, which it may never do; an
		// informer that has not holds nothing yet.
		var l corev1.ConfigMapList
		if !inf.HasSynced() || c.List(context.Background(), &l) != nil {
			return []record.Item{}
		}
		objs := make([]any, len(l.Items))
		for i := range l.Items {
			objs[i] = &l.Items[i]
		}
		return items(objs)
	}
	run := func(ctx context.Context) { _ = c.Start(ctx) }
	return handled(&running{run: run, synced: inf.HasSynced, list: list}, inf, o)
}

// eventSource is what handlers are added to: a client-go or a controller-runtime informer.
type eventSource interface {
	AddEventHandler(cache.ResourceEventHandler) (cache.ResourceEventHandlerRegistration, error)
}

// handled adds the lab's HANDLER records to src, inf's events, unless quiet.
func handled(inf Informer, src eventSource, o Options) (Informer, error) {
	if o.Quiet {
		return inf, nil
	}
	handler := func(event string) func(obj any) {
		return func(obj any) {
			if d, ok := obj.(cache.DeletedFinalStateUnknown); ok {
				obj = d.Obj
			}
			// NEVER modify objects from the store: it is a read-only, local cache.
			if m, err := meta.Accessor(obj); err == nil {
				if o.Logged != nil {
					o.Logged()
				}
				// One of as many as the watch events, written in their batches (see record.Writer).
				o.Out.Later(record.Record{Kind: record.Handler, Tag: o.Tag, Event: event, Namespace: m.GetNamespace(), Name: m.GetName(), RV: m.GetResourceVersion()})
			}
		}
	}
	reg, err := src.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    handler(record.EventAdded),
		UpdateFunc: func(_, obj any) { handler(record.EventModified)(obj) },
		DeleteFunc: handler(record.EventDeleted),
	})
	if err != nil {
		return nil, err
	}
	return handlerSynced{inf, reg}, nil
}

// handlerSynced has synced once its handler has been called for every object of the initial
// sync too. The informer's own HasSynced can come first (handlers run on goroutines of their
// own, late on a loaded machine), and the lab's "synced" record must come after the initial
// sync's HANDLER records: readers count what comes after it as the steady phase.
type handlerSynced struct {
	Informer
	reg cache.ResourceEventHandlerRegistration
}

func (h handlerSynced) HasSynced() bool { return h.reg.HasSynced() }

// items lists objects by namespace/name with their rvs.
func items(objs []any) []record.Item {
	out := []record.Item{}
	for _, obj := range objs {
		if m, err := meta.Accessor(obj); err == nil {
			out = append(out, record.Item{Namespace: m.GetNamespace(), Name: m.GetName(), RV: m.GetResourceVersion()})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].Namespace+"/"+out[i].Name < out[j].Namespace+"/"+out[j].Name
	})
	return out
}
