#!/usr/bin/env bash
# What bounds two GPUs on the issue-3 workload, measured on one GPU (nvidia-h200), one call:
# the workload's shape (DIMS 128 attributes x VALUES 64, seed 1) at OBJECTS (default 10,000,000)
# and at half of it, both built from a NumPy pair; the same 8,192 queries (of the full set)
# searched at k 100 by `genie -v search --device gpu` on each, best of RUNS (default 3) whole
# commands and one `-v` stage log each. A shard of half the objects searching in about half the
# time is what lets two GPUs (sharded, genie.dask) reach 1.8x; the stage log of the full index is
# what a replica per GPU (`genie search` on two GPUs) can and cannot split.
# Writes $OUT/bound-summary.txt.
set -uo pipefail
res=${OUT:-/tmp/genie-out}; mkdir -p "$res"
d=/tmp/genie-bound; rm -rf "$d"; mkdir -p "$d"
g=.gpu/bin/genie; gb=.gpu/bin/genie-bench
sum="$res/bound-summary.txt"
n=${OBJECTS:-10000000}; dims=${DIMS:-128}; values=${VALUES:-64}; runs=${RUNS:-3}
export RUST_LOG=${RUST_LOG:-warn}
nvidia-smi --query-gpu=index,name,memory.total,driver_version --format=csv,noheader | tee "$sum"
echo "host cores: $(nproc); commit: $(cat .gpu/COMMIT 2>/dev/null)" | tee -a "$sum"
source "$(dirname "$0")/timing.sh"
for m in $n $((n / 2)); do
  t0=$(now)
  $gb --mode write-keywords --objects "$m" --dims "$dims" --values "$values" --queries 8192 --seed 1 --formats npy --out "$d/w$m" > /dev/null 2>&1
  $g --quiet build --input "$d/w$m" --output "$d/i$m.genie" 2> "$d/build.log" || cat "$d/build.log"
  echo "$m objects x $dims: written and built in $(since "$t0") ms, index $(stat -c %s "$d/i$m.genie") bytes" | tee -a "$sum"
  rm -rf "$d/w$m/keywords.npy"
done
q="$d/w$n/queries.txt"
for m in $n $((n / 2)); do
  echo "== $m objects, 8,192 queries, k 100, one GPU" | tee -a "$sum"
  RUST_LOG=genie=debug,genie_core=debug $g -v search --device gpu --index "$d/i$m.genie" --queries "$q" --k 100 --output "$d/o.jsonl" > "$d/v$m.log" 2>&1
  grep -E "mapped and checked|uploaded|backend:|stages:|host:|searched" "$d/v$m.log" | sed 's/^.*\] /  /' | tee -a "$sum"
  echo "  whole command: $(walls "$runs" $g --quiet search --device gpu --index "$d/i$m.genie" --queries "$q" --k 100 --output "$d/o.jsonl")" | tee -a "$sum"
done
rm -rf "$d"
