"""genie.dask: an index sharded over the workers of a LocalCluster (processes, one thread each)
answers as one index over all the data, for every kind; a worker killed in the middle of a search
is replaced and the answers stay complete and identical; a shard file missing or corrupted is an
error naming the shard."""

from __future__ import annotations

import os
import shutil
import signal
import threading
import time

import numpy as np
import pandas as pd
import pytest

import genie

distributed = pytest.importorskip("distributed")
db = pytest.importorskip("dask.bag")
da = pytest.importorskip("dask.array")
from genie.dask import DistributedIndex  # noqa: E402

from test_kinds import CONDITIONS, people, words  # noqa: E402

WORKERS = 3


@pytest.fixture(scope="module")
def client():
    cluster = distributed.LocalCluster(
        n_workers=WORKERS, threads_per_worker=1, processes=True, dashboard_address=None,
        worker_dashboard_address=None, death_timeout=60,
    )
    c = distributed.Client(cluster, timeout=60)
    c.wait_for_workers(WORKERS, timeout=60)
    yield c
    c.close(timeout=30)
    cluster.close(timeout=30)


def keyword_objects(n=900, seed=7):
    rng = np.random.default_rng(seed)
    # a small vocabulary: many ties in count, so the id order of ties is checked too
    return [rng.choice(60, size=rng.integers(1, 10), replace=False) for _ in range(n)]


def keyword_queries(nq=40, seed=8):
    rng = np.random.default_rng(seed)
    return [rng.choice(60, size=rng.integers(1, 8), replace=False) for _ in range(nq)]


def same(got, want):
    for g, w in zip(got, want):
        np.testing.assert_array_equal(g, w)
        assert g.dtype == w.dtype


def test_keywords_bag_and_array(client, device, tmp_path):
    objects, queries = keyword_objects(), keyword_queries()
    index = DistributedIndex.build(client, db.from_sequence(objects, npartitions=7),
                                   kind="keywords", path=tmp_path / "bag")
    assert len(index.shards) == WORKERS and index.num_objects == len(objects)
    assert len({s["worker"] for s in index.shards}) == WORKERS
    one = genie.Index.from_keywords(objects)
    for k in (1, 5, 50):
        same(index.search(queries, k, device=device), one.search(queries, k, device=device))
    # a k beyond the objects: as many columns as objects, the same answers as k = all of them
    many = index.search(queries, 5000, device=device)
    assert many[0].shape == many[1].shape == (len(queries), len(objects))
    same(many, one.search(queries, len(objects), device=device))
    with pytest.raises(ValueError, match=r"^k: expected a non-negative integer .*found -1$"):
        index.search(queries, -1)
    # shards stay in memory on their workers between searches
    resident = index.resident()
    for i, s in enumerate(index.shards):
        assert resident[s["worker"]][i]
    # rows of equal length as a dask array; queries in text form
    rows = np.random.default_rng(3).integers(0, 500, size=(1000, 12)).astype(np.uint32)
    arr = DistributedIndex.build(client, da.from_array(rows, chunks=(150, 12)), kind="keywords",
                                 path=tmp_path / "arr")
    texts = [" ".join(map(str, r[:6])) for r in rows[::97]]
    same(arr.search(texts, 10, device=device),
         genie.Index.from_keywords(list(rows)).search(texts, 10, device=device))
    # where the partitions lie: one shard per worker that holds any
    lying = DistributedIndex.build(client, db.from_sequence(objects, npartitions=7),
                                   kind="keywords", path=tmp_path / "lying", spread=False)
    same(lying.search(queries, 5, device=device), one.search(queries, 5, device=device))
    # reopened from its files on the cluster
    again = DistributedIndex.open(client, tmp_path / "bag")
    same(again.search(queries, 5, device=device), one.search(queries, 5, device=device))


