#!/usr/bin/env bash
# Issue 17 on the GPU machine, one call: the Python package's abi3 wheel (built here, carried in
# .gpu/wheels/) installed into the device's Python (3.12) in a venv; its pytest suite with every
# search on the GPU (GENIE_TEST_DEVICE=gpu; the answers compared with .gpu/bin/genie's, also on
# the GPU); and the SIFT-like workload (genie-bench --mode write-keywords, OBJECTS default
# 1,000,000, QUERIES 8,192, seed 1) searched at K (default 100) from Python
# (bench/python_search.py, best and median of 5) beside the Rust figure of the same index and
# queries (genie-bench --mode dump, 3 runs). Stage here first, from the repo root:
#   scripts/gpu/stage && (cd genie-py && maturin build --release --out ../.gpu/wheels)
# and, when the device's Python lacks numpy, pandas or pytest, their cp312 wheels in .gpu/wheels
# (pip download --only-binary=:all: --python-version 3.12 -d .gpu/wheels numpy pandas pytest).
# Writes $OUT/python-summary.txt and the logs.
set -uo pipefail
res=${OUT:-/tmp/genie-out}; mkdir -p "$res"
d=/tmp/genie-py; rm -rf "$d"; mkdir -p "$d"
sum="$res/python-summary.txt"
n=${OBJECTS:-1000000}; nq=${QUERIES:-8192}; k=${K:-100}
export RUST_LOG=${RUST_LOG:-warn}
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$sum"
echo "host cores: $(nproc); commit: $(cat .gpu/COMMIT 2>/dev/null); $(${PYTHON:-python3} --version)" | tee -a "$sum"
${PYTHON:-python3} -m venv --system-site-packages "$d/venv"
v="$d/venv/bin/python"
$v -m pip install -q --no-index --no-deps .gpu/wheels/genie_rs-*.whl 2>&1 | tee -a "$sum"
for m in numpy pandas pytest; do
  $v -c "import $m" 2> /dev/null || $v -m pip install -q --no-index --find-links .gpu/wheels "$m" 2>&1 | tail -2 | tee -a "$sum"
done
# dask, when its wheels are carried: test_dask.py then runs too (its workers share the GPU)
if ls .gpu/wheels/distributed-* > /dev/null 2>&1; then
  $v -m pip install -q --no-index --find-links .gpu/wheels "dask[distributed]" 2>&1 | tail -2 | tee -a "$sum"
fi
echo "== pytest on the GPU" | tee -a "$sum"
GENIE_TEST_DEVICE=gpu GENIE_CLI=.gpu/bin/genie $v -m pytest -q -rs genie-py/tests > "$res/pytest.log" 2>&1
echo "pytest exit $?" | tee -a "$sum"
tail -15 "$res/pytest.log" | tee -a "$sum"
echo "== SIFT-like workload: $n objects, $nq queries, k $k" | tee -a "$sum"
.gpu/bin/genie-bench --mode write-keywords --objects "$n" --queries "$nq" --seed 1 --formats text --out "$d/w" > "$d/write.log" 2>&1 || cat "$d/write.log"
.gpu/bin/genie --quiet build --input "$d/w/objects.txt" --output "$d/w.genie"
for _ in 1 2 3; do
  .gpu/bin/genie-bench --mode dump --index "$d/w.genie" --queries "$d/w/queries.txt" --k "$k" --device gpu --out "$d/dump" 2>&1 | grep "^genie on"
done | tee -a "$sum"
for _ in 1 2; do
  $v bench/python_search.py --index "$d/w.genie" --queries "$d/w/queries.txt" --k "$k" --device gpu --repeats 5 2>&1 | tee -a "$sum"
done
# genie.dask on this one GPU, when dask is carried: one worker against the same index in-process
# (the overhead of the dask path: chunks, scatter, gather, merge)
if $v -c "import distributed" 2> /dev/null; then
  echo "== genie.dask, one GPU worker" | tee -a "$sum"
  .gpu/bin/genie-bench --mode write-keywords --objects "$n" --queries "$nq" --seed 1 --formats npy --out "$d/wn" > /dev/null 2>&1
  timeout 300 $v bench/dask_search.py --workload "$d/wn" --k "$k" --workers 1 --gpus --device gpu --repeats 5 --dir "$d" 2>&1 | grep -E "^(single_index|dask_search)" | tee -a "$sum"
fi
