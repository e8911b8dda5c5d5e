"""Filtered vector searches' ground truth and recall, for bench/device-run-embed.sh and
bench/device-run-filtered.sh.

  python3 bench/peers/allowed_truth.py truth BASE.fvecs QUERY.fvecs PCT OUT
      a seeded choice (seed 7) of PCT% of BASE's rows, written to OUT.txt (one id a line), and
      each query's 10 exact nearest allowed rows (L2, float64) to OUT-truth.npy;
  python3 bench/peers/allowed_truth.py recall HITS.jsonl OUT-truth.npy OUT.txt
      prints recall@10 of `genie search`'s JSON lines against the truth, and how many hits are
      not allowed.
"""
import json
import sys

import numpy as np


def fvecs(p):
    raw = np.fromfile(p, dtype=np.int32)
    d = raw[0]
    return raw.reshape(-1, d + 1)[:, 1:].view(np.float32)


def truth(base_path, query_path, pct, out):
    base, q = fvecs(base_path).astype(np.float64), fvecs(query_path).astype(np.float64)
    n = base.shape[0]
    allowed = np.sort(np.random.default_rng(7).choice(n, n * int(pct) // 100, replace=False))
    np.savetxt(out + ".txt", allowed, fmt="%d")
    b = base[allowed]
    bn = (b * b).sum(1)
    best = np.empty((q.shape[0], 10), dtype=np.int64)
    for s in range(0, q.shape[0], 500):
        d2 = bn[None, :] - 2 * q[s:s + 500] @ b.T
        best[s:s + 500] = allowed[np.argsort(d2, axis=1)[:, :10]]
    np.save(out + "-truth.npy", best)


def recall(hits_path, truth_path, allowed_path):
    want_all = np.load(truth_path)
    allowed = set(np.loadtxt(allowed_path, dtype=np.int64).tolist())
    found = bad = 0
    for line, want in zip(open(hits_path), want_all):
        ids = [h["id"] for h in json.loads(line)["hits"]]
        bad += sum(i not in allowed for i in ids)
        found += len(set(ids) & set(want.tolist()))
    print(f"recall@10 {found / want_all.size:.4f}, {bad} hits not allowed")


if __name__ == "__main__":
    {"truth": truth, "recall": recall}[sys.argv[1]](*sys.argv[2:])
