"""genie on a Dask cluster: one shard per worker, searched where it lies, the shards' top-k merged
exactly into the answer of one index over all the data.

::

    from dask.distributed import Client, LocalCluster
    import dask.bag as db
    from genie.dask import DistributedIndex

    client = Client(LocalCluster(n_workers=4, threads_per_worker=1))
    objects = db.from_sequence([[1, 4, 7], [2, 4, 8], [4, 8, 9], [1, 8]], npartitions=4)
    index = DistributedIndex.build(client, objects, kind="keywords", path="/shared/idx")
    counts, ids = index.search([[4, 8]], k=2)      # as genie.Index.search over all four objects

**Data.** A dask bag (keyword lists, strings, vectors), a dask array (rows: vectors, or keyword
rows of equal length) or a dask dataframe (table rows; or one column of strings). The global
object ids are the data's order (partition by partition). Each worker builds one shard of the
partitions it holds (they are computed, or already persisted, there and not moved), so a shard
may hold several runs of ids; its local ids map to global ids by an increasing map, which keeps
the tie order (id ascending) of one index.

**Storage.** Each shard is saved, with its side files, in ``path`` (``shard-NNNNN.genie``) with a
``manifest.json`` that records the kind, the parameters and, per shard, its file and id runs. The
path must be one that every worker can reach: a shared file system (NFS, Lustre, a cloud file
system mount) on a cluster, any local folder on a LocalCluster. Shared storage is what lets a
replacement worker on another node reload the shard of one that died; worker-local disks would
lose the shard with its node. :meth:`DistributedIndex.open` reopens an index from its manifest.

**Residency.** A worker keeps its shard open (memory-mapped, placed on its device by the first
search) in a per-process cache keyed by the shard's file, between searches; tasks for a shard are
pinned to its worker. A plain cache, rather than a dask actor, because a task that finds the
cache empty (a new worker) reloads the shard from its file, so the replacement path is the
ordinary path.

**Search.** The queries are scattered once per call to every worker (``broadcast=True``); each
worker searches its shard for the global ``k`` (``k + 2`` for tables, whose two range rows are
dropped; the ``candidates`` of the global search for vectors); the answers are merged: count
descending then id ascending, or distance ascending, count descending, id ascending for vectors
and sequences. Vectors merge in two steps, as one index searches: the global top ``candidates``
by count, then those re-ranked by distance. The queries go in chunks, so that merging one chunk
overlaps searching the next. With up to ``tree_merge`` (4) shards the client merges each chunk's
answers as they come in; with more, the workers merge them in pairs, a tree whose root alone
comes to the client, so the client's share does not grow with the shards. A merge of counts runs
in the extension, over all the cores.

**Faults.** The client keeps the shard-to-file map. When a worker leaves during a search (its
process died; the nanny starts a replacement), the search tasks of its shards are cancelled and
sent to a worker that holds no shard (the replacement, waited for up to ``replace_timeout``
seconds), else to the least loaded one; that worker loads the shard from its file. Each shard
gives exactly one result per search (a late duplicate is never merged), so nothing is lost or
counted twice. A missing or corrupted shard file is an error naming the shard and its file.

**Identical to one index.** Keywords and documents: always. Tables: each shard is built over the
global range of each numeric column (two extra rows at its end, never returned) and with the
columns of non-numeric dtype forced categorical, so the intervals are those of one index.
Vectors: the hash functions must be the same in every shard, so the build fixes ``functions``,
``width`` and ``candidates`` (those given, else the ones the tuning chose on the first shard;
``params`` says them): the answers are those of one :class:`genie.VectorIndex` built with these
(``codebook`` indexes are not sharded). Sequences: whenever the answers are proven exact
(Theorem 5.2; ``exhaustive=True`` forces it), as both are then the true top-k.
"""

from __future__ import annotations

import json
import os
from concurrent.futures import CancelledError
import time
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from . import _queries as q
from ._merge import _merge, _stack
from ._workers import (_build_shard, _drop_shards, _merge_pair, _open_shard, _resident,
                       _search_shard, _seconds, _shard_name)

MANIFEST = "manifest.json"
#: rows appended to each table shard (the global minimum and maximum of each numeric column)
TABLE_RANGE_ROWS = 2
#: the k the vector tuning aims at (genie_lsh::tuning::TUNE_K)
_TUNE_K = 10

