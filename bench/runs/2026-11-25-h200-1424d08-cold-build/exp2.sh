#!/usr/bin/env bash
set -uo pipefail
res=${OUT:-/tmp/genie-out}; mkdir -p "$res"; sum="$res/exp2-summary.txt"
gb=.gpu/bin/genie-bench
echo "commit $(cat .gpu/COMMIT | tr '\n' ' ')" | tee "$sum"
echo "== CPU tiles, counters in a huge page (1) or not (0), 128 queries" | tee -a "$sum"
for h in 0 1; do
  GENIE_TILE_HUGE=$h timeout 150 $gb --mode cpu --threads 1,16 --workloads SIFT-like,Tweets-like --tile-kib 1024 --queries 128 --reference-queries 8 --repeats 2 > "$res/cpu-huge$h.log" 2>&1
  grep -E "^(SIFT|Tweets).*(default|tiles)" "$res/cpu-huge$h.log" | sed "s/^/huge=$h /" | tee -a "$sum"
done
RUNS=3 timeout 420 bash bench/device-run-cold.sh > "$res/cold.log" 2>&1
echo "cold exit $?" | tee -a "$sum"
