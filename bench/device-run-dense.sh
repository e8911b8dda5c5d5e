#!/usr/bin/env bash
# GPU conformance tests, then the suite with its sweep of dense (bitmap) keyword lists.
# Run from the repo root on the GPU machine after ../shared/gpu/stage.
set -uo pipefail
out=${OUT:-/tmp/genie-out}
mkdir -p "$out"
export GENIE_LARGE_TESTS=1 GENIE_CACHE_DIR=/tmp/genie-cache RUST_LOG=${RUST_LOG:-warn}
status=0
echo "== tests"
timeout 360 .gpu/run tests --test-threads 4 > "$out/tests.log" 2>&1 || status=1
grep -E "test result|FAILED|panicked" "$out/tests.log" | grep -v " 0 passed" | tail -12
grep -c "^test gpu::.* ok$" "$out/tests.log" | sed 's/^/gpu conformance cases passed: /'
echo "== suite"
timeout 420 .gpu/run bin genie-bench --mode suite --csv "$out/suite.csv" 2>&1 | tee "$out/suite.log" | tail -24 || status=1
exit $status
