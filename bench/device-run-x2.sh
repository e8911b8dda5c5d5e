#!/usr/bin/env bash
# Issues 15 and 18 on a 2-GPU machine (nvidia-h200-x2), one call, from the repo root with
# .gpu/bin (genie, genie-bench) and .gpu/wheels (the genie wheel, dask's and numpy's) carried:
#   1. issue 15, placement: the issue-3 workload's shape (OBJECTS, default 10,000,000, of DIMS 128
#      attributes x VALUES 64 values, written by genie-bench --mode write-keywords as a NumPy CSR
#      pair, seed 1; the SIFT-like cold-path index with DIMS=237 VALUES=67 OBJECTS=1000000)
#      searched with 8,192 queries at k 100 by `genie search --device gpu` on
#      both GPUs (the default: a replica per GPU, the batch dealt between them) and on
#      `--devices 0`; whole-command wall (best and median of RUNS, default 3) and the search stage
#      of a `-v` run of each; the two outputs compared byte for byte;
#   2. issue 18: bench/device-run-dask.sh (genie.dask, one worker per GPU) on the same files.
# Writes $OUT/x2-summary.txt, $OUT/dask-summary.txt and the logs.
set -uo pipefail
res=${OUT:-/tmp/genie-out}; mkdir -p "$res"
d=/tmp/genie-x2; rm -rf "$d"; mkdir -p "$d"
g=.gpu/bin/genie; gb=.gpu/bin/genie-bench
sum="$res/x2-summary.txt"
n=${OBJECTS:-10000000}; dims=${DIMS:-128}; values=${VALUES:-64}; runs=${RUNS:-3}
export RUST_LOG=${RUST_LOG:-warn}
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv,noheader | tee "$sum"
echo "host cores: $(nproc); commit: $(cat .gpu/COMMIT 2>/dev/null)" | tee -a "$sum"
source "$(dirname "$0")/timing.sh"
t0=$(now)
$gb --mode write-keywords --objects "$n" --dims "$dims" --values "$values" --queries 8192 --seed 1 --formats npy --out "$d/w" > "$d/write.log" 2>&1 || cat "$d/write.log"
echo "workload: $n objects x $dims attributes x $values values, written in $(since "$t0") ms" | tee -a "$sum"
t0=$(now)
$g --quiet build --input "$d/w" --output "$d/i.genie" 2> "$d/build.log" || cat "$d/build.log"
echo "built in $(since "$t0") ms" | tee -a "$sum"
echo "index: $(stat -c %s "$d/i.genie") bytes, queries: $(wc -l < "$d/w/queries.txt")" | tee -a "$sum"
echo "== issue 15: 8,192 queries, k 100, both GPUs (default) vs --devices 0" | tee -a "$sum"
for devs in "" "--devices 0"; do
  tag=${devs:+one}; tag=${tag:-both}
  RUST_LOG=genie=debug,genie_core=debug $g -v search --device gpu $devs --index "$d/i.genie" --queries "$d/w/queries.txt" --k 100 --output "$d/o-$tag.jsonl" > "$d/v-$tag.log" 2>&1
  echo "devices $tag:" | tee -a "$sum"
  grep -E "mapped and checked|uploaded|backend:|stages:|searched|replica|placement" "$d/v-$tag.log" | sed 's/^.*\] /  /' | tee -a "$sum"
  echo "  whole command: $(walls "$runs" $g --quiet search --device gpu $devs --index "$d/i.genie" --queries "$d/w/queries.txt" --k 100 --output "$d/o2.jsonl")" | tee -a "$sum"
done
cp "$d/v-both.log" "$d/v-one.log" "$res/" 2>/dev/null
cmp -s "$d/o-both.jsonl" "$d/o-one.jsonl" && echo "two GPUs == one: yes" | tee -a "$sum" || echo "two GPUs == one: NO" | tee -a "$sum"
rm -f "$d"/*.genie "$d"/*.jsonl
echo "== issue 18" | tee -a "$sum"
# the dask suite on the GPU runs in device-run-python.sh; here the time goes to the figures
WORKLOAD="$d/w" REPEATS=${REPEATS:-3} SKIP_PYTEST=${SKIP_PYTEST:-1} bash bench/device-run-dask.sh
rm -rf "$d"
