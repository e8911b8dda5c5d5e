"""Reads a navec archive (the folder of an unpacked navec .tar: vocab.bin and pq.bin), as
natasha==1.6.0 ships it on PyPI (MIT): GloVe vectors stored product-quantized. Used by
scripts/fetch-glove.sh and bench/peers/vector_sets.py."""
import gzip
import sys

import numpy as np


def load(folder):
    """Words and decoded float32 vectors, most frequent word first (as GloVe's own files are);
    the archive's <unk> and <pad> rows are dropped."""
    with gzip.open(f"{folder}/vocab.bin", "rb") as f:
        size = int(np.frombuffer(f.read(4), np.uint32)[0])
        counts = np.frombuffer(f.read(4 * size), np.uint32).astype(np.int64)
        words = f.read().decode("utf8").split("\n")
    with open(f"{folder}/pq.bin", "rb") as f:
        vectors, dim, qdim, centroids = (int(x) for x in np.frombuffer(f.read(16), np.uint32))
        indexes = np.frombuffer(f.read(vectors * qdim), np.uint8).reshape(vectors, qdim)
        codes = np.frombuffer(f.read(), np.float32).reshape(qdim, centroids, -1)
    if len(words) != size or vectors != size:
        sys.exit(f"navec: {size} counts, {len(words)} words, {vectors} vectors")
    data = codes[np.arange(qdim), indexes].reshape(vectors, dim)
    keep = np.array([w not in ("<unk>", "<pad>") for w in words])
    order = np.argsort(-counts[keep], kind="stable")
    kept = [w for w, k in zip(words, keep) if k]
    return [kept[i] for i in order], data[keep][order]
