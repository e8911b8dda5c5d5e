#!/usr/bin/env bash
# Issue 15, the end of `genie search`: what releasing the index and the devices costs the whole
# command. Two builds of `genie` in .gpu/bin: `genie` (drops the service at the end and logs how
# long that took) and `genie-forget` (leaves it to the process's exit). The SIFT-like 1 M objects
# (seed 1) from NumPy, 1,024 queries, k 100, `--device gpu`; RUNS (default 7) whole-command walls of
# each, alternated; one `-v` run of each. Writes $OUT/exit-summary.txt.
set -uo pipefail
res=${OUT:-/tmp/genie-out}; mkdir -p "$res"
d=/tmp/genie-exit; rm -rf "$d"; mkdir -p "$d"
gb=.gpu/bin/genie-bench
sum="$res/exit-summary.txt"
export RUST_LOG=${RUST_LOG:-warn}
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee "$sum"
echo "host cores: $(nproc); commit: $(cat .gpu/COMMIT 2>/dev/null)" | tee -a "$sum"
source "$(dirname "$0")/timing.sh"
$gb --mode write-keywords --objects 1000000 --queries 1024 --seed 1 --out "$d/w" --formats npy > "$d/write.log" 2>&1 || cat "$d/write.log"
.gpu/bin/genie --quiet build --input "$d/w" --output "$d/i.genie" 2>&1 | tail -2
q="$d/w/queries.txt"
for g in genie genie-forget; do
  RUST_LOG=genie=debug,genie_core=debug .gpu/bin/$g -v search --device gpu --index "$d/i.genie" --queries "$q" --k 100 --output "$d/o-$g.jsonl" > "$d/v-$g.log" 2>&1
  echo "$g -v:" | tee -a "$sum"
  grep -E "ready in|searched|released" "$d/v-$g.log" | sed 's/^.*\] /  /' | tee -a "$sum"
done
cmp -s "$d/o-genie.jsonl" "$d/o-genie-forget.jsonl" && echo "same answers: yes" | tee -a "$sum" || echo "same answers: NO" | tee -a "$sum"
declare -A ts
for r in $(seq "${RUNS:-7}"); do
  for g in genie genie-forget; do
    t0=$(now); .gpu/bin/$g --quiet search --device gpu --index "$d/i.genie" --queries "$q" --k 100 --output "$d/o.jsonl" 2>/dev/null || echo "$g FAILED"
    ts[$g]="${ts[$g]:-} $(since "$t0")"
  done
done
for g in genie genie-forget; do
  echo "$g whole command (ms): ${ts[$g]}" | tee -a "$sum"
  python3 -c "import statistics,sys; v=sorted(map(float,sys.argv[1:])); print(f'  best {v[0]:.1f} ms, median {statistics.median(v):.1f} ms')" ${ts[$g]} | tee -a "$sum"
done
