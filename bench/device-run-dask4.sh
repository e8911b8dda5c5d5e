#!/usr/bin/env bash
# Issue 35's fourth point on a 4-GPU machine, one call, from the repo root with D (default
# .gpu-dask: wheels/ holding the genie wheel and dask's, bin/genie and bin/genie-bench, COMMIT)
# unpacked there: genie.dask on the issue-3 shape (OBJECTS, default 10 M objects of 128 keywords
# of 64 values, and QUERIES, default 65,536, written by genie-bench --mode write-keywords, seed 1;
# k = 100), one worker per GPU, in both layouts (a shard per worker; one shard replicated on
# every worker, the queries dealt among them) at WORKERS (default 1,2,4), the sharded layout past
# 2 shards with both merges (tree: pairs on the workers; client), each worker's search threads its
# share of the host's cores; one GPU streaming the same index in STREAMED (default 4) parts (the
# single GPU an index larger than its memory leaves); then (THREADS_ALL, default on) the
# replicated layout on 4 workers again with every worker's threads spanning all the cores. Every
# answer is checked identical to one index on GPU 0 (bench/dask_search.py; NO_CHECK=1 skips it).
# LAYOUTS and PIPELINES (query chunks a holder, e.g. 2,4) narrow or widen the runs. Writes
# $OUT/dask4-summary.txt and the logs.
set -uo pipefail
D=${D:-.gpu-dask}
res=${OUT:-/tmp/genie-out}; mkdir -p "$res"
sum="$res/dask4-summary.txt"
export RUST_LOG=${RUST_LOG:-warn}
export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64:/usr/local/nvidia/lib64"
for f in "$D"/bin/*.xz; do [ -e "$f" ] && xz -df "$f" && chmod +x "${f%.xz}"; done
export GENIE_BIN=$PWD/$D/bin/genie
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv,noheader | tee "$sum"
echo "host cores: $(nproc); commit: $(cat $D/COMMIT); $(python3 --version)" | tee -a "$sum"
site=/tmp/genie-dask-site; rm -rf "$site"
python3 -m pip install -q --no-index --no-deps --target "$site" "$D"/wheels/*.whl 2>&1 | tail -2 | tee -a "$sum"
export PYTHONPATH="$site${PYTHONPATH:+:$PYTHONPATH}"
python3 -c "import dask, distributed, genie; print('dask', dask.__version__, 'distributed', distributed.__version__)" 2>&1 | tee -a "$sum"
d=/tmp/genie-dask4; rm -rf "$d"; mkdir -p "$d"
t0=$(date +%s)
"$D"/bin/genie-bench --mode write-keywords --objects "${OBJECTS:-10000000}" --dims 128 --values 64 \
  --queries "${QUERIES:-65536}" --seed 1 --formats npy --out "$d/w" > "$d/write.log" 2>&1 || cat "$d/write.log"
echo "workload written in $(( $(date +%s) - t0 )) s" | tee -a "$sum"
# shellcheck disable=SC2086 # NO_CHECK: a flag or nothing
timeout "${LIMIT:-420}" python3 bench/dask_search.py --workload "$d/w" --k 100 --workers "${WORKERS:-1,2,4}" \
  --layouts "${LAYOUTS:-sharded,replicated}" --pipeline "${PIPELINES:-2}" ${NO_CHECK:+--no-check} \
  --gpus --device gpu --repeats "${REPEATS:-3}" --merge tree,client --streamed "${STREAMED:-4}" \
  --dir "$d" > "$res/dask4.log" 2>&1
echo "bench exit $?" | tee -a "$sum"
if [ -n "${THREADS_ALL-1}" ]; then
  timeout "${LIMIT_ALL:-150}" python3 bench/dask_search.py --workload "$d/w" --k 100 --workers 4 \
    --layouts replicated --gpus --device gpu --repeats "${REPEATS:-3}" --gpu-threads all --no-check \
    --dir "$d" > "$res/dask4-threads-all.log" 2>&1
  echo "threads-all exit $?" | tee -a "$sum"
fi
grep -hE "^(single_index|streamed_parts|dask_search)" "$res"/dask4*.log | tee -a "$sum"
python3 - "$res/dask4.log" <<'PY' | tee -a "$sum"
import re, sys
text = open(sys.argv[1]).read()
rows = re.findall(r"dask_search,workers=(\d+),shards=\d+,layout=(\w+),.*?merge=(\w+),"
                  r"threads=\d+,pipeline=(\d+),.*?qps=(\d+)", text)
qps = {(int(w), l, m, int(p)): float(v) for w, l, m, p, v in rows}
streamed = re.search(r"streamed_parts,parts=(\d+),.*?qps=(\d+)", text)
for (w, l, m, p), v in sorted(qps.items()):
    one = qps.get((1, "sharded", "client", p))
    if one:
        line = f"{l} {w} workers ({m} merge, pipeline {p}): {v:.0f} q/s, {v / one:.2f}x one worker"
        if streamed and l == "sharded":
            line += f", {v / float(streamed.group(2)):.2f}x one GPU streaming {streamed.group(1)} parts"
        print(line)
PY
