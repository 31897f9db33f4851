#!/usr/bin/env bash
# Regenerates every generated page from real runs (make docs): docs/matrix.md on every server and
# default scenario, docs/faults.md, docs/kinds.md and docs/servers.md on their servers
# (harness/internal/matrixrun: FaultsDocsServers, KindsDocsServers, VariantsDocsServers), then
# docs/findings.md and each page's Findings from them.
# Resumable: a page whose run ended is not run again for the same commit; an interrupted run
# starts that page over. docs/bench.md (make bench) and docs/reliability.md (make reliability)
# are their own commands.
set -o errexit -o nounset -o pipefail
cd "$(dirname "$0")/.."

done_dir=out/docs-done
mkdir -p "${done_dir}"
commit=$(git rev-parse HEAD 2>/dev/null || echo unknown)
start=${SECONDS}

# page NAME MAKE-ARGS...: runs make matrix with those arguments unless NAME is done at this commit.
page() {
	local name=$1
	shift
	if [[ -f "${done_dir}/${name}" && $(cat "${done_dir}/${name}") == "${commit}" ]]; then
		echo "== docs/${name}.md: done at ${commit:0:12} (rm ${done_dir}/${name} to run it again)"
		return
	fi
	echo "== docs/${name}.md: make matrix $* ($(date -u +%H:%M) UTC)"
	local t0=${SECONDS}
	make --no-print-directory matrix "$@"
	echo "${commit}" >"${done_dir}/${name}"
	echo "== docs/${name}.md written in $(((SECONDS - t0) / 60))m$(((SECONDS - t0) % 60))s"
}

page matrix
page faults SCENARIOS=faults
page kinds KINDS=all
page servers SERVERS=variants
echo "== docs/findings.md and each page's Findings"
(cd compare && GOWORK=off go run . -findings ../docs)
echo "== make docs: $(((SECONDS - start) / 60))m$(((SECONDS - start) % 60))s"
