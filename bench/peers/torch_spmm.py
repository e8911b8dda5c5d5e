"""The peer a user would otherwise write: postings as a sparse matrix times the query matrix with
PyTorch (cuSPARSE), then torch.topk.

Two workloads:
- by default, the shape of genie-bench's default table, rebuilt here from a seed: N objects of D
  dimensions x V values (one keyword per dimension), each query a perturbed object (each dimension
  kept with probability 1/2, else a random value), k = 100;
- with --load DIR, the very index and queries genie searched, as `genie-bench --mode suite --dump
  ROOT` wrote them (ROOT/<workload>/: offsets.npy, postings.npy, query_items.npy,
  query_start.npy, genie_counts.npy, meta.json; see src/dump.rs). DIR is one workload folder or
  ROOT with all of them; --load may be repeated. The peer's top-k counts are checked against
  genie's for every query.

Usage (on the device, whose python3 has PyTorch and NumPy):
  python3 bench/peers/torch_spmm.py --objects 10000000 --queries 1024,8192 --csv out.csv
  python3 bench/peers/torch_spmm.py --load /tmp/peer-dump/SIFT-like --csv peer.csv
Prints a table: time per batch (median of 3 after a warm-up), queries/s and the peak device memory
per query. torch.topk breaks ties in no fixed order, so only counts are comparable with genie's
hits, not ids among tied counts.
"""
import argparse
import json
import os
import sys
import time

import torch


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--objects", type=int, default=10_000_000)
    ap.add_argument("--dims", type=int, default=128)
    ap.add_argument("--values", type=int, default=64)
    ap.add_argument("--queries", default="1024,8192")
    ap.add_argument("--batch", type=int, default=1024, help="queries per sparse x dense product")
    ap.add_argument("--k", type=int, default=100)
    ap.add_argument("--seed", type=int, default=42)
    ap.add_argument("--csv")
    ap.add_argument("--load", action="append", default=[], metavar="DIR",
                    help="a folder written by genie-bench --mode suite --dump (one workload, or the "
                         "root with one folder per workload); repeatable. --k is then the dump's")
    ap.add_argument("--device", default="cuda",
                    help="with --load: torch device (cpu for a check without a GPU)")
    a = ap.parse_args()
    if a.load:
        loaded(a)
    else:
        generated(a)


def generated(a):
    dev = torch.device("cuda")
    g = torch.Generator(device=dev).manual_seed(a.seed)
    n, d, v = a.objects, a.dims, a.values
    u = d * v
    vals = torch.randint(0, v, (n, d), device=dev, generator=g, dtype=torch.int32)
    cols = (vals + torch.arange(d, device=dev, dtype=torch.int32) * v).reshape(-1)
    crow = torch.arange(0, n * d + 1, d, device=dev, dtype=torch.int64)
    # object x keyword incidence, CSR (what GENIE's posting lists are, transposed)
    A = torch.sparse_csr_tensor(crow, cols.to(torch.int64), torch.ones(n * d, device=dev), size=(n, u))
    del cols
    torch.cuda.synchronize()
    index_bytes = torch.cuda.memory_allocated()
    print(f"device: {torch.cuda.get_device_name()}  index: {n} objects, {n * d} nnz, {index_bytes / 1e9:.2f} GB on the device")

    rows = []
    for nq in [int(x) for x in a.queries.split(",")]:
        base = torch.randint(0, n, (nq,), device=dev, generator=g)
        keep = torch.rand((nq, d), device=dev, generator=g) < 0.5
        rnd = torch.randint(0, v, (nq, d), device=dev, generator=g, dtype=torch.int32)
        qv = torch.where(keep, vals[base], rnd) + torch.arange(d, device=dev, dtype=torch.int32) * v

        def run():
            outs = []
            for s in range(0, nq, a.batch):
                q = qv[s : s + a.batch]
                Q = torch.zeros((u, q.shape[0]), device=dev)
                Q.scatter_(0, q.T.to(torch.int64), 1.0)
                counts = A @ Q  # n x batch, float32 (exact for these small integers)
                top = torch.topk(counts, a.k, dim=0)
                outs.append((top.values.T.to(torch.int32), top.indices.T))
                del counts, Q
            return outs

        run()  # warm-up
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        times = []
        for _ in range(3):
            torch.cuda.synchronize()
            t = time.perf_counter()
            run()
            torch.cuda.synchronize()
            times.append(time.perf_counter() - t)
        secs = sorted(times)[1]
        peak = torch.cuda.max_memory_allocated() - index_bytes
        per_query_mb = peak / min(nq, a.batch) / 1e6
        postings = nq * d * (n / v)
        rows.append((nq, secs, nq / secs, postings / secs / 1e9, per_query_mb))
    print(f"\n{'backend':<34} {'q':>6} {'wall_s':>8} {'q/s':>9} {'Gpost/s':>8} {'MB/q':>8}")
    for nq, secs, qps, gps, mb in rows:
        print(f"{'pytorch spmm+topk (' + torch.__version__ + ')':<34} {nq:>6} {secs:>8.3f} {qps:>9.0f} {gps:>8.2f} {mb:>8.2f}")
    if a.csv:
        with open(a.csv, "w") as f:
            f.write("device,torch,objects,dims,values,k,queries,batch,wall_s,qps,gpostings_per_s,mb_per_query\n")
            for nq, secs, qps, gps, mb in rows:
                f.write(f"{torch.cuda.get_device_name()},{torch.__version__},{n},{d},{v},{a.k},{nq},{a.batch},{secs:.6f},{qps:.1f},{gps:.4f},{mb:.3f}\n")


