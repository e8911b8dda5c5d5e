#!/usr/bin/env bash
# One device call: GPU conformance tests, `genie search --device gpu` end to end, the benchmark.
# Run from the repo root on the GPU machine after scripts/gpu/stage staged .gpu/ here.
# Usage: bench/device-run.sh [quick|full]
set -uo pipefail
mode=${1:-quick}
out=${OUT:-/tmp/genie-out}
mkdir -p "$out"
export GENIE_LARGE_TESTS=1 GENIE_CACHE_DIR=/tmp/genie-cache RUST_LOG=${RUST_LOG:-info}
status=0

echo "== tests"
timeout 400 .gpu/run tests --test-threads 4 > "$out/tests.log" 2>&1 || status=1
grep -E "^test .*(ok|FAILED)$|test result|skipped|FAILED|panicked" "$out/tests.log" | grep -v " ok$" | tail -40
grep -c "^test gpu::.* ok$" "$out/tests.log" | sed 's/^/gpu conformance cases passed: /'

echo "== genie CLI with --device gpu"
tmp=$(mktemp -d)
awk 'BEGIN{srand(1); for(i=0;i<200000;i++){s=""; for(d=0;d<16;d++) s=s" "(d*32+int(rand()*32)); print s}}' > "$tmp/objects.txt"
awk 'BEGIN{srand(2); for(i=0;i<2000;i++){s=""; for(d=0;d<16;d++){v=d*32+int(rand()*32); s=s" "v"-"(v+1)":"(1+d%3)}; print s}}' > "$tmp/queries.txt"
.gpu/run bin genie build --input "$tmp/objects.txt" --output "$tmp/index.genie" 2>&1 | tail -2
for dev in cpu gpu; do
  .gpu/run bin genie search --index "$tmp/index.genie" --queries "$tmp/queries.txt" --k 20 --device $dev --output "$tmp/$dev.jsonl" 2>&1 | tail -2
done
if cmp -s "$tmp/cpu.jsonl" "$tmp/gpu.jsonl"; then echo "CLI: gpu output identical to cpu ($(wc -l < "$tmp/gpu.jsonl") queries)"; else echo "CLI: gpu output DIFFERS from cpu"; status=1; fi

echo "== bench ($mode)"
if [ "$mode" = quick ]; then
  timeout 300 .gpu/run bin genie-bench --quick --csv "$out/bench.csv" 2>&1 | tee "$out/bench.log" | tail -20 || status=1
else
  timeout 540 .gpu/run bin genie-bench --csv "$out/bench.csv" 2>&1 | tee "$out/bench.log" | tail -20 || status=1
fi
exit $status
