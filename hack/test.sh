#!/usr/bin/env bash
# Runs every module's tests, each module on its own (GOWORK=off) so that each links its pins.
set -o errexit -o nounset -o pipefail
cd "$(dirname "$0")/.."

# The harness's TestReportInBrowser loads report.html in headless Chromium (machines run as root).
command -v chromium >/dev/null || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium; }

modules=(record envtestbin compare lab client-v031 client-v032 client-v033 client-v034 client-v035 client-v036 client-v037 harness)
failed=()
for m in "${modules[@]}"; do
	echo "=== ${m}"
	if ! (cd "${m}" && GOWORK=off go vet ./... && GOWORK=off go test -count=1 -timeout 20m ./...); then
		failed+=("${m}")
	fi
done
if ((${#failed[@]} > 0)); then
	echo "FAIL: ${failed[*]}"
	exit 1
fi
echo "ok: all ${#modules[@]} modules passed"
