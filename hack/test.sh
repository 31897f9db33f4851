#!/usr/bin/env bash
# hack/test.sh test|check: the project's two test tiers, each module on its own (GOWORK=off) so
# that each links its pins.
#
#   test   (make test) every package's tests but the check tier's: the contributor's loop, each
#          mechanism once against a real envtest server.
#   check  (make check) the check tier: the reduced grids, the reliability suites, the doc
#          re-runs of make compare, the bench's reduced runs, the tests that need a second
#          kube-apiserver, kubectl or an aggregated apiserver; then the cross-compile.
#
# Which test is in which tier is the one table below (check_tests): a test it does not name is
# make test's. Each module's output is printed whole when it ends, then the time each took.
set -o errexit -o nounset -o pipefail
cd "$(dirname "$0")/.."

tier=${1:-}
if [[ ${tier} != test && ${tier} != check ]]; then
	echo "usage: hack/test.sh test|check (make test, make check)" >&2
	exit 2
fi

modules=(harness client-v031 client-v032 client-v033 client-v034 client-v035 client-v036 client-v037 lab compare envtestbin record)

# The check tier, per module: entries pkg=Names, each the tests (top-level names) make test
# skips and make check runs, in a go test process of its own (three at once per module: each
# mostly waits on its kube-apiservers and labs, for minutes, and each process is the reaper of
# what its tests start). Every name must be a test of its package (make check fails otherwise), so
# that a renamed test cannot drop out of both tiers.
declare -A check_tests=(
	[harness]="
		./internal/matrixrun=TestReducedGrid
		./internal/reliability=TestSuiteFaults
		./internal/matrixrun=TestReducedFaultGrid|TestReducedKindsGrid
		./internal/reliability=TestSuiteChecks
		./internal/matrixrun=TestUpgradeColumn|TestAggregatedColumns
		./internal/doccheck=TestDocExcerptsAreReal
		./internal/matrixrun=TestClusterColumn|TestClusterColumnWithoutWatchList
		./internal/bench=TestWritesRun|TestLinksRun|TestPodsRun|TestCBORRun|TestClusterRun
		./internal/app=TestRestartGapGets410|TestWritesDuringSync|TestReportInBrowser
		./internal/observe=TestObserveKubectlGetWatch|TestObserveOnACluster
		./internal/apf=TestChargesOnARealServer
		./internal/probe=TestProbeAggregated
		./internal/proxy=TestObserveCompressedWatchList"
	[lab]="
		./aggregated=TestRegistered
		./kind=TestAggregatedKindOnARealServer
		./wire=TestGzipWatchListFromServer"
)

# check_names prints a module's check-tier test names as one alternation, "" for none.
check_names() {
	local names="" entry
	for entry in ${check_tests[$1]:-}; do names+="${names:+|}${entry#*=}"; done
	echo "${names}"
}

# The harness's TestReportInBrowser (check tier) loads report.html in headless Chrome or
# Chromium. Where none is installed, root with apt-get (CI) installs chromium; anyone else gets
# the test skipped, with one line saying so (under CI=true it must run, and fails without one).
has_browser() {
	for b in chromium chromium-browser google-chrome google-chrome-stable \
		"/Applications/Google Chrome.app/Contents/MacOS/Google Chrome" "/Applications/Chromium.app/Contents/MacOS/Chromium"; do
		command -v "${b}" >/dev/null && return 0
	done
	return 1
}
if [[ ${tier} == check ]] && ! has_browser; then
	if command -v apt-get >/dev/null && [[ $(id -u) == 0 ]]; then
		echo "installing Debian's chromium for TestReportInBrowser"
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium
	else
		echo "no Chrome or Chromium here: TestReportInBrowser is skipped (install one to run it)"
	fi
fi

# Every module must also build on the other platforms the project supports (README: Platforms):
# a go vet per module and target type-checks its code and tests with that target's build tags.
# Every module for darwin/arm64 (the other system); lab and envtestbin, which hold every file
# with a build constraint, for darwin/amd64 and linux/arm64 too. No file is chosen by its
# architecture, and none by its system outside those two modules: lab's
# TestBuildConstraintsAreCrossCompiled holds the project to it, so this covers every file on
# every target. Of the seven lab modules, which differ only in go.mod and the gate line (their
# code is lab's), the oldest and the newest client-go: each one between would only compile one
# more client-go version for darwin.
targets_of() {
	case $1 in
	lab | envtestbin) echo darwin/arm64 darwin/amd64 linux/arm64 ;;
	client-v031 | client-v037 | harness | compare | record) echo darwin/arm64 ;;
	esac
}
# cpu_floor prints the CPU time every process this script started has used (bash's times: the
# children it waited for, and theirs: etcd, kube-apiserver, labs, compilers) and the wall time
# that bounds on this machine's cores, however well the modules were packed onto them.
cpu_floor() {
	local user sys cores
	times >"${logs}/times" # here, not in a subshell: a subshell has no children of its own yet
	read -r user sys < <(tail -1 "${logs}/times" | sed -E 's/([0-9]+)m([0-9.]+)s/\1 \2/g' | awk '{printf "%.0f %.0f\n", $1*60+$2, $3*60+$4}')
	cores=$(getconf _NPROCESSORS_ONLN 2>/dev/null || sysctl -n hw.ncpu)
	echo "CPU used: ${user}s user + ${sys}s system on ${cores} cores: at least $(((user + sys) / cores))s of wall time, however well packed"
}
logs=$(mktemp -d)
trap 'rm -rf "${logs}"' EXIT
start=${SECONDS}