def test_vectors(client, device, tmp_path):
    rng = np.random.default_rng(3)
    x = rng.normal(size=(900, 16)).astype(np.float32)
    xq = x[:25] + rng.normal(scale=0.05, size=(25, 16)).astype(np.float32)
    index = DistributedIndex.build(client, da.from_array(x, chunks=(200, 16)), kind="vectors",
                                   path=tmp_path / "v", lsh="e2lsh")
    assert {"functions", "width", "candidates"} <= set(index.params)
    one = genie.VectorIndex(x, **index.params)
    for tree_merge in (WORKERS, 2):  # the client's merge, then the workers' tree
        index.tree_merge = tree_merge
        for k in (1, 10):
            same(index.search(xq, k, device=device), one.search(xq, k, device=device))
        same(index.search(xq, 5, device=device, candidates=30),
             one.search(xq, 5, device=device, candidates=30))


def test_vectors_one_codebook_shard_by_cosine(client, device, tmp_path):
    rng = np.random.default_rng(6)
    x = rng.normal(size=(800, 16)).astype(np.float32)
    xq = x[:20] * 2.5
    data = da.from_array(x, chunks=(200, 16))
    # one shard, replicated: the codebook, the default family, with its metric
    index = DistributedIndex.build(client, data, kind="vectors", path=tmp_path / "c", shards=1,
                                   metric="cosine")
    assert index.params["lsh"] == "codebook"
    one = genie.VectorIndex(x, metric="cosine")
    same(index.search(xq, 5, device=device), one.search(xq, 5, device=device))
    # a codebook over several shards is refused, naming the ways out
    with pytest.raises(ValueError, match="not sharded"):
        DistributedIndex.build(client, data, kind="vectors", path=tmp_path / "d",
                               lsh="codebook")


def test_sequences(client, device, tmp_path):
    rng = np.random.default_rng(5)
    seqs = words(rng, 600)
    queries = [s[:-1] + "a" for s in seqs[:30]] + ["", "zzzz"]
    index = DistributedIndex.build(client, db.from_sequence(seqs, npartitions=5),
                                   kind="sequences", path=tmp_path / "s", ngram=2)
    one = genie.SequenceIndex(seqs, ngram=2)
    for tree_merge in (WORKERS, 2):  # the client's merge, then the workers' tree
        index.tree_merge = tree_merge
        same(index.search(queries, 4, device=device, exhaustive=True),
             one.search(queries, 4, device=device, exhaustive=True))
        same(index.search(queries, 4, device=device), one.search(queries, 4, device=device))


def test_documents(client, device, tmp_path):
    # a dask dataframe needs pyarrow: the GPU machine's run may go without it (its wheel is large)
    dd = pytest.importorskip("dask.dataframe")
    rng = np.random.default_rng(5)
    vocab = words(rng, 80)
    docs = [" ".join(rng.choice(vocab, size=rng.integers(2, 10))) for _ in range(500)]
    dq = [" ".join(rng.choice(vocab, size=3)) for _ in range(25)] + ["The and of"]
    ddf = dd.from_pandas(pd.DataFrame({"text": docs}), npartitions=4)
    index = DistributedIndex.build(client, ddf, kind="documents", path=tmp_path / "d")
    same(index.search(dq, 6, device=device), genie.DocumentIndex(docs).search(dq, 6,
                                                                              device=device))


def test_table(client, device, tmp_path):
    dd = pytest.importorskip("dask.dataframe")
    df = people(n=700)
    index = DistributedIndex.build(client, dd.from_pandas(df, npartitions=6), kind="table",
                                   path=tmp_path / "t")
    one = genie.TableIndex(df)
    for tree_merge, k in ((WORKERS, 3), (WORKERS, 40), (2, 3), (2, 40)):
        index.tree_merge = tree_merge  # the client's merge, then the workers' tree
        same(index.search(CONDITIONS, k, device=device), one.search(CONDITIONS, k, device=device))
    row = ",".join(str(v) for v in df.iloc[7])
    same(index.search([row], 5, device=device, radius=1),
         one.search([row], 5, device=device, radius=1))


