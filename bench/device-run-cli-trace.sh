#!/usr/bin/env bash
# Where the CLI's vector search spends its time, one call, from the repo root with D (default
# .gpu: bin/genie, COMMIT, fm/ holding Fashion-MNIST's IDX files) unpacked there: per set of SETS
# (default "fm cl", as bench/peers/vector_sets.py writes them) the index built with no flag, then
# ROUNDS rounds (default 2) of `genie search --device gpu` with the debug log of the reader, the
# runners and the output (each chunk's read, parse, search and answer times), for the default
# chunks and each `--batch-queries` of BATCHES (default "10000").
# Writes $OUT/trace-summary.txt.
set -uo pipefail
D=${D:-.gpu}
res=${OUT:-/tmp/genie-out}; mkdir -p "$res"
d=/tmp/genie-trace; rm -rf "$d"; mkdir -p "$d"
sum="$res/trace-summary.txt"
export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64:/usr/local/nvidia/lib64"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$sum"
echo "host cores: $(nproc); commit: $(cat $D/COMMIT)" | tee -a "$sum"
sets=${SETS:-fm cl}
python3 bench/peers/vector_sets.py "$d" "$D/fm" "$sets"
for set in $sets; do
  $D/bin/genie --quiet build --kind vectors --input "$d/$set-base.fvecs" --output "$d/$set.genie" 2>&1 | tail -1
  for r in $(seq 1 "${ROUNDS:-2}"); do
    for b in default ${BATCHES:-10000}; do
      extra=(); [ "$b" != default ] && extra=(--batch-queries "$b")
      RUST_LOG=genie=debug,genie_lsh=debug $D/bin/genie -v search --device gpu "${extra[@]}" --index "$d/$set.genie" \
        --queries "$d/$set-query.fvecs" --k 10 --output "$d/$set-$b.jsonl" > "$d/$set-$b-$r.log" 2>&1
      echo "== $set round $r, chunks: $b" | tee -a "$sum"
      grep -E "chunk of|a batch of|staging pinned|stages: read|at [0-9.]+ ms" "$d/$set-$b-$r.log" | sed 's/^\[[^]]*\] //' | tee -a "$sum"
    done
  done
done
