#!/usr/bin/env bash
# The keyword count kernels of several builds on one GPU, one call, from the repo root:
# VARIANTS="TAG:DIR ..." (default "base:.gpu-ab/base new:.gpu-ab/new"), each DIR holding
# bin/genie-bench(.xz), COMMIT and optionally cpq.cubin (the shipped count kernels, whose registers
# and spills cuobjdump prints); TESTS (default .gpu-ab/tests) holds conformance-* and kernels-*
# test binaries (.xz or not) of the last variant, run on the GPU first (of kernels-*, only its
# GPU test: the others check the sources of the checkout it was built in, which CI does).
# - the ceilings (genie-bench --mode ceilings) of the last variant;
# - ROUNDS (default 2) rounds, each running every variant in turn on the suite's keyword workloads
#   (genie-bench --mode suite, WORKLOADS, default the four) at 1,024 queries, and SIFT-like at
#   8,192 unless SKIP_8192 is set;
# - PIPELINED="Q ...": the first variant again on the 1,024-query suite for each Q, with batches
#   cut to at most Q queries (GENIE_PIPELINED_QUERIES), one round;
# - NCU="TAG ..." : Nsight Compute's full set on one launch of NCU_KERNEL (a regex, default
#   tile_match: the tiled count) of each of NCU_WORKLOAD (default OCR-like; space-separated) at
#   1,024 queries for each variant named, skipping NCU_SKIP launches (default 12).
# Writes $OUT/count-summary.txt (match ms and q/s of each row at the end) and the raw logs.
set -uo pipefail
res=${OUT:-/tmp/genie-out}; mkdir -p "$res"
sum="$res/count-summary.txt"
export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64:/usr/local/nvidia/lib64"
source "$(dirname "$0")/timing.sh"
variants=${VARIANTS:-"base:.gpu-ab/base new:.gpu-ab/new"}
last_dir=${variants##*:}
device_header "$sum" "$last_dir"
unxz_in() { for f in "$@"; do [ -f "$f" ] && case $f in *.xz) xz -dkf "$f"; chmod +x "${f%.xz}";; esac; done; }
for v in $variants; do
  d=${v#*:}
  unxz_in "$d"/bin/*.xz
  echo "variant ${v%%:*}: $(cat "$d/COMMIT" 2>/dev/null)" | tee -a "$sum"
  if [ -f "$d/cpq.cubin" ]; then
    /usr/local/cuda/bin/cuobjdump --dump-resource-usage "$d/cpq.cubin" 2>&1 | grep -A1 -E "Function tile_match(_wide)?:" | \
      sed "s/^/  ${v%%:*} /" | tee -a "$sum"
  fi
done
tests=${TESTS:-.gpu-ab/tests}
unxz_in "$tests"/*.xz
for t in "$tests"/conformance-* ; do
  case $t in *.xz) continue;; esac
  for m in on off; do
    echo "conformance on the GPU, postings packed $m: $(GENIE_PACKED_POSTINGS=$m "$t" gpu:: 2>&1 | grep "test result")" | tee -a "$sum"
  done
done
for t in "$tests"/kernels-* ; do
  case $t in *.xz) continue;; esac
  echo "kernels test on the GPU: $("$t" a_module_of_ones_own_loads_and_runs 2>&1 | grep "test result")" | tee -a "$sum"
done
"$last_dir/bin/genie-bench" --mode ceilings 2>&1 | grep -E "^device|^ceilings" | tee -a "$sum"
workloads=${WORKLOADS:-OCR-like,SIFT-like,Tweets-like,Adult-x20-like}
run() {  # run TAG DIR QUERIES ONLY
  local log="$res/suite-$1-$3-$r.log"
  GENIE_PACKED_POSTINGS=off "$2/bin/genie-bench" --mode suite --only "$4" --queries "$3" \
    --csv "$res/suite-$1-$3-$r.csv" > "$log" 2>&1
  echo "== $1, $3 queries, round $r" | tee -a "$sum"
  grep -vE "^\[" "$log" | grep -E "done:|mismatch|differ|error" | tee -a "$sum"
}
for r in $(seq 1 "${ROUNDS:-2}"); do
  for v in $variants; do run "${v%%:*}" "${v#*:}" 1024 "$workloads"; done
  [ -n "${SKIP_8192:-}" ] && continue
  for v in $variants; do run "${v%%:*}" "${v#*:}" 8192 SIFT-like; done
done
first=${variants%% *}
for pq in ${PIPELINED:-}; do
  r="pipelined$pq"
  export GENIE_PIPELINED_QUERIES=$pq
  run "${first%%:*}" "${first#*:}" 1024 "$workloads"
  unset GENIE_PIPELINED_QUERIES
done
kern=${NCU_KERNEL:-tile_match}
for tag in ${NCU:-}; do
  d=""; for v in $variants; do [ "${v%%:*}" = "$tag" ] && d=${v#*:}; done
  [ -z "$d" ] && continue
  for w in ${NCU_WORKLOAD:-OCR-like}; do
    echo "== Nsight Compute, $kern, $w 1,024 queries, $tag" | tee -a "$sum"
    GENIE_PACKED_POSTINGS=off ncu_launch "$res" "$tag-$w" "$kern" "$w" "$d/bin/genie-bench" | tee -a "$sum"
  done
done
echo "== summary: match ms and q/s of the main rows (see the suite's header for the columns)" | tee -a "$sum"
for f in "$res"/suite-*.log; do
  b=$(basename "$f" .log)
  grep -E "^(OCR|SIFT|Tweets|Adult)-[a-z0-9-]+ +[0-9]+ " "$f" | \
    awk -v b="$b" '{printf "%-26s %-16s match %s s, select %s s, q/s %s\n", b, $1, $6, $7, $9}' | tee -a "$sum"
done
