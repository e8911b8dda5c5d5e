#!/usr/bin/env python3
"""Times genie.dask: the issue-3 keyword workload (SIFT-like signatures: N objects of 128
dimensions with 64 values each, keyword d*64+v, from a seed; or a workload written by
`genie-bench --mode write-keywords --out DIR`: offsets.npy, keywords.npy, queries.txt) sharded
over W dask workers, searched, checked identical to one index over all the data, one line per W
and layout (--layouts: `sharded`, one shard per worker; `replicated`, one shard held by every
worker, the queries dealt among them):

    python bench/dask_search.py --objects 200000 --queries 1024 --k 100 --workers 1,2,4,8,16
    python bench/dask_search.py --objects 1000000 --queries 8192 --workers 1,2 --gpus --device gpu

    dask_search,workers=W,shards=S,layout=...,device=...,objects=...,queries=...,k=...,seconds=...,qps=...,merge_s=...,shard_s=...,broadcast_bytes=...,result_bytes=...,identical=...

seconds: the median of --repeats searches of all the queries (after a warm-up), from the call to
the merged answer (the broadcast, the shards' searches, the transfer of their top-k and the
merge); merge_s: the merges' part; shard_s: the busiest worker's own search; broadcast_bytes:
the queries sent (each chunk to the workers that search it); result_bytes: what the shards send
back (nq x k x (count, id[, distance]) per shard). The
workers run in processes (one thread each; each process's search uses cores / W threads, or
with --gpus and --gpu-threads all every core); --gpus gives worker i the GPU i alone
(CUDA_VISIBLE_DEVICES=i) and this process GPU 0. The reference is one genie index in this
process, searched on --device (skip with --no-check). Past 2 shards each --merge way is timed
(tree: pairs merged on the workers; client: all in the client). With --workload and --streamed P,
one GPU also searches the same index built in P parts, streamed through it at every search (the
single GPU an index larger than its memory leaves):

    streamed_parts,parts=P,device=...,queries=...,k=...,build_s=...,seconds=...,qps=...,identical=...
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time

import numpy as np

DIMS, VALUES = 128, 64
CHUNK = 6_250  # rows per partition (the sweep's 200,000 objects make 32)


def signatures(start: int, stop: int, seed: int) -> np.ndarray:
    """Objects start..stop of the seeded workload: keywords d*64+v, one row per object."""
    rng = np.random.default_rng([seed, start])
    v = rng.integers(0, VALUES, size=(stop - start, DIMS), dtype=np.uint32)
    return v + np.arange(DIMS, dtype=np.uint32) * VALUES


def rows_of(path: str, start: int, stop: int, width: int) -> np.ndarray:
    """Objects start..stop of a write-keywords workload, as rows of ``width`` keywords."""
    kw = np.load(path, mmap_mode="r")
    return np.asarray(kw[start * width:stop * width], dtype=np.uint32).reshape(-1, width)


def queries_of(n: int, nq: int, seed: int) -> np.ndarray:
    """Each query an object of the workload with a quarter of its dimensions moved by one value."""
    rng = np.random.default_rng([seed, 1 << 40])
    rows, chunks = [], {}
    for obj in rng.integers(0, n, size=nq):
        start = obj // CHUNK * CHUNK
        if start not in chunks:
            chunks[start] = signatures(start, min(start + CHUNK, n), seed)
        r = chunks[start][obj - start].copy()
        d = rng.choice(DIMS, size=DIMS // 4, replace=False)
        vals = (r[d] % VALUES + rng.choice([1, VALUES - 1], size=len(d))) % VALUES
        r[d] = d.astype(np.uint32) * VALUES + vals.astype(np.uint32)
        rows.append(r)
    return np.stack(rows)


def cluster(workers: int, gpus: bool, threads: int):
    from distributed import Client, Nanny, Scheduler, SpecCluster

    spec = {}
    for i in range(workers):
        env = {"RAYON_NUM_THREADS": str(threads)}
        if gpus:
            env["CUDA_VISIBLE_DEVICES"] = str(i)
        # no memory limit: a shard of the 10 M-object workload outgrows dask's default share
        spec[f"w{i}"] = {"cls": Nanny, "options": {"nthreads": 1, "env": env, "memory_limit": 0,
                                                   "dashboard_address": None}}
    sched = {"cls": Scheduler, "options": {"dashboard_address": None}}
    c = SpecCluster(workers=spec, scheduler=sched, silence_logs=40)
    client = Client(c, timeout=120)
    client.wait_for_workers(workers, timeout=300)
    return c, client


def identical(got, want):
    """Whether a search's answers equal the reference's ("unchecked" without one)."""
    if want is None:
        return "unchecked"
    return bool((got[0] == want[0]).all() and (got[1] == want[1]).all())


def run(client, layout, w, threads, data, queries, nq, n, want, args) -> None:
    from genie.dask import DistributedIndex

    with tempfile.TemporaryDirectory(prefix="genie-dask-", dir=args.dir) as tmp:
        t = time.perf_counter()
        index = DistributedIndex.build(client, data(), kind="keywords", path=tmp,
                                       device=args.device,
                                       shards=1 if layout == "replicated" else None)
        build = time.perf_counter() - t
        shards = len(index.shards)
        merges_of = args.merge.split(",") if shards > 2 else ["client"]
        ways = [(how, int(p)) for how in merges_of for p in args.pipeline.split(",")]
        for how, pipeline in ways:  # tree: pairs merged on the workers; client: in the client
            index.tree_merge = 2 if how == "tree" else shards
            index.pipeline = pipeline
            got = index.search(queries, args.k, device=args.device)  # warm-up
            times, merges, shard = [], [], []
            for _ in range(args.repeats):
                got = index.search(queries, args.k, device=args.device)
                times.append(index.last_search["seconds"])
                merges.append(index.last_search["merge_s"])
                shard.append(index.last_search["shard_s"])
            same = identical(got, want)
            sec = statistics.median(times)
            print(f"dask_search,workers={w},shards={shards},layout={layout},device={args.device},"
                  f"objects={n},queries={nq},k={args.k},merge={how},threads={threads},"
                  f"pipeline={pipeline},"
                  f"build_s={build:.2f},seconds={sec:.4f},qps={nq / sec:.0f},"
                  f"merge_s={statistics.median(merges):.4f},"
                  f"shard_s={statistics.median(shard):.4f},"
                  f"broadcast_bytes={index.last_search['broadcast_bytes']},"
                  f"result_bytes={nq * args.k * 12 * shards},identical={same}", flush=True)
        index.close()


def streamed(args, queries, nq, want) -> None:
    """One GPU streaming the workload's index in ``--streamed`` parts (built by the genie
    program, $GENIE_BIN, with --parts; uploaded part by part at every search), searched in this
    process as the shards are."""
    import subprocess

    import genie

    with tempfile.TemporaryDirectory(prefix="genie-parted-", dir=args.dir) as tmp:
        path = os.path.join(tmp, "parted.genie")
        t = time.perf_counter()
        subprocess.run([os.environ.get("GENIE_BIN", "genie"), "--quiet", "build", "--input",
                        args.workload, "--output", path, "--parts", str(args.streamed)],
                       check=True)
        build = time.perf_counter() - t
        index = genie.load(path)
        got = index.search(queries, args.k, device=args.device)  # warm-up
        times = []
        for _ in range(args.repeats):
            t = time.perf_counter()
            got = index.search(queries, args.k, device=args.device)
            times.append(time.perf_counter() - t)
        same = identical(got, want)
        sec = statistics.median(times)
        print(f"streamed_parts,parts={args.streamed},device={args.device},queries={nq},"
              f"k={args.k},build_s={build:.2f},seconds={sec:.4f},qps={nq / sec:.0f},"
              f"identical={same}", flush=True)
        del index


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--objects", type=int, default=200_000)
    p.add_argument("--queries", type=int, default=1024)
    p.add_argument("--k", type=int, default=100)
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--workload", help="a folder of genie-bench --mode write-keywords")
    p.add_argument("--workers", default="1,2", help="worker counts, e.g. 1,2,4,8,16")
    p.add_argument("--gpus", action="store_true", help="worker i sees GPU i alone")
    p.add_argument("--device", default="cpu", help="cpu or gpu (each worker's own GPU)")
    p.add_argument("--layouts", default="sharded,replicated",
                   help="sharded (a shard per worker), replicated (one shard on every worker)")
    p.add_argument("--repeats", type=int, default=3)
    p.add_argument("--dir", help="where the shards go (default: a temporary folder)")
    p.add_argument("--no-check", action="store_true", help="skip the single-index reference")
    p.add_argument("--merge", default="tree,client",
                   help="past 2 shards, the merges timed: tree (pairs on the workers), client")
    p.add_argument("--pipeline", default="2",
                   help="query chunks a holder in one search (DistributedIndex.pipeline), e.g. 2,4")
    p.add_argument("--gpu-threads", default="share",
                   help="with --gpus, each worker's search threads: share (cores / W) or all")
    p.add_argument("--streamed", type=int, default=0,
                   help="with --workload, also time one GPU streaming the index in this many "
                        "parts")
    args = p.parse_args()
    if args.gpus:  # this process's searches (the reference, the streamed index): GPU 0 alone
        os.environ["CUDA_VISIBLE_DEVICES"] = "0"

    import dask
    import dask.array as da

    import genie

    if args.workload:
        offsets = np.load(os.path.join(args.workload, "offsets.npy"))
        keywords = np.load(os.path.join(args.workload, "keywords.npy"))
        width = int(offsets[1] - offsets[0])
        if not (np.diff(offsets) == width).all():
            sys.exit("the workload's objects differ in length; this script takes rows of one")
        n = len(offsets) - 1
        kw_path = os.path.abspath(os.path.join(args.workload, "keywords.npy"))

        step = max(CHUNK, -(-n // 64))  # at most 64 partitions

        def data():  # each worker reads its partitions from the file (memory-mapped)
            return da.concatenate([
                da.from_delayed(dask.delayed(rows_of)(kw_path, s, min(s + step, n), width),
                                shape=(min(s + step, n) - s, width), dtype=np.uint32)
                for s in range(0, n, step)])
        queries = genie.read_queries(os.path.join(args.workload, "queries.txt"))
        nq = len(queries[0]) - 1
        reference = lambda: genie.Index.from_keywords((offsets, keywords))  # noqa: E731
    else:
        n = args.objects
        starts = list(range(0, n, CHUNK))

        def data():
            blocks = [da.from_delayed(dask.delayed(signatures)(s, min(s + CHUNK, n), args.seed),
                                      shape=(min(s + CHUNK, n) - s, DIMS), dtype=np.uint32)
                      for s in starts]
            return da.concatenate(blocks)

        qrows = queries_of(n, args.queries, args.seed)
        nq = len(qrows)
        queries = (np.arange(nq + 1, dtype=np.uint64) * DIMS, qrows.ravel())

        def reference():
            kw = np.concatenate([signatures(s, min(s + CHUNK, n), args.seed) for s in starts])
            return genie.Index.from_keywords(
                (np.arange(n + 1, dtype=np.uint64) * DIMS, kw.ravel()))

    want = None
    if not args.no_check:
        one = reference()
        one.search(queries, args.k, device=args.device)
        t = time.perf_counter()
        want = one.search(queries, args.k, device=args.device)
        single = time.perf_counter() - t
        print(f"single_index,device={args.device},objects={n},queries={nq},k={args.k},"
              f"seconds={single:.4f},qps={nq / single:.0f}", flush=True)
        del one
    if args.streamed and args.workload:
        streamed(args, queries, nq, want)
    cores = os.cpu_count() or 1
    for w in [int(x) for x in args.workers.split(",")]:
        threads = max(1, cores // w) if not args.gpus or args.gpu_threads == "share" else cores
        c, client = cluster(w, args.gpus, threads)
        try:
            layouts = args.layouts.split(",") if w > 1 else ["sharded"]
            for layout in layouts:
                run(client, layout, w, threads, data, queries, nq, n, want, args)
        finally:
            client.close(timeout=60)
            c.close(timeout=60)


if __name__ == "__main__":
    main()
