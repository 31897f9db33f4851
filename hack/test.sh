#!/usr/bin/env bash
# Runs every module's tests, each module on its own (GOWORK=off) so that each links its pins.
# The modules share no server (each test boots its own envtest), so they run at once: most of
# their time is spent waiting on apiservers and labs, not on the two cores. Each module's output
# is printed whole when it ends, then the time each module took. Within a module, four test
# packages run at once (-p 4) for the same reason.
set -o errexit -o nounset -o pipefail
cd "$(dirname "$0")/.."

# The harness's TestReportInBrowser loads report.html in headless Chromium (machines run as root).
command -v chromium >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; }

# The longest first: the harness's packages take minutes, the others seconds.
modules=(harness client-v031 client-v032 client-v033 client-v034 client-v035 client-v036 client-v037 lab compare envtestbin record)
logs=$(mktemp -d)
trap 'rm -rf "${logs}"' EXIT
start=${SECONDS}

# go test starts packages in the order it is given them, four at a time: the harness's longest
# first, so that none of them waits for a slot behind a shorter one.
declare -A first=([harness]="./internal/reliability ./internal/matrixrun ./internal/app ./internal/doccheck ./internal/proxy ./internal/observe")

# Every test that needs kube-apiserver finds it built (once, by `make envtest`, which make test
# runs first); the modules' own builds warm the shared Go cache while they run.
pids=()
for m in "${modules[@]}"; do
	(
		t0=${SECONDS}
		rc=0
		(cd "${m}" && GOWORK=off go vet ./... && GOWORK=off go test -p 4 -count=1 -timeout 20m ${first[${m}]:-} ./...) >"${logs}/${m}.out" 2>&1 || rc=$?
		echo "${rc} $((SECONDS - t0))" >"${logs}/${m}.rc"
	) &
	pids+=($!)
done
# Ctrl-C stops every module's tests; each test stops what it started (or its reaper does).
trap 'kill "${pids[@]}" 2>/dev/null; wait; rm -rf "${logs}"; exit 130' INT TERM
wait

failed=()
summary=()
for m in "${modules[@]}"; do
	echo "=== ${m}"
	cat "${logs}/${m}.out"
	read -r rc took <"${logs}/${m}.rc"
	status=ok
	if [[ ${rc} != 0 ]]; then
		failed+=("${m}")
		status=FAIL
	fi
	summary+=("$(printf '%-12s %4ss  %s' "${m}" "${took}" "${status}")")
done
echo
echo "time per module (all at once; make test took $((SECONDS - start))s):"
printf '  %s\n' "${summary[@]}"
if ((${#failed[@]} > 0)); then
	echo "FAIL: ${failed[*]}"
	exit 1
fi
echo "ok: all ${#modules[@]} modules passed"