# ---- --load: the workloads genie-bench --mode suite --dump wrote ---------------------------------

DUMP_FORMAT = "genie-peer-dump 1"


def workload_dirs(paths):
    """Each path is a workload folder (it holds meta.json) or a root of such folders."""
    out = []
    for p in paths:
        if os.path.isfile(os.path.join(p, "meta.json")):
            out.append(p)
            continue
        try:
            subs = sorted(d for d in os.listdir(p) if os.path.isfile(os.path.join(p, d, "meta.json")))
        except OSError as e:
            sys.exit(f"{p}: expected a folder written by genie-bench --mode suite --dump ({e.strerror})")
        if not subs:
            sys.exit(f"{p}: expected meta.json, or folders that hold one (genie-bench --mode suite --dump)")
        out += [os.path.join(p, d) for d in subs]
    return out


def load_array(np, folder, name, dtype, shape):
    """An .npy array of the dump, checked: dtype and shape (None: any length)."""
    path = os.path.join(folder, name)
    try:
        arr = np.load(path, allow_pickle=False)
    except (OSError, ValueError) as e:
        sys.exit(f"{path}: cannot read as .npy: {e}")
    if arr.dtype != np.dtype(dtype):
        sys.exit(f"{path}: expected dtype {np.dtype(dtype).str}, found {arr.dtype.str}")
    if len(arr.shape) != len(shape) or any(w is not None and w != g for w, g in zip(shape, arr.shape)):
        sys.exit(f"{path}: expected shape {tuple('any' if w is None else w for w in shape)}, found {arr.shape}")
    return arr


def load_workload(np, folder):
    path = os.path.join(folder, "meta.json")
    try:
        with open(path) as f:
            meta = json.load(f)
    except (OSError, ValueError) as e:
        sys.exit(f"{path}: cannot read: {e}")
    if meta.get("format") != DUMP_FORMAT:
        sys.exit(f"{path}: expected format {DUMP_FORMAT!r}, found {meta.get('format')!r}")
    n, u, nnz, nq, k = (meta[key] for key in ("num_objects", "keyword_space", "num_postings", "queries", "k"))
    if n >= 2**31:
        sys.exit(f"{path}: expected fewer than 2^31 objects (ids are read as int32), found {n}")
    w = {
        "meta": meta,
        "offsets": load_array(np, folder, "offsets.npy", "<u8", (u + 1,)),
        "postings": load_array(np, folder, "postings.npy", "<u4", (nnz,)),
        "items": load_array(np, folder, "query_items.npy", "<u4", (None, 3)),
        "start": load_array(np, folder, "query_start.npy", "<u8", (nq + 1,)),
        "counts": load_array(np, folder, "genie_counts.npy", "<u4", (nq, k)),
    }
    off, start = w["offsets"], w["start"]
    if off[0] != 0 or off[-1] != nnz or (off[1:] < off[:-1]).any():
        sys.exit(f"{folder}/offsets.npy: expected offsets rising from 0 to {nnz}")
    if start[0] != 0 or start[-1] != len(w["items"]) or (start[1:] < start[:-1]).any():
        sys.exit(f"{folder}/query_start.npy: expected starts rising from 0 to {len(w['items'])}")
    return w


