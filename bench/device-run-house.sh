#!/usr/bin/env bash
# Issue 33 (the house redesign) on one GPU, one call: the GPU tests of the new build, then every
# kind searched on the user's path (`genie search`, the whole command, defaults but --device) by
# the build from before the redesign and the new one, alternated, the answers compared byte for
# byte (and the new build's GPU answers with its CPU answers), and the keyword workload searched
# from Python by both wheels.
# Stage here first, from the repo root (see the recipe in docs/journal or the closing note):
#   D/bin/genie          the new program        D/bin/genie-before   the program before
#   D/bin/genie-bench    the new benchmark      D/tests/*            test binaries (release)
#   D/wheels/after/*.whl and D/wheels/before/*.whl   the two genie_rs wheels
# with D = .gpu-sub (carried), and D/run, D/BUILD_ROOT as scripts/gpu/stage makes them.
# Indexes are built by the program before (its files must open in the new one unchanged).
# Writes $OUT/house.csv, $OUT/house-summary.txt and the logs. REPEATS (default 5) runs per cell;
# WORKLOADS (names from the table below) limits the cells; NO_TESTS=1 skips the tests.
set -uo pipefail
D=${D:-.gpu-sub}
res=${OUT:-/tmp/genie-out}; mkdir -p "$res"
w=/tmp/genie-house; rm -rf "$w"; mkdir -p "$w"
reps=${REPEATS:-5}
sum="$res/house-summary.txt"; csv="$res/house.csv"
export RUST_LOG=${RUST_LOG:-warn} GENIE_CACHE_DIR=/tmp/genie-cache
now() { date +%s.%N; }
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$sum"
echo "host cores: $(nproc); new: $(cat $D/COMMIT 2>/dev/null); before: $(cat $D/COMMIT_BEFORE 2>/dev/null)" | tee -a "$sum"

if [ -z "${NO_TESTS:-}" ]; then
  echo "== GPU tests of the new build" | tee -a "$sum"
  timeout 300 $D/run tests --test-threads 4 > "$res/tests.log" 2>&1
  echo "tests exit $?" | tee -a "$sum"
  grep -E "test result|FAILED|panicked|skipped" "$res/tests.log" | sort | uniq -c | tee -a "$sum"
fi

echo "== a plugin's own kernel module (crates/genie-core/examples/own_kernel)" | tee -a "$sum"
$D/bin/own_kernel 2>&1 | tail -3 | tee -a "$sum"

echo "== ceilings" | tee -a "$sum"
timeout 60 $D/bin/genie-bench --mode ceilings 2>&1 | tail -6 | tee -a "$sum"

echo "== data (seeded)" | tee -a "$sum"
$D/bin/genie-bench --mode write-keywords --objects 1000000 --queries 8192 --seed 1 --formats text --out "$w/kw" > "$w/write.log" 2>&1 || cat "$w/write.log"
python3 - "$w" <<'PY'
import random, sys
import numpy as np
w = sys.argv[1]
r = random.Random(33)
# vectors: 200,000 x 64 around 1,000 centres, 5,000 queries from the same mixture
rng = np.random.default_rng(33)
c = rng.normal(0, 10, (1000, 64)).astype(np.float32)
def mix(n):
    return c[rng.integers(0, 1000, n)] + rng.normal(0, 2, (n, 64)).astype(np.float32)
np.save(f"{w}/vec-base.npy", mix(200000)); np.save(f"{w}/vec-query.npy", mix(5000))
# sequences: 100,000 of length 20-40 over ACGT; queries: 2,000 of them with 3 edits
seqs = ["".join(r.choice("ACGT") for _ in range(r.randint(20, 40))) for _ in range(100000)]
open(f"{w}/seqs.txt", "w").write("\n".join(seqs) + "\n")
def edit(s):
    s = list(s)
    for _ in range(3):
        i = r.randrange(len(s)); s[i] = r.choice("ACGT")
    return "".join(s)
open(f"{w}/seq-q.txt", "w").write("\n".join(edit(r.choice(seqs)) for _ in range(2000)) + "\n")
# documents: 300,000 of 8-20 words from a 50,000-word vocabulary (Zipf-like); 5,000 queries of 3-6
vocab = [f"w{i}" for i in range(50000)]
cum = list(__import__("itertools").accumulate(1.0 / (i + 1) for i in range(50000)))
def doc(lo, hi):
    return " ".join(r.choices(vocab, cum_weights=cum, k=r.randint(lo, hi)))
open(f"{w}/docs.txt", "w").write("\n".join(doc(8, 20) for _ in range(300000)) + "\n")
open(f"{w}/doc-q.txt", "w").write("\n".join(doc(3, 6) for _ in range(5000)) + "\n")
# table: 500,000 rows of 4 numeric and 2 categorical columns; 5,000 rows as queries
jobs = [f"j{i}" for i in range(40)]; towns = [f"t{i}" for i in range(300)]
rows = ["age,hours,income,score,job,town"]
for _ in range(500000):
    rows.append(f"{r.randint(18,90)},{r.randint(0,80)},{r.randint(0,200000)},{r.random():.3f},{r.choice(jobs)},{r.choice(towns)}")
