#!/usr/bin/env bash
# Runs every module's tests, each module on its own (GOWORK=off) so that each links its pins.
# The modules share no server (each test boots its own envtest), so they run at once: most of
# their time is spent waiting on apiservers and labs, not on the two cores. Each module's output
# is printed whole when it ends, then the time each module took. Within a module, four test
# packages run at once (-p 4) for the same reason.
set -o errexit -o nounset -o pipefail
cd "$(dirname "$0")/.."

# The harness's TestReportInBrowser loads report.html in headless Chrome or Chromium. Where none
# is installed, root with apt-get (CI) installs chromium; anyone else gets the test skipped, with
# one line saying so (under CI=true it must run, and fails without one).
has_browser() {
	for b in chromium chromium-browser google-chrome google-chrome-stable \
		"/Applications/Google Chrome.app/Contents/MacOS/Google Chrome" "/Applications/Chromium.app/Contents/MacOS/Chromium"; do
		command -v "${b}" >/dev/null && return 0
	done
	return 1
}
if ! has_browser; then
	if command -v apt-get >/dev/null && [[ $(id -u) == 0 ]]; then
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium
	else
		echo "no Chrome or Chromium here: TestReportInBrowser is skipped (install one to run it)"
	fi
fi

# The longest first: the harness's packages take minutes, the others seconds.
modules=(harness client-v031 client-v032 client-v033 client-v034 client-v035 client-v036 client-v037 lab compare envtestbin record)
# Every module must also build on the other platforms the project supports (README: Platforms):
# a go vet per module and target type-checks its code and tests with that target's build tags.
# Every module for darwin/arm64 (the other system); lab and envtestbin, which hold every file
# with a build constraint, for darwin/amd64 and linux/arm64 too. No file is chosen by its
# architecture, and none by its system outside those two modules: lab's
# TestBuildConstraintsAreCrossCompiled holds the project to it, so this covers every file on
# every target. Of the seven lab modules, which differ only in go.mod and the gate line (their
# code is lab's), the oldest and the newest client-go: each one between would only compile one
# more client-go version for darwin. Cold, every client-go version for every target took longer
# than the tests themselves (CI: 42 minutes of cross-compiling after 23 of tests).
targets_of() {
	case $1 in
	lab | envtestbin) echo darwin/arm64 darwin/amd64 linux/arm64 ;;
	client-v031 | client-v037 | harness | compare | record) echo darwin/arm64 ;;
	esac
}
# cpu_floor prints the CPU time every process make test started has used (bash's times: the
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
# the tests' 20-minute limits, beside their apiservers, made the harness's tests time out. Then
# the harness and compare, whose binaries the app and reliability tests run.
echo "building the labs, the harness and compare (cold: several minutes each; warm: seconds)"
labs=()
for m in "${modules[@]}"; do [[ ${m} == client-v* ]] && labs+=("../${m}"); done
(cd lab && GOWORK=off go run ./cmd/gobuild "${labs[@]}" ../harness ../compare)

# go test starts packages in the order it is given them, four at a time: the harness's longest
# first, so that none of them waits for a slot behind a shorter one.
# In a warm make test (all at once): matrixrun 162 s (TestReducedGrid apart), probe 156, reliability 120
# (TestSuiteFaults apart), proxy 109, app 95, doccheck 71, observe 39; the rest under 15.
declare -A first=([harness]="./internal/matrixrun ./internal/probe ./internal/reliability ./internal/proxy ./internal/app ./internal/doccheck ./internal/observe")
# Within a package, tests run one after another. The harness's longest each run in a go test
# process of their own, at once with the rest of the module: a process of its own is also the
# reaper of what its tests start, so a test's check that nothing outlived it sees only its own.
declare -A apart=([harness]="./internal/reliability=TestSuiteFaults ./internal/matrixrun=TestReducedGrid")

# Every test binary is kept in out/testbin (go test -o DIR/): go test links a binary into a
# temporary directory every time, but one it finds up to date at -o (same build ID) it runs as
# it is. Warm, that spares linking some forty test binaries, about 130 of make test's CPU-s
# (measured with process accounting: 106 links, 150 CPU-s, in a warm make test that linked
# into temporary directories). Without DWARF (-w) a link takes a quarter less CPU (client-v035's:
# 9.4 CPU-s, 7.0 with -w), and a failing test's stack trace is the same. The vet that go test
# runs first is the module's go vet just before it (-vet=off).
testbin=${PWD}/out/testbin
test_flags=(-count=1 -timeout 20m -vet=off -ldflags=-w)

