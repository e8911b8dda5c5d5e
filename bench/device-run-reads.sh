#!/usr/bin/env bash
# Issue 14's long sequences on the GPU machine, one call: reads of 200-300 letters sampled from a
# real genome (Klebsiella pneumoniae HS11286, 5.68 Mb, from Debian's kleborate-examples package,
# GPL-3+; the .fna.xz carried in .gpu/dna/), READS of them (default 1,000,000, seed 11, forward
# strand, uniform starts) indexed by `genie build --kind sequences --alphabet bytes --ngram 8`,
# queries sampled the same way (seed 12) with 5-10% of their letters edited (substitutions,
# insertions and deletions in equal shares), then `genie -v search` for k = 1 and 10 on the GPU
# (QUERIES, default 1,000) and on the CPU (the first 100), and RapidFuzz `process.cdist` on all
# host cores for the first 100 (bench/peers/seq_peers.py, distances checked against genie's).
# KS="1" runs k = 1 only; PEER=0 skips RapidFuzz; EXHAUSTIVE=1 adds `--exhaustive` on the GPU for
# all the queries (one round, then the device's pass over every read for the unproven ones).
# Run from the repo root after scripts/gpu/stage; writes $OUT/reads-summary.txt and reads.csv.
set -uo pipefail
res=${OUT:-/tmp/genie-out}; mkdir -p "$res"
d=/tmp/genie-reads; mkdir -p "$d"
g=${GENIE:-.gpu/bin/genie}
sum="$res/reads-summary.txt"
reads=${READS:-1000000}; nq=${QUERIES:-1000}
py=$(python3 -c 'import sys; print(f"{sys.version_info[0]}{sys.version_info[1]}")')
if ls .gpu/wheels/rapidfuzz-*-cp$py-*.whl > /dev/null 2>&1; then
  python3 -m pip install -q --no-index --no-deps --target "$d/py" .gpu/wheels/rapidfuzz-*-cp$py-*.whl
fi
export PYTHONPATH="$d/py${PYTHONPATH:+:$PYTHONPATH}"
python3 - "$d" .gpu/dna/Klebs_HS11286.fna.xz "$reads" "$nq" <<'PY' | tee "$sum"
import lzma, random, sys
d, fna, nreads, nq = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
genome = "".join(l.strip().upper() for l in lzma.open(fna, "rt") if not l.startswith(">"))
genome = "".join(c for c in genome if c in "ACGT")
def sample(rng, n):
    for _ in range(n):
        length = rng.randint(200, 300)
        start = rng.randrange(len(genome) - length)
        yield genome[start:start + length]
rng = random.Random(11)
with open(f"{d}/reads.txt", "w") as f:
    for r in sample(rng, nreads):
        f.write(r + "\n")
rng = random.Random(12)
with open(f"{d}/q.txt", "w") as f:
    for r in sample(rng, nq):
        s = list(r)
        for _ in range(round(rng.uniform(0.05, 0.10) * len(s))):
            op, at = rng.randrange(3), rng.randrange(len(s))
            if op == 0:
                s[at] = rng.choice("ACGT")
            elif op == 1:
                s.insert(at, rng.choice("ACGT"))
            elif len(s) > 1:
                del s[at]
        f.write("".join(s) + "\n")
print(f"genome {len(genome)} letters; {nreads} reads of 200-300; {nq} queries with 5-10% edits")
PY
head -100 "$d/q.txt" > "$d/q100.txt"
t0=$(date +%s.%N)
$g -v build --kind sequences --alphabet bytes --ngram 8 --input "$d/reads.txt" --output "$d/r.genie" 2>&1 | grep -v DEBUG | tail -1 | tee -a "$sum"
echo "build wall $(python3 -c "print(round($(date +%s.%N) - $t0, 1))") s" | tee -a "$sum"
for k in ${KS:-1 10}; do
  runs=("gpu q" "gpu q100" "cpu q100"); [ "${EXHAUSTIVE:-0}" = 1 ] && runs+=("gpu q --exhaustive")
  for run in "${runs[@]}"; do
    set -- $run
    timeout 300 $g -v search --device $1 --index "$d/r.genie" --queries "$d/$2.txt" --k $k ${3:-} --output "$d/o-$k-$1-$2${3:-}.jsonl" > "$d/s.log" 2>&1
    echo "k=$k $1 $2 ${3:-}(rc $?): $(grep -oE 'backend: .*' "$d/s.log" | head -1)" | tee -a "$sum"
    grep -E "sequences:|stages: read|searched" "$d/s.log" | sed 's/^.*INFO  [a-z:_]*\] /  /' | tee -a "$sum"
    f="$d/o-$k-$1-$2${3:-}.jsonl"
    [ -s "$f" ] && echo "  exact $(grep -c '"exact":true' "$f")/$(wc -l < "$f")" | tee -a "$sum"
  done
  cmp -s "$d/o-$k-gpu-q100.jsonl" "$d/o-$k-cpu-q100.jsonl" && same=yes || same=NO
  echo "k=$k q100: GPU == CPU $same" | tee -a "$sum"
  if [ -s "$d/o-$k-gpu-q--exhaustive.jsonl" ]; then
    # the exhaustive answers' hits agree with the rounds' where those are proven
    python3 - "$d/o-$k-gpu-q.jsonl" "$d/o-$k-gpu-q--exhaustive.jsonl" <<'PY' | tee -a "$sum"
import json, sys
a, b = ([json.loads(l) for l in open(p)] for p in sys.argv[1:3])
proven = [i for i, r in enumerate(a) if r["exact"]]
same = sum(a[i]["hits"] == b[i]["hits"] for i in proven)
better = sum(b[i]["hits"][0]["distance"] < a[i]["hits"][0]["distance"] for i in range(len(a)) if a[i]["hits"] and b[i]["hits"])
print(f"exhaustive: equals the proven rounds' answers {same}/{len(proven)}; closer than the rounds' best for {better} queries")
PY
  fi
  [ "${PEER:-1}" = 0 ] && continue
  timeout 900 python3 bench/peers/seq_peers.py --data reads --base "$d/reads.txt" --queries "$d/q100.txt" --k $k \
    --chunk 10 --csv "$res/reads.csv" --genie "$d/o-$k-gpu-q100.jsonl" 2>&1 | tee -a "$sum"
done
