#!/usr/bin/env bash
# The data-type plugins on the GPU: each kind searched with --device cpu and --device gpu on real
# data (carried in data/), outputs compared byte for byte, stage times logged. Run from the repo
# root on the GPU machine after scripts/gpu/stage, with carry [".gpu", "data"].
set -uo pipefail
out=${OUT:-/tmp/genie-out}
mkdir -p "$out"
export GENIE_CACHE_DIR=/tmp/genie-cache RUST_LOG=${RUST_LOG:-info}
status=0
g() { .gpu/run bin genie "$@"; }
# timed LABEL CMD...: runs CMD, prints "LABEL wall S s" on stderr
timed() { local label=$1; shift; local t0; t0=$(date +%s.%N); "$@"; local rc=$?; echo "$label wall $(python3 -c "print(round($(date +%s.%N) - $t0, 3))") s" >&2; return $rc; }
tmp=$(mktemp -d)
compare() { # name, then search args
  local name=$1; shift
  for dev in cpu gpu; do
    timed "$name $dev" .gpu/run bin genie search "$@" --device $dev --output "$tmp/$name.$dev" 2> "$tmp/$name.$dev.err"
    grep -E "wall|stages|backend|searched" "$tmp/$name.$dev.err" | sed "s/^/  /"
  done
  if cmp -s "$tmp/$name.cpu" "$tmp/$name.gpu"; then echo "$name: GPU output identical to CPU ($(wc -l < "$tmp/$name.gpu") queries)";
  else echo "$name: GPU output DIFFERS from CPU"; status=1; fi
}

echo "== sequences: words, 20% of letters changed, k = 1"
python3 - "$tmp/wq.txt" <<'PY'
import random, sys
random.seed(7)
words = [w.strip() for w in open("data/words/american-english", encoding="utf-8") if w.strip()]
with open(sys.argv[1], "w") as f:
    for w in random.sample(words, 2000):
        s = list(w)
        for i in random.sample(range(len(s)), round(0.2 * len(s))):
            s[i] = random.choice("abcdefghijklmnopqrstuvwxyz")
        f.write("".join(s) + "\n")
PY
timed "build sequences" g build --kind sequences --input data/words/american-english --output "$tmp/w.genie" 2>&1 | tail -2
compare sequences --index "$tmp/w.genie" --queries "$tmp/wq.txt" --k 1

echo "== documents: tweets, 500 tweets as queries, k = 10"
python3 - "$tmp/tq.csv" <<'PY'
import csv, sys
rows = list(csv.DictReader(open("data/tweets/trump_tweets.csv", encoding="utf-8")))
with open(sys.argv[1], "w", newline="", encoding="utf-8") as f:
    w = csv.writer(f); w.writerow(["text"])
    for r in rows[:500]: w.writerow([r["text"]])
PY
timed "build documents" g build --kind documents --input data/tweets/trump_tweets.csv --column text --output "$tmp/t.genie" 2>&1 | tail -2
compare documents --index "$tmp/t.genie" --queries "$tmp/tq.csv" --column text --k 10

echo "== table: Adult, 1,000 rows as queries with radius 50, k = 10"
head -1000 data/adult/adult.data > "$tmp/aq.csv"
timed "build table" g build --kind table --input data/adult/adult.data --output "$tmp/a.genie" 2>&1 | tail -2
compare table --index "$tmp/a.genie" --queries "$tmp/aq.csv" --radius 50 --k 10

if [ -e .gpu/bin/genie ] && .gpu/run bin genie build --help | grep -q vectors; then
  echo "== vectors: Fashion-MNIST test set (10,000 images), 200 of them as queries, k = 10"
  python3 - "$tmp" <<'PY'
import gzip, sys, struct
raw = gzip.open("data/fashion-mnist/t10k-images-idx3-ubyte.gz").read()
n, r, c = struct.unpack(">III", raw[4:16])
with open(sys.argv[1] + "/fq.csv", "w") as f:
    for i in range(200):
        px = raw[16 + i * r * c: 16 + (i + 1) * r * c]
        f.write(",".join(str(b) for b in px) + "\n")
PY
  timed "build vectors" g build --kind vectors --lsh e2lsh --input data/fashion-mnist/t10k-images-idx3-ubyte.gz --output "$tmp/f.genie" 2>&1 | tail -2
  compare vectors --index "$tmp/f.genie" --queries "$tmp/fq.csv" --k 10
fi
cp "$tmp"/*.err "$out/" 2>/dev/null
exit $status