def build_index(np, w, dev):
    """The objects x keywords incidence matrix A (CSR, int64 indices, values 1.0) on the device,
    transposed from the dump's keywords x objects CSR. The transposition is the stable sort of the
    (object, keyword) pairs by object that COO .to_sparse_csr() performs, done on the postings alone
    (keywords follow as the permutation): the same matrix without the int64 (object, keyword) pairs
    and their sort, which matters for 1 G postings."""
    meta = w["meta"]
    n, u, nnz = meta["num_objects"], meta["keyword_space"], meta["num_postings"]
    post = torch.from_numpy(w["postings"].view(np.int32)).to(dev)
    # the keyword of every posting: a running count of the list starts passed (int32 throughout;
    # repeat_interleave would hold an int64 index of every posting)
    starts = torch.from_numpy(w["offsets"][1:u].view(np.int64)).to(dev)
    kw = torch.zeros(nnz + 1, device=dev, dtype=torch.int32)
    kw.index_add_(0, starts, torch.ones(len(starts), device=dev, dtype=torch.int32))
    kw = torch.cumsum(kw[:nnz], 0, dtype=torch.int32)
    del starts
    obj, perm = torch.sort(post, stable=True)  # within an object, keywords stay ascending
    del post
    col = kw[perm].to(torch.int64)
    del kw, perm
    crow = torch.searchsorted(obj, torch.arange(n + 1, device=dev, dtype=torch.int32))
    del obj
    A = torch.sparse_csr_tensor(crow, col, torch.ones(nnz, device=dev), size=(n, u), check_invariants=False)
    index_bytes = crow.numel() * 8 + col.numel() * 8 + nnz * 4
    return A, index_bytes


def query_matrix(items, start, s, e, u, dev):
    """The dense keywords x batch matrix of queries s..e-1: Q[kw, j] = the sum of the weights of
    query s+j's items whose range lo..hi covers kw (ranges clipped to the keyword space, as genie
    does). items: (n_items, 3) int64 on the device; start: the NumPy query starts (int64)."""
    a, b = int(start[s]), int(start[e])
    it = items[a:b]
    per_query = torch.from_numpy(start[s + 1 : e + 1] - start[s:e]).to(dev)
    qid = torch.repeat_interleave(torch.arange(e - s, device=dev), per_query, output_size=b - a)
    lo, hi = it[:, 0], it[:, 1].clamp(max=u - 1)
    lens = (hi - lo + 1).clamp(min=0)
    total = int(lens.sum())
    first = torch.cumsum(lens, 0) - lens  # where each item's keywords start in the expansion
    kw = torch.arange(total, device=dev) + torch.repeat_interleave(lo - first, lens, output_size=total)
    col = torch.repeat_interleave(qid, lens, output_size=total)
    wt = torch.repeat_interleave(it[:, 2].to(torch.float32), lens, output_size=total)
    Q = torch.zeros((u, e - s), device=dev)
    Q.index_put_((kw, col), wt, accumulate=True)
    return Q


def search_all(A, items, start, nq, u, k, batch, dev):
    """Top-k counts of every query, batch by batch: (k, batch) float32 tensors."""
    outs = []
    for s in range(0, nq, batch):
        e = min(nq, s + batch)
        Q = query_matrix(items, start, s, e, u, dev)
        counts = A @ Q  # objects x batch, float32 (exact for counts below 2^24)
        del Q
        outs.append(torch.topk(counts, k, dim=0).values)
        del counts
    return outs


