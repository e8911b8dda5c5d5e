#!/usr/bin/env bash
# A filter's exact search on the device under Nsight Compute, one call, from the repo root with D
# (default .gpu-new: bin/genie, COMMIT; each .xz) and, with OLD=DIR, that build's bin/genie: the
# clusters 1 M x 96 of bench/peers/vector_sets.py (set cl), 10,000 queries, a seeded PCT% allowed
# (default 1), `genie search --device gpu --k 10 --filter-ids` once plainly (the search stage)
# and once under ncu for the kernels matching KERNELS (default "rerank_distance|rank_top_k|
# rerank_compact"), each build: every launch's time, speed of light, occupancy and warp states.
# Writes $OUT/ncu-summary.txt and the full reports.
set -uo pipefail
D=${D:-.gpu-new}
res=${OUT:-/tmp/genie-out}; mkdir -p "$res"
d=/tmp/genie-among; rm -rf "$d"; mkdir -p "$d"
sum="$res/ncu-summary.txt"
pct=${PCT:-1}
export LD_LIBRARY_PATH="${LD_LIBRARY_PATH:-}:/usr/local/cuda/lib64:/usr/local/nvidia/lib64"
for f in "$D"/bin/*.xz ${OLD:+"$OLD"/bin/*.xz}; do [ -e "$f" ] && xz -df "$f" && chmod +x "${f%.xz}"; done
source "$(dirname "$0")/timing.sh"
device_header "$sum" "$D"
python3 bench/peers/vector_sets.py "$d" "$D/fm" cl > "$res/sets.log" 2>&1
$D/bin/genie --quiet build --kind vectors -i "$d/cl-base.fvecs" -o "$d/cl.genie" > "$res/build.log" 2>&1
python3 bench/peers/allowed_truth.py truth "$d/cl-base.fvecs" "$d/cl-query.fvecs" "$pct" "$d/allow"
builds="new:$D/bin/genie"; [ -n "${OLD:-}" ] && builds="$builds old:$OLD/bin/genie"
ncu=/usr/local/cuda/bin/ncu
for b in $builds; do
  tag=${b%%:*}; G=${b#*:}
  args=(search --device gpu --index "$d/cl.genie" --queries "$d/cl-query.fvecs" --k 10 --filter-ids "$d/allow.txt")
  $G -v "${args[@]}" --output "$d/$tag.jsonl" > "$res/$tag-plain.log" 2>&1
  echo "== $tag ($G), ${pct}% allowed: $(grep -oE 'search [0-9.]+ ms.*rerank [0-9.]+ ms' "$res/$tag-plain.log" | head -1)" | tee -a "$sum"
  $ncu --clock-control none --kernel-name regex:"${KERNELS:-rerank_distance|rank_top_k|rerank_compact}" \
    --section SpeedOfLight --section Occupancy --section WarpStateStats --section LaunchStats \
    --section ComputeWorkloadAnalysis --section MemoryWorkloadAnalysis \
    $G "${args[@]}" --output "$d/$tag-ncu.jsonl" > "$res/$tag-ncu.txt" 2>&1
  grep -E '^  [a-z_]+.*\(|Duration|Compute \(SM\) Throughput|Memory Throughput|Achieved Occupancy|Block Size|Grid Size|Dynamic Shared|Registers Per|Warp Cycles Per Issued|L1/TEX Hit|L2 Hit|Issue Slots Busy|Executed Ipc A' \
    "$res/$tag-ncu.txt" | head -80 | tee -a "$sum"
done
[ -n "${OLD:-}" ] && { cmp -s "$d/new.jsonl" "$d/old.jsonl" && echo "answers: new and old identical" || echo "answers: new and old DIFFER"; } | tee -a "$sum"
rm -rf "$d"
