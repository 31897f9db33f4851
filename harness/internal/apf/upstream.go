package apf

// upstream is the page's reading of the tables: what decides each number, quoted from the
// source of the server versions measured (the doc test checks every quote against the module
// cache).
const upstream = `## What decides these numbers

- **Where the numbers come from.** kube-apiserver logs one line per request from verbosity 3
  (k8s.io/apiserver@v0.32.13 pkg/server/httplog/httplog.go: "const withLoggingLevel = 3"), and its
  APF filter adds the priority level, flow schema and the seats of its work estimate to it
  (k8s.io/apiserver@v0.32.13 pkg/server/filters/priority-and-fairness.go: "workEstimate.InitialSeats)").
- **A watch that asks for no initial events costs one seat**, the minimum: the WATCH after a
  LIST starts from the list's resourceVersion
  (k8s.io/apiserver@v0.32.13 pkg/util/flowcontrol/request/list_work_estimator.go: "if listOptions.SendInitialEvents == nil || !*listOptions.SendInitialEvents {").
  1.36.3 and 1.37.2 also charge a watch from resourceVersion "" or "0" like a list, which a
  reflector's watch after a LIST never is
  (k8s.io/apiserver@v0.37.2 pkg/util/flowcontrol/request/list_work_estimator.go: "if !sendInitEvents && !legacyWatch {").
- **1.32 charges by object count**: one seat per 100 objects the request goes through
  (k8s.io/apiserver@v0.32.13 pkg/util/flowcontrol/request/list_work_estimator.go: "seats := uint64(math.Ceil(float64(estimatedObjectsToBeProcessed) / e.config.ObjectsPerSeat))"),
  (k8s.io/apiserver@v0.32.13 pkg/util/flowcontrol/request/config.go: "objectsPerSeat = 100.0"),
  and a request served from the watch cache (the LIST with resourceVersion=0, the streaming
  WATCH) goes through every stored object of the resource, whatever its limit
  (k8s.io/apiserver@v0.32.13 pkg/util/flowcontrol/request/list_work_estimator.go: "estimatedObjectsToBeProcessed = numStored"):
  the LIST and the streaming WATCH cost the same.
- **The count is learnt periodically**, every minute by default
  (k8s.io/apiserver@v0.32.13 pkg/server/options/etcd.go: "options.StorageConfig.CountMetricPollPeriod = time.Minute");
  until then the count is unknown and a list costs the minimum
  (k8s.io/apiserver@v0.32.13 pkg/util/flowcontrol/request/list_work_estimator.go: "case err == ObjectCountNotFoundErr:").
  This page's servers poll every second (` + "`--etcd-count-metric-poll-period`" + `) and are given three periods
  after seeding.
- **1.34 and 1.37 charge by size** when their SizeBasedListCostEstimate gate is on
  (k8s.io/apiserver@v0.34.4 pkg/util/flowcontrol/request/list_work_estimator.go: "if utilfeature.DefaultFeatureGate.Enabled(features.SizeBasedListCostEstimate) {"):
  one seat per 100,000 bytes held at once
  (k8s.io/apiserver@v0.37.2 pkg/util/flowcontrol/request/list_work_estimator.go: "memoryUsedAtOnce := objectsLoadedInMemory * stats.EstimatedAverageObjectSizeBytes"),
  (k8s.io/apiserver@v0.37.2 pkg/util/flowcontrol/request/list_work_estimator.go: "return uint64(math.Ceil(float64(memoryUsedAtOnce) / bytesPerSeat))"),
  and a request served from the watch cache never more than 1,000,000 bytes' worth
  (k8s.io/apiserver@v0.37.2 pkg/util/flowcontrol/request/list_work_estimator.go: "memoryUsedAtOnce = min(memoryUsedAtOnce, cacheWithStreamingMaxMemoryUsage)").
  The estimate takes the request's limit
  (k8s.io/apiserver@v0.37.2 pkg/util/flowcontrol/request/list_work_estimator.go: "if listOptions.Limit > 0 && listOptions.Limit < limited {"):
  a reflector's LIST asks for limit=500, which the watch cache ignores for resourceVersion=0
  (k8s.io/apiserver@v0.37.2 pkg/storage/cacher/cacher.go: "// as of today, the limit is ignored for requests that set RV == 0"),
  so with more than 500 objects the LIST is charged for 500 and the streaming WATCH, which has no
  limit, for all of them. With the gate off, 1.37.2 charges both alike again, by count, as
  1.32.13 does (its section below, 1.37.2:SizeBasedListCostEstimate=false).
- **A priority level charges at most 15% of its seats** to one request
  (k8s.io/apiserver@v0.32.13 pkg/util/flowcontrol/apf_controller.go: "priorityLevelMaxSeatsPercent = float64(0.15)"),
  and never more than 10
  (k8s.io/apiserver@v0.32.13 pkg/util/flowcontrol/request/config.go: "maximumSeatsLimit = 10"):
  in a priority level of 19 seats every list costs at most 3 seats, and the count-based and
  size-based estimates look alike. This page's default, 30 shares, gives 66 seats, whose
  largest charge is the cap of 10.
- **Queued or rejected.** A request that finds no free seats waits in the priority level's
  queue; it is rejected with 429 only when the seats in use have reached the priority level's
  limit and its queue is full
  (k8s.io/apiserver@v0.32.13 pkg/util/flowcontrol/fairqueuing/queueset/queueset.go: "if qs.totSeatsInUse >= qs.dCfg.ConcurrencyLimit &&"),
  the same line in 1.34.4 and 1.37.2. So in 66 seats, requests of 10, 8 or 4 seats each leave
  seats free that the next one does not fit in (6 × 10, 8 × 8 and 16 × 4 are under 66): the
  limit is reached only if one-seat requests (a WATCH after a LIST) fill the rest, and the
  requests queue however short the queue. In 3 seats every request costs one seat, the seats fill up,
  and requests past the queue's length get 429. client-go v0.35's rest client waits the
  Retry-After APF sends and tries again
  (k8s.io/client-go@v0.35.10 rest/with_retry.go: "// any 500 error code and 429 can trigger a wait"),
  and its reflector, once those tries are spent, backs off and asks again
  (k8s.io/client-go@v0.35.10 tools/cache/reflector.go: "if utilnet.IsConnectionRefused(err) || apierrors.IsTooManyRequests(err) {");
  whether every informer synced, and how late, under LIST→WATCH and under streaming, is in the
  rows above.
- **A watch holds its seats only while it sends its initial events**: in the run's logs, a
  streaming WATCH's ` + "`apf_execution_time`" + ` (*seats held*) is its ` + "`apf_init_latency`" + ` (to the
  microsecond), while its ` + "`latency`" + ` is its whole life, until the lab stopped.
- **Is LIST already expensive?** The plan (the API Streaming blog post,
  [kubernetes/website#48513](https://github.com/kubernetes/website/pull/48513)) is to raise the
  estimated cost of LIST once most clients stream; on 1.34.4 and 1.37.2 it does not show here: a LIST of more than 500 objects
  is charged less than the streaming WATCH that replaces it, because of its limit. An open
  upstream change, [kubernetes/kubernetes#138313](https://github.com/kubernetes/kubernetes/pull/138313),
  keeps the 1,000,000-byte cap only for streamed responses; the servers measured here cap
  every request served from the watch cache.
`
