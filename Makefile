# informer-lab. Every Go build here runs per module with GOWORK=off, so each lab links the
# client-go its own go.mod pins (see README: "Why GOWORK=off").
K8S_VERSION ?= 1.32.13
ARGS ?=

.PHONY: compare matrix bench reliability test envtest clean

compare: envtest ## one shared apiserver, every lab attached, one writer, the wire diff and verdict
	cd harness && GOWORK=off go run . $(ARGS)

matrix: envtest ## every client cell x server version x scenario (x informer kind: KINDS=all), observed on the wire, as one grid (docs/matrix.md, docs/kinds.md)
	cd harness && GOWORK=off go run ./cmd/matrix $(if $(CLIENTS),--clients $(CLIENTS)) $(if $(SERVERS),--servers $(SERVERS)) $(if $(SCENARIOS),--scenarios $(SCENARIOS)) $(if $(KINDS),--kinds $(KINDS)) $(ARGS)

bench: envtest ## kube-apiserver memory, CPU and bytes on the wire, K informers at once, LIST→WATCH vs streaming, across server versions (SERVERS=; docs/bench.md)
	cd harness && GOWORK=off go run ./cmd/bench $(if $(SERVERS),-servers $(SERVERS)) $(ARGS)

reliability: envtest ## faults, bad input, security and a 30-minute long run, as real processes (docs/reliability.md)
	cd harness && GOWORK=off go run ./cmd/reliability $(ARGS)

test: envtest ## every module's tests, against a real envtest apiserver
	hack/test.sh

envtest: ## build kube-apiserver + etcd $(K8S_VERSION) from the Go module proxy (once; later runs reuse)
	cd envtestbin && GOWORK=off go run ./cmd/provision -version $(K8S_VERSION)

clean: ## remove run directories
	rm -rf out