def search_killing(client, index, queries, device, victim):
    """The top 10 of ``queries`` from a search during which ``victim``'s process is SIGKILLed:
    every task pauses 1.5 s before its search, and the kill comes 0.5 s in, while they run."""
    pid = client.run(os.getpid, workers=[victim])[victim]
    got = {}

    def search():
        got["answer"] = index.search(queries, 10, device=device, _pause=1.5)

    t = threading.Thread(target=search)
    t.start()
    time.sleep(0.5)
    os.kill(pid, signal.SIGKILL)
    t.join(timeout=120)
    assert not t.is_alive()
    return got["answer"]


@pytest.mark.parametrize("tree", [False, True])
def test_worker_killed_mid_search(client, device, tmp_path, tree):
    objects, queries = keyword_objects(seed=11), keyword_queries(seed=12)
    index = DistributedIndex.build(client, db.from_sequence(objects, npartitions=6),
                                   kind="keywords", path=tmp_path / "kill")
    index.tree_merge = 2 if tree else WORKERS  # the chunk searched again / the task moved
    want = genie.Index.from_keywords(objects).search(queries, 10, device=device)
    same(index.search(queries, 10, device=device), want)
    victim = index.shards[1]["worker"]
    same(search_killing(client, index, queries, device, victim), want)
    assert index.last_search["reassigned"] >= 1
    assert index.last_search["tree"] is tree
    assert victim not in {s["worker"] for s in index.shards}
    client.wait_for_workers(WORKERS, timeout=60)
    same(index.search(queries, 10, device=device), want)