# The labs first, one after another, into the cache the tests build them into (lab/gobuild):
# warm, each is up to date in a second; cold, seven client-go versions compiled at once inside
# the tests' time limits, beside their apiservers, made the harness's tests time out. Then the
# harness and compare, whose binaries the app and reliability tests run.
echo "building the labs, the harness and compare (cold: a few minutes each; warm: seconds)"
labs=()
for m in "${modules[@]}"; do [[ ${m} == client-v* ]] && labs+=("../${m}"); done
(cd lab && GOWORK=off go run ./cmd/gobuild "${labs[@]}" ../harness ../compare)

# go test starts packages in the order it is given them, -p at a time: the harness's longest
# first, so that none of them waits for a slot behind a shorter one.
declare -A first=([harness]="./internal/proxy ./internal/app ./internal/observe ./internal/probe")

# Every test binary is kept in out/testbin (go test -o DIR/): go test links a binary into a
# temporary directory every time, but one it finds up to date at -o (same build ID) it runs as
# it is. Warm, that spares linking some forty test binaries, about 130 CPU-s (measured with
# process accounting: 106 links, 150 CPU-s, in a warm make test that linked into temporary
# directories). Without DWARF (-w) a link takes a quarter less CPU (client-v035's: 9.4 CPU-s,
# 7.0 with -w), and a failing test's stack trace is the same. The vet that go test runs first is
# the module's go vet just before it (-vet=off).
testbin=${PWD}/out/testbin
test_flags=(-count=1 -timeout 20m -vet=off -ldflags=-w)

# test_module runs a module's vet and make test's tests: all but its check tier's.
test_module() {
	local m=$1 skip pkgs
	skip=$(check_names "${m}")
	(cd "${m}" && GOWORK=off go vet ./...) || return 1
	# The packages with tests: only theirs are linked, and with -o no two may share a name
	# (harness's cmd/probe and internal/probe both make probe.test; cmd/probe has no tests).
	pkgs=$(cd "${m}" && GOWORK=off go list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}}{{end}}' ./...) || return 1
	(cd "${m}" && GOWORK=off go test -p 4 "${test_flags[@]}" -o "${testbin}/${m}/" ${skip:+-skip "^(${skip})\$"} ${first[${m}]:-} ${pkgs})
}

