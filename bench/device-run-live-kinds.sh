#!/usr/bin/env bash
# Issue 34, the kinds of live indexes on one GPU, one call: the GPU tests (conformance, the
# library's live model test with its GPU side, live documents / tables / vectors / sequences and
# "where" filters with every search on the CPU and the GPU compared), the crash tests (keywords
# and documents) on the device's disk, and the Python package's live tests with every search on
# the GPU (the device's own pytest, numpy and pandas; only the genie wheel is carried).
# Stage here first, from the repo root (D = .gpu-sub, carried as .gpu-pack.tar.xz and unpacked
# there with `tar xJf`): D/bin/genie (release), D/tests/{conformance,genie,live_kinds,
# live_vectors,live_sequences,filter_where,live,live_crash}-* (cargo test --no-run, stripped;
# at 07f7171 the vector and sequence tests were still in live_kinds), D/whl/genie_rs-*.whl
# (maturin), D/COMMIT. Writes $OUT/kinds-summary.txt and the logs.
set -uo pipefail
D=.gpu-sub
res=${OUT:-/tmp/genie-out}; mkdir -p "$res"
w=/tmp/genie-kinds; rm -rf "$w"; mkdir -p "$w"
sum="$res/kinds-summary.txt"
export RUST_LOG=${RUST_LOG:-warn} GENIE_CACHE_DIR=/tmp/genie-cache GENIE_BIN=$PWD/$D/bin/genie
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$sum"
echo "host cores: $(nproc); commit: $(cat $D/COMMIT); $(python3 --version)" | tee -a "$sum"
echo "== GPU tests" | tee -a "$sum"
for t in $D/tests/conformance-* $D/tests/genie-* $D/tests/live_kinds-* $D/tests/live_vectors-* \
         $D/tests/live_sequences-* $D/tests/filter_where-* $D/tests/live-*; do
  echo "-- $t" >> "$res/tests.log"
  timeout 300 "$t" --test-threads 4 --nocapture >> "$res/tests.log" 2>&1
  echo "$(basename $t) exit $?" | tee -a "$sum"
done
grep -E "test result|FAILED|panicked" "$res/tests.log" | sort | uniq -c | tee -a "$sum"
grep -c "GPU side skipped" "$res/tests.log" | sed 's/^/GPU-side skips: /' | tee -a "$sum"
grep -E "live sequence searches proven" "$res/tests.log" | tee -a "$sum"
echo "== crash tests, ${KILLS:-1000} kills (documents: a quarter)" | tee -a "$sum"
GENIE_LIVE_CRASH_KILLS=${KILLS:-1000} TMPDIR=$w timeout 500 $D/tests/live_crash-* --nocapture --test-threads 1 > "$res/crash.log" 2>&1
echo "crash exit $?" | tee -a "$sum"
grep -E "kills in|test result|panicked" "$res/crash.log" | tee -a "$sum"
echo "== Python on the GPU" | tee -a "$sum"
rm -rf /tmp/genie-site
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --target /tmp/genie-site $D/whl/genie_rs-*.whl > "$res/pip.log" 2>&1 || tail -5 "$res/pip.log" | tee -a "$sum"
PYTHONPATH=/tmp/genie-site GENIE_TEST_DEVICE=gpu GENIE_CLI=$D/bin/genie timeout 400 python3 -m pytest -q -rs -p no:cacheprovider \
  genie-py/tests/test_live_kinds.py genie-py/tests/test_live.py genie-py/tests/test_filters.py > "$res/pytest.log" 2>&1
echo "pytest exit $?" | tee -a "$sum"
tail -8 "$res/pytest.log" | tee -a "$sum"
