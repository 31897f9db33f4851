# informer-lab. Every Go build here runs per module with GOWORK=off, so each lab links the
# client-go its own go.mod pins (see README: "Why GOWORK=off").
K8S_VERSION ?= 1.32.13
ARGS ?=

.PHONY: compare help docs matrix probe bench apf fakes opt-outs reliability observe test check envtest kubectl sample-apiservers clean

# KUBECONFIG counts only when given on the make command line: an exported KUBECONFIG must not
# point a run at someone's cluster unasked. With it, no envtest server is built.
ON_CLUSTER = $(filter command line,$(origin KUBECONFIG))
CLUSTER_FLAGS = $(if $(ON_CLUSTER),-kubeconfig "$(abspath $(KUBECONFIG))") $(if $(CONTEXT),-context "$(CONTEXT)")

compare: $(if $(ON_CLUSTER),,envtest) ## one shared apiserver, every lab attached, one writer, the wire diff and verdict; KUBECONFIG=path [CONTEXT=name]: your cluster instead
	cd harness && GOWORK=off go run . $(CLUSTER_FLAGS) $(ARGS)

help: ## list the targets with what each does
	@awk -F ':.*## ' '/^[a-z][a-z-]*:.*## / { printf "  %-12s %s\n", $$1, $$2 }' $(MAKEFILE_LIST)

# On a cluster (KUBECONFIG=), no envtest server is built but those SERVERS names (make matrix
# builds what is missing itself).
matrix: $(if $(ON_CLUSTER),,envtest) ## every client cell x server version x scenario (x informer kind: KINDS=all), observed on the wire, as one grid (docs/matrix.md, docs/kinds.md; SERVERS=variants: docs/servers.md); KUBECONFIG=path [CONTEXT=name]: a column for that cluster
	cd harness && GOWORK=off go run ./cmd/matrix $(if $(CLIENTS),--clients $(CLIENTS)) $(if $(SERVERS),--servers $(SERVERS)) $(if $(SCENARIOS),--scenarios $(SCENARIOS)) $(if $(KINDS),--kinds $(KINDS)) $(CLUSTER_FLAGS) $(ARGS)

probe: $(if $(ON_CLUSTER),,envtest) ## every resource a cluster serves, asked for client-go v0.35+'s streaming list and graded (streams, refuses, misbehaves), against envtest or KUBECONFIG=path [CONTEXT=] [NAMESPACE=]
	cd harness && GOWORK=off go run ./cmd/probe $(CLUSTER_FLAGS) $(if $(NAMESPACE),-namespace "$(NAMESPACE)") $(if $(RESOURCES),-resources "$(RESOURCES)") $(ARGS)

docs: envtest ## every generated grid page from real runs: docs/matrix.md (every server), faults.md, kinds.md, servers.md, findings.md; about 58 min with the servers built (measured: matrix 12m44s, faults 18m53s, kinds 15m39s, servers 10m28s), 91 min for the first three when it also built six server versions; resumable
	hack/docs.sh

bench: $(if $(ON_CLUSTER),,envtest) ## kube-apiserver memory, CPU and bytes on the wire, K informers at once, LIST→WATCH vs streaming, across server versions (SERVERS=; ARGS=-docs writes docs/bench-servers.md); ARGS="-cases all -docs": every dimension below in one run, fewer points of each, about an hour (docs/bench.md); KUBECONFIG=path [CONTEXT=name]: the same runs on your cluster, each case in a namespace of its own deleted after it, at most 2000 objects a case (-max-objects), server figures from its /metrics if you may read them; ARGS=-dry-run first shows what it would create; ARGS="-cases links": the same through a proxy that shapes each lab's connection (a round trip added, a bandwidth cap, a slow reader; -links; on 1.37.2 with and without WatchListCompression; docs/links.md); ARGS="-cases pods": Pods of 10 KiB at four counts, each cost fitted against the count and extrapolated to 80k and 165k Pods (on 1.32.13 and 1.37.2; docs/pods.md)
	cd harness && GOWORK=off go run ./cmd/bench $(if $(SERVERS),-servers $(SERVERS)) $(CLUSTER_FLAGS) $(ARGS)

apf: envtest ## what API Priority and Fairness charges K informers starting at once, LIST→WATCH vs streaming, per server version (SERVERS=; docs/apf.md)
	cd harness && GOWORK=off go run ./cmd/apf $(if $(SERVERS),-servers $(SERVERS)) $(ARGS)

fakes: ## client-go's and controller-runtime's test doubles (fake clientsets, old informer-gen informers, ...) timed until HasSynced per client-go version and gate, with no server (docs/fakes.md; 4m22s measured, the seven lab builds included)
	hack/fakes.sh

opt-outs: envtest ## every way to turn streaming lists off (KUBE_FEATURE_WatchListClient, ReplaceFeatureGates, a component's --feature-gates, an opting-out ListWatch or client), per lab module, checked on the wire against one envtest server (docs/opt-outs.md)
	cd harness && GOWORK=off go run ./cmd/optouts -docs $(ARGS)

reliability: envtest ## faults, bad input, security and a 30-minute long run, as real processes (docs/reliability.md)
	cd harness && GOWORK=off go run ./cmd/reliability $(ARGS)

observe: $(if $(ON_CLUSTER),,envtest) ## run CMD (any client: kubectl, a controller, a lab) through a recording proxy in front of envtest (or KUBECONFIG=path's cluster) and show what it did on the wire: make observe CMD="kubectl get configmaps -w"
	@# Built, then run from here: CMD gets this shell's environment, not the GOWORK=off of the build.
	cd harness && GOWORK=off go build -o "$(CURDIR)/out/bin/observe" ./cmd/observe
	"$(CURDIR)/out/bin/observe" $(CLUSTER_FLAGS) $(ARGS) -- $(CMD)

test: envtest ## the contributor's loop: every package's tests, each mechanism once against a real envtest apiserver (make check runs the rest)
	hack/test.sh test

check: envtest kubectl sample-apiservers ## what make test leaves out: the reduced grids, the reliability suites, the doc re-runs, the bench's reduced runs, the tests of a second kube-apiserver, kubectl or an aggregated apiserver; the cross-compile
	@# The second kube-apiserver of the upgrade column (envtestbin.UpgradeVersion), and 1.37.2,
	@# whose gzipped streaming lists the wire and proxy tests read.
	cd envtestbin && GOWORK=off go run ./cmd/provision -version upgrade
	cd envtestbin && GOWORK=off go run ./cmd/provision -version 1.37.2
	hack/test.sh check

envtest: ## build kube-apiserver + etcd $(K8S_VERSION) from the Go module proxy (once; later runs reuse)
	cd envtestbin && GOWORK=off go run ./cmd/provision -version $(K8S_VERSION)

sample-apiservers: ## build the aggregated apiservers make probe and make check register (k8s.io/sample-apiserver 0.33.5 and 0.34.13) from the Go module proxy, once
	cd envtestbin && GOWORK=off go run ./cmd/provision -sample-apiservers

kubectl: envtest ## build kubectl $(K8S_VERSION) from the Go module proxy like kube-apiserver, into the same store entry (make observe's kubectl)
	cd envtestbin && GOWORK=off go run ./cmd/provision -version $(K8S_VERSION) -kubectl

clean: ## remove run directories and the test binaries make test keeps (out/)
	rm -rf out
