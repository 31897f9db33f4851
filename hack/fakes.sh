#!/usr/bin/env bash
# make fakes: every lab module's -fakes run (client-go's and controller-runtime's test doubles,
# timed until HasSynced, gate off and on; no server), one module after another so that their
# timings do not share the two cores, then docs/fakes.md from their records.
set -o errexit -o nounset -o pipefail
cd "$(dirname "$0")/.."

dir=out/fakes-$(date -u +%Y%m%d-%H%M%S)
mkdir -p "${dir}"
for m in client-v*/; do
	m=${m%/}
	[[ -f ${m}/go.mod ]] || continue
	echo "== ${m}"
	(cd "${m}" && GOWORK=off go run . -fakes -records "../${dir}/${m}.jsonl" | grep -F ' fake: ')
done
(cd compare && GOWORK=off go run . -fakes "../${dir}" ../docs/fakes.md)
echo "== docs/fakes.md from ${dir}"