# check_module runs a module's check-tier entries, each in a go test process of its own, three
# at once (two left one of the two cores idle). It first lists each package's tests: a name in the table that is not one fails it.
check_module() {
	local m=$1 entry pkg names rc=0 name running=0 i=0
	declare -A listed
	for entry in ${check_tests[${m}]:-}; do
		pkg=${entry%%=*} names=${entry#*=}
		[[ -n ${listed[${pkg}]:-} ]] || listed[${pkg}]=$(cd "${m}" && GOWORK=off go test -vet=off -ldflags=-w -o "${testbin}/${m}/" -list '.*' "${pkg}") || return 1
		for name in ${names//|/ }; do
			if ! grep -qx "${name}" <<<"${listed[${pkg}]}"; then
				echo "hack/test.sh: check_tests names ${name} in ${m}/${pkg}, which has no such test: fix the table"
				rc=1
			fi
		done
	done
	((rc == 0)) || return "${rc}"
	for entry in ${check_tests[${m}]}; do
		pkg=${entry%%=*} names=${entry#*=}
		if ((running == 3)); then
			wait -n || rc=1
			running=$((running - 1))
		fi
		# A directory of its own: another entry may link the same package's binary at once.
		i=$((i + 1))
		(cd "${m}" && GOWORK=off go test "${test_flags[@]}" -o "${testbin}/${m}/check-${i}/" -run "^(${names})\$" "${pkg}") >"${logs}/${m}.check-${i}" 2>&1 &
		running=$((running + 1))
	done
	while ((running > 0)); do
		wait -n || rc=1
		running=$((running - 1))
	done
	i=0
	for entry in ${check_tests[${m}]}; do
		i=$((i + 1))
		echo "${entry%%=*} -run ${entry#*=}:"
		cat "${logs}/${m}.check-${i}"
	done
	return "${rc}"
}

# heartbeat prints, every 30 s until the file $1 exists, what is still running: those of the
# modules named after $3 whose file .$2 is missing, and for how long. A cold run compiles for
# minutes without a line otherwise.
heartbeat() {
	local done_file=$1 suffix=$2 what=$3 t0=${SECONDS} m pending
	shift 3
	while [[ ! -e ${done_file} ]]; do
		sleep 1
		(((SECONDS - t0) % 30 == 0)) || continue
		pending=()
		for m in "$@"; do [[ -e "${logs}/${m}.${suffix}" ]] || pending+=("${m}"); done
		((${#pending[@]} == 0)) || echo "... ${what} for $((SECONDS - t0))s: still running ${pending[*]}"
	done
}

# run_tier runs function $1 on each module of the tier at once (tiered: their names).
run_tier() {
	local fn=$1 m
	pids=() tiered=()
	for m in "${modules[@]}"; do
		[[ ${tier} == test || -n ${check_tests[${m}]:-} ]] || continue
		tiered+=("${m}")
		(
			t0=${SECONDS}
			rc=0
			"${fn}" "${m}" >"${logs}/${m}.out" 2>&1 || rc=$?
			# Written whole, then renamed: the loop below must never read a half-written file.
			echo "${rc} $((SECONDS - t0))" >"${logs}/${m}.rc.tmp" && mv "${logs}/${m}.rc.tmp" "${logs}/${m}.rc"
		) &
		pids+=($!)
	done
}

# Every test that needs kube-apiserver finds it built (make envtest, which make test and make
# check run first; make check also builds what its tests need beside it).
if [[ ${tier} == test ]]; then
	run_tier test_module
	echo "testing every module at once (each module's output as it ends)"
else
	run_tier check_module
	echo "running make check's tests of $(for m in "${modules[@]}"; do [[ -n ${check_tests[${m}]:-} ]] && printf '%s ' "${m}"; done)at once (each module's output as it ends)"
fi
# Ctrl-C stops every module's tests; each test stops what it started (or its reaper does).
trap 'kill "${pids[@]}" ${beat:-} 2>/dev/null; wait; rm -rf "${logs}"; exit 130' INT TERM
heartbeat "${logs}/all.rc" rc "tests" "${tiered[@]}" &
beat=$!

# Each module's output whole as soon as its tests end, not at the end of the slowest.
failed=()
reported=()
declare -A took status
while ((${#reported[@]} < ${#pids[@]})); do
	for m in "${modules[@]}"; do
		[[ -f "${logs}/${m}.rc" && ! " ${reported[*]} " =~ " ${m} " ]] || continue
		reported+=("${m}")
		read -r rc secs <"${logs}/${m}.rc"
		took[${m}]=${secs}
		echo "=== ${m}"
		cat "${logs}/${m}.out"
		status[${m}]=ok
		if [[ ${rc} != 0 ]]; then
			failed+=("${m}")
			status[${m}]=FAIL
		fi
		echo "--- ${m}: tests ${status[${m}]} in ${secs}s; $((${#pids[@]} - ${#reported[@]})) modules still testing"
	done
	sleep 1
done
touch "${logs}/all.rc"
wait
tests_took=$((SECONDS - start))

declare -A crossed
if [[ ${tier} == check ]]; then
	echo "cross-compiling for darwin/arm64 every module but the lab modules between client-v031 and client-v037, and lab and envtestbin for darwin/amd64 linux/arm64 too (go vet per module and target)"
	cross=() cross_pids=()
	for m in "${modules[@]}"; do
		[[ -n $(targets_of "${m}") ]] || continue
		cross+=("${m}")
		(
			result=ok
			for target in $(targets_of "${m}"); do
				(cd "${m}" && GOWORK=off GOOS=${target%/*} GOARCH=${target#*/} go vet ./...) >>"${logs}/${m}.cross" 2>&1 || result="FAIL for ${target}"
			done
			echo "${result}" >"${logs}/${m}.crossrc"
		) &
		cross_pids+=($!)
	done
	pids=("${cross_pids[@]}")
	heartbeat "${logs}/all.crossrc" crossrc "cross-compiling" "${cross[@]}" &
	beat=$!
	wait "${cross_pids[@]}"
	touch "${logs}/all.crossrc"
	wait
	for m in "${modules[@]}"; do
		[[ -e "${logs}/${m}.crossrc" ]] || continue
		crossed[${m}]=$(cat "${logs}/${m}.crossrc")
		if [[ ${crossed[${m}]} == FAIL* ]]; then
			cat "${logs}/${m}.cross"
			failed+=("${m} (cross-compile ${crossed[${m}]})")
		fi
	done
fi

echo
echo "time per module (all at once; tests took ${tests_took}s, make ${tier} $((SECONDS - start))s):"
cpu_floor
for m in "${modules[@]}"; do
	[[ -n ${took[${m}]:-}${crossed[${m}]:-} ]] || continue
	printf '  %-12s %5s  %s\n' "${m}" "${took[${m}]:+${took[${m}]}s}" "${took[${m}]:+tests ${status[${m}]}}${took[${m}]:+${crossed[${m}]:+, }}${crossed[${m}]:+cross-compile ${crossed[${m}]}}"
done
if ((${#failed[@]} > 0)); then
	echo "FAIL: ${failed[*]}"
	exit 1
fi
if [[ ${tier} == test ]]; then
	echo "ok: all ${#modules[@]} modules passed make test (make check runs the rest)"
else
	echo "ok: make check's tests passed, and every module builds for darwin/arm64 (lab and envtestbin also for darwin/amd64 linux/arm64)"
fi