# test_module runs a module's vet and tests: its apart tests and the rest at once.
test_module() {
	local m=$1 shards=() rc=0 skip="" pkg pkgs tests
	(cd "${m}" && GOWORK=off go vet ./...) || return 1
	for shard in ${apart[${m}]:-}; do
		pkg=${shard%%=*} tests=${shard#*=}
		skip+="${skip:+|}${tests}"
		# A directory of its own: the module's run links the same package's binary at once.
		(cd "${m}" && GOWORK=off go test "${test_flags[@]}" -o "${testbin}/${m}/${tests}/" -run "^(${tests})\$" "${pkg}") &
		shards+=($!)
	done
	# The packages with tests: only theirs are linked, and with -o no two may share a name
	# (harness's cmd/probe and internal/probe both make probe.test; cmd/probe has no tests).
	pkgs=$(cd "${m}" && GOWORK=off go list -f '{{if or .TestGoFiles .XTestGoFiles}}{{.ImportPath}}{{end}}' ./...) || return 1
	(cd "${m}" && GOWORK=off go test -p 4 "${test_flags[@]}" -o "${testbin}/${m}/" ${skip:+-skip "^(${skip})\$"} ${first[${m}]:-} ${pkgs}) || rc=$?
	for pid in ${shards[@]+"${shards[@]}"}; do wait "${pid}" || rc=$?; done
	return "${rc}"
}

# Every test that needs kube-apiserver finds it built (once, by `make envtest`, which make test
# runs first). Each module cross-compiles once every module's tests have ended: cold, that
# compiles client-go for three more targets, which beside the tests' apiservers would slow them.
pids=()
for m in "${modules[@]}"; do
	(
		t0=${SECONDS}
		rc=0
		test_module "${m}" >"${logs}/${m}.out" 2>&1 || rc=$?
		# Written whole, then renamed: the loop below must never read a half-written file.
		echo "${rc} $((SECONDS - t0))" >"${logs}/${m}.rc.tmp" && mv "${logs}/${m}.rc.tmp" "${logs}/${m}.rc"
	) &
	pids+=($!)
done
# Ctrl-C stops every module's tests; each test stops what it started (or its reaper does).
trap 'kill "${pids[@]}" 2>/dev/null; wait; rm -rf "${logs}"; exit 130' INT TERM

# Each module's output whole as soon as its tests end, not at the end of the slowest.
failed=()
reported=()
declare -A took status
while ((${#reported[@]} < ${#modules[@]})); do
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
		echo "--- ${m}: tests ${status[${m}]} in ${secs}s; $((${#modules[@]} - ${#reported[@]})) modules still testing"
	done
	sleep 1
done
tests_took=$((SECONDS - start))
wait
for m in "${modules[@]}"; do
	(
		cross=ok
		[[ -n $(targets_of "${m}") ]] || cross="not needed (client-v031 and client-v037 stand for it)"
		for target in $(targets_of "${m}"); do
			(cd "${m}" && GOWORK=off GOOS=${target%/*} GOARCH=${target#*/} go vet ./...) >>"${logs}/${m}.cross" 2>&1 || cross="FAIL for ${target}"
		done
		echo "${cross}" >"${logs}/${m}.crossrc"
	) &
	pids+=($!)
done
echo "cross-compiling for darwin/arm64 every module but the lab modules between client-v031 and client-v037, and lab and envtestbin for darwin/amd64 linux/arm64 too (go vet per module and target)"
wait
cross_took=$((SECONDS - start - tests_took))

echo
echo "time per module (all at once; tests took ${tests_took}s, cross-compiling ${cross_took}s, make test $((SECONDS - start))s):"
cpu_floor
for m in "${reported[@]}"; do
	cross=$(cat "${logs}/${m}.crossrc")
	if [[ ${cross} == FAIL* ]]; then
		cat "${logs}/${m}.cross"
		failed+=("${m} (cross-compile ${cross})")
	fi
	printf '  %-12s %4ss  tests %s, cross-compile %s\n' "${m}" "${took[${m}]}" "${status[${m}]}" "${cross}"
done
if ((${#failed[@]} > 0)); then
	echo "FAIL: ${failed[*]}"
	exit 1
fi
echo "ok: all ${#modules[@]} modules passed, and build for darwin/arm64 (lab and envtestbin also for darwin/amd64 linux/arm64)"
