"""Writes the vector benchmark's data sets as fvecs into a folder, each as NAME-base.fvecs and
NAME-query.fvecs (10,000 queries):
  fm   Fashion-MNIST, 60,000 x 784, the 10,000 test images as queries (FM: the folder of the IDX
       files)
  cl   Gaussian clusters 1 M x 96: 2,000 centres ~ N(0, 10^2), points = centre + N(0, 3^2),
       queries from the same mixture (seed 13)
  big  the same mixture at 10 M x 96 (10,000 centres, seed 17)
  wv   word vectors for cosine search: the navec "news v1" GloVe vectors (250,000 words x 300,
       from natasha==1.6.0 on PyPI, MIT; the largest GloVe set a registry here ships), 10,000
       words chosen at random (seed 13) as queries and the other 240,000 as the base, as they are
       (wv-base.fvecs, wv-query.fvecs, for an index built with `--metric cosine`) and scaled to
       unit length (wv-base-unit.fvecs, wv-query-unit.fvecs: L2 order on them is cosine order,
       for the exact neighbours and the peers). NAVEC: the folder of the unpacked archive.

Usage: python3 bench/peers/vector_sets.py OUT FM "fm cl big wv" [NAVEC]
"""
import gzip
import sys

import numpy as np

import navec


def fvecs(path, a):
    a = np.ascontiguousarray(a, dtype=np.float32)
    out = np.empty((a.shape[0], a.shape[1] + 1), dtype=np.float32)
    out[:, 0] = np.array([a.shape[1]], dtype=np.int32).view(np.float32)[0]
    out[:, 1:] = a
    out.tofile(path)


def idx(p):
    raw = gzip.open(p).read()
    return np.frombuffer(raw[16:], dtype=np.uint8).reshape(-1, 784).astype(np.float32)


def mixture(d, name, seed, centres, n):
    rng = np.random.default_rng(seed)
    c = rng.normal(0, 10, (centres, 96)).astype(np.float32)

    def mix(n):
        out = np.empty((n, 96), dtype=np.float32)
        for s in range(0, n, 1_000_000):
            m = min(1_000_000, n - s)
            out[s:s + m] = c[rng.integers(0, centres, m)] + rng.normal(0, 3, (m, 96)).astype(np.float32)
        return out

    fvecs(f"{d}/{name}-base.fvecs", mix(n))
    fvecs(f"{d}/{name}-query.fvecs", mix(10_000))


def main():
    d, fm, sets = sys.argv[1], sys.argv[2], sys.argv[3].split()
    if "fm" in sets:
        fvecs(f"{d}/fm-base.fvecs", idx(fm + "/train-images-idx3-ubyte.gz"))
        fvecs(f"{d}/fm-query.fvecs", idx(fm + "/t10k-images-idx3-ubyte.gz"))
    if "cl" in sets:
        mixture(d, "cl", 13, 2000, 1_000_000)
    if "big" in sets:
        mixture(d, "big", 17, 10_000, 10_000_000)
    if "wv" in sets:
        words(d, sys.argv[4])


def words(d, folder):
    _, data = navec.load(folder)
    chosen = np.zeros(len(data), dtype=bool)
    chosen[np.random.default_rng(13).choice(len(data), 10_000, replace=False)] = True
    for name, rows in (("base", data[~chosen]), ("query", data[chosen])):
        fvecs(f"{d}/wv-{name}.fvecs", rows)
        unit = rows.astype(np.float64)
        unit /= np.maximum(np.linalg.norm(unit, axis=1, keepdims=True), 1e-30)
        fvecs(f"{d}/wv-{name}-unit.fvecs", unit)
    print(f"wv: {len(data)} words x {data.shape[1]}: base {len(data) - 10_000}, queries 10,000")


if __name__ == "__main__":
    main()
