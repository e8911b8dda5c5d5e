#!/usr/bin/env bash
# Issue 34 (live indexes) on one GPU, one call: the GPU tests (masked conformance cases: GPU ==
# CPU == brute force; the live index's model test with its GPU side), the crash test with
# GENIE_LIVE_CRASH_KILLS kills on this machine's disk, the ceilings, then `genie-bench --mode
# live` (ingest through the library and through HTTP, 10% unmerged and 5% deleted against merged,
# a 1% filter, reads under writes), and the CLI on the user's path (`genie add`, `genie search
# --filter-ids`) timed.
# Stage here first (from the repo root), with D = .gpu-sub (carried as .gpu-pack.tar.xz):
#   D/bin/genie  D/bin/genie-bench  D/tests/{genie-*,conformance-*,live_crash-*}
# Writes $OUT/live-summary.txt, $OUT/live.csv and the logs. LIVE_ARGS adds to the benchmark's
# command line; KILLS (default 1000) sets the crash test's kills.
set -uo pipefail
D=${D:-.gpu-sub}
res=${OUT:-/tmp/genie-out}; mkdir -p "$res"
w=/tmp/genie-live; rm -rf "$w"; mkdir -p "$w"
sum="$res/live-summary-${PART:-all}.txt"
export RUST_LOG=${RUST_LOG:-warn} GENIE_CACHE_DIR=/tmp/genie-cache
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$sum"
echo "host cores: $(nproc); commit: $(cat $D/COMMIT 2>/dev/null); disk: $(df -h /tmp | tail -1)" | tee -a "$sum"

part=${PART:-all}   # 1: tests, crash test, ceilings; 2: the benchmark and the CLI
if [ "$part" != 2 ]; then
echo "== GPU tests" | tee -a "$sum"
for t in $D/tests/conformance-* $D/tests/genie-*; do
  echo "-- $t" >> "$res/tests.log"
  timeout 300 "$t" --test-threads 4 >> "$res/tests.log" 2>&1
  echo "$(basename $t) exit $?" | tee -a "$sum"
done
grep -E "test result|FAILED|panicked|skipped" "$res/tests.log" | sort | uniq -c | tee -a "$sum"
grep -c "GPU side skipped" "$res/tests.log" | sed 's/^/GPU-side skips: /' | tee -a "$sum"

echo "== crash test, ${KILLS:-1000} kills" | tee -a "$sum"
for t in $D/tests/live_crash-*; do
  GENIE_LIVE_CRASH_KILLS=${KILLS:-1000} TMPDIR=$w timeout 400 "$t" --nocapture > "$res/crash.log" 2>&1
  echo "crash exit $?" | tee -a "$sum"
done
grep -E "kills in|test result|panicked" "$res/crash.log" | tee -a "$sum"

echo "== ceilings" | tee -a "$sum"
timeout 60 $D/bin/genie-bench --mode ceilings 2>&1 | tail -6 | tee -a "$sum"

fi
if [ "$part" != 1 ]; then
echo "== genie-bench --mode live" | tee -a "$sum"
timeout 420 $D/bin/genie-bench --mode live --device gpu --dir "$w/bench" --csv "$res/live.csv" ${LIVE_ARGS:-} \
  > "$res/live-bench.log" 2>&1
echo "bench exit $?" | tee -a "$sum"
tail -25 "$res/live-bench.log" | tee -a "$sum"

echo "== the CLI: genie add, genie search with and without --filter-ids (1,000,000 objects)" | tee -a "$sum"
G=$D/bin/genie
$D/bin/genie-bench --mode write-keywords --objects 1000000 --queries 4096 --seed 1 --formats text --out "$w/kw" > "$w/write.log" 2>&1 || cat "$w/write.log"
$G --quiet build --input "$w/kw/objects.txt" --output "$w/kw.genie"
head -100000 "$w/kw/objects.txt" > "$w/more.txt"
seq 2000000 2099999 > "$w/more-ids.txt"
seq 0 100 2099999 > "$w/allow.txt"
t0=$(date +%s%N); $G --quiet add --index "$w/kw.genie" --input "$w/more.txt" --ids "$w/more-ids.txt"; t1=$(date +%s%N)
echo "genie add 100,000 objects: $(( (t1 - t0) / 1000000 )) ms (whole command, flush included)" | tee -a "$sum"
for run in 1 2 3; do
  t0=$(date +%s%N); $G --quiet search --index "$w/kw.genie" --queries "$w/kw/queries.txt" --k 100 --device gpu > "$w/plain.jsonl"; t1=$(date +%s%N)
  $G --quiet search --index "$w/kw.genie.live" --queries "$w/kw/queries.txt" --k 100 --device gpu > "$w/live.jsonl"; t2=$(date +%s%N)
  $G --quiet search --index "$w/kw.genie.live" --queries "$w/kw/queries.txt" --k 100 --device gpu --filter-ids "$w/allow.txt" > "$w/filtered.jsonl"; t3=$(date +%s%N)
  echo "run $run: plain file $(( (t1 - t0) / 1000000 )) ms, live (2 segments) $(( (t2 - t1) / 1000000 )) ms, live + 1% filter $(( (t3 - t2) / 1000000 )) ms" | tee -a "$sum"
done
$G --quiet search --index "$w/kw.genie.live" --queries "$w/kw/queries.txt" --k 100 --device cpu --filter-ids "$w/allow.txt" > "$w/filtered-cpu.jsonl"
cmp -s "$w/filtered.jsonl" "$w/filtered-cpu.jsonl" && echo "filtered GPU == CPU: yes" | tee -a "$sum" || echo "filtered GPU == CPU: NO" | tee -a "$sum"
fi
true
