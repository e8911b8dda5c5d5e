#!/usr/bin/env bash
# Issue 15, opening an index: how fast `InvertedIndex::load` checks every byte, against the bare
# checksum pass over mappings made in several ways and the host's read ceiling for the same bytes
# (`genie-bench --mode check`), page cache warm, on two indexes written from NumPy (seed 1): the
# SIFT-like 1 M objects (948 MB) and the issue-3 shape, 10 M objects of 128 attributes x 64 values
# (5.12 GB). Then `genie search --device gpu` on each: one `-v` run (its stages) and RUNS (default
# 5) whole-command walls; 1,024 queries on 1 M, 8,192 on 10 M, k 100. Writes
# $OUT/check-summary.txt and the logs. SKIP_CHECK=1 leaves out genie-bench --mode check;
# PREV=BINARY also times an earlier `genie` the same way, right after, and compares its answers.
set -uo pipefail
res=${OUT:-/tmp/genie-out}; mkdir -p "$res"
d=/tmp/genie-check; rm -rf "$d"; mkdir -p "$d"
g=.gpu/bin/genie; gb=.gpu/bin/genie-bench
sum="$res/check-summary.txt"
export RUST_LOG=${RUST_LOG:-warn}
source "$(dirname "$0")/timing.sh"
device_header "$sum"
for shape in "sift 1000000 237 67 1024" "issue3 10000000 128 64 8192"; do
  read -r name n dims values nq <<< "$shape"
  w="$d/$name"
  $gb --mode write-keywords --objects "$n" --dims "$dims" --values "$values" --queries "$nq" --seed 1 --formats npy --out "$w" > "$d/write-$name.log" 2>&1 || cat "$d/write-$name.log"
  $g --quiet build --input "$w" --output "$d/$name.genie" 2>&1 | tail -2
  echo "== $name: $n objects x $dims attributes x $values values, index $(stat -c %s "$d/$name.genie") bytes" | tee -a "$sum"
  [ -n "${SKIP_CHECK:-}" ] || $gb --mode check --index "$d/$name.genie" --repeats "${REPEATS:-5}" 2>&1 | tee -a "$sum"
  q="$w/queries.txt"
  RUST_LOG=genie=debug,genie_core=debug $g -v search --device gpu --index "$d/$name.genie" --queries "$q" --k 100 --output "$d/o.jsonl" > "$res/v-$name.log" 2>&1
  grep -E "mapped and checked|driver|context|uploaded|searched|ready in|stages: read" "$res/v-$name.log" | sed 's/^.*\] /  /' | tee -a "$sum"
  echo "  genie search --device gpu, $nq queries, whole command: $(walls "${RUNS:-5}" $g --quiet search --device gpu --index "$d/$name.genie" --queries "$q" --k 100 --output "$d/o.jsonl")" | tee -a "$sum"
  if [ -n "${PREV:-}" ]; then
    $PREV --quiet search --device gpu --index "$d/$name.genie" --queries "$q" --k 100 --output "$d/o-prev.jsonl"
    cmp -s "$d/o.jsonl" "$d/o-prev.jsonl" && echo "  same answers as $PREV: yes" | tee -a "$sum" || echo "  same answers as $PREV: NO" | tee -a "$sum"
    echo "  $PREV, whole command: $(walls "${RUNS:-5}" $PREV --quiet search --device gpu --index "$d/$name.genie" --queries "$q" --k 100 --output "$d/o-prev.jsonl")" | tee -a "$sum"
  fi
  echo "  genie info: $(walls "${RUNS:-5}" $g info --index "$d/$name.genie")" | tee -a "$sum"
  rm -rf "$w" "$d/$name.genie" "$d/o.jsonl"
done
