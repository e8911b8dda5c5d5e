#!/usr/bin/env bash
# Issue 37's CPU cohorts on the device's host cores, one call: genie-bench --mode cpu on the
# suite's keyword workloads (sizes / 20, 1,024 queries, k = 100), the default path (cohorts where
# the plan finds them worth it) beside `no cohorts`, with the workloads' own queries and with
# near-duplicate groups of 8 (--similar 8), alternated for ROUNDS rounds; on 2 cores (taskset)
# and on all of them. Every run checks that all paths give the same hits.
# Stage here: .gpu/bin/genie-bench (stripped, optionally .xz) and .gpu/COMMIT.
# Results under $OUT: one log and CSV a run, summary.txt.
set -uo pipefail
res=${OUT:-/tmp/genie-out}; mkdir -p "$res"
for f in .gpu/bin/*.xz; do [ -e "$f" ] && xz -df "$f" && chmod +x "${f%.xz}"; done
echo "host: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2); commit $(cat .gpu/COMMIT)" | tee "$res/summary.txt"
export RUST_LOG=${RUST_LOG:-genie_core::backend::cpu=debug}
run() { # NAME THREADS CPUS SIMILAR
  local name=$1 t=$2 cpus=$3 sim=$4
  timeout 200 taskset -c "$cpus" .gpu/bin/genie-bench --mode cpu --threads "$t" --scale-div 20 --queries 1024 \
    --reference-queries 32 --repeats 3 --similar "$sim" --csv "$res/$name.csv" > "$res/$name.log" 2>&1
  echo "== $name (exit $?)" | tee -a "$res/summary.txt"
  grep -E "^(OCR|SIFT|Tweets|Adult).*(default|no cohorts)|ceiling, $t threads, tile 32" "$res/$name.log" | tee -a "$res/summary.txt"
  # the plans, by workload in turn (the first of each repeat)
  grep "cohorts (" "$res/$name.log" | sed 's/.*cpu\] //; s/ planned in.*//' | uniq -c | tee -a "$res/summary.txt"
}
all=$(nproc)
for r in $(seq 1 "${ROUNDS:-2}"); do
  for sim in 0 8; do
    run "two-cores-similar$sim-round$r" 2 0,1 "$sim"
  done
done
for sim in 0 8; do
  run "all-cores-similar$sim" "$all" "0-$((all - 1))" "$sim"
done
