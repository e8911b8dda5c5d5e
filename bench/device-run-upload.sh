#!/usr/bin/env bash
# Issue 15, the upload: one call on the GPU machine. The ceilings and 1 GiB of pageable memory
# uploaded through pinned staging of each layout (`genie-bench --mode ceilings`); then the
# SIFT-like workload (seed 1) of OBJECTS (default 1,000,000) and BIG (default 4,500,000) objects
# from NumPy, `genie build` and three `genie -v search --device gpu` of 1,024 queries each, with
# the upload's stage line, the GPU's answers against the CPU's, and `dd` of as many bytes as the
# index to the same disk. Then the GPU test binaries
# staged in .gpu/tests (conformance, index, ...). Writes $OUT/upload-summary.txt.
set -uo pipefail
res=${OUT:-/tmp/genie-out}; mkdir -p "$res"
d=/tmp/genie-upload; rm -rf "$d"; mkdir -p "$d"
g=.gpu/bin/genie; gb=.gpu/bin/genie-bench
sum="$res/upload-summary.txt"
export RUST_LOG=${RUST_LOG:-warn}
source "$(dirname "$0")/timing.sh"
device_header "$sum"
echo "== ceilings and staged uploads" | tee -a "$sum"
timeout 180 $gb --mode ceilings 2>&1 | grep -vE "^\[" | tee -a "$sum"
for n in ${OBJECTS:-1000000} ${BIG:-4500000}; do
  echo "== $n objects" | tee -a "$sum"
  $gb --mode write-keywords --objects "$n" --queries 1024 --seed 1 --out "$d/w" --formats npy > "$d/write.log" 2>&1 || cat "$d/write.log"
  ls "$d/w" >> "$d/write.log"
  q=$(ls "$d"/w/queries* | head -1)
  sync; t0=$(now)
  RUST_LOG=genie=debug,genie_core=debug $g --quiet build --input "$d/w" --output "$d/i.genie" 2> "$d/build.log"
  echo "build from npy: $(since "$t0") ms; index $(stat -c %s "$d/i.genie") bytes" | tee -a "$sum"
  grep DEBUG "$d/build.log" | sed 's/^.*\] /  /' | tail -6 | tee -a "$sum"
  for r in 1 2 3; do
    t0=$(now)
    RUST_LOG=genie=debug,genie_core=debug $g -v search --device gpu --index "$d/i.genie" --queries "$q" --k 100 --output "$d/o.jsonl" > "$d/v.log" 2>&1
    echo "search gpu run $r: $(since "$t0") ms" | tee -a "$sum"
    grep -E "uploaded|pinned staging" "$d/v.log" | sed 's/^.*\] /  /' | tee -a "$sum"
  done
  $g --quiet search --device cpu --index "$d/i.genie" --queries "$q" --k 100 --output "$d/oc.jsonl" 2>&1 | tail -2
  cmp -s "$d/o.jsonl" "$d/oc.jsonl" && echo "GPU == CPU: yes ($(wc -l < "$d/o.jsonl") lines)" | tee -a "$sum" || echo "GPU == CPU: NO" | tee -a "$sum"
  # the disk's own write speed for a file of the index's size, in the same run
  mb=$(( $(stat -c %s "$d/i.genie") >> 20 ))
  rm -rf "$d/w" "$d/i.genie"
  disk_ceiling "$mb" "$d/dd.bin" conv=fsync | tee -a "$sum"
done
echo "== GPU tests (.gpu/run tests)" | tee -a "$sum"
GENIE_BIN=$PWD/.gpu/bin/genie timeout 300 .gpu/run tests --test-threads 4 > "$res/upload-tests.log" 2>&1
grep -E "^== |^test result|FAILED|test binaries" "$res/upload-tests.log" | tee -a "$sum"
