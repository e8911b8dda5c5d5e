"""genie from Python in a few lines: keyword objects, short documents and vectors, searched on the
GPU when there is one, else on the CPU. Needs only what `pip install ./genie-py` installs (genie
and NumPy). Run: python examples/python/quickstart.py

Tables: genie.TableIndex takes a pandas DataFrame or a pyarrow Table (`pip install pandas`), as the
README shows."""

import os
import tempfile

import numpy as np

import genie

# keyword objects: each a set of integers; queries: keywords, or (lo, hi, weight) ranges
index = genie.Index.from_keywords([[1, 6, 9], [2, 5, 10], [1, 7, 11]])
counts, ids = index.search([[1, 5, 10], ([1, 5], [2, 11], [1, 2])], k=3)
print("keywords: ids", ids.tolist(), "counts", counts.tolist())
with tempfile.TemporaryDirectory() as folder:
    path = os.path.join(folder, "demo.genie")
    index.save(path)  # the file `genie search --index demo.genie` reads
    print("loaded:", genie.load(path), "on", index.backend())

# short documents, by the distinct words they share with the query
docs = ["the quick brown fox", "a lazy brown dog", "quick thinking saves the day"]
counts, ids = genie.DocumentIndex(docs).search(["quick brown dog"], k=2)
print("documents: ids", ids.tolist(), "shared words", counts.tolist())

# vectors, as in faiss: (distances, ids)
x = np.random.default_rng(0).normal(size=(1000, 32)).astype(np.float32)
distances, ids = genie.VectorIndex(x, lsh="e2lsh").search(x[:3], k=4)
print("vectors: ids", ids.tolist())
