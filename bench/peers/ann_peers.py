"""Peers for the vector-search benchmark (genie-bench --mode ann): recall@k and queries/s of
an exact GPU scan in PyTorch, an exact CPU scan in faiss (IndexFlatL2), faiss' IVFPQ with the
shortlist re-ranked by exact distance (IndexRefineFlat), faiss' IVF-Flat (the same nlist, nprobe
1 to 256) and faiss' HNSW32 (efConstruction 40, efSearch 16 to 512), on the same fvecs files and
truth.

Usage:
  python3 bench/peers/ann_peers.py --data NAME --base BASE.fvecs --queries Q.fvecs \
      --truth TRUTH.ivecs --k 10 --csv OUT.csv [--peers torch,faiss-flat,faiss-ivfpq] \
      [--threads N] [--target-recall 0.95]

Each peer whose package is missing (or, for torch, with no CUDA device) is skipped with the reason
printed. One CSV row per measured point, appended as soon as the point is measured (so a run cut
short keeps the points it measured; the header is written when the file is new):

  data,system,params,recall,qps,seconds,queries,device

system: torch-exact-fp32, faiss-flat, faiss-ivfpq, faiss-ivfflat or faiss-hnsw32; params: `key=value;key=value`; recall:
recall@k against the truth (the share of the k true neighbour ids found); seconds: search time for
all the queries (median of 3 runs after one warm-up, data already in place); qps = queries /
seconds; device: the CUDA device's name or `cpu N threads`. genie's own rows go to the same CSV
from `genie-bench --mode vectors --index INDEX --queries Q.fvecs --truth T.ivecs --data NAME --csv
OUT.csv`; `genie-charts --ann OUT.csv` draws one chart per data set with every system on it.

faiss-ivfpq's configuration:
  nlist = the power of two nearest 4 * sqrt(n);
  M = the fewest subquantizers of at most 8 dimensions each (the smallest divisor of dim with
      dim / M <= 8: 784 -> 98, 128 -> 16, 96 -> 12), 8 bits per code;
  trained on a seeded random sample of max(100,000, 39 * nlist) rows (all rows when fewer);
  nprobe in 1, 2, 4, ..., 256 (not beyond nlist) times k_factor in 1, 4, 16 (the shortlist of
  k_factor * k candidates re-ranked by exact distance; 1: no re-ranking beyond the top k).
  Its params also carry build_s, the train + add seconds.
"""
import argparse
import csv
import math
import os
import statistics
import sys
import time

import numpy as np

HEADER = ["data", "system", "params", "recall", "qps", "seconds", "queries", "device"]
PEERS = ["torch", "faiss-flat", "faiss-ivfpq", "faiss-ivfflat", "faiss-hnsw"]
EF_SEARCH = [16, 32, 64, 128, 256, 512]
NPROBES = [1, 2, 4, 8, 16, 32, 64, 128, 256]
K_FACTORS = [1, 4, 16]
TRAIN_ROWS = 100_000
SEED = 1234


class Skip(Exception):
    """A peer that cannot run here; the message says why."""


def read_vecs(path, dtype):
    """Rows of an fvecs (float32) or ivecs (int32) file: each an int32 dimension, then the row."""
    try:
        raw = np.fromfile(path, dtype=np.int32)
    except OSError as e:
        sys.exit(f"ann_peers.py: {path}: cannot read: {e.strerror}")
    if raw.size == 0:
        sys.exit(f"ann_peers.py: {path}: empty file")
    d = int(raw[0])
    if d <= 0 or raw.size % (d + 1) != 0:
        sys.exit(f"ann_peers.py: {path}: not a vecs file (first dimension {d}, {raw.size * 4} bytes)")
    rows = raw.reshape(-1, d + 1)
    if not (rows[:, 0] == d).all():
        bad = int(np.argmax(rows[:, 0] != d))
        sys.exit(f"ann_peers.py: {path}: row {bad} has dimension {rows[bad, 0]}, the first has {d}")
    return np.ascontiguousarray(rows[:, 1:].view(dtype))


def recall_at_k(ids, truth, k):
    """The share of each query's k true neighbour ids among its k results, over all queries."""
    found = (ids[:, :k, None] == truth[:, None, :k]).any(axis=2)
    return float(found.sum()) / (truth.shape[0] * k)


def timed(search, runs=3):
    """search() once to warm up, then `runs` times; (its result, the median seconds)."""
    result = search()
    times = []
    for _ in range(runs):
        t = time.perf_counter()
        result = search()
        times.append(time.perf_counter() - t)
    return result, statistics.median(times)


def row(args, system, params, recall, seconds, queries, device):
    return {
        "data": args.data,
        "system": system,
        "params": ";".join(f"{k}={v}" for k, v in params.items()),
        "recall": f"{recall:.4f}",
        "qps": f"{queries / seconds:.1f}",
        "seconds": f"{seconds:.6f}",
        "queries": str(queries),
        "device": device,
    }


