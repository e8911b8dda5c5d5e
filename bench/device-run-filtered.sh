#!/usr/bin/env bash
# Issue 36's filtered vector searches on one GPU, one call, from the repo root with D (default
# .gpu-new: bin/genie, tests/lsh_gpu-*, COMMIT; each .xz; D/fm holding Fashion-MNIST's IDX files)
# and, with OLD=DIR, that build's bin/genie (the build before) there:
# - the GPU's vector tests (lsh_gpu: the filtered exact search on the GPU equals the CPU's);
# - per data set of SETS (default "fm cl": Fashion-MNIST 60,000 x 784 and clusters 1 M x 96,
#   10,000 queries each, bench/peers/vector_sets.py), `genie build --kind vectors` (the defaults),
#   then `genie -v search --device gpu --k 10` unfiltered and with --filter-ids allowing 1% and
#   10% (a seeded choice), each RUNS times (default 2) for this build and OLD in turn: the search
#   stage, and recall@10 against the exact nearest allowed vectors (NumPy, float64); the CPU's
#   answers compared with the GPU's at 1%.
# Writes $OUT/filtered-summary.txt and the logs.
set -uo pipefail
D=${D:-.gpu-new}
res=${OUT:-/tmp/genie-out}; mkdir -p "$res"
d=/tmp/genie-filtered; rm -rf "$d"; mkdir -p "$d"
sum="$res/filtered-summary.txt"
export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64:/usr/local/nvidia/lib64"
for f in "$D"/bin/*.xz "$D"/tests/*.xz "$D"/fm/*.xz ${OLD:+"$OLD"/bin/*.xz}; do
  [ -e "$f" ] && xz -df "$f" && { chmod +x "${f%.xz}" 2>/dev/null || true; }
done
# bench/peers/vector_sets.py reads Fashion-MNIST's files gzipped
for f in "$D"/fm/*-ubyte; do [ -e "$f" ] && gzip -1 -f "$f"; done
[ -e /work/main ] || { mkdir -p /work && ln -s "$PWD" /work/main; }
source "$(dirname "$0")/timing.sh"
device_header "$sum" "$D"
[ -n "${OLD:-}" ] && echo "old build: $(cat "$OLD/COMMIT" 2>/dev/null)" | tee -a "$sum"
t=$(ls "$D"/tests/lsh_gpu-* 2>/dev/null | head -1)
[ -n "$t" ] && echo "lsh_gpu: $($t 2>&1 | grep -E 'test result|panicked|FAILED' | head -3)" | tee -a "$sum"
sets=${SETS:-fm cl}
python3 bench/peers/vector_sets.py "$d" "$D/fm" "$sets" > "$res/sets.log" 2>&1
builds="new:$D/bin/genie"; [ -n "${OLD:-}" ] && builds="$builds old:$OLD/bin/genie"
for set in $sets; do
  t0=$(now)
  $D/bin/genie build --kind vectors -i "$d/$set-base.fvecs" -o "$d/$set.genie" > "$res/build-$set.log" 2>&1 || tail -3 "$res/build-$set.log"
  echo "== $set: built in $(since "$t0") ms" | tee -a "$sum"
  for pct in 1 10; do
    python3 bench/peers/allowed_truth.py truth "$d/$set-base.fvecs" "$d/$set-query.fvecs" "$pct" "$d/$set-allow$pct"
  done
  for r in $(seq 1 "${RUNS:-2}"); do
    for b in $builds; do
      tag=${b%%:*}; G=${b#*:}
      for pct in 0 1 10; do
        flt=(); [ "$pct" != 0 ] && flt=(--filter-ids "$d/$set-allow$pct.txt")
        log="$res/$set-$tag-f$pct-$r.log"
        env -u RUST_LOG $G -v search --device gpu --index "$d/$set.genie" --queries "$d/$set-query.fvecs" --k 10 \
          "${flt[@]}" --output "$d/$set-$tag-f$pct.jsonl" > "$log" 2>&1 || tail -3 "$log"
        stage=$(grep -oE "search [0-9.]+ ms" "$log" | head -1)
        rec=""
        if [ "$pct" != 0 ]; then
          rec=$(python3 bench/peers/allowed_truth.py recall "$d/$set-$tag-f$pct.jsonl" "$d/$set-allow$pct-truth.npy" "$d/$set-allow$pct.txt")
        fi
        echo "  $set $tag filter ${pct}% round $r: $stage; $rec" | tee -a "$sum"
      done
    done
  done
  env -u RUST_LOG $D/bin/genie search --device cpu --index "$d/$set.genie" --queries "$d/$set-query.fvecs" --k 10 \
    --filter-ids "$d/$set-allow1.txt" --output "$d/$set-cpu-f1.jsonl" > "$res/$set-cpu-f1.log" 2>&1
  cmp -s "$d/$set-cpu-f1.jsonl" "$d/$set-new-f1.jsonl" && echo "  $set: CPU and GPU answers at 1% identical" | tee -a "$sum" ||
    echo "  $set: CPU and GPU answers at 1% DIFFER" | tee -a "$sum"
  [ -n "${OLD:-}" ] && { cmp -s "$d/$set-old-f1.jsonl" "$d/$set-new-f1.jsonl" && echo "  $set: old and new answers at 1% identical" | tee -a "$sum" ||
    echo "  $set: old and new answers at 1% DIFFER" | tee -a "$sum"; }
done
rm -rf "$d"
