#!/usr/bin/env bash
# Issue 35's fourth point on a 4-GPU machine, one call, from the repo root with D (default
# .gpu-dask: wheels/ holding the genie wheel and dask's, COMMIT) unpacked there: genie.dask on the
# issue-3 shape (OBJECTS, default 10 M objects of 128 keywords of 64 values, seed 1; QUERIES
# default 8,192; k = 100), one worker per GPU, in both layouts (a shard per worker; one shard
# replicated on every worker, the queries dealt among them) at WORKERS (default 1,2,4), every
# answer checked identical to one index on GPU 0 (bench/dask_search.py). Writes
# $OUT/dask4-summary.txt and the log.
set -uo pipefail
D=${D:-.gpu-dask}
res=${OUT:-/tmp/genie-out}; mkdir -p "$res"
sum="$res/dask4-summary.txt"
export RUST_LOG=${RUST_LOG:-warn}
export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64:/usr/local/nvidia/lib64"
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv,noheader | tee "$sum"
echo "host cores: $(nproc); commit: $(cat $D/COMMIT); $(python3 --version)" | tee -a "$sum"
site=/tmp/genie-dask-site; rm -rf "$site"
python3 -m pip install -q --no-index --no-deps --target "$site" "$D"/wheels/*.whl 2>&1 | tail -2 | tee -a "$sum"
export PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}"
python3 -c "import dask, distributed, genie; print('dask', dask.__version__, 'distributed', distributed.__version__)" 2>&1 | tee -a "$sum"
d=/tmp/genie-dask4; rm -rf "$d"; mkdir -p "$d"
timeout "${LIMIT:-500}" python3 bench/dask_search.py --objects "${OBJECTS:-10000000}" --queries "${QUERIES:-8192}" \
  --k 100 --workers "${WORKERS:-1,2,4}" --gpus --device gpu --repeats "${REPEATS:-3}" --dir "$d" > "$res/dask4.log" 2>&1
echo "bench exit $?" | tee -a "$sum"
grep -E "^(single_index|dask_search)" "$res/dask4.log" | tee -a "$sum"
python3 - "$res/dask4.log" <<'PY' | tee -a "$sum"
import re, sys
rows = re.findall(r"dask_search,workers=(\d+),shards=\d+,layout=(\w+),.*?qps=(\d+)", open(sys.argv[1]).read())
qps = {(int(w), l): float(v) for w, l, v in rows}
one = qps.get((1, "sharded"))
for (w, l), v in sorted(qps.items()):
    if one:
        print(f"{l} {w} workers: {v:.0f} q/s, {v / one:.2f}x one worker")
PY
