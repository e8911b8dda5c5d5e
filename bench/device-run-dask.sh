#!/usr/bin/env bash
# Issue 18 on a 2-GPU machine (nvidia-h200-x2), one call: genie.dask with one dask worker per GPU
# (CUDA_VISIBLE_DEVICES=i each). The genie wheel and dask's wheels travel in .gpu/wheels (the
# machine has no internet); installed in a venv of the device's Python (3.12). Then:
#   1. pytest genie-py/tests/test_dask.py with every search on the GPU (LocalCluster, 3 workers);
#   2. the issue-3 workload (genie-bench --mode write-keywords: OBJECTS default 1,000,000 SIFT-like
#      signatures of 128 keywords, QUERIES 8,192, seed 1) searched at K (default 100) by one GPU
#      worker and by two (bench/dask_search.py --gpus --device gpu), each checked identical to one
#      index on GPU 0, q/s of each, in both layouts (a shard per worker; one shard replicated on
#      both, the queries dealt between them); the check is 2 workers' q/s >= 1.8 x 1 worker's.
# Stage here first, from the repo root:
#   scripts/gpu/stage && (cd genie-py && maturin build --release --out ../.gpu/wheels)
#   pip download --only-binary=:all: --python-version 3.12 --platform manylinux2014_x86_64 \
#     --platform manylinux_2_17_x86_64 --platform manylinux_2_28_x86_64 --implementation cp \
#     -d .gpu/wheels "dask[distributed]" numpy pandas pytest   (pyarrow too, if it fits the carry)
# WORKERS (default 1,2): the worker counts (1 alone on a one-GPU machine); SKIP_PYTEST=1 skips
# the test suite. Writes $OUT/dask-summary.txt and the logs.
set -uo pipefail
res=${OUT:-/tmp/genie-out}; mkdir -p "$res"
d=/tmp/genie-dask; rm -rf "$d"; mkdir -p "$d"
sum="$res/dask-summary.txt"
n=${OBJECTS:-1000000}; nq=${QUERIES:-8192}; k=${K:-100}
export RUST_LOG=${RUST_LOG:-warn}
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv,noheader | tee "$sum"
echo "host cores: $(nproc); commit: $(cat .gpu/COMMIT 2>/dev/null); $(${PYTHON:-python3} --version)" | tee -a "$sum"
${PYTHON:-python3} -m venv --system-site-packages "$d/venv"
v="$d/venv/bin/python"
$v -m pip install -q --no-index --no-deps .gpu/wheels/genie_rs-*.whl 2>&1 | tee -a "$sum"
# pyarrow (55 MB) only when carried: without it the dask dataframe tests skip, saying why
extra=""; ls .gpu/wheels/pyarrow-* > /dev/null 2>&1 && extra=pyarrow
$v -m pip install -q --no-index --find-links .gpu/wheels "dask[distributed]" numpy pandas pytest $extra 2>&1 | tail -3 | tee -a "$sum"
$v -c "import dask, distributed, genie; print('dask', dask.__version__, 'distributed', distributed.__version__, 'genie', genie.__version__)" 2>&1 | tee -a "$sum"
if [ -z "${SKIP_PYTEST:-}" ]; then
  echo "== pytest genie-py/tests/test_dask.py on the GPU" | tee -a "$sum"
  GENIE_TEST_DEVICE=gpu timeout 900 $v -m pytest -q -rs genie-py/tests/test_dask.py > "$res/dask-pytest.log" 2>&1
  echo "pytest exit $?" | tee -a "$sum"
  tail -5 "$res/dask-pytest.log" | tee -a "$sum"
fi
echo "== keyword workload: ${WORKLOAD:-$n objects, $nq queries}, k $k" | tee -a "$sum"
w=${WORKLOAD:-}
if [ -z "$w" ]; then
  w="$d/w"
  .gpu/bin/genie-bench --mode write-keywords --objects "$n" --queries "$nq" --seed 1 --formats npy --out "$w" > "$d/write.log" 2>&1 || cat "$d/write.log"
fi
timeout 1200 $v bench/dask_search.py --workload "$w" --k "$k" --workers "${WORKERS:-1,2}" --gpus --device gpu --repeats "${REPEATS:-5}" --dir "$d" > "$res/dask-bench.log" 2>&1
echo "bench exit $?" | tee -a "$sum"
grep -E "^(single_index|dask_search)" "$res/dask-bench.log" | tee -a "$sum"
$v - "$res/dask-bench.log" <<'PY' | tee -a "$sum"
import re, sys
rows = re.findall(r"dask_search,workers=(\d+),shards=\d+,layout=(\w+),.*?qps=(\d+)", open(sys.argv[1]).read())
qps = {(int(w), l): float(v) for w, l, v in rows}
one = qps.get((1, "sharded"))
for (w, l), v in sorted(qps.items()):
    if w > 1 and one:
        r = v / one
        print(f"speedup {w} workers ({l}) / 1 worker: {r:.2f} ({'meets' if r >= 1.8 else 'below'} the 1.8 goal)")
PY
