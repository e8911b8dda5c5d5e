#!/usr/bin/env bash
# Issue 37's packed postings on one GPU, one call, from the repo root with D (default .gpu-new:
# bin/genie-bench, tests/conformance-*, COMMIT) unpacked there:
# - the ceilings (genie-bench --mode ceilings: copy, random atomics, shared-tile increments);
# - the GPU conformance cases with the postings packed (GENIE_PACKED_POSTINGS=on) and plain (off);
# - the suite's keyword workloads (genie-bench --mode suite --only ..., WORKLOADS, default the four)
#   at 1,024 queries and SIFT-like at 8,192, plain and packed in turn, ROUNDS times (default 1;
#   packed only in the first PACKED_ROUNDS);
#   with OLD=DIR, that build's genie-bench on the same workloads in turn too (the build before);
#   (SKIP_8192=1 leaves out the 8,192-query runs);
# - NCU=1: Nsight Compute's full set on one launch of tile_match of NCU_WORKLOAD (default SIFT-like,
#   skipping NCU_SKIP launches, default 12) at 1,024 queries,
#   for each GENIE_PACKED_POSTINGS of NCU_FORMS (default "off on": plain and packed), and the old
#   build's with OLD (the stall reasons, memory traffic and pipe use of the main kernel; and each
#   SASS instruction's executions and stalls, sass-FORM.csv).
# Writes $OUT/packed-summary.txt (a table of match ms and q/s at the end) and the raw logs.
set -uo pipefail
D=${D:-.gpu-new}
res=${OUT:-/tmp/genie-out}; mkdir -p "$res"
sum="$res/packed-summary.txt"
export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64:/usr/local/nvidia/lib64"
source "$(dirname "$0")/timing.sh"
device_header "$sum" "$D"
[ -n "${OLD:-}" ] && echo "old build: $(cat "$OLD/COMMIT" 2>/dev/null)" | tee -a "$sum"
bench=$D/bin/genie-bench
$bench --mode ceilings 2>&1 | grep -E "^device|^ceilings" | tee -a "$sum"
conf=$(ls $D/tests/conformance-* 2>/dev/null | head -1)
if [ -n "$conf" ]; then
  for m in on off; do
    echo "conformance on the GPU, postings packed $m: $(GENIE_PACKED_POSTINGS=$m $conf gpu:: 2>&1 | grep "test result")" | tee -a "$sum"
  done
fi
workloads=${WORKLOADS:-OCR-like,SIFT-like,Tweets-like,Adult-x20-like}
run() {  # run TAG BIN PACKED QUERIES ONLY
  local log="$res/suite-$1-$4-$r.log"
  env GENIE_PACKED_POSTINGS="$3" RUST_LOG=genie_core=debug "$2" --mode suite --only "$5" --queries "$4" \
    --csv "$res/suite-$1-$4-$r.csv" > "$log" 2>&1
  echo "== $1 (packed: $3), $4 queries, round $r" | tee -a "$sum"
  grep -E "packed [0-9]+ postings|uploaded [0-9]+ postings" "$log" | sed 's/^\[[^]]*\] //' | sort -u | head -8 | tee -a "$sum"
  grep -vE "^\[" "$log" | grep -E "done:" | tee -a "$sum"
  # the main row of each workload: name, objects, build, index upload, query upload, match, select
  grep -E "^(OCR|SIFT|Tweets|Adult)-[a-z0-9-]+ +[0-9]+ " "$log" | tee -a "$sum"
}
for r in $(seq 1 "${ROUNDS:-1}"); do
  run plain "$bench" off 1024 "$workloads"
  [ "$r" -le "${PACKED_ROUNDS:-99}" ] && run packed "$bench" on 1024 "$workloads"
  [ -n "${OLD:-}" ] && run old "$OLD/bin/genie-bench" off 1024 "$workloads"
  [ -n "${SKIP_8192:-}" ] && continue
  run plain "$bench" off 8192 SIFT-like
  [ "$r" -le "${PACKED_ROUNDS:-99}" ] && run packed "$bench" on 8192 SIFT-like
  [ -n "${OLD:-}" ] && run old "$OLD/bin/genie-bench" off 8192 SIFT-like
done
if [ -n "${NCU:-}" ]; then
  forms=${NCU_FORMS:-off on}; [ -n "${OLD:-}" ] && forms="old $forms"
  for m in $forms; do
    w=${NCU_WORKLOAD:-SIFT-like}
    echo "== Nsight Compute, tile_match, $w 1,024 queries, packed $m" | tee -a "$sum"
    b=$bench; [ "$m" = old ] && b=$OLD/bin/genie-bench
    GENIE_PACKED_POSTINGS=$m ncu_launch "$res" "$m" tile_match "$w" "$b" | tee -a "$sum"
  done
fi
echo "== summary: match ms and q/s of the main rows (see the suite's header for the columns)" | tee -a "$sum"
for f in "$res"/suite-*.log; do
  b=$(basename "$f" .log)
  grep -E "^(OCR|SIFT|Tweets|Adult)-[a-z0-9-]+ +[0-9]+ " "$f" | awk -v b="$b" '{printf "%-24s %-16s upload %s s, match %s s, q/s %s\n", b, $1, $4, $6, $9}' | tee -a "$sum"
done