open(f"{w}/table.csv", "w").write("\n".join(rows) + "\n")
open(f"{w}/table-q.txt", "w").write("\n".join(r.choice(rows[1:]) for _ in range(5000)) + "\n")
PY
B=$D/bin/genie-before
$B --quiet build --input "$w/kw/objects.txt" --output "$w/kw.genie"
$B --quiet build --kind vectors --lsh e2lsh --input "$w/vec-base.npy" --output "$w/lsh.genie"
$B --quiet build --kind vectors --lsh codebook --input "$w/vec-base.npy" --output "$w/cb.genie"
$B --quiet build --kind sequences --input "$w/seqs.txt" --output "$w/seq.genie"
$B --quiet build --kind documents --input "$w/docs.txt" --output "$w/doc.genie"
$B --quiet build --kind table --input "$w/table.csv" --output "$w/tab.genie"
ls -la "$w"/*.genie | awk '{print $5, $9}' | tee -a "$sum"

# workload name, index, queries, k
cells="keywords kw.genie kw/queries.txt 100
vectors-lsh lsh.genie vec-query.npy 10
vectors-codebook cb.genie vec-query.npy 10
sequences seq.genie seq-q.txt 10
documents doc.genie doc-q.txt 10
table tab.genie table-q.txt 10"
echo "workload,build,device,run,seconds" > "$csv"
echo "== the whole command, $reps runs each, alternated" | tee -a "$sum"
while read -r name index queries k; do
  case " ${WORKLOADS:-$name} " in *" $name "*) ;; *) continue;; esac
  for dev in gpu; do
    for i in $(seq 1 "$reps"); do
      for b in before new; do
        bin=$D/bin/genie; [ "$b" = before ] && bin=$B
        t0=$(now)
        if ! $bin --quiet search --index "$w/$index" --queries "$w/$queries" --k "$k" --device $dev --output "$w/$name.$b.$dev.jsonl" 2> "$w/$name.$b.err"; then
          echo "$name $b $dev FAILED: $(tail -2 "$w/$name.$b.err")" | tee -a "$sum"
        fi
        echo "$name,$b,$dev,$i,$(python3 -c "print(f'{$(now) - $t0:.4f}')")" >> "$csv"
      done
    done
  done
  $D/bin/genie --quiet search --index "$w/$index" --queries "$w/$queries" --k "$k" --device cpu --output "$w/$name.new.cpu.jsonl" 2>> "$w/$name.new.err"
  same_b=$(cmp -s "$w/$name.before.gpu.jsonl" "$w/$name.new.gpu.jsonl" && echo identical || echo DIFFER)
  same_c=$(cmp -s "$w/$name.new.cpu.jsonl" "$w/$name.new.gpu.jsonl" && echo identical || echo DIFFER)
  echo "$name: before vs new on the GPU $same_b; new GPU vs new CPU $same_c ($(wc -l < "$w/$name.new.gpu.jsonl") answers)" | tee -a "$sum"
done <<< "$cells"

echo "== the shipped kernel builds alone (GENIE_NVRTC=off), vectors of both families and sequences" | tee -a "$sum"
for cell in "vectors-lsh lsh.genie vec-query.npy" "vectors-codebook cb.genie vec-query.npy" "sequences seq.genie seq-q.txt"; do
  set -- $cell
  GENIE_NVRTC=off $D/bin/genie --quiet search --index "$w/$2" --queries "$w/$3" --k 10 --device gpu --output "$w/$1.nvrtc-off.jsonl" 2> "$w/$1.nvrtc-off.err"
  rc=$?
  same=$(cmp -s "$w/$1.nvrtc-off.jsonl" "$w/$1.new.gpu.jsonl" && echo identical || echo DIFFER)
  echo "$1 with NVRTC off: exit $rc, answers $same to the GPU run's $(tail -1 "$w/$1.nvrtc-off.err")" | tee -a "$sum"
done

echo "== Python (keyword workload, k 100, best and median of 5)" | tee -a "$sum"
# each wheel unpacked into its own folder (a wheel is a zip) and put first on PYTHONPATH
for b in before after; do
  python3 -m zipfile -e $D/wheels/$b/genie_rs-*.whl "$w/py-$b"
  PYTHONPATH="$w/py-$b" python3 -c "import genie, numpy; print('$b: genie from', genie.__file__)" 2>&1 | tail -1 | tee -a "$sum"
done
for i in 1 2; do
  for b in before after; do
    PYTHONPATH="$w/py-$b" python3 bench/python_search.py --index "$w/kw.genie" --queries "$w/kw/queries.txt" --k 100 --device gpu --repeats 5 > "$w/py-$b.log" 2>&1
    line=$(grep "^python_search" "$w/py-$b.log") || line="FAILED: $(tail -3 "$w/py-$b.log" | tr '\n' ' ')"
    echo "$b: $line" | tee -a "$sum"
  done
done

echo "== medians (seconds, GPU, whole command)" | tee -a "$sum"
python3 - "$csv" <<'PY' | tee -a "$sum"
import csv, statistics, sys
rows = list(csv.DictReader(open(sys.argv[1])))
cells = {}
for r in rows:
    cells.setdefault((r["workload"], r["build"]), []).append(float(r["seconds"]))
print(f"{'workload':18} {'before_med':>10} {'new_med':>10} {'before_best':>11} {'new_best':>9} {'new/before':>10}")
for wl in dict.fromkeys(r["workload"] for r in rows):
    b, n = cells[(wl, "before")], cells[(wl, "new")]
    print(f"{wl:18} {statistics.median(b):10.3f} {statistics.median(n):10.3f} {min(b):11.3f} {min(n):9.3f} {statistics.median(n)/statistics.median(b):10.3f}")
PY