def run_workload(np, folder, a, dev):
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
    t = time.perf_counter()
    w = load_workload(np, folder)
    meta = w["meta"]
    name, n, u, nnz, nq, k = (meta[key] for key in ("workload", "num_objects", "keyword_space", "num_postings", "queries", "k"))
    read_s = time.perf_counter() - t
    t = time.perf_counter()
    A, index_bytes = build_index(np, w, dev)
    items = torch.from_numpy(w["items"].astype(np.int64)).to(dev)
    start = w["start"].view(np.int64)
    want = w["counts"].astype(np.int64)
    del w
    sync()
    build_s = time.perf_counter() - t
    print(f"{name}: {n} objects, {u} keywords, {nnz} postings, {nq} queries, k = {k}; read in {read_s:.1f} s, "
          f"index built on {dev} in {build_s:.1f} s ({index_bytes / 1e9:.2f} GB)", flush=True)

    notes = []
    batch = max(1, min(a.batch, nq))
    while True:
        oom = False
        try:
            outs = search_all(A, items, start, nq, u, k, batch, dev)  # warm-up, and the counts checked
            sync()
        except torch.cuda.OutOfMemoryError:
            oom = True
        if not oom:
            break
        outs = None
        torch.cuda.empty_cache()
        if batch == 1:
            sys.exit(f"{name}: one query does not fit in the device memory")
        notes.append(f"{name}: a batch of {batch} queries ran out of device memory; sub-batches of {batch // 2}")
        print(notes[-1], flush=True)
        batch //= 2
    got = torch.cat([v.T for v in outs]).round().to(torch.int64).cpu().numpy()
    del outs
    same = (got == want).all(axis=1)
    equal = int(same.sum())
    for q in np.flatnonzero(~same)[:3]:
        j = int(np.flatnonzero(got[q] != want[q])[0])
        notes.append(f"{name}: query {q} differs from genie first at rank {j}: "
                     f"peer {got[q][j:j + 5].tolist()}, genie {want[q][j:j + 5].tolist()}")
    if equal < nq:
        notes.append(f"{name}: top-k counts equal genie's on {equal} of {nq} queries")

    if dev.type == "cuda":
        torch.cuda.empty_cache()
        base = torch.cuda.memory_allocated()
        torch.cuda.reset_peak_memory_stats()
    times = []
    for _ in range(3):
        sync()
        t = time.perf_counter()
        search_all(A, items, start, nq, u, k, batch, dev)
        sync()
        times.append(time.perf_counter() - t)
    secs = sorted(times)[1]
    mb = (torch.cuda.max_memory_allocated() - base) / batch / 1e6 if dev.type == "cuda" else None
    del A, items
    if dev.type == "cuda":
        torch.cuda.empty_cache()
    return {
        "workload": name, "objects": n, "keywords": u, "postings": nnz, "k": k, "queries": nq,
        "batch": batch, "index_gb": index_bytes / 1e9, "build_s": build_s,
        "s_per_1024": secs * 1024 / nq, "qps": nq / secs, "mb_per_query": mb, "counts_equal": equal,
    }, notes


def loaded(a):
    import warnings

    import numpy as np

    warnings.filterwarnings("ignore", message="Sparse CSR tensor support is in beta state")

    dev = torch.device(a.device)
    name = torch.cuda.get_device_name(dev) if dev.type == "cuda" else "cpu"
    print(f"device: {name}  torch {torch.__version__}", flush=True)
    rows, notes = [], []
    for folder in workload_dirs(a.load):
        row, note = run_workload(np, folder, a, dev)
        rows.append(row)
        notes += note
    print(f"\n{'workload':<16} {'objects':>9} {'postings':>11} {'queries':>7} {'batch':>5} {'index_GB':>8} "
          f"{'s/1024q':>8} {'q/s':>8} {'MB/q':>8} {'counts=genie':>12}")
    for r in rows:
        mb = "-" if r["mb_per_query"] is None else f"{r['mb_per_query']:.2f}"
        eq = f"{r['counts_equal']}/{r['queries']}"
        print(f"{r['workload']:<16} {r['objects']:>9} {r['postings']:>11} {r['queries']:>7} {r['batch']:>5} "
              f"{r['index_gb']:>8.2f} {r['s_per_1024']:>8.4f} {r['qps']:>8.0f} {mb:>8} {eq:>12}")
    for line in notes:
        print(line)
    if a.csv:
        with open(a.csv, "w") as f:
            f.write("device,torch,workload,objects,keyword_space,postings,k,queries,batch,index_gb,build_s,"
                    "s_per_1024_queries,qps,mb_per_query,counts_equal\n")
            for r in rows:
                mb = "" if r["mb_per_query"] is None else f"{r['mb_per_query']:.3f}"
                f.write(f"{name},{torch.__version__},{r['workload']},{r['objects']},{r['keywords']},{r['postings']},"
                        f"{r['k']},{r['queries']},{r['batch']},{r['index_gb']:.3f},{r['build_s']:.2f},"
                        f"{r['s_per_1024']:.5f},{r['qps']:.1f},{mb},{r['counts_equal']}\n")
    if any(r["counts_equal"] < r["queries"] for r in rows):
        sys.exit(1)


if __name__ == "__main__":
    main()