def _vector_candidates(meta: Dict[str, Any], k: int) -> int:
    """The candidates one index re-ranks for ``k`` hits when a search asks for none
    (genie_lsh's ``IndexMetadata::default_candidates``, for an index built with explicit
    candidates)."""
    c = meta.get("candidates")
    if c is None:
        return max(20 * k, 200)
    return max(c, -(-c * k // _TUNE_K), k)


# ---------------------------------------------------------------------------------------------
# the client


def _kinds() -> Tuple[str, ...]:
    """The kinds the extension's registry knows (not a list of its own)."""
    from ._genie import kinds

    return tuple(kinds())


def _partitions(data: Any) -> List[Any]:
    """The partitions of a dask collection as delayed objects, in order."""
    if hasattr(data, "chunks") and hasattr(data, "rechunk"):  # dask array
        if data.ndim == 2 and len(data.chunks[1]) > 1:
            data = data.rechunk({1: -1})
        return list(np.asarray(data.to_delayed()).ravel())
    if hasattr(data, "to_delayed"):  # bag, dataframe, series
        return list(data.to_delayed())
    raise TypeError(
        f"data: expected a dask bag, array or dataframe, found {type(data).__name__}")


def _spread(lengths: Sequence[int], holder: Sequence[str], workers: Sequence[str],
            shards: Optional[int] = None) -> Dict[str, List[int]]:
    """Partitions cut into contiguous runs of about equal objects, one per worker (or
    ``shards`` of them), each run given to the worker holding most of its objects."""
    total = int(sum(lengths))
    n = max(1, min(shards or len(workers), len(workers), sum(1 for x in lengths if x > 0)))
    runs: List[List[int]] = [[] for _ in range(n)]
    done = 0
    for p, m in enumerate(lengths):
        if m > 0:
            r = min(n - 1, (done + m // 2) * n // max(total, 1))
            runs[r].append(p)
            done += m
    runs = [r for r in runs if r]
    held = []
    for r, ps in enumerate(runs):
        for w in workers:
            objs = sum(lengths[p] for p in ps if holder[p] == w)
            held.append((-objs, r, w))
    groups: Dict[str, List[int]] = {}
    taken = set()
    for _, r, w in sorted(held):
        if r not in taken and w not in groups:
            groups[w] = runs[r]
            taken.add(r)
    return groups


def _replicas(owners: Sequence[str], workers: Sequence[str]) -> List[List[str]]:
    """Per shard, the workers that hold it: its owner first, then the workers that own no shard
    dealt in turn (a shard's replicas share its queries)."""
    holders = [[w] for w in owners]
    spare = [w for w in sorted(workers) if w not in set(owners)]
    for j, w in enumerate(spare):
        holders[j % len(holders)].append(w)
    return holders


def _slice(queries: Any, a: int, b: int) -> Any:
    """Queries ``a..b`` of the form :meth:`DistributedIndex._queries` makes."""
    if isinstance(queries, tuple):  # a CSR: offsets, then arrays of items
        o = queries[0]
        lo, hi = int(o[a]), int(o[b])
        return (o[a:b + 1] - o[a],) + tuple(x[lo:hi] for x in queries[1:])
    return queries[a:b]


def _count(queries: Any) -> int:
    return len(queries[0]) - 1 if isinstance(queries, tuple) else len(queries)


def _partition_range(part: Any) -> Dict[str, Tuple[Any, Any]]:
    out = {}
    for col in part.columns:
        if part[col].dtype.kind in "iuf":
            s = part[col].dropna()
            if len(s):
                out[col] = (s.min(), s.max())
    return out


class DistributedIndex:
    """An index sharded over the workers of a dask cluster; see the module's documentation."""

    def __init__(self, client: Any, path: str, manifest: Dict[str, Any],
                 holders: List[List[str]]) -> None:
        self.client = client
        self.path = path
        self._manifest = manifest
        #: per shard, the workers holding it (a shard's queries are dealt among them)
        self._holders = [list(h) for h in holders]
        self.replace_timeout = 60.0
        self.poll = 0.25
        #: how many times one search moves a task whose worker left before it gives up
        self.max_moves = 3
        #: query chunks per holder in one search: the client merges a chunk's answers while the
        #: workers search the next ones (4 H200s, 65,536 queries, 4 replicas: 77,350 queries a
        #: second at 4, 69,466 at 2; the same at 1 and 2 workers)
        self.pipeline = 4
        #: past this many shards, a chunk's answers are merged in pairs on the workers (a tree)
        #: rather than all in the client. At 4 shards the client's merge was the faster (53,143
        #: against 49,902 queries a second on 4 H200s: a tree's levels add their transfers to the
        #: last chunk); the client's share grows with the shards, the tree's levels as their log.
        self.tree_merge = 4
        #: what the last search measured: seconds (all of it), merge_s (the merges), shard_s
        #: (the busiest worker's own search), broadcast_bytes (queries sent), chunks, reassigned
        #: (tasks moved and shards given to new workers)
        self.last_search: Dict[str, Any] = {}

    # -- what it is

    @property
    def kind(self) -> str:
        return self._manifest["kind"]

    @property
    def num_objects(self) -> int:
        return self._manifest["objects"]

    def __len__(self) -> int:
        return self.num_objects

    @property
    def params(self) -> Dict[str, Any]:
        """The build parameters every shard was built with."""
        return {k: v for k, v in self._manifest["params"].items() if not k.startswith("_")}

    @property
    def shards(self) -> List[Dict[str, Any]]:
        """Per shard: its file, objects, id runs ``[local, global, length]``, the workers holding
        it (``workers``) and the first of them (``worker``)."""
        return [dict(s, file=self._file(i), worker=self._holders[i][0],
                     workers=list(self._holders[i]))
                for i, s in enumerate(self._manifest["shards"])]

    def _file(self, i: int) -> str:
        return os.path.join(self.path, self._manifest["shards"][i]["file"])

    def __repr__(self) -> str:
        return (f"<genie.dask.DistributedIndex of {self.num_objects} {self.kind} objects in "
                f"{len(self._holders)} shards>")

    # -- build and open

    @classmethod
    def build(cls, client: Any, data: Any, kind: str = "keywords", path: Optional[str] = None,
              device: Optional[str] = None, spread: bool = True, shards: Optional[int] = None,
              **params: Any) -> "DistributedIndex":
        """Builds one shard per worker holding partitions of ``data`` (a dask bag, array or
        dataframe), each where its partitions lie, saved under ``path`` (a folder every worker
        can reach; created). ``params``: the build options of the kind's class
        (:class:`genie.VectorIndex`'s ``lsh``, ``functions``, ``width``, ...; ``ngram``;
        ``bins``, ...). ``device``: where each shard is placed (default as genie's).

        ``spread`` (default): the partitions are cut into one run per worker of about equal
        objects, each run given to the worker that already holds most of it (partitions placed
        so, as dask places a collection's partitions, do not move). ``spread=False``: a shard
        per worker that holds partitions, of exactly those.

        ``shards``: fewer shards than workers (with ``spread``); the workers that build none
        hold replicas (loaded from the files), and a search deals each shard's queries among
        the workers holding it. An index that fits one worker's device searches fastest as one
        shard replicated on every worker: each query is then searched once, by one worker."""
        from distributed import wait

        if kind not in _kinds():
            raise ValueError(f"kind: expected one of {', '.join(_kinds())}, found {kind!r}")
        if path is None:
            raise ValueError("path: a folder every worker can reach is needed for the shards")
        path = os.path.abspath(os.fspath(path))
        os.makedirs(path, exist_ok=True)
        futures = client.compute(_partitions(data))
        wait(futures)
        for f in futures:
            if f.status == "error":
                f.result()
        lengths = client.gather(client.map(len, futures, pure=False))
        who = client.who_has(futures)
        holder = [sorted(who[f.key])[0] for f in futures]
        if shards is not None and (not spread or shards < 1):
            raise ValueError("shards: a number >= 1, with spread=True")
        workers = sorted(client.ncores())
        if spread:
            groups = _spread(lengths, holder, workers, shards)
        else:  # a shard per worker holding partitions, those partitions in order
            groups = {}
            for p, w in enumerate(holder):
                if lengths[p] > 0:
                    groups.setdefault(w, []).append(p)
        if not groups:
            raise ValueError("data: no objects")
        starts = np.concatenate([[0], np.cumsum(lengths)]).astype(np.int64)
        params = {k: v for k, v in params.items() if v is not None}
        if kind == "table":
            params = cls._table_params(client, data, futures, params)
        order = sorted(groups.items(), key=lambda g: g[1][0])
        if kind == "vectors":
            # the codebook (the default of one shard) is trained on its data: not sharded
            one = len(order) == 1
            params.setdefault("lsh", "codebook" if one else "e2lsh")
            if params["lsh"] == "codebook" and not one:
                raise ValueError("vectors: a codebook is trained on its data and is not sharded: "
                                 "build one shard (shards=1, replicated on every worker) or name "
                                 "an LSH family (lsh='e2lsh')")
        shards, owners = [], []
        for i, (w, ps) in enumerate(order):
            runs, local = [], 0
            for p in ps:
                if runs and runs[-1][1] + runs[-1][2] == starts[p]:
                    runs[-1][2] += int(lengths[p])
                else:
                    runs.append([local, int(starts[p]), int(lengths[p])])
                local += int(lengths[p])
            shards.append({"file": _shard_name(i), "objects": local, "runs": runs})
            owners.append(w)

        def submit(i: int, shard_params: Dict[str, Any]) -> Any:
            parts = [futures[p] for p in order[i][1]]
            return client.submit(_build_shard, i, os.path.join(path, shards[i]["file"]), kind,
                                 shard_params, device, *parts, workers=[owners[i]],
                                 allow_other_workers=False, pure=False)

        if kind == "vectors" and params["lsh"] != "codebook" and not all(
                p in params for p in ("functions", "width", "candidates")):
            # the first shard's tuning fixes the hash functions of all
            meta = submit(0, params).result()["metadata"]
            lsh = meta["params"]
            params = dict(params, functions=lsh["functions"], width=lsh["width"],
                          candidates=meta.get("candidates") or _vector_candidates({}, _TUNE_K))
        # (the first shard is built again with the parameters fixed, as the others are)
        client.gather([submit(i, params) for i in range(len(shards))])
        manifest = {"format": 1, "kind": kind, "objects": int(starts[-1]), "params": params,
                    "shards": shards}
        with open(os.path.join(path, MANIFEST), "w", encoding="utf-8") as f:
            json.dump(manifest, f, indent=1, default=_json_default)
        client.cancel(futures)
        self = cls(client, path, manifest, _replicas(owners, workers))
        self._load_replicas(device, skip_first=True)
        return self

    def _load_replicas(self, device: Optional[str], skip_first: bool = False) -> None:
        """Each shard loaded by the workers holding it (from its file; placed on ``device``)."""
        self.client.gather([
            self.client.submit(_open_shard, i, self._file(i), device, workers=[w],
                               allow_other_workers=False, pure=False)
            for i, h in enumerate(self._holders) for w in h[1 if skip_first else 0:]])

    @staticmethod
    def _table_params(client: Any, data: Any, futures: List[Any],
                      params: Dict[str, Any]) -> Dict[str, Any]:
        if not hasattr(data, "columns"):
            raise ValueError("table: expected a dask dataframe")
        ranges: Dict[str, Tuple[Any, Any]] = {}
        for part in client.gather(client.map(_partition_range, futures, pure=False)):
            for col, (lo, hi) in part.items():
                a, b = ranges.get(col, (lo, hi))
                ranges[col] = (min(a, lo), max(b, hi))
        given = set(_names(params.get("numeric"))) | set(_names(params.get("categorical")))
        dtypes = dict(data.dtypes.items())
        forced = [str(c) for c, t in dtypes.items()
                  if t.kind not in "iuf" and str(c) not in given]
        if forced:
            params["categorical"] = _names(params.get("categorical")) + forced
        params["_ranges"] = {str(c): [_py(lo), _py(hi)] for c, (lo, hi) in ranges.items()}
        return params

    @classmethod
    def open(cls, client: Any, path: str, device: Optional[str] = None) -> "DistributedIndex":
        """Opens the index saved under ``path`` by :meth:`build`: each shard loaded from its file
        (an error names a shard whose file is missing or not sound) by one worker, and by the
        spare workers in turn when there are more workers than shards."""
        path = os.path.abspath(os.fspath(path))
        try:
            with open(os.path.join(path, MANIFEST), encoding="utf-8") as f:
                manifest = json.load(f)
        except FileNotFoundError:
            raise FileNotFoundError(f"{path}: no {MANIFEST}, not a sharded genie index") from None
        workers = sorted(client.ncores())
        if not workers:
            raise RuntimeError("the cluster has no workers")
        n = len(manifest["shards"])
        owners = [workers[i % len(workers)] for i in range(n)]
        self = cls(client, path, manifest, _replicas(owners, workers))
        self._load_replicas(device)
        return self

    def close(self) -> None:
        """Drops the shards from the workers' memory (the files stay)."""
        files = [self._file(i) for i in range(len(self._holders))]
        self.client.run(_drop_shards, files)

    def resident(self) -> Dict[str, List[bool]]:
        """Per worker, which shards it holds in memory."""
        files = [self._file(i) for i in range(len(self._holders))]
        return self.client.run(lambda: [_resident(f) for f in files])

    # -- search

    def search(self, queries: Any, k: int, device: Optional[str] = None,
               min_count: Optional[int] = None, _pause: float = 0.0,
               **options: Any) -> Tuple[np.ndarray, np.ndarray]:
        """The top-``k`` of each query over all shards, as the kind's ``search`` of one index
        over all the data returns them: ``(counts, ids)``; ``(distances, ids)`` for vectors
        (float32) and sequences (int64), of shape ``(nq, min(k, num_objects))``. ``k``: a
        non-negative integer. ``options``: the kind's search options."""
        t0 = time.perf_counter()
        k = q.k_of(k, self.num_objects)
        kind = self.kind
        queries = self._queries(queries)
        shard_k = k
        by_distance = kind in ("vectors", "sequences")
        if kind == "table":
            shard_k = k + TABLE_RANGE_ROWS
        if kind == "vectors":
            c = options.get("candidates") or _vector_candidates(self._manifest["params"], k)
            shard_k = max(int(c), k)
            options = dict(options, candidates=shard_k)
        if kind == "vectors":  # the candidates by count, then re-ranked by distance
            inner = (shard_k, False)

            def final(top: Tuple[Any, ...]) -> Tuple[Any, Any, Any]:
                return _merge([(top[0], top[1], top[2], None)], k, True)
        else:
            inner = (k, by_distance)

            def final(top: Tuple[Any, ...]) -> Tuple[Any, Any, Any]:
                return top[0], top[1], top[2]
        counts, ids, dist = self._run(queries, shard_k, device, min_count, options, _pause,
                                      inner, final)
        self.last_search["seconds"] = time.perf_counter() - t0
        if kind == "vectors":
            return dist.astype(np.float32), ids
        if kind == "sequences":
            return np.where(ids >= 0, dist, -1).astype(np.int64), ids
        return counts.astype(np.uint32, copy=False), ids

    def _queries(self, queries: Any) -> Any:
        """The queries in the form each shard's search reads, made once on the client."""
        kind = self.kind
        if kind == "keywords":
            if isinstance(queries, (list, tuple)) and queries and all(
                    isinstance(x, str) for x in queries):
                return list(queries)
            o, lo, hi, w = q.keyword_items(queries)
            # plain keywords (each item's range one keyword, weight 1) travel as a CSR of them
            if lo is hi or (np.array_equal(lo, hi) and bool((w == 1).all())):
                return o, lo
            return o, lo, hi, w
        if kind == "vectors":
            x = q.aligned_rows(queries, np.float32)
            return x.reshape(1, -1) if x.ndim == 1 else x
        if kind == "table":
            if isinstance(queries, (str, dict)):
                queries = [queries]
            return q.lines([q.conditions(x) for x in queries], "query")
        return q.lines(queries, "query")

    def _run(self, queries: Any, k: int, device: Optional[str], min_count: Optional[int],
             options: Dict[str, Any], pause: float, inner: Tuple[int, bool],
             final: Any) -> Tuple[Any, Any, Any]:
        """The merged answers of all queries: the queries cut into chunks, each chunk searched
        on every shard by one of its holders (in turn). A chunk's answers are merged (``inner``:
        the top ``inner[0]`` by count, or by distance when ``inner[1]``; then ``final``) in the
        client as they come in, or, past :attr:`tree_merge` shards, in pairs on the workers
        (a tree: half the shards' answers move between workers, the client takes one answer a
        chunk). A search task whose worker left is moved to another holder of its shard, or to a
        new worker that loads the shard; in a tree, the chunk is searched again."""
        from dask.sizeof import sizeof
        from distributed import wait

        client = self.client
        reassigned = self._heal(set(client.ncores()), adopt=True)
        nq = _count(queries)
        per = max(len(h) for h in self._holders)
        n_chunks = max(1, min(nq, per * self.pipeline))
        bounds = [nq * j // n_chunks for j in range(n_chunks + 1)]
        chunks = [_slice(queries, bounds[j], bounds[j + 1]) for j in range(n_chunks)]
        shards = len(self._holders)
        tree = shards > self.tree_merge
        sent = 0
        sent_to: Dict[Tuple[int, str], Any] = {}

        def scatter(j: int, workers: Sequence[str]) -> None:
            nonlocal sent
            # (a chunk whose only copy was on a worker that left is lost: sent again)
            todo = [w for w in workers
                    if (j, w) not in sent_to or sent_to[(j, w)].status != "finished"]
            if todo:
                # (in a list: one future for the whole chunk, not one per query or array)
                f = client.scatter([chunks[j]], workers=todo, broadcast=True, hash=False)[0]
                sent += sizeof(chunks[j]) * len(todo)
                for w in todo:
                    sent_to[(j, w)] = f

        # a task: (chunk, the shards its answer covers, its worker); in a tree, a chunk's
        # finished answers not yet merged wait in `ready` (their data on their workers), and
        # `involved` holds the workers of every part of the chunk's tree so far
        pending: Dict[Any, Tuple[int, Tuple[int, ...], str]] = {}
        ready: Dict[int, List[Tuple[Any, Tuple[int, ...], str]]] = {}
        involved: Dict[int, set] = {}

        def submit(i: int, j: int, w: str) -> None:
            s = self._manifest["shards"][i]
            scatter(j, [w])
            f = client.submit(_search_shard, i, self._file(i), self.kind, s["objects"],
                              s["runs"], sent_to[(j, w)], k, device, min_count, options,
                              pause, workers=[w], allow_other_workers=False, pure=False)
            pending[f] = (j, (i,), w)
            involved.setdefault(j, set()).add(w)

        def search_chunk(j: int) -> None:
            scatter(j, sorted({h[j % len(h)] for h in self._holders}))
            for i, h in enumerate(self._holders):
                submit(i, j, h[j % len(h)])

        for j in range(n_chunks):  # chunk by chunk: the workers run their tasks in this order
            search_chunk(j)
        got: Dict[int, Dict[Tuple[int, ...], Any]] = {}
        merged: List[Any] = [None] * n_chunks
        busy: Dict[str, float] = {}
        moves: Dict[Tuple[int, int], int] = {}
        merge_s = 0.0

        def take(j: int, cov: Tuple[int, ...], w: str, part: Tuple[Any, ...]) -> None:
            nonlocal merge_s
            for sw, sec in _seconds(part, w):
                busy[sw] = busy.get(sw, 0.0) + sec
            got.setdefault(j, {})[cov] = part
            if sum(len(c) for c in got[j]) == shards:
                t = time.perf_counter()
                parts = [got[j][c] for c in sorted(got[j])]
                merged[j] = final(parts[0] if tree else _merge(parts, *inner))
                merge_s += time.perf_counter() - t
                del got[j]
                involved.pop(j, None)

        while pending:
            try:
                done = wait(list(pending), timeout=self.poll, return_when="FIRST_COMPLETED").done
            except TimeoutError:
                done = set()
            except CancelledError:  # its queries were lost with a worker: moved below
                done = {f for f in pending if f.done()}
            for f in done:
                j, cov, w = pending[f]
                if f.status == "error":
                    f.result()  # raises the shard's error
                if f.status != "finished":
                    continue  # cancelled: its worker left; moved below
                del pending[f]
                if not tree or len(cov) == shards:
                    take(j, cov, w, f.result())
                    continue
                nodes = ready.setdefault(j, [])
                nodes.append((f, cov, w))
                while len(nodes) >= 2:  # two answers of the chunk: merged where the first lies
                    (fa, ca, wa), (fb, cb, wb) = nodes.pop(0), nodes.pop(0)
                    m = client.submit(_merge_pair, fa, fb, wa, wb, *inner, workers=[wa],
                                      allow_other_workers=True, priority=1, pure=False)
                    pending[m] = (j, ca + cb, wa)
            alive = set(client.ncores())
            lost = [f for f, (_, _, w) in pending.items()
                    if w not in alive or f.status in ("cancelled", "lost")]
            if tree:  # a chunk whose tree lost a part is searched again
                redo = {pending[f][0] for f in lost} | {
                    j for j, ws in involved.items() if not ws <= alive}
                if not redo:
                    continue
                reassigned += self._heal(alive)
                for j in sorted(redo):
                    for f in [f for f, t in pending.items() if t[0] == j]:
                        f.cancel()
                        del pending[f]
                    for f, _, _ in ready.pop(j, []):
                        f.cancel()
                    involved.pop(j, None)
                    for i in range(shards):
                        self._count_move(moves, i, j)
                    search_chunk(j)
                    reassigned += 1
                continue
            if not lost:
                continue
            reassigned += self._heal(alive)
            for f in lost:
                j, (i,), w = pending[f]
                f.cancel()
                del pending[f]
                self._count_move(moves, i, j)
                h = self._holders[i]
                submit(i, j, h[j % len(h)])
                reassigned += 1
        t = time.perf_counter()
        answer = _stack(merged)
        merge_s += time.perf_counter() - t
        sent_to.clear()  # the chunks' copies released (not cancelled: tasks of theirs are done)
        self.last_search = {"merge_s": merge_s, "shard_s": max(busy.values(), default=0.0),
                            "broadcast_bytes": sent, "chunks": n_chunks,
                            "reassigned": reassigned, "tree": tree}
        return answer

    def _count_move(self, moves: Dict[Tuple[int, int], int], i: int, j: int) -> None:
        """Counts one more move of shard ``i``'s search of chunk ``j``; past :attr:`max_moves`
        the search gives up."""
        moves[(i, j)] = moves.get((i, j), 0) + 1
        if moves[(i, j)] > self.max_moves:
            raise RuntimeError(
                f"shard {i} ({self._file(i)}): its worker left {moves[(i, j)]} times "
                "during one search")

    def _heal(self, alive: set, adopt: bool = False) -> int:
        """Holders that left dropped; a shard left with none given to a new worker (which loads
        it from its file); with ``adopt``, each worker holding nothing made a holder of the
        shard with the fewest. Returns how many shards were given to a worker anew."""
        given = 0
        for i, h in enumerate(self._holders):
            h[:] = [w for w in h if w in alive]
            if not h:
                h.append(self._replacement(alive))
                given += 1
        if adopt:
            held = {w for h in self._holders for w in h}
            for w in sorted(alive - held):
                min(self._holders, key=len).append(w)
        return given

    def _replacement(self, alive: set) -> str:
        """A worker for a shard whose workers left: one that holds no shard (the replacement
        the nanny started), waited for; else the one holding the fewest."""
        deadline = time.monotonic() + self.replace_timeout
        while True:
            held = [w for h in self._holders for w in h]
            free = sorted(alive - set(held))
            if free:
                return free[0]
            if time.monotonic() >= deadline:
                break
            time.sleep(self.poll)
            alive = set(self.client.ncores())
        if not alive:
            raise RuntimeError("the cluster has no workers left")
        return min(sorted(alive), key=lambda w: held.count(w))


def _names(v: Any) -> List[str]:
    if v is None:
        return []
    if isinstance(v, str):
        return v.split(",")
    return [str(x) for x in v]


def _py(v: Any) -> Any:
    return v.item() if hasattr(v, "item") else v


def _json_default(v: Any) -> Any:
    if hasattr(v, "item"):
        return v.item()
    raise TypeError(f"not JSON: {type(v).__name__}")
