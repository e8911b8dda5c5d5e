#!/usr/bin/env bash
# Issue 16 on the device's host cores, one call: the CPU backend against the SciPy peer on the
# suite's keyword workloads, on all cores, in the same run.
# 1. genie-bench --mode cpu at the suite's sizes (the default path, the c-PQ and the count table,
#    hits compared), each workload dumped with genie's top-k counts;
# 2. bench/peers/scipy_csr.py --threads $(nproc) on each dump (SciPy from .gpu/wheels, counts
#    checked against genie's);
# 3. the criterion benches of the kernels (.gpu/bin/cpu_kernels), for the cost model.
# 4. `genie search --device cpu` on 1 M SIFT-like objects and 1,024 queries, whole command, this
#    commit against .gpu/bin/genie-old (a build of the commit before issue 16) when carried.
# Stage here: .gpu/bin/{genie-bench,genie,genie-old,cpu_kernels} (stripped, optionally .xz),
# .gpu/wheels/{numpy,scipy}-*.whl (cp312). TILES: the tile sizes swept (KiB, default 16,32,64,128).
# Results under $OUT: cpu.csv, cpu.log, peer.csv, peer.log, kernels.log, summary.txt.
set -uo pipefail
res=${OUT:-/tmp/genie-out}; mkdir -p "$res"
dump=/tmp/cpu-dump; rm -rf "$dump"
t=$(nproc)
deadline=$((SECONDS + 540))
export RUST_LOG=${RUST_LOG:-warn}
echo "host: $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2); commit $(cat .gpu/COMMIT)" | tee "$res/summary.txt"
for f in .gpu/bin/*.xz; do [ -e "$f" ] && xz -df "$f" && chmod +x "${f%.xz}"; done
py=${PYTHON:-python3}
$py -m venv --system-site-packages /tmp/cpu-venv && v=/tmp/cpu-venv/bin/python
$v -c "import numpy" 2>/dev/null || $v -m pip install -q --no-index --no-deps .gpu/wheels/numpy-*.whl
$v -c "import scipy" 2>/dev/null || $v -m pip install -q --no-index --no-deps .gpu/wheels/scipy-*.whl
$v -c "import numpy, scipy; print('numpy', numpy.__version__, 'scipy', scipy.__version__)" | tee -a "$res/summary.txt"

echo "== genie CPU backend, $t threads" | tee -a "$res/summary.txt"
timeout 240 .gpu/bin/genie-bench --mode cpu --threads "$t" --tile-kib "${TILES:-16,32,64,128}" --dump "$dump" --csv "$res/cpu.csv" > "$res/cpu.log" 2>&1
echo "genie-bench exit $?" | tee -a "$res/summary.txt"
grep -A40 "^workload " "$res/cpu.log" | tee -a "$res/summary.txt"

echo "== SciPy peer, $t threads" | tee -a "$res/summary.txt"
for w in OCR-like SIFT-like Tweets-like Adult-x20-like; do
  left=$((deadline - SECONDS - 70))
  [ -f "$dump/$w/meta.json" ] || { echo "$w: not dumped" | tee -a "$res/summary.txt"; continue; }
  [ "$left" -gt 20 ] || { echo "$w: skipped, time spent" | tee -a "$res/summary.txt"; continue; }
  timeout "$((left < 200 ? left : 200))" $v bench/peers/scipy_csr.py --load "$dump/$w" --threads "$t" \
    --repeats 1 --csv "$res/peer.csv" 2>&1 | tee -a "$res/peer.log" | tail -1 | tee -a "$res/summary.txt"
  rm -rf "${dump:?}/$w"
done

if [ -x .gpu/bin/genie ]; then
  echo "== genie search --device cpu, 1 M SIFT-like, 1,024 queries, k 100, whole command" | tee -a "$res/summary.txt"
  w=/tmp/cpu-1m; rm -rf "$w"
  .gpu/bin/genie-bench --mode write-keywords --objects 1000000 --queries 1024 --seed 1 --formats npy --out "$w" > /dev/null 2>&1
  .gpu/bin/genie --quiet build --input "$w" --output "$w/i.genie"
  for b in genie genie-old; do
    [ -x ".gpu/bin/$b" ] || continue
    for r in 1 2 3; do
      s0=$EPOCHREALTIME
      ".gpu/bin/$b" search --device cpu --k 100 --index "$w/i.genie" --queries "$w/queries.txt" > "$w/$b.jsonl"
      s1=$EPOCHREALTIME
      echo "$b run $r: $(awk "BEGIN{printf \"%.3f\", $s1 - $s0}") s" | tee -a "$res/summary.txt"
    done
  done
  [ -f "$w/genie-old.jsonl" ] && { cmp "$w/genie.jsonl" "$w/genie-old.jsonl" && echo "answers identical" | tee -a "$res/summary.txt"; }
  rm -rf "$w"
fi

echo "== kernels (criterion, 1 thread)" | tee -a "$res/summary.txt"
left=$((deadline - SECONDS))
if [ "$left" -gt 40 ]; then
  timeout "$((left - 5))" .gpu/bin/cpu_kernels --bench --warm-up-time 1 --measurement-time 2 > "$res/kernels.log" 2>&1
  grep -E "^[a-z_]+/[a-z0-9_]+|thrpt:" "$res/kernels.log" | grep -v "%" | tee -a "$res/summary.txt"
fi
rm -rf "$dump"
