#!/usr/bin/env bash
# Issue 37's sweeps of the tiled count on one GPU, one call, from the repo root with D (default
# .gpu: bin/genie-bench, tests/conformance-*, COMMIT) unpacked there: the GPU conformance cases
# with sweeps forced (GENIE_SWEEP_TILES = 1 and 3) and without, then the SIFT-like shape
# (OBJECTS, default 4.5 M, 237 x 67, seed 1) at 1,024 and 8,192 queries, k = 100, for each
# GENIE_SWEEP_TILES of SWEEPS (default "0 1 2 4 8", empty: none; 0: one launch), the CPU's answers
# compared on the first 64 queries. Writes $OUT/sweep-summary.txt and the raw rows.
set -uo pipefail
D=${D:-.gpu}
res=${OUT:-/tmp/genie-out}; mkdir -p "$res"
sum="$res/sweep-summary.txt"
export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64:/usr/local/nvidia/lib64"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$sum"
echo "host cores: $(nproc); commit: $(cat $D/COMMIT)" | tee -a "$sum"
conf=$(ls $D/tests/conformance-* 2>/dev/null | head -1)
if [ -n "$conf" ]; then
  for t in none 1 3; do
    if [ "$t" = none ]; then r=$($conf gpu:: 2>&1 | grep "test result"); else r=$(GENIE_SWEEP_TILES=$t $conf gpu:: 2>&1 | grep "test result"); fi
    echo "conformance on the GPU, sweep tiles $t: $r" | tee -a "$sum"
  done
fi
for t in ${SWEEPS-0 1 2 4 8}; do
  GENIE_SWEEP_TILES=$t $D/bin/genie-bench --objects "${OBJECTS:-4500000}" --dims 237 --values 67 \
    --queries 1024,8192 --no-count-table --cpu-queries 64 --seed 1 --csv "$res/sweep-$t.csv" > "$res/sweep-$t.log" 2>&1
  echo "== GENIE_SWEEP_TILES=$t" | tee -a "$sum"
  grep -E "identical|gpu|GPU" "$res/sweep-$t.log" | grep -v "^\[" | tail -6 | tee -a "$sum"
done
# SUITE=1: the suite's four workloads (genie-bench --mode suite, 1,024 queries) without sweeps
# (GENIE_SWEEP_TILES=0) and with the default rule, alternated ROUNDS times (default 1)
if [ -n "${SUITE:-}" ]; then
  for r in $(seq 1 "${ROUNDS:-1}"); do
    for t in 0 default; do
      if [ "$t" = 0 ]; then env GENIE_SWEEP_TILES=0 $D/bin/genie-bench --mode suite --csv "$res/suite-$t-$r.csv" > "$res/suite-$t-$r.log" 2>&1
      else env -u GENIE_SWEEP_TILES $D/bin/genie-bench --mode suite --csv "$res/suite-$t-$r.csv" > "$res/suite-$t-$r.log" 2>&1; fi
      echo "== suite round $r, sweeps $t" | tee -a "$sum"
      grep -vE "^\[" "$res/suite-$t-$r.log" | grep -E "q/s|OCR|SIFT|Tweets|Adult|identical" | head -12 | tee -a "$sum"
    done
  done
fi
