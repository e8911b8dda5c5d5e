#!/usr/bin/env bash
# Issue 36 on one GPU, one call, from the repo root, with D (default .gpu: bin/genie,
# bin/genie-bench, COMMIT; D/fm holding Fashion-MNIST's IDX files) unpacked there. Per data set
# of SETS (default "fm"; "cl" adds Gaussian clusters 1 M x 96, 2,000 centres, seed 13; "big" the
# same mixture at 10 M x 96, 10,000 centres, seed 17; "wv" 250,000 GloVe word vectors x 300 from
# D/navec.tar (the archive scripts/fetch-glove.sh takes from natasha==1.6.0 on PyPI), cosine: the
# index is built with `--metric cosine` on the vectors as they are, the exact neighbours and the
# peers use them scaled to unit length):
#   1. the exact neighbours (bench/peers/knn_truth.py, float64 on the GPU) and the peers of
#      bench/peers/ann_peers.py that this machine has (torch always; faiss when importable);
#   2. `genie build --kind vectors` with no other flag (the codebook family, tuned at build);
#   3. the library in-process: genie-bench --mode vectors at the tuned defaults (GPU);
#   4. the user's path: `genie -v search --device gpu` (stages logged) and whole commands (best
#      and median of RUNS, default 3), the CPU backend's answers compared, recall@10 of the
#      command's own output against the exact neighbours.
# PEERS names the peers to run (default: all this machine has); SKIP_PEERS=1 leaves them out; RERANK=1 adds the re-rank forms (below).
# Writes $OUT/embed-summary.txt, the peers' CSV and the logs.
set -uo pipefail
D=${D:-.gpu}
res=${OUT:-/tmp/genie-out}; mkdir -p "$res"
d=/tmp/genie-embed; rm -rf "$d"; mkdir -p "$d"
sum="$res/embed-summary.txt"
runs=${RUNS:-3}
export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64:/usr/local/nvidia/lib64"
source "$(dirname "$0")/timing.sh"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$sum"
echo "host cores: $(nproc); commit: $(cat $D/COMMIT)" | tee -a "$sum"
# faiss-cpu from a wheel carried in D/whl, when there is one (the machine reaches no registry)
if ls "$D"/whl/faiss_cpu-*.whl > /dev/null 2>&1; then
  pip install -q --no-index --no-deps --target /tmp/fsite "$D"/whl/faiss_cpu-*.whl > /dev/null 2>&1
  export PYTHONPATH=/tmp/fsite${PYTHONPATH:+:$PYTHONPATH}
