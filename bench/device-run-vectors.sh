#!/usr/bin/env bash
# Issue 13 on the GPU machine: Fashion-MNIST (60,000 x 784, the 10,000 test images as queries),
# the codebook family built and tuned by `genie build`, searched by `genie search --device gpu`,
# beside the exact fp32 scan in PyTorch (bench/peers/ann_peers.py --peers torch) on the same GPU,
# recall@10 of both against the exact neighbours (bench/peers/knn_truth.py, float64).
# With "serve2" it also runs issue 12's two-GPU load: genie-bench --mode serve at 1,024 clients on
# one GPU and on two. Run from the repo root after ../shared/gpu/stage.
set -uo pipefail
out=${OUT:-/tmp/genie-out}
mkdir -p "$out"
d=/tmp/genie-vec; mkdir -p "$d"
nvidia-smi --query-gpu=name,memory.total --format=csv,noheader
python3 - "$d" .gpu/fm <<'PY'
import gzip, sys, numpy as np
d = sys.argv[1]
def idx(p):
    raw = gzip.open(p).read()
    return np.frombuffer(raw[16:], dtype=np.uint8).reshape(-1, 784).astype(np.float32)
for name, p in [("base", "train-images-idx3-ubyte.gz"), ("query", "t10k-images-idx3-ubyte.gz")]:
    a = idx(sys.argv[2] + "/" + p)
    out = np.empty((a.shape[0], 785), dtype=np.float32)
    out[:, 0] = np.array([784], dtype=np.int32).view(np.float32)[0]
    out[:, 1:] = a
    out.tofile(f"{d}/{name}.fvecs")
PY
python3 bench/peers/knn_truth.py "$d/base.fvecs" "$d/query.fvecs" 10 "$d/truth.ivecs" | tee "$out/truth.log"
python3 bench/peers/ann_peers.py --data fashion-mnist --base "$d/base.fvecs" --queries "$d/query.fvecs" \
  --truth "$d/truth.ivecs" --k 10 --peers torch --csv "$out/vectors-peers.csv" 2>&1 | tail -8
t0=$(date +%s.%N)
.gpu/run bin genie -v build --kind vectors --lsh codebook --input "$d/base.fvecs" --output "$d/cb.genie" 2>&1 | grep -v DEBUG | tail -8 | tee "$out/build.log"
echo "build_s=$(echo "$(date +%s.%N) - $t0" | bc)"
for dev in gpu cpu; do
  for i in 1 2; do
    t0=$(date +%s.%N)
    .gpu/run bin genie -v search --device $dev --index "$d/cb.genie" --queries "$d/query.fvecs" --k 10 --output "$d/cb-$dev.jsonl" 2>&1 | grep -E "stages|searched|backend" | tee -a "$out/search-$dev.log"
    echo "$dev run $i wall_s=$(echo "$(date +%s.%N) - $t0" | bc)" | tee -a "$out/search-$dev.log"
  done
done
cmp -s "$d/cb-gpu.jsonl" "$d/cb-cpu.jsonl" && echo "GPU == CPU: yes" || echo "GPU == CPU: NO"
python3 - "$d" <<'PY' | tee "$out/recall.log"
import json, sys, numpy as np
d = sys.argv[1]
raw = np.fromfile(f"{d}/truth.ivecs", dtype=np.int32); k = raw[0]
truth = raw.reshape(-1, k + 1)[:, 1:11]
found = 0
for line, t in zip(open(f"{d}/cb-gpu.jsonl"), truth):
    hits = [h["id"] for h in json.loads(line)["hits"]]
    found += len(set(hits[:10]) & set(t.tolist()))
print(f"genie codebook recall@10 = {found / (10 * len(truth)):.4f}")
PY
if [ "${1:-}" = serve2 ]; then
  for devs in 0 0,1; do
    timeout 150 .gpu/run bin genie-bench --mode serve --devices $devs --clients 1024 --rates 1 --seconds 10 \
      --csv "$out/serve-devices-${devs/,/-}.csv" 2>&1 | grep -v INFO | tail -6
  done
fi
