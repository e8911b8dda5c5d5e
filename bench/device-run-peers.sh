#!/usr/bin/env bash
# The PyTorch peer on the suite's workloads, in one device call: genie-bench --mode suite times
# genie and writes each keyword-level workload with genie's top-k counts (--dump), then
# bench/peers/torch_spmm.py --load searches the very same index and queries (cuSPARSE SpMM +
# torch.topk) and checks its counts against genie's. About 5 minutes; stops the peer at 8.
# Run from the repo root on the GPU machine after scripts/gpu/stage staged .gpu/ here.
# Results under $OUT: suite.csv (+ suite.dense.csv, suite.log), peer.csv (one row per workload),
# peer-<workload>.log.
set -uo pipefail
out=${OUT:-/tmp/genie-out}
dump=/tmp/peer-dump
mkdir -p "$out"
rm -rf "$dump"
export RUST_LOG=${RUST_LOG:-warn}
status=0
deadline=$((SECONDS + 480))
workloads="OCR-like SIFT-like Tweets-like Adult-x20-like"

echo "== genie: suite, workloads dumped to $dump (about 8 GB)"
df -h /tmp | tail -1
timeout 300 .gpu/run bin genie-bench --mode suite --dump "$dump" --csv "$out/suite.csv" 2>&1 |
  tee "$out/suite.log" | tail -24 || status=1
du -sh "$dump"/* 2>/dev/null

echo "== peer: PyTorch SpMM + topk on the dumped workloads"
python3 -c "import torch, numpy; print('torch', torch.__version__, 'numpy', numpy.__version__)" || status=1
for w in $workloads; do
  left=$((deadline - SECONDS))
  if [ ! -f "$dump/$w/meta.json" ]; then echo "$w: not dumped"; status=1; continue; fi
  if [ "$left" -lt 30 ]; then echo "$w: skipped, the 8 minutes are spent"; status=1; continue; fi
  limit=$((left < 200 ? left : 200))
  echo "-- $w (limit $limit s)"
  timeout "$limit" python3 bench/peers/torch_spmm.py --load "$dump/$w" --csv "$out/peer-$w.csv" 2>&1 |
    tee "$out/peer-$w.log" | grep -v -e "Warning" -e "^  A = " | tail -6 || status=1
  rm -rf "${dump:?}/$w" # the next one's disk and page cache
done
# one CSV, in the suite's order
first=1
for w in $workloads; do
  f="$out/peer-$w.csv"
  [ -s "$f" ] || continue
  if [ $first = 1 ]; then cat "$f"; first=0; else tail -n +2 "$f"; fi
done > "$out/peer.csv"
rm -f "$out"/peer-*.csv
echo "== peer.csv"
cat "$out/peer.csv"
rm -rf "$dump"
exit $status
