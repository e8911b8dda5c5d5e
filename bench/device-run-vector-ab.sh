#!/usr/bin/env bash
# The CLI's vector search of two programs alternated on one GPU, one call, from the repo root
# with D (default .gpu: bin/genie, COMMIT, fm/ holding Fashion-MNIST's IDX files) unpacked there
# and OLD a genie binary of an earlier commit (OLD_COMMIT names it): per set of SETS (default
# "fm cl", as bench/peers/vector_sets.py writes them), the index the new program builds with no
# flag, then ROUNDS rounds (default 3) of `genie -v search --device gpu` by the old program and
# the new one, each round's stage times and whether the answers are the same; then the new one
# with each `--batch-queries` of BATCHES (default none), e.g. BATCHES="10000 16384".
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
python3 bench/peers/vector_sets.py "$d" "$D/fm" "$sets"
for set in $sets; do
  $D/bin/genie --quiet build --kind vectors --input "$d/$set-base.fvecs" --output "$d/$set.genie" 2>&1 | tail -1
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
  for b in ${BATCHES:-}; do
    env -u RUST_LOG $D/bin/genie -v search --device gpu --batch-queries "$b" --index "$d/$set.genie" \
      --queries "$d/$set-query.fvecs" --k 10 --output "$d/$set-b$b.jsonl" > "$d/$set-b$b.log" 2>&1
    cmp -s "$d/$set-old.jsonl" "$d/$set-b$b.jsonl" && same="the same" || same="DIFFERENT"
    echo "$set new --batch-queries $b: $(grep -E "stages: read" "$d/$set-b$b.log" | sed 's/^\[[^]]*\] //'); answers $same" | tee -a "$sum"
  done
done
