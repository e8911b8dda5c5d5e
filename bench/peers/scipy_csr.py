"""The CPU peer a Python user would otherwise write: the postings as a SciPy CSR matrix (keyword x
object), the queries as a sparse matrix (query x keyword, an item's range of keywords each with
its weight), their product the match counts, then `numpy.argpartition` per query for the top-k.

It searches the very index and queries genie searched, as `genie-bench --mode suite --dump ROOT`
wrote them (ROOT/<workload>/: offsets.npy, postings.npy, query_items.npy, query_start.npy,
genie_counts.npy, meta.json; see crates/genie-bench/src/dump.rs). DIR is one workload folder or
ROOT with all of them; --load may be repeated. The peer's top-k counts are checked against
genie's for every query (ids among equal counts may differ between correct implementations).

SciPy's sparse product runs on one core; --threads N splits the queries over N threads (the
product releases the GIL in recent SciPy; the timing shows whether it scales).

Usage:
  python3 bench/peers/scipy_csr.py --load /tmp/peer-dump --csv peer.csv [--threads 16] [--repeats 3]
  python3 bench/peers/scipy_csr.py --selftest
Prints per workload: time per 1,024-query batch set (median of --repeats after a warm-up), queries/s,
and whether the counts equal genie's.
"""
import argparse
import json
import os
import statistics
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import scipy.sparse as sp


def postings_matrix(offsets, postings, num_objects):
    """The keyword x object incidence matrix (CSR: a row per keyword, its postings)."""
    data = np.ones(len(postings), dtype=np.float32)
    return sp.csr_matrix((data, postings.astype(np.int64), offsets.astype(np.int64)),
                         shape=(len(offsets) - 1, num_objects))


def query_matrix(items, starts, keyword_space):
    """The query x keyword matrix: each item (lo, hi, weight) puts `weight` on keywords lo..hi
    (clipped to the keyword space), summed where items overlap."""
    rows, cols, vals = [], [], []
    for q in range(len(starts) - 1):
        for lo, hi, w in items[starts[q]:starts[q + 1]]:
            hi = min(int(hi), keyword_space - 1)
            if lo > hi:
                continue
            ks = np.arange(lo, hi + 1, dtype=np.int64)
            rows.append(np.full(len(ks), q, dtype=np.int64))
            cols.append(ks)
            vals.append(np.full(len(ks), w, dtype=np.float32))
    nq = len(starts) - 1
    if not rows:
        return sp.csr_matrix((nq, keyword_space), dtype=np.float32)
    m = sp.coo_matrix((np.concatenate(vals), (np.concatenate(rows), np.concatenate(cols))),
                      shape=(nq, keyword_space))
    return m.tocsr()


def top_counts(counts, k):
    """Per row of the sparse count matrix, its k largest counts descending (padded with 0) and
    their object ids (-1 for padding)."""
    nq = counts.shape[0]
    out_c = np.zeros((nq, k), dtype=np.int64)
    out_i = np.full((nq, k), -1, dtype=np.int64)
    indptr, idx, data = counts.indptr, counts.indices, counts.data
    for q in range(nq):
        a, b = indptr[q], indptr[q + 1]
        row, ids = data[a:b], idx[a:b]
        if len(row) > k:
            pick = np.argpartition(-row, k - 1)[:k]
            row, ids = row[pick], ids[pick]
        order = np.argsort(-row, kind="stable")
        out_c[q, :len(order)] = row[order]
        out_i[q, :len(order)] = ids[order]
    return out_c, out_i