fi
peers=torch
python3 -c "import faiss" 2>/dev/null && peers=torch,faiss-ivfflat,faiss-hnsw,faiss-ivfpq
peers=${PEERS:-$peers}
echo "peers: $peers" | tee -a "$sum"
sets=${SETS:-fm}
if [ -f "$D/navec.tar" ]; then mkdir -p "$d/navec" && tar -xf "$D/navec.tar" -C "$d/navec"; fi
python3 bench/peers/vector_sets.py "$d" "$D/fm" "$sets" "$d/navec"
G=$D/bin/genie
for set in $sets; do
  echo "== $set" | tee -a "$sum"
  base="$d/$set-base.fvecs"; query="$d/$set-query.fvecs"; truth="$d/$set-truth.ivecs"; csv="$res/$set-ann.csv"
  # the exact neighbours and the peers by L2 over pbase/pquery; genie's build flags
  pbase=$base; pquery=$query; flags=()
  if [ "$set" = wv ]; then pbase="$d/wv-base-unit.fvecs"; pquery="$d/wv-query-unit.fvecs"; flags=(--metric cosine); fi
  python3 bench/peers/knn_truth.py "$pbase" "$pquery" 10 "$truth" | tee -a "$sum"
  if [ -z "${SKIP_PEERS:-}" ]; then
    python3 bench/peers/ann_peers.py --data $set --base "$pbase" --queries "$pquery" \
      --truth "$truth" --k 10 --peers $peers --csv "$csv" > "$d/$set-peers.log" 2>&1
    tail -4 "$d/$set-peers.log" | tee -a "$sum"
  fi
  t0=$(now)
  env -u RUST_LOG $G -v build --kind vectors "${flags[@]}" --input "$base" --output "$d/$set.genie" > "$d/$set-build.log" 2>&1
  echo "build $set (${flags[*]:-no flag}): $(since "$t0") ms" | tee -a "$sum"
  grep -E "built|tuned|codebook:" "$d/$set-build.log" | cut -c1-300 | tee -a "$sum"
  $D/bin/genie-bench --mode vectors --index "$d/$set.genie" --queries "$query" --truth "$truth" \
    --data $set --k 10 --csv "$csv" --device gpu 2>&1 | grep -v "^\[" | tee -a "$sum"
  for dev in gpu cpu; do
    env -u RUST_LOG $G -v search --device $dev --index "$d/$set.genie" --queries "$query" --k 10 \
      --output "$d/$set-$dev.jsonl" > "$d/$set-search-$dev.log" 2>&1
    grep -E "stages|host:|backend|searched" "$d/$set-search-$dev.log" | sed 's/^\[[^]]*\] //' | sed "s/^/  $dev: /" | tee -a "$sum"
    wall=$(walls "$runs" $G --quiet search --device $dev --index "$d/$set.genie" --queries "$query" --k 10 --output "$d/o2.jsonl")
    echo "  $dev whole command: $wall" | tee -a "$sum"
  done
  # the CLI's search stage with all the queries in one chunk, and in chunks of 1,000
  for b in 10000 1000; do
    env -u RUST_LOG $G -v search --device gpu --batch-queries $b --index "$d/$set.genie" --queries "$query" --k 10 \
      --output "$d/$set-b$b.jsonl" > "$d/$set-search-b$b.log" 2>&1
    grep -E "stages: read" "$d/$set-search-b$b.log" | sed 's/^\[[^]]*\] //' | sed "s/^/  gpu --batch-queries $b: /" | tee -a "$sum"
  done
  cmp -s "$d/$set-gpu.jsonl" "$d/$set-cpu.jsonl" && echo "  GPU == CPU: yes" | tee -a "$sum" || echo "  GPU == CPU: NO" | tee -a "$sum"
  python3 bench/peers/cli_recall.py "$d/$set-gpu.jsonl" "$truth" | tee -a "$sum"
  # RERANK=1: each compact re-rank form (and the codes with SUBSPACES slices, default 44: 48
  # bytes a vector of 96 dimensions, 1/8 of the floats), built with no other flag: its bytes a
  # vector and build recall (`genie info`), the CLI's search stage, GPU == CPU, recall@10
  if [ -n "${RERANK:-}" ]; then
    for form in f16 sq8 codes codes-m; do
      extra=(--rerank "${form%-m}"); [ "$form" = codes-m ] && extra+=(--subspaces "${SUBSPACES:-44}")
      t0=$(now)
      env -u RUST_LOG $G -v build --kind vectors "${extra[@]}" --input "$base" --output "$d/$set-$form.genie" > "$d/$set-build-$form.log" 2>&1
      echo "  --rerank $form: build $(since "$t0") ms; $($G info --index "$d/$set-$form.genie" | grep re-rank)" | tee -a "$sum"
      for dev in gpu cpu; do
        env -u RUST_LOG $G -v search --device $dev --index "$d/$set-$form.genie" --queries "$query" --k 10 \
          --output "$d/$set-$form-$dev.jsonl" > "$d/$set-search-$form-$dev.log" 2>&1
      done
      grep -E "stages: read" "$d/$set-search-$form-gpu.log" | sed 's/^\[[^]]*\] //' | sed "s/^/    gpu: /" | tee -a "$sum"
      cmp -s "$d/$set-$form-gpu.jsonl" "$d/$set-$form-cpu.jsonl" && same=yes || same=NO
      python3 bench/peers/cli_recall.py "$d/$set-$form-gpu.jsonl" "$truth" "  $form: GPU == CPU $same, CLI recall@10" | tee -a "$sum"
    done
  fi
done
cp "$d"/*-build.log "$d"/*-search-*.log "$d"/*-peers.log "$res/" 2>/dev/null
tar czf "$res/embed-logs.tgz" -C "$res" $(cd "$res" && ls *.log) 2>/dev/null && rm -f "$res"/*.log
# FILTERS=1: filtered searches of each set through the CLI (`--filter-ids`, 1% and 10% of the
# vectors allowed, a seeded choice): the search stage, and recall@10 against the exact nearest
# allowed vectors (NumPy, float64)
if [ -n "${FILTERS:-}" ]; then
  for set in $sets; do
    for pct in 1 10; do
      python3 bench/peers/allowed_truth.py truth "$d/$set-base.fvecs" "$d/$set-query.fvecs" "$pct" "$d/$set-allow$pct"
      env -u RUST_LOG $G -v search --device gpu --index "$d/$set.genie" --queries "$d/$set-query.fvecs" --k 10 \
        --filter-ids "$d/$set-allow$pct.txt" --output "$d/$set-f$pct.jsonl" > "$d/$set-filter$pct.log" 2>&1
      stage=$(grep -oE "search [0-9.]+ ms" "$d/$set-filter$pct.log" | head -1)
      rec=$(python3 bench/peers/allowed_truth.py recall "$d/$set-f$pct.jsonl" "$d/$set-allow$pct-truth.npy" "$d/$set-allow$pct.txt")
      echo "  $set filter $pct%: $stage; $rec" | tee -a "$sum"
    done
  done
fi
