#!/usr/bin/env bash
# Issue 13 on the GPU machine, one call: the GPU tests, then per data set the codebook family built
# and tuned by `genie build` (no flag but kind and family; on this machine training, encoding and
# the tuner's costs use the GPU), its recall/throughput rows from `genie-bench --mode vectors` (the
# library searched host to host, the tuned probe and a sweep, GPU and CPU backends) in the same CSV
# as the exact fp32 scan in PyTorch on the same GPU (bench/peers/ann_peers.py --peers torch), and
# `genie -v search` on both backends for the stage breakdown and the GPU == CPU check.
# Data sets (SETS, default "fm cl"):
#   fm   Fashion-MNIST, 60,000 x 784, the 10,000 test images as queries (.gpu/fm/ holds the IDX files)
#   cl   Gaussian clusters 1M x 96: 2,000 centres ~ N(0, 10^2), points = centre + N(0, 3^2), 10,000
#        queries from the same mixture (seed 13)
#   big  the same mixture at 10M x 96 (10,000 centres, seed 17); no CPU backend rows
# SWEEP_<set> replaces a set's sweep (probes:entries:candidates:levels, comma-separated).
# Exact neighbours: bench/peers/knn_truth.py (float64 on the GPU). NO_TESTS=1 skips the tests.
# Run from the repo root after scripts/gpu/stage. Prints a summary at the end.
set -uo pipefail
res=${OUT:-/tmp/genie-out}
mkdir -p "$res"
d=/tmp/genie-vec; mkdir -p "$d"
out=$d/logs; mkdir -p "$out"
now() { python3 -c 'import time; print(f"{time.time():.3f}")'; }
since() { python3 -c "import time; print(f'{time.time() - $1:.2f}')"; }
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
nproc
sets=${SETS:-fm cl}
# faiss-cpu beside torch where the machine has it (issue 13's CPU peer, on this machine's cores)
peers=torch
python3 -c "import faiss" 2>/dev/null && peers=torch,faiss-flat,faiss-ivfpq
echo "peers: $peers"
echo "== GPU tests"
[ -n "${NO_TESTS:-}" ] || .gpu/run tests 2>&1 | grep -E "^test |test result|skipped|panicked|differ" | tee "$res/tests.log"
python3 bench/peers/vector_sets.py "$d" .gpu/fm "$sets"
summary="$res/summary.txt"; : > "$summary"
stage() { grep -oE "search [0-9.]+ ms \(hash [0-9.]+ ms, count [0-9.]+ ms, rerank [0-9.]+ ms\)" "$1" | tail -1; }
for set in $sets; do
  echo "== $set"
  base="$d/$set-base.fvecs"; query="$d/$set-query.fvecs"; truth="$d/$set-truth.ivecs"; csv="$res/$set-ann.csv"
  once=; [ $set = big ] && once=--once
  python3 bench/peers/knn_truth.py $once "$base" "$query" 10 "$truth" | tee "$out/$set-truth.log"
  python3 bench/peers/ann_peers.py --data $set --base "$base" --queries "$query" \
    --truth "$truth" --k 10 --peers $peers --csv "$csv" 2>&1 | tail -4
  t0=$(now)
  .gpu/run bin genie -v build --kind vectors --lsh codebook --input "$base" --output "$d/$set.genie" \
    2>&1 | grep -v DEBUG | tail -8 | tee "$out/$set-build.log"
  echo "$set build_s=$(since $t0)" | tee -a "$out/$set-build.log"
  case $set in
    fm)  sweep="8:2:1000:0,4:256:200:31,6:256:150:31,8:256:100:31,8:256:150:31,8:256:200:31,16:256:100:31,16:256:200:31,32:256:200:31" ;;
    cl)  sweep="1:8:500:0,2:16:1000:0,1:256:100:31,2:256:100:31,2:256:200:31,4:256:200:31,8:256:200:31" ;;
    big) sweep="1:256:200:31,2:256:200:31,4:256:200:31,4:256:400:31,8:256:400:31,16:256:400:31" ;;
  esac
  # SWEEP_fm, SWEEP_cl, SWEEP_big: another sweep for that set
  over="SWEEP_$set"; sweep=${!over:-$sweep}
  bench=(.gpu/run bin genie-bench --mode vectors --index "$d/$set.genie" --queries "$query" --truth "$truth" --data $set --k 10 --csv "$csv")
  "${bench[@]}" --device gpu 2>&1 | grep -v "^\[" | tee "$out/$set-bench-gpu.log"
  "${bench[@]}" --device gpu --sweep "$sweep" 2>&1 | grep -v "^\[" | tee -a "$out/$set-bench-gpu.log"
  if [ $set = fm ]; then
    # the LSH family with its build-time tuning (width and candidates), beside the codebook
    .gpu/run bin genie -v build --kind vectors --lsh e2lsh --input "$base" --output "$d/$set-e2lsh.genie" \
      2>&1 | grep -v DEBUG | tail -3 | tee -a "$out/$set-build.log"
    .gpu/run bin genie-bench --mode vectors --index "$d/$set-e2lsh.genie" --queries "$query" --truth "$truth" \
      --data $set --k 10 --csv "$csv" --device gpu 2>&1 | grep -v "^\[" | tee -a "$out/$set-bench-gpu.log"
  fi
  if [ $set != big ]; then
    "${bench[@]}" --device cpu 2>&1 | grep -v "^\[" | tee "$out/$set-bench-cpu.log"
    for dev in gpu cpu; do
      .gpu/run bin genie -v search --device $dev --index "$d/$set.genie" --queries "$query" --k 10 \
        --output "$d/$set-$dev.jsonl" > "$out/$set-search-$dev.log" 2>&1
      grep -E "stages: read|searched" "$out/$set-search-$dev.log"
    done
    same=$(cmp -s "$d/$set-gpu.jsonl" "$d/$set-cpu.jsonl" && echo yes || echo NO)
    echo "$set genie search (CLI) gpu: $(stage "$out/$set-search-gpu.log"); cpu: $(stage "$out/$set-search-cpu.log"); GPU == CPU: $same" | tee -a "$summary"
  fi
  grep -E "built " "$out/$set-build.log" >> "$summary"
  grep -E "build_s" "$out/$set-build.log" >> "$summary"
done
cat "$out"/*-build.log > "$res/build.log"
cat "$out"/*-bench-*.log > "$res/bench.log" 2>/dev/null
echo "== summary"
cat "$summary"
for f in "$res"/*-ann.csv; do echo "-- $f"; cat "$f"; done