def search(A, Q, k, threads):
    """The top-k of every query: Q x A (query x object counts), then the per-row top-k."""
    def part(rows):
        c = (Q[rows] @ A).tocsr()
        return top_counts(c, k)
    if threads <= 1:
        return part(slice(0, Q.shape[0]))
    step = -(-Q.shape[0] // threads)
    parts = [slice(s, min(s + step, Q.shape[0])) for s in range(0, Q.shape[0], step)]
    with ThreadPoolExecutor(threads) as ex:
        res = list(ex.map(part, parts))
    return np.vstack([r[0] for r in res]), np.vstack([r[1] for r in res])


def timed(f, reps=3):
    f()
    ts = []
    for _ in range(reps):
        t = time.perf_counter()
        out = f()
        ts.append(time.perf_counter() - t)
    return statistics.median(ts), out


def load_dir(d):
    with open(os.path.join(d, "meta.json")) as f:
        meta = json.load(f)
    arr = lambda n: np.load(os.path.join(d, n))
    return meta, arr("offsets.npy"), arr("postings.npy"), arr("query_items.npy"), \
        arr("query_start.npy"), arr("genie_counts.npy")


def workload_dirs(paths):
    out = []
    for p in paths:
        if os.path.exists(os.path.join(p, "meta.json")):
            out.append(p)
        else:
            out += sorted(os.path.join(p, n) for n in os.listdir(p)
                          if os.path.exists(os.path.join(p, n, "meta.json")))
    return out


def run_loaded(a):
    rows = []
    for d in workload_dirs(a.load):
        meta, offsets, postings, items, starts, genie = load_dir(d)
        k = genie.shape[1]
        A = postings_matrix(offsets, postings, int(meta["num_objects"]))
        Q = query_matrix(items, starts, len(offsets) - 1)
        secs, (counts, _) = timed(lambda: search(A, Q, k, a.threads), a.repeats)
        same = int((counts == genie.astype(np.int64)).all(axis=1).sum())
        nq = Q.shape[0]
        print(f"{meta['workload']}: {nq} queries, k {k}: {secs * 1e3:.1f} ms "
              f"({nq / secs:.0f} queries/s, {a.threads} thread(s)); "
              f"counts equal genie's for {same}/{nq} queries")
        rows.append((meta["workload"], nq, k, a.threads, secs, nq / secs, same))
    if a.csv:
        new = not os.path.exists(a.csv)
        with open(a.csv, "a") as f:
            if new:
                f.write("peer,workload,queries,k,threads,seconds,queries_per_s,counts_equal\n")
            for r in rows:
                f.write("scipy_csr," + ",".join(str(x) for x in r) + "\n")
    return all(r[-1] == r[1] for r in rows)


def selftest():
    """Random weighted range queries on a random index: the peer's top-k counts equal a dense
    brute force's."""
    rng = np.random.default_rng(7)
    n, ks, nq, k = 500, 60, 40, 10
    objs = [np.unique(rng.integers(0, ks, rng.integers(0, 12))) for _ in range(n)]
    lists = [[] for _ in range(ks)]
    for o, kws in enumerate(objs):
        for kw in kws:
            lists[kw].append(o)
    offsets = np.cumsum([0] + [len(l) for l in lists]).astype(np.uint64)
    postings = np.array([o for l in lists for o in l], dtype=np.uint32)
    items, starts = [], [0]
    for _ in range(nq):
        for _ in range(rng.integers(1, 6)):
            lo = int(rng.integers(0, ks + 5))
            items.append((lo, lo + int(rng.integers(0, 4)), int(rng.integers(1, 3))))
        starts.append(len(items))
    items, starts = np.array(items, dtype=np.uint32), np.array(starts, dtype=np.uint64)
    dense = np.zeros((nq, n), dtype=np.int64)
    for q in range(nq):
        for lo, hi, w in items[starts[q]:starts[q + 1]]:
            for kw in range(lo, min(hi, ks - 1) + 1):
                for o in lists[kw]:
                    dense[q, o] += w
    want = -np.sort(-dense, axis=1)[:, :k]
    A = postings_matrix(offsets, postings, n)
    Q = query_matrix(items, starts, ks)
    for threads in (1, 3):
        got, ids = search(A, Q, k, threads)
        assert (got == want).all(), f"counts differ with {threads} thread(s)"
        picked = np.take_along_axis(dense, np.maximum(ids, 0), axis=1)
        assert ((ids < 0) | (picked == got)).all(), "an id does not have its count"
    print("selftest: the peer's top-k counts equal brute force's (1 and 3 threads)")
    return True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--load", action="append", default=[], metavar="DIR")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeats", type=int, default=3, help="timed runs after the warm-up")
    ap.add_argument("--csv")
    ap.add_argument("--selftest", action="store_true")
    a = ap.parse_args()
    ok = selftest() if a.selftest or not a.load else True
    if a.load:
        ok = run_loaded(a) and ok
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