def test_shard_file_missing_or_corrupted(client, tmp_path):
    objects = keyword_objects(n=300, seed=13)
    DistributedIndex.build(client, db.from_sequence(objects, npartitions=3), kind="keywords",
                           path=tmp_path / "good")
    shutil.copytree(tmp_path / "good", tmp_path / "missing")
    os.remove(tmp_path / "missing" / "shard-00001.genie")
    with pytest.raises(FileNotFoundError, match=r"shard 1: its file .*shard-00001\.genie"):
        DistributedIndex.open(client, tmp_path / "missing")
    shutil.copytree(tmp_path / "good", tmp_path / "bad")
    path = tmp_path / "bad" / "shard-00002.genie"
    data = bytearray(path.read_bytes())
    data[len(data) // 2:] = b"\x5a" * (len(data) - len(data) // 2)
    path.write_bytes(bytes(data))
    with pytest.raises(ValueError, match=r"shard 2: its file .*shard-00002\.genie is not a sound"):
        DistributedIndex.open(client, tmp_path / "bad")
    with pytest.raises(FileNotFoundError, match="manifest"):
        DistributedIndex.open(client, tmp_path / "nothing")


def test_replicas_share_the_queries(client, device, tmp_path):
    objects, queries = keyword_objects(seed=21), keyword_queries(nq=60, seed=22)
    want = genie.Index.from_keywords(objects).search(queries, 10, device=device)
    bag = db.from_sequence(objects, npartitions=6)
    for shards in (1, 2):
        index = DistributedIndex.build(client, bag, kind="keywords", path=tmp_path / f"r{shards}",
                                       shards=shards)
        assert len(index.shards) == shards
        holders = [w for s in index.shards for w in s["workers"]]
        assert sorted(holders) == sorted(client.ncores())  # every worker holds one shard
        same(index.search(queries, 10, device=device), want)
        assert index.last_search["chunks"] == index.pipeline * max(
            len(s["workers"]) for s in index.shards)
        resident = index.resident()
        for i, s in enumerate(index.shards):
            assert all(resident[w][i] for w in s["workers"])
        reopened = DistributedIndex.open(client, tmp_path / f"r{shards}")
        assert [len(s["workers"]) for s in reopened.shards] == [len(s["workers"])
                                                                 for s in index.shards]
        same(reopened.search(queries, 10, device=device), want)
        index.close()
    with pytest.raises(ValueError, match="shards"):
        DistributedIndex.build(client, bag, kind="keywords", path=tmp_path / "r0", shards=0)


def test_replica_killed_mid_search(client, device, tmp_path):
    objects, queries = keyword_objects(seed=23), keyword_queries(nq=60, seed=24)
    index = DistributedIndex.build(client, db.from_sequence(objects, npartitions=6),
                                   kind="keywords", path=tmp_path / "rk", shards=1)
    want = genie.Index.from_keywords(objects).search(queries, 10, device=device)
    victim = index.shards[0]["workers"][1]
    same(search_killing(client, index, queries, device, victim), want)
    assert index.last_search["reassigned"] >= 1  # its chunks moved to the other replicas
    assert victim not in index.shards[0]["workers"]
    client.wait_for_workers(WORKERS, timeout=60)
    same(index.search(queries, 10, device=device), want)  # the new worker adopted as a replica
    assert len(index.shards[0]["workers"]) == WORKERS


def test_merge_by_count_is_the_lexicographic_order():
    """The extension's merge of the shards' hits, against a sort of every pair."""
    from genie.dask import _merge

    rng = np.random.default_rng(25)
    for _ in range(20):
        shards, nq, k = rng.integers(1, 5), rng.integers(0, 30), rng.integers(1, 12)
        parts = []
        for s in range(shards):
            # a shard's answer: hits by count descending then id ascending, then some dropped
            # (a table shard's range rows: -1 anywhere); each shard's width its own; some in
            # local order (a shard of several runs of global ids orders ties by local id)
            w = int(rng.integers(1, 12))
            counts = rng.integers(0, 6, size=(nq, w)).astype(np.uint32)
            ids = np.array([rng.choice(np.arange(s, 4000, 4), size=w, replace=False)
                            for _ in range(nq)], dtype=np.int64).reshape(nq, w)
            order = np.lexsort((ids, -counts.astype(np.int64)), axis=1)
            if rng.random() < 0.5:
                order = np.lexsort((rng.random((nq, w)), -counts.astype(np.int64)), axis=1)
            counts = np.take_along_axis(counts, order, axis=1)
            ids = np.take_along_axis(ids, order, axis=1)
            ids[rng.random((nq, w)) < 0.2] = -1
            parts.append((counts, ids, None, None, 0.0))
        counts, ids, _ = _merge(parts, int(k), False)
        # the reference: every (count, id) pair, none dropped, sorted by count desc, id asc
        for r in range(nq):
            pairs = sorted((-int(c), int(i)) for p in parts for c, i in zip(p[0][r], p[1][r])
                           if i >= 0)[:k]
            want_ids = [i for _, i in pairs] + [-1] * (k - len(pairs))
            want_counts = [-c for c, _ in pairs] + [0] * (k - len(pairs))
            assert ids[r].tolist() == want_ids
            assert counts[r].tolist() == want_counts


def test_tree_and_client_merges_agree(client, device, tmp_path):
    """Past ``tree_merge`` shards the workers merge in pairs; either way the answers are those
    of one index."""
    objects, queries = keyword_objects(seed=31), keyword_queries(nq=50, seed=32)
    index = DistributedIndex.build(client, db.from_sequence(objects, npartitions=6),
                                   kind="keywords", path=tmp_path / "tree")
    assert len(index.shards) == WORKERS > 2
    want = genie.Index.from_keywords(objects).search(queries, 20, device=device)
    for tree_merge, tree in ((2, True), (WORKERS, False)):
        index.tree_merge = tree_merge
        same(index.search(queries, 20, device=device), want)
        assert index.last_search["tree"] is tree
        assert index.last_search["shard_s"] > 0  # the searches' seconds reach the client
