#!/usr/bin/env bash
set -uo pipefail
res=${OUT:-/tmp/genie-out}; mkdir -p "$res"; sum="$res/exp3-summary.txt"
for f in .gpu/bin/*.xz; do [ -e "$f" ] && xz -df "$f" && chmod +x "${f%.xz}"; done
echo "commit $(cat .gpu/COMMIT)" | tee "$sum"
echo "== one thread: ceilings and the kernel, 128 queries" | tee -a "$sum"
timeout 200 .gpu/bin/genie-bench --mode cpu --threads 1 --workloads SIFT-like,Tweets-like --queries 128 --reference-queries 8 --repeats 2 --csv "$res/cpu-1thread.csv" > "$res/cpu-1thread.log" 2>&1
grep -E "ceiling|default" "$res/cpu-1thread.log" | tee -a "$sum"
TILES=256 timeout 380 bash bench/device-run-cpu.sh > "$res/cpu-run.log" 2>&1
echo "cpu run exit $?" | tee -a "$sum"
