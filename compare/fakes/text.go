package fakes

// The page's prose: what the tables show and the upstream lines that decide it, each quoted at
// the version that decides it (make test checks every quote against the module cache).

const intro = `**"My informer tests got 10 s slower after upgrading client-go: why?"** With the
WatchListClient gate on (client-go's default from v0.35), a reflector asks for a streaming list and
waits for the bookmark that ends it; no fake sends one, and the reflector waits for it for as long
as it runs (k8s.io/client-go@v0.35.10 tools/cache/reflector.go: "if watchListBookmarkReceived { break }"):
it does not fall back to a LIST. The "10 s" is the period of the ticker with which it says so
(k8s.io/client-go@v0.35.10 tools/cache/reflector.go: "return newInitialEventsEndBookmarkTickerInternal(logger, name, c, watchStart, 10*time.Second, exitOnWatchListBookmarkReceived)"):
at its first tick when the fake's watch sent nothing; when it sent the seeded objects, at the first
tick that finds the last of them 10 s old
(k8s.io/client-go@v0.35.10 tools/cache/reflector.go: "hasBookmarkTimerExpired := elapsedTime >= t.tickInterval"),
and they came just after the ticker started, so that the first tick, 10 s in, may find them
younger than that by a few milliseconds, and the line comes 20 s in. It says so again every 10 s; the informer itself never syncs, and a test waiting on
` + "`" + `HasSynced` + "`" + ` waits until its own timeout. From v0.35 a reflector first asks its ListerWatcher whether its client can stream
(k8s.io/client-go@v0.35.10 tools/cache/reflector.go: "if r.useWatchList && watchlist.DoesClientNotSupportWatchListSemantics(lw) {"),
the client-go fakes say they cannot
(k8s.io/client-go@v0.35.10 kubernetes/fake/clientset_generated.go: "func (c *Clientset) IsWatchListSemanticsUnSupported() bool {"),
(k8s.io/client-go@v0.35.10 dynamic/fake/simple.go: "func (c *FakeDynamicClient) IsWatchListSemanticsUnSupported() bool {"),
(k8s.io/client-go@v0.35.10 metadata/fake/simple.go: "func (c *FakeMetadataClient) IsWatchListSemanticsUnSupported() bool {"),
and the informers informer-gen generates from v0.35 pass that on
(k8s.io/client-go@v0.35.10 informers/core/v1/configmap.go: "cache.ToListWatcherWithWatchListSemantics(&cache.ListWatch{"),
so those list at once, gate on or off. An informer generated before v0.35 and not generated again
builds a bare ListWatch
(k8s.io/client-go@v0.34.13 informers/core/v1/configmap.go: "return cache.NewSharedIndexInformer( &cache.ListWatch{"),
which says nothing, and on a fake it never syncs with the gate on, on every version; so does any
informer on controller-runtime's fake client, which has no such method to pass on. Before v0.35,
with the gate set on, no reflector asks, and every fake stalls.

The fix in a unit test, for every stand-in and every client-go version from v0.31, is one line:
the gate off with client-go's own test helper, ` + "`" + `clientfeaturestesting.SetFeatureDuringTest(t, clientfeatures.WatchListClient, false)` + "`" + `
(k8s.io/client-go@v0.31.14 features/testing/features.go: "func SetFeatureDuringTest(tb testing.TB, feature clientfeatures.Feature, featureValue bool) {"),
or ` + "`" + `KUBE_FEATURE_WatchListClient=false` + "`" + ` in the test's environment. The tables below say which
stand-ins need it on which version, and what each logs.

`

const sources = `
## Read with the tables

- **The stall's word** is logged at klog's default verbosity: as a warning up to v0.32
  (k8s.io/client-go@v0.31.14 tools/cache/reflector.go: "klog.Warning(err)"), as an Info line
  "Warning: event bookmark expired" from v0.33
  (k8s.io/client-go@v0.33.13 tools/cache/reflector.go: "if err := t.produceWarningIfExpired(); err != nil { t.logger.Info("), so a test sees it with no flags. From v0.36 the typed fake's
  watch delivers the objects it holds
  (k8s.io/client-go@v0.36.6 testing/fixture.go: "// Deliver all objects that match the list options, for example"),
  so the line says when the last event came instead of that none came: the cache is still empty
  until the bookmark that never comes.
- **The opt-out's word** is at V(2)
  (k8s.io/client-go@v0.35.10 tools/cache/reflector.go: "klog.TODO().V(2).Info(")
  (k8s.io/client-go@v0.36.6 tools/cache/reflector.go: "r.logger.V(2).Info("): a test at klog's
  default verbosity sees nothing either way.
- **controller-runtime's fake informers** (` + "`" + `informertest.FakeInformers` + "`" + `) run no reflector: the gate does not
  touch them. Up to v0.22 they hand out an informer whose ` + "`" + `HasSynced` + "`" + ` is false for ever
  (sigs.k8s.io/controller-runtime@v0.22.5 pkg/cache/informertest/fake_cache.go: "c.InformersByGVK[gvk] = &controllertest.FakeInformer{}"),
  from v0.23 true
  (sigs.k8s.io/controller-runtime@v0.23.3 pkg/cache/informertest/fake_cache.go: "c.InformersByGVK[gvk] = &controllertest.FakeInformer{Synced: true}");
  the ` + "`" + `FakeInformers` + "`" + `' own ` + "`" + `WaitForCacheSync` + "`" + `, which a controller-runtime controller waits on, is true unless its
  ` + "`" + `Synced` + "`" + ` field says otherwise
  (sigs.k8s.io/controller-runtime@v0.19.7 pkg/cache/informertest/fake_cache.go: "if c.Synced == nil { return true }").
- **controller-runtime's cache cannot run on its fake client**: it takes a ` + "`" + `rest.Config` + "`" + `
  (sigs.k8s.io/controller-runtime@v0.25.2 pkg/cache/cache.go: "func New(cfg *rest.Config, opts Options) (Cache, error) {"),
  so the stand-in puts a client-go informer on the fake client's ` + "`" + `Watch` + "`" + `, which ignores the
  options it is given
  (sigs.k8s.io/controller-runtime@v0.25.2 pkg/client/fake/client.go: "return c.tracker.Watch(gvr, listOpts.Namespace)").
  Its times include building the fake client, which from controller-runtime v0.22 builds a type
  converter of every client-go type by default
  (sigs.k8s.io/controller-runtime@v0.22.5 pkg/client/fake/client.go: "clientgoapplyconfigurations.NewTypeConverter(clientGoScheme),"),
  which v0.19 to v0.21 do not.
`
