#!/usr/bin/env bash
# Tests, then the issue-3 table, multi-loading and Table II sizes with the current kernels.
# Run from the repo root on the GPU machine after scripts/gpu/stage.
set -uo pipefail
out=${OUT:-/tmp/genie-out}
mkdir -p "$out"
export GENIE_LARGE_TESTS=1 GENIE_CACHE_DIR=/tmp/genie-cache RUST_LOG=${RUST_LOG:-warn}
status=0
echo "== tests"
timeout 300 .gpu/run tests --test-threads 4 > "$out/tests.log" 2>&1 || status=1
grep -E "test result|FAILED|panicked" "$out/tests.log" | grep -v " 0 passed" | tail -12
grep -c "^test gpu::.* ok$" "$out/tests.log" | sed 's/^/gpu conformance cases passed: /'
echo "== table"
timeout 200 .gpu/run bin genie-bench --csv "$out/table.csv" 2>&1 | tee "$out/table.log" | tail -12 || status=1
echo "== multiload (20 parts, 1 GB budget: the index is 5x the budget)"
timeout 200 .gpu/run bin genie-bench --mode multiload --parts 20 --budget-mb 1024 --queries 1024 --csv "$out/multiload.csv" 2>&1 | tail -12 || status=1
echo "== scale"
timeout 300 .gpu/run bin genie-bench --mode scale --dims 237 --values 67 --queries 1024 --csv "$out/scale.csv" 2>&1 | tail -6 || status=1
exit $status
