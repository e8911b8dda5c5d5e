"""genie from Python in a few lines: keyword objects, a table and vectors, searched on the GPU
when there is one, else on the CPU. Run: python examples/python/quickstart.py"""

import numpy as np
import pandas as pd

import genie

# keyword objects: each a set of integers; queries: keywords, or (lo, hi, weight) ranges
index = genie.Index.from_keywords([[1, 6, 9], [2, 5, 10], [1, 7, 11]])
counts, ids = index.search([[1, 5, 10], ([1, 5], [2, 11], [1, 2])], k=3)
print("keywords: ids", ids.tolist(), "counts", counts.tolist())
index.save("demo.genie")  # the file `genie search --index demo.genie` reads
print("loaded:", genie.load("demo.genie"), "on", index.backend())

# table rows, queried by conditions
df = pd.DataFrame(
    {"age": [25, 38, 52, 33], "workclass": ["Private", "State-gov", "Private", "Private"]}
)
counts, ids = genie.TableIndex(df).search([{"age": (30, 40), "workclass": "Private"}], k=2)
print("table: ids", ids.tolist(), "conditions met", counts.tolist())

# vectors, as in faiss: (distances, ids)
x = np.random.default_rng(0).normal(size=(1000, 32)).astype(np.float32)
distances, ids = genie.VectorIndex(x, lsh="e2lsh").search(x[:3], k=4)
print("vectors: ids", ids.tolist())