def peer_torch(args, base, queries, truth):
    try:
        import torch
    except ImportError as e:
        raise Skip(f"PyTorch is not installed ({e})")
    if not torch.cuda.is_available():
        raise Skip("PyTorch finds no CUDA device")
    dev = torch.device("cuda")
    b = torch.from_numpy(base).to(dev)
    q = torch.from_numpy(queries).to(dev)
    bn = (b * b).sum(1)
    # queries per chunk: the chunk's distance matrix (float32) under 2 GiB
    chunk = max(1, min(q.shape[0], (2 << 30) // (4 * b.shape[0])))

    def search():
        out = []
        for s in range(0, q.shape[0], chunk):
            c = q[s : s + chunk]
            d = (c * c).sum(1, keepdim=True) - 2.0 * (c @ b.T) + bn
            out.append(torch.topk(d, args.k, dim=1, largest=False).indices)
        ids = torch.cat(out)
        torch.cuda.synchronize()
        return ids

    torch.cuda.synchronize()
    ids, seconds = timed(search)
    recall = recall_at_k(ids.cpu().numpy(), truth, args.k)
    device = torch.cuda.get_device_name(dev)
    params = {"k": args.k, "chunk": chunk, "torch": torch.__version__}
    yield row(args, "torch-exact-fp32", params, recall, seconds, q.shape[0], device)


def import_faiss(args):
    try:
        import faiss
    except ImportError as e:
        raise Skip(f"faiss is not installed ({e}); pip install faiss-cpu")
    faiss.omp_set_num_threads(args.threads)
    return faiss, f"cpu {args.threads} threads"


def peer_faiss_flat(args, base, queries, truth):
    faiss, device = import_faiss(args)
    index = faiss.IndexFlatL2(base.shape[1])
    index.add(base)
    (_, ids), seconds = timed(lambda: index.search(queries, args.k))
    recall = recall_at_k(ids, truth, args.k)
    yield row(args, "faiss-flat", {"k": args.k}, recall, seconds, queries.shape[0], device)


def ivfpq_shape(n, dim):
    """(nlist, M) of the rule in the module's docstring."""
    nlist = 2 ** max(0, round(math.log2(4 * math.sqrt(n))))
    nlist = min(nlist, n)
    m = next(m for m in range(1, dim + 1) if dim % m == 0 and dim // m <= 8)
    return nlist, m


def peer_faiss_ivfpq(args, base, queries, truth):
    faiss, device = import_faiss(args)
    n, dim = base.shape
    nlist, m = ivfpq_shape(n, dim)
    train_rows = min(n, max(TRAIN_ROWS, 39 * nlist))
    sample = base[np.sort(np.random.default_rng(SEED).choice(n, train_rows, replace=False))]
    start = time.perf_counter()
    quantizer = faiss.IndexFlatL2(dim)
    ivfpq = faiss.IndexIVFPQ(quantizer, dim, nlist, m, 8)
    index = faiss.IndexRefineFlat(ivfpq)
    index.train(sample)
    index.add(base)
    build_s = time.perf_counter() - start
    print(f"faiss-ivfpq: nlist={nlist} M={m} trained on {train_rows} rows, train + add {build_s:.2f} s")
    for nprobe in [p for p in NPROBES if p <= nlist]:
        for k_factor in K_FACTORS:
            params = faiss.IndexRefineSearchParameters(
                k_factor=k_factor, base_index_params=faiss.SearchParametersIVF(nprobe=nprobe)
            )
            (_, ids), seconds = timed(lambda: index.search(queries, args.k, params=params))
            recall = recall_at_k(ids, truth, args.k)
            shown = {"nprobe": nprobe, "k_factor": k_factor, "nlist": nlist, "M": m}
            shown.update({"k": args.k, "build_s": f"{build_s:.2f}"})
            print(f"  nprobe={nprobe:<3} k_factor={k_factor:<2} recall={recall:.4f} qps={queries.shape[0] / seconds:.1f}",
                  flush=True)
            yield row(args, "faiss-ivfpq", shown, recall, seconds, queries.shape[0], device)


def peer_faiss_ivfflat(args, base, queries, truth):
    faiss, device = import_faiss(args)
    n, dim = base.shape
    nlist, _ = ivfpq_shape(n, dim)
    train_rows = min(n, max(TRAIN_ROWS, 39 * nlist))
    sample = base[np.sort(np.random.default_rng(SEED).choice(n, train_rows, replace=False))]
    start = time.perf_counter()
    index = faiss.IndexIVFFlat(faiss.IndexFlatL2(dim), dim, nlist)
    index.train(sample)
    index.add(base)
    build_s = time.perf_counter() - start
    print(f"faiss-ivfflat: nlist={nlist}, train + add {build_s:.2f} s")
    for nprobe in [p for p in NPROBES if p <= nlist]:
        index.nprobe = nprobe
        (_, ids), seconds = timed(lambda: index.search(queries, args.k))
        recall = recall_at_k(ids, truth, args.k)
        shown = {"nprobe": nprobe, "nlist": nlist, "k": args.k, "build_s": f"{build_s:.2f}"}
        yield row(args, "faiss-ivfflat", shown, recall, seconds, queries.shape[0], device)


def peer_faiss_hnsw(args, base, queries, truth):
    faiss, device = import_faiss(args)
    start = time.perf_counter()
    index = faiss.IndexHNSWFlat(base.shape[1], 32)
    index.hnsw.efConstruction = 40
    index.add(base)
    build_s = time.perf_counter() - start
    print(f"faiss-hnsw: M=32, efConstruction=40, add {build_s:.2f} s")
    for ef in EF_SEARCH:
        index.hnsw.efSearch = ef
        (_, ids), seconds = timed(lambda: index.search(queries, args.k))
        recall = recall_at_k(ids, truth, args.k)
        shown = {"M": 32, "efSearch": ef, "k": args.k, "build_s": f"{build_s:.2f}"}
        yield row(args, "faiss-hnsw32", shown, recall, seconds, queries.shape[0], device)
        if recall >= 0.999:
            break


RUNNERS = {"torch": peer_torch, "faiss-flat": peer_faiss_flat, "faiss-ivfpq": peer_faiss_ivfpq,
           "faiss-ivfflat": peer_faiss_ivfflat, "faiss-hnsw": peer_faiss_hnsw}


def check_csv(path):
    """Exits unless `path` is missing, empty or starts with the header; True when it is new."""
    if not os.path.exists(path) or os.path.getsize(path) == 0:
        return True
    with open(path, newline="") as f:
        header = next(csv.reader(f), [])
    if header != HEADER:
        sys.exit(f"ann_peers.py: {path}: the header is {','.join(header)}, expected {','.join(HEADER)}")
    return False


def append_csv(path, rows):
    new = check_csv(path)
    with open(path, "a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=HEADER)
        if new:
            w.writeheader()
        w.writerows(rows)


def print_table(rows, target):
    cols = ["system", "params", "recall", "qps", "seconds", "device"]
    widths = [max(len(c), *(len(r[c]) for r in rows)) for c in cols]
    print("  ".join(c.ljust(w) for c, w in zip(cols, widths)))
    for r in rows:
        print("  ".join(r[c].ljust(w) for c, w in zip(cols, widths)))
    for system in dict.fromkeys(r["system"] for r in rows):
        reached = [r for r in rows if r["system"] == system and float(r["recall"]) >= target]
        if reached:
            best = max(reached, key=lambda r: float(r["qps"]))
            print(f"fastest {system} at recall >= {target}: {best['params']} "
                  f"(recall {best['recall']}, {best['qps']} q/s)")
        else:
            print(f"{system}: no configuration reaches recall {target}")


def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data", required=True, help="the data set's name (the CSV's data column)")
    p.add_argument("--base", required=True, help="the indexed vectors (fvecs)")
    p.add_argument("--queries", required=True, help="the query vectors (fvecs)")
    p.add_argument("--truth", required=True, help="exact neighbour ids, at least k per query (ivecs)")
    p.add_argument("--k", type=int, default=10)
    p.add_argument("--csv", required=True, help="the CSV the rows are appended to")
    p.add_argument("--peers", default=",".join(PEERS), help=f"comma-separated, of {','.join(PEERS)}")
    p.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)))
    p.add_argument("--target-recall", type=float, default=0.95)
    args = p.parse_args(argv)
    args.peers = [s.strip() for s in args.peers.split(",") if s.strip()]
    unknown = [s for s in args.peers if s not in RUNNERS]
    if unknown:
        p.error(f"unknown peer {', '.join(unknown)}: expected some of {', '.join(PEERS)}")
    if args.k < 1 or args.threads < 1:
        p.error("--k and --threads must be at least 1")
    return args


def main(argv=None):
    args = parse_args(argv)
    base = read_vecs(args.base, np.float32)
    queries = read_vecs(args.queries, np.float32)
    truth = read_vecs(args.truth, np.int32)
    if base.shape[1] != queries.shape[1]:
        sys.exit(f"ann_peers.py: {args.queries}: dimension {queries.shape[1]}, "
                 f"the base {args.base} has {base.shape[1]}")
    if truth.shape[0] != queries.shape[0] or truth.shape[1] < args.k:
        sys.exit(f"ann_peers.py: {args.truth}: {truth.shape[0]} rows of {truth.shape[1]} ids, "
                 f"expected {queries.shape[0]} rows (one per query) of at least k = {args.k}")
    check_csv(args.csv)
    print(f"{args.data}: base {base.shape[0]} x {base.shape[1]}, {queries.shape[0]} queries, k = {args.k}")
    rows = []
    for name in args.peers:
        try:
            for got in RUNNERS[name](args, base, queries, truth):
                append_csv(args.csv, [got])
                rows.append(got)
        except Skip as e:
            print(f"{name}: skipped: {e}")
    if rows:
        print_table(rows, args.target_recall)
    else:
        print("no peer ran")


if __name__ == "__main__":
    main()
