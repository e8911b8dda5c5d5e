"""Exact k nearest neighbours (L2) by brute force on the GPU with PyTorch, in float64: the ground
truth and the brute-force timing for genie-bench --mode ann.

Usage: python3 bench/peers/knn_truth.py BASE.fvecs QUERY.fvecs K OUT.ivecs
Prints one line: `bruteforce_s=SECONDS queries=Q base=N dim=D` (search time after the data is on
the GPU, median of 3).
"""
import sys
import time

import numpy as np
import torch


def read_fvecs(path):
    raw = np.fromfile(path, dtype=np.int32)
    d = raw[0]
    return raw.reshape(-1, d + 1)[:, 1:].view(np.float32).copy()


def write_ivecs(path, ids):
    k = ids.shape[1]
    out = np.empty((ids.shape[0], k + 1), dtype=np.int32)
    out[:, 0] = k
    out[:, 1:] = ids
    out.tofile(path)


def main():
    base_path, query_path, k, out_path = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    dev = torch.device("cuda")
    base = torch.from_numpy(read_fvecs(base_path)).to(dev, torch.float64)
    queries = torch.from_numpy(read_fvecs(query_path)).to(dev, torch.float64)
    bn = (base * base).sum(1)

    def run():
        ids = []
        for s in range(0, queries.shape[0], 256):
            q = queries[s : s + 256]
            d = (q * q).sum(1, keepdim=True) - 2.0 * q @ base.T + bn
            ids.append(torch.topk(d, k, dim=1, largest=False).indices)
        return torch.cat(ids)

    run()
    times = []
    for _ in range(3):
        torch.cuda.synchronize()
        t = time.perf_counter()
        ids = run()
        torch.cuda.synchronize()
        times.append(time.perf_counter() - t)
    write_ivecs(out_path, ids.cpu().numpy().astype(np.int32))
    print(f"bruteforce_s={sorted(times)[1]:.6f} queries={queries.shape[0]} base={base.shape[0]} dim={base.shape[1]}")


if __name__ == "__main__":
    main()
