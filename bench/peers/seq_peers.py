"""The sequence-search peer: RapidFuzz's all-pairs edit distance (`process.cdist` with
`Levenshtein.distance`, every core), the top-k of every query, timed and checked against genie's
answers.

Usage:
  python3 bench/peers/seq_peers.py --data NAME --base BASE.txt --queries Q.txt --k 1 \
      --csv OUT.csv [--genie GENIE.jsonl] [--workers N] [--chunk ROWS]

BASE.txt and Q.txt hold one sequence a line (the files `genie build --kind sequences` and `genie
search` read; the line terminator is not part of the sequence). The queries are scored a chunk
of rows at a time (the distance matrix of a chunk is `rows x len(base)`, of the narrowest integer
type that holds the longest sequence's length); the top-k of a row is its k smallest distances
(its minimum for k = 1). With --genie (the JSON lines of `genie search --kind sequences`),
every query's k smallest distances must equal genie's (ids may differ among equal distances):
the script prints how many queries agree and exits 1 when one does not.

One CSV row (written when the file is new, the header first):

  data,system,params,queries,seconds,qps,device,agree

seconds: the scoring of all queries (one run; reading the files excluded).
"""
import argparse
import csv
import json
import os
import sys
import time

import numpy as np


def lines(path):
    with open(path, encoding="utf-8", newline="") as f:
        return [line.rstrip("\n").rstrip("\r") if line.endswith("\n") else line for line in f]


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--data", required=True)
    p.add_argument("--base", required=True)
    p.add_argument("--queries", required=True)
    p.add_argument("--k", type=int, default=1)
    p.add_argument("--csv", required=True)
    p.add_argument("--genie", help="genie search's JSON lines, to check")
    p.add_argument("--workers", type=int, default=len(os.sched_getaffinity(0)))
    p.add_argument("--chunk", type=int, default=1024)
    a = p.parse_args()
    try:
        import rapidfuzz
        from rapidfuzz import process
        from rapidfuzz.distance import Levenshtein
    except ImportError as e:
        print(f"rapidfuzz: skipped ({e})")
        return 0
    base = lines(a.base)
    queries = lines(a.queries)
    k = max(1, min(a.k, len(base)))
    best = np.empty((len(queries), k), dtype=np.int64)
    # the smallest matrix that holds every distance (at most the longer sequence's length)
    longest = max(map(len, base + queries), default=0)
    dtype = np.uint8 if longest < 255 else np.uint16 if longest < 65535 else np.int32
    t0 = time.perf_counter()
    for lo in range(0, len(queries), a.chunk):
        d = process.cdist(queries[lo:lo + a.chunk], base, scorer=Levenshtein.distance,
                          dtype=dtype, workers=a.workers)
        if k == 1:
            part = d.min(axis=1, keepdims=True)
        elif k < d.shape[1]:
            part = np.sort(np.partition(d, k - 1, axis=1)[:, :k], axis=1)
        else:
            part = np.sort(d, axis=1)
        best[lo:lo + part.shape[0]] = part
    seconds = time.perf_counter() - t0
    agree = ""
    status = 0
    if a.genie:
        got = [json.loads(line) for line in open(a.genie, encoding="utf-8")]
        if len(got) != len(queries):
            print(f"genie answered {len(got)} of {len(queries)} queries")
            return 1
        same = 0
        for q, (row, ans) in enumerate(zip(best, got)):
            dist = sorted(int(h["distance"]) for h in ans["hits"])[:k]
            if dist == row.tolist():
                same += 1
            elif status == 0:
                print(f"query {q}: genie {dist}, rapidfuzz {row.tolist()}")
                status = 1
        agree = f"{same}/{len(queries)}"
        print(f"genie's top-{k} distances equal rapidfuzz's for {agree} queries")
    new = not os.path.exists(a.csv)
    with open(a.csv, "a", newline="") as f:
        w = csv.writer(f)
        if new:
            w.writerow(["data", "system", "params", "queries", "seconds", "qps", "device", "agree"])
        w.writerow([a.data, "rapidfuzz-cdist", f"k={k};rapidfuzz={rapidfuzz.__version__};chunk={a.chunk}",
                    len(queries), f"{seconds:.6f}", f"{len(queries) / seconds:.1f}",
                    f"cpu {a.workers} threads", agree])
    print(f"rapidfuzz cdist: {len(queries)} queries x {len(base)} sequences, top-{k}, "
          f"{seconds:.3f} s ({len(queries) / seconds:.1f} queries/s, {a.workers} threads)")
    return status


if __name__ == "__main__":
    sys.exit(main())
