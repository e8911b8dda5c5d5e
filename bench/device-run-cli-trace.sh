#!/usr/bin/env bash
# Where the CLI's vector search spends its time, one call, from the repo root with D (default
# .gpu: bin/genie, COMMIT, fm/ holding Fashion-MNIST's IDX files) unpacked there: per set of SETS
# (default "fm cl", as bench/peers/vector_sets.py writes them) the index built with no flag, then
# ROUNDS rounds (default 2) of `genie search --device gpu` with the debug log of the reader, the
# runners and the output (each chunk's read, parse, search and answer times), for the default
# chunks and each `--batch-queries` of BATCHES (default "10000"), under each environment of
# VARIANTS (default "base": none; e.g. "eager:CUDA_MODULE_LOADING=EAGER",
# a tag, then variables joined by commas; `BIN=path` among them runs that genie program instead);
# the in-process search of the same index
# (genie-bench --mode vectors at its tuned probe) when D/bin/genie-bench is there.
# With WALLS=N, each variant's whole `genie search` command (default chunks) is also timed N
# times, alternated with the others. Writes $OUT/trace-summary.txt.
set -uo pipefail
D=${D:-.gpu}
res=${OUT:-/tmp/genie-out}; mkdir -p "$res"
d=/tmp/genie-trace; rm -rf "$d"; mkdir -p "$d"
sum="$res/trace-summary.txt"
export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64:/usr/local/nvidia/lib64"
source "$(dirname "$0")/timing.sh"
device_header "$sum" "$D"
sets=${SETS:-fm cl}
python3 bench/peers/vector_sets.py "$d" "$D/fm" "$sets"
for set in $sets; do
  $D/bin/genie --quiet build --kind vectors --input "$d/$set-base.fvecs" --output "$d/$set.genie" 2>&1 | tail -1
  if [ -x $D/bin/genie-bench ]; then
    python3 bench/peers/knn_truth.py "$d/$set-base.fvecs" "$d/$set-query.fvecs" 10 "$d/$set-truth.ivecs" > /dev/null
    $D/bin/genie-bench --mode vectors --index "$d/$set.genie" --queries "$d/$set-query.fvecs" \
      --truth "$d/$set-truth.ivecs" --data $set --k 10 --device gpu 2>&1 | grep -v "^\[" | head -5 | tee -a "$sum"
  fi
  for r in $(seq 1 "${ROUNDS:-2}"); do
    for v in ${VARIANTS:-base}; do
      tag=${v%%:*}; vars=(); [ "$tag" != "$v" ] && IFS=, read -ra vars <<< "${v#*:}"
      bin=$D/bin/genie; envs=()
      for x in "${vars[@]}"; do case $x in BIN=*) bin=${x#BIN=};; *) envs+=("$x");; esac; done
      first=${first:-$tag}
      for b in default ${BATCHES:-10000}; do
        extra=(); [ "$b" != default ] && extra=(--batch-queries "$b")
        log="$d/$set-$tag-$b-$r.log"
        env "${envs[@]}" RUST_LOG=genie=trace,genie_lsh=debug "$bin" -v search --device gpu "${extra[@]}" \
          --index "$d/$set.genie" --queries "$d/$set-query.fvecs" --k 10 --output "$d/$set-$tag-$b.jsonl" > "$log" 2>&1
        cmp -s "$d/$set-$tag-$b.jsonl" "$d/$set-$first-default.jsonl" && same=same || same=DIFFERENT
        echo "== $set round $r, $tag, chunks $b (answers: $same as $first)" | tee -a "$sum"
        grep -E "${TRACE:-submitted|queries searched in|answers sent|stages: read}" "$log" | sed 's/^\[[^]]*\] //' | tee -a "$sum"
      done
    done
  done
  if [ -n "${WALLS:-}" ]; then
    for r in $(seq 1 "$WALLS"); do
      for v in ${VARIANTS:-base}; do
        tag=${v%%:*}; bin=$D/bin/genie
        for x in $(echo "${v#*:}" | tr , ' '); do case $x in BIN=*) bin=${x#BIN=};; esac; done
        echo "$set $tag whole command, run $r: $(walls 1 "$bin" --quiet search --device gpu --index "$d/$set.genie" \
          --queries "$d/$set-query.fvecs" --k 10 --output "$d/$set-wall.jsonl")" | tee -a "$sum"
      done
    done
  fi
done
