#!/usr/bin/env bash
# Issue 14 on the GPU machine, one call: the 663,473-word list (Debian wamerican-insane, carried
# gzipped in .gpu/words/), queries made from random words with 20% of their letters changed
# (seed 7; 2,000 and 10,000), `genie build --kind sequences`, then per query set, k (1, 10) and
# mode (`default`: the rounds; `exhaustive`: every answer exact, on a GPU one round and then the
# device's pass; `rounds`: `--exhaustive --max-candidates 1024`, the K-doubling rounds first, GPU
# only) `genie -v search` on both backends (stage breakdown; GPU == CPU in hits and proofs, and
# byte for byte where the rounds agree), the GPU search's kernels by Nsight Compute, and
# RapidFuzz `process.cdist` on all host cores (bench/peers/seq_peers.py, its top-k distances
# checked against genie's exhaustive answers). RapidFuzz is installed from the
# wheels carried in .gpu/wheels/ (the machine has no package index). Run from the repo root after
# scripts/gpu/stage; writes $OUT/summary.txt, sequences.csv and the logs.
set -uo pipefail
res=${OUT:-/tmp/genie-out}; mkdir -p "$res"
d=/tmp/genie-seq; mkdir -p "$d"
g=.gpu/bin/genie
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$res/summary.txt"
echo "host cores: $(nproc)" | tee -a "$res/summary.txt"
py=$(python3 -c 'import sys; print(f"{sys.version_info[0]}{sys.version_info[1]}")')
if ls .gpu/wheels/rapidfuzz-*-cp$py-*.whl > /dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --target "$d/py" .gpu/wheels/rapidfuzz-*-cp$py-*.whl
fi
export PYTHONPATH="$d/py${PYTHONPATH:+:$PYTHONPATH}"
gunzip -c .gpu/words/american-english-insane.gz > "$d/words.txt"
python3 - "$d" <<'PY'
import random, sys
d = sys.argv[1]
words = [w.rstrip("\n") for w in open(f"{d}/words.txt", encoding="utf-8")]
for n in (2000, 10000):
    random.seed(7)
    with open(f"{d}/q{n}.txt", "w", encoding="utf-8") as f:
        for w in random.sample(words, n):
            s = list(w)
            for i in random.sample(range(len(s)), round(0.2 * len(s))):
                s[i] = random.choice("abcdefghijklmnopqrstuvwxyz")
            f.write("".join(s) + "\n")
PY
$g -v build --kind sequences --input "$d/words.txt" --output "$d/w.genie" 2>&1 | grep -v DEBUG | tail -1 | tee -a "$res/summary.txt"
# the hits and proofs of two answer files, line by line (the `candidates` field says where a
# query stopped, which differs between round policies)
same_hits() {
  python3 - "$1" "$2" <<'PY'
import json, sys
a, b = ([(j["hits"], j["exact"]) for j in map(json.loads, open(p))] for p in sys.argv[1:3])
print("yes" if a == b else "NO")
PY
}
for n in 2000 10000; do
  for k in 1 10; do
    for mode in default exhaustive rounds; do
      flag=; [ $mode = exhaustive ] && flag=--exhaustive
      # the exhaustive search with the K-doubling rounds before the device's pass (the policy
      # before the default became one round on a GPU), on the GPU only
      [ $mode = rounds ] && flag="--exhaustive --max-candidates 1024"
      tag="q=$n k=$k $mode"
      devs="gpu cpu"; [ $mode = rounds ] && devs=gpu
      for dev in $devs; do
        $g -v search --device $dev --index "$d/w.genie" --queries "$d/q$n.txt" --k $k $flag --output "$d/o$n-$k-$mode-$dev.jsonl" > "$d/s.log" 2>&1
        echo "$tag $dev: $(grep -oE 'backend: .*' "$d/s.log" | head -1)" | tee -a "$res/summary.txt"
        grep -E "sequences:|stages: |host: |searched|exhaustive pass" "$d/s.log" | sed 's/^.*INFO  [a-z:_]*\] /  /' | tee -a "$res/summary.txt"
      done
      cpu="$d/o$n-$k-$mode-cpu.jsonl"; [ $mode = rounds ] && cpu="$d/o$n-$k-exhaustive-cpu.jsonl"
      cmp -s "$d/o$n-$k-$mode-gpu.jsonl" "$cpu" && bytes=yes || bytes=no
      hits=$(same_hits "$d/o$n-$k-$mode-gpu.jsonl" "$cpu")
      exact=$(grep -c '"exact":true' "$d/o$n-$k-$mode-gpu.jsonl")
      echo "$tag: GPU == CPU bytes $bytes, hits and proofs $hits; exact $exact/$n" | tee -a "$res/summary.txt"
    done
  done
done
for k in 1 10; do
  echo "== GPU kernels, q=2000 k=$k --exhaustive" | tee -a "$res/summary.txt"
  ncu --clock-control none --metrics gpu__time_duration.sum --print-summary per-kernel \
    $g search --device gpu --index "$d/w.genie" --queries "$d/q2000.txt" --k $k --exhaustive --output "$d/ncu.jsonl" 2>&1 \
    | grep -E "^  [a-z_0-9]+ \(|gpu__time_duration" | tee -a "$res/summary.txt"
done
echo "== RapidFuzz cdist" | tee -a "$res/summary.txt"
for run in "2000 1" "2000 10" "10000 1" "10000 10"; do
  set -- $run
  python3 bench/peers/seq_peers.py --data words --base "$d/words.txt" --queries "$d/q$1.txt" --k $2 \
    --csv "$res/sequences.csv" --genie "$d/o$1-$2-exhaustive-gpu.jsonl" 2>&1 | tee -a "$res/summary.txt"
done
