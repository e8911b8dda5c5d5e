#!/usr/bin/env bash
# Where a codebook search of Fashion-MNIST spends its GPU time: the index built by `genie build`
# (no flag but kind and family), one `genie search --device gpu` of the 10,000 test images under
# Nsight Compute, the per-kernel times, then one launch each of codebook_scan and codeword_products
# with the full section set (occupancy, memory traffic, stall reasons). Run on the GPU machine from
# the repo root after scripts/gpu/stage with .gpu/fm/ holding the IDX files; writes $OUT/profile.txt.
set -uo pipefail
res=${OUT:-/tmp/genie-out}; mkdir -p "$res"
d=/tmp/genie-prof; mkdir -p "$d"
python3 - "$d" .gpu/fm <<'PY'
import gzip, sys, numpy as np
d, fm = sys.argv[1], sys.argv[2]
def fvecs(path, a):
    out = np.empty((a.shape[0], a.shape[1] + 1), dtype=np.float32)
    out[:, 0] = np.array([a.shape[1]], dtype=np.int32).view(np.float32)[0]
    out[:, 1:] = a
    out.tofile(path)
def idx(p):
    return np.frombuffer(gzip.open(p).read()[16:], dtype=np.uint8).reshape(-1, 784).astype(np.float32)
fvecs(f"{d}/fm-base.fvecs", idx(fm + "/train-images-idx3-ubyte.gz"))
fvecs(f"{d}/fm-query.fvecs", idx(fm + "/t10k-images-idx3-ubyte.gz"))
PY
g=.gpu/bin/genie
$g build --kind vectors --lsh codebook ${BUILD_FLAGS:-} --input $d/fm-base.fvecs --output $d/fm.genie 2>&1 | tail -1 | tee "$res/profile.txt"
search() { $g -v search --device gpu --index $d/fm.genie --queries $d/fm-query.fvecs --k 10 --output $d/out.jsonl ${SEARCH_FLAGS:-} "$@"; }
search 2>&1 | grep -E "stages|searched" | tee -a "$res/profile.txt"
ncu --clock-control none --metrics gpu__time_duration.sum --print-summary per-kernel \
  .gpu/bin/genie search --device gpu --index $d/fm.genie --queries $d/fm-query.fvecs --k 10 --output $d/out2.jsonl ${SEARCH_FLAGS:-} 2>&1 \
  | grep -E "^  [a-z_]+ \(|gpu__time_duration" | tee -a "$res/profile.txt"
for k in ${KERNELS:-codebook_scan codeword_products}; do
  echo "== $k, full set" | tee -a "$res/profile.txt"
  ncu --clock-control none --set full --kernel-name $k --launch-count 1 \
    .gpu/bin/genie search --device gpu --index $d/fm.genie --queries $d/fm-query.fvecs --k 10 --output $d/out3.jsonl ${SEARCH_FLAGS:-} 2>&1 \
    | grep -vE "^\s*$|----" | sed -n '/Section: GPU Speed Of Light/,$p' | head -150 | tee -a "$res/profile.txt"
done
