#!/usr/bin/env bash
# The CLI's vector search of two programs alternated on one GPU, one call, from the repo root
# with D (default .gpu: bin/genie, COMMIT, fm/ holding Fashion-MNIST's IDX files) unpacked there
# and OLD a genie binary of an earlier commit (OLD_COMMIT names it): per set of SETS (default
# "fm cl", as bench/peers/vector_sets.py writes them), the index the new program builds with no
# flag, then ROUNDS rounds (default 3) of `genie -v search --device gpu` by the old program and
# the new one, each round's stage times and whether the answers are the same; then the new one
# with each `--batch-queries` of BATCHES (default none), e.g. BATCHES="10000 16384". Set "wv" (word
# vectors, cosine: D/navec.tar, as bench/device-run-embed.sh takes it) is built with `--metric
# cosine`. With OLD_BENCH (genie-bench of the old commit; the new one is D/bin/genie-bench), each
# program's in-process search too (`genie-bench --mode vectors`, its stage times), alternated
# ROUNDS times, against the exact neighbours (bench/peers/knn_truth.py).
# NCU=1 adds Nsight Compute's full set on one launch of `codebook_scan` of the new program
# in-process (the 4th launch), with each SASS instruction's executions and stalls (scan-SET.csv).
# CELLS (e.g. "980 4000") builds each set once a cell count (`--cells C`, named SET-cC) instead
# of once with no flag.
# Writes $OUT/ab-summary.txt.
set -uo pipefail
D=${D:-.gpu}
OLD=${OLD:?OLD: a genie binary of an earlier commit}
res=${OUT:-/tmp/genie-out}; mkdir -p "$res"
d=/tmp/genie-ab; rm -rf "$d"; mkdir -p "$d"
sum="$res/ab-summary.txt"
export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64:/usr/local/nvidia/lib64"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$sum"
echo "host cores: $(nproc); new: $(cat $D/COMMIT); old: ${OLD_COMMIT:-?}" | tee -a "$sum"
sets=${SETS:-fm cl}
if [ -f "$D/navec.tar" ]; then mkdir -p "$d/navec" && tar -xf "$D/navec.tar" -C "$d/navec"; fi
python3 bench/peers/vector_sets.py "$d" "$D/fm" "$sets" "$d/navec"
for base in $sets; do
 for cells in ${CELLS:-default}; do
  flags=(); [ "$base" = wv ] && flags=(--metric cosine)
  set=$base
  if [ "$cells" != default ]; then flags+=(--cells "$cells"); set=$base-c$cells; fi
  if [ "$set" != "$base" ]; then
    for f in base query base-unit query-unit; do [ -f "$d/$base-$f.fvecs" ] && ln -sf "$d/$base-$f.fvecs" "$d/$set-$f.fvecs"; done
  fi
  $D/bin/genie --quiet build --kind vectors "${flags[@]}" --input "$d/$set-base.fvecs" --output "$d/$set.genie" 2>&1 | tail -1
  for r in $(seq 1 "${ROUNDS:-3}"); do
    for who in old new; do
      bin=$D/bin/genie; [ "$who" = old ] && bin=$OLD
      env -u RUST_LOG "$bin" -v search --device gpu --index "$d/$set.genie" --queries "$d/$set-query.fvecs" \
        --k 10 --output "$d/$set-$who.jsonl" > "$d/$set-$who-$r.log" 2>&1
      echo "$set round $r $who: $(grep -E "stages: read" "$d/$set-$who-$r.log" | sed 's/^\[[^]]*\] //')" | tee -a "$sum"
    done
    cmp -s "$d/$set-old.jsonl" "$d/$set-new.jsonl" && same="the same" || same="DIFFERENT"
    echo "  round $r: answers $same" | tee -a "$sum"
  done
  if [ -n "${OLD_BENCH:-}" ]; then
    u=""; [ "$base" = wv ] && u="-unit"
    [ -f "$d/$base-truth.ivecs" ] || python3 bench/peers/knn_truth.py "$d/$base-base$u.fvecs" "$d/$base-query$u.fvecs" 10 "$d/$base-truth.ivecs" | tee -a "$sum"
    [ "$set" = "$base" ] || ln -sf "$d/$base-truth.ivecs" "$d/$set-truth.ivecs"
    for r in $(seq 1 "${ROUNDS:-3}"); do
      for who in old new; do
        b=$D/bin/genie-bench; [ "$who" = old ] && b=$OLD_BENCH
        echo "$set in-process round $r $who:" | tee -a "$sum"
        $b --mode vectors --index "$d/$set.genie" --queries "$d/$set-query.fvecs" --truth "$d/$set-truth.ivecs" \
          --data "$set" --k 10 --device gpu 2>&1 | grep -E "^params|backend=gpu" | head -4 | tee -a "$sum"
      done
    done
  fi
  if [ -n "${NCU:-}" ] && [ -f "$d/$set-truth.ivecs" ]; then
    /usr/local/cuda/bin/ncu --clock-control none --set full --kernel-name codebook_scan --launch-skip 3 --launch-count 1 \
      -f -o "/tmp/ncu-$set" $D/bin/genie-bench --mode vectors --index "$d/$set.genie" --queries "$d/$set-query.fvecs" \
      --truth "$d/$set-truth.ivecs" --data "$set" --k 10 --device gpu > "$res/ncu-$set.log" 2>&1
    /usr/local/cuda/bin/ncu -i "/tmp/ncu-$set.ncu-rep" --page details > "$res/ncu-$set.txt" 2>&1
    /usr/local/cuda/bin/ncu -i "/tmp/ncu-$set.ncu-rep" --page source --csv --print-source sass > "$res/scan-$set.csv" 2>&1
    grep -vE "^\s*$|----" "$res/ncu-$set.txt" | grep -E "Duration|Throughput|Memory \[%\]|DRAM|L2 Hit|L1/TEX Hit|Issued|Eligible|Occupancy|Registers|Block Limit|Grid Size|Warp Cycles|Executed Ipc|excessive" | head -30 | tee -a "$sum"
  fi
  for b in ${BATCHES:-}; do
    env -u RUST_LOG $D/bin/genie -v search --device gpu --batch-queries "$b" --index "$d/$set.genie" \
      --queries "$d/$set-query.fvecs" --k 10 --output "$d/$set-b$b.jsonl" > "$d/$set-b$b.log" 2>&1
    cmp -s "$d/$set-old.jsonl" "$d/$set-b$b.jsonl" && same="the same" || same="DIFFERENT"
    echo "$set new --batch-queries $b: $(grep -E "stages: read" "$d/$set-b$b.log" | sed 's/^\[[^]]*\] //'); answers $same" | tee -a "$sum"
  done
done
done
