"""Live indexes from Python: objects added with ids of one's own, replaced and deleted, searched
with filters and exclusions, the same after reopening; read-only indexes and bad ids refused;
and genie.Client against `genie serve --writable`. Expected answers are computed by brute force
(conftest.brute)."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import brute, same, serving

import genie


def new_objects(n: int, seed: int):
    rng = np.random.default_rng(seed)
    return [rng.choice(200, size=rng.integers(1, 12), replace=False) for _ in range(n)]


@pytest.fixture()
def built(tmp_path, keyword_data):
    """An index file of the suite's keyword objects (ids 0..499, their rows)."""
    objects, _ = keyword_data
    path = tmp_path / "kw.genie"
    genie.Index.from_keywords(objects).save(path)
    return path, dict(enumerate(objects))


def test_a_built_file_made_live_takes_objects_and_reopens(built, keyword_data, device):
    path, want = built
    _, queries = keyword_data
    index = genie.load(path, writable=True)
    assert index.live and index.writable and isinstance(index, genie.Index)
    assert index.path == str(path) + ".live"
    assert len(index) == 500
    same(index.search(queries, 10, device=device), brute(want, queries, 10))
    added = new_objects(40, 11)
    ids = np.arange(1000, 1040, dtype=np.uint64)
    assert index.add(ids, added) == 40
    want.update(zip(range(1000, 1040), added))
    assert len(index) == 540
    for k in (1, 10, 600):
        same(index.search(queries, k, device=device), brute(want, queries, k))
    # keyword lines and a CSR pair too
    assert index.add([2000, 2001], ["3 17 40", "17 40 41"]) == 2
    assert index.add(np.array([2002], np.int64), (np.array([0, 2]), np.array([40, 41]))) == 1
    want.update({2000: [3, 17, 40], 2001: [17, 40, 41], 2002: [40, 41]})
    same(index.search(queries, 20, device=device), brute(want, queries, 20))
    same(index.search([[17, 40, 41]], 3, device=device), brute(want, [[17, 40, 41]], 3))
    stats = index.live_stats()
    assert stats["written"] == 43 and stats["live_objects"] == 543
    index.flush()
    same(index.search(queries, 10, device=device), brute(want, queries, 10))
    index.close()
    assert index.closed
    # reopened: the same; the file itself is as it was built
    with genie.load(path, writable=True) as again:
        assert len(again) == 543
        same(again.search(queries, 10, device=device), brute(want, queries, 10))
    with genie.load(path) as file:
        assert not file.live and len(file) == 500
    with genie.load(str(path) + ".live") as read_only:
        assert read_only.live and not read_only.writable and len(read_only) == 543
        same(read_only.search(queries, 10, device=device), brute(want, queries, 10))


def test_replaced_and_deleted_objects_are_gone(built, keyword_data, device):
    path, want = built
    _, queries = keyword_data
    with genie.load(path, writable=True) as index:
        index.add([1000, 1001], [[1, 2, 3], [4, 5, 6]])
        want.update({1000: [1, 2, 3], 1001: [4, 5, 6]})
        # a replace: of a built object and of an added one
        assert index.add([3, 1000], [[150, 151, 152], [7, 8]]) == 2
        want.update({3: [150, 151, 152], 1000: [7, 8]})
        assert index.delete(np.array([5, 1001, 99999], dtype=np.uint64)) == 2
        assert index.delete([5]) == 0
        del want[5], want[1001]
        assert len(index) == len(want) == 500
        assert index.live_stats()["deleted"] == 2
        checks = queries + [[150, 151, 152], [1, 2, 3], [4, 5, 6], [7, 8]]
        results = {k: index.search(checks, k, device=device) for k in (5, 30)}
    with genie.load(path, writable=True) as again:
        assert len(again) == 500
        reopened = again.search(checks, 30, device=device)
        again.compact()
        assert len(again) == 500
        compacted = again.search(checks, 30, device=device)
    # (needs the deletes applied by the backends' object mask)
    for k, got in results.items():
        same(got, brute(want, checks, k))
    same(reopened, brute(want, checks, 30))
    same(compacted, brute(want, checks, 30))


def test_an_empty_live_index(tmp_path, device):
    folder = tmp_path / "fresh.live"
    with genie.Index.create_live(folder) as index:
        assert index.live and index.writable and len(index) == 0
        counts, ids = index.search([[1, 2]], 5, device=device)
        assert counts.shape == ids.shape == (1, 0)
        objects = {7: [1, 2, 3], 3: [2, 3], 1 << 40: [3, 9], 12: [9]}
        assert index.add(list(objects), list(objects.values())) == 4
        queries = [[2, 3], [9], [1, 2, 3, 9], [50]]
        same(index.search(queries, 3, device=device), brute(objects, queries, 3))
        lines = index.search_json([[2, 3]], 2, device=device)
        assert lines == ['{"query":0,"hits":[{"id":3,"count":2},{"id":7,"count":2}]}']
    with pytest.raises(ValueError, match="closed"):
        index.search([[1]], 3)
    with pytest.raises(ValueError, match="already holds a live index"):
        genie.Index.create_live(folder)
    with genie.load(folder, writable=True) as index:
        same(index.search(queries, 3, device=device), brute(objects, queries, 3))
        index.flush()
        index.add([7], [[50]])
        objects[7] = [50]
        index.delete([12])
        del objects[12]
        assert len(index) == 3
        got = index.search(queries, 3, device=device)
    with genie.load(folder) as index:
        reopened = index.search(queries, 3, device=device)
    # (needs the deletes applied by the backends' object mask)
    same(got, brute(objects, queries, 3))
    same(reopened, brute(objects, queries, 3))


def test_live_filters_and_exclusions(built, keyword_data, device):
    path, want = built
    _, queries = keyword_data
    allow = set(range(0, 500, 3)) | {1001}
    with genie.load(path, writable=True) as index:
        index.add([1000, 1001], [[1, 2, 3], [4, 5, 6]])
        want.update({1000: [1, 2, 3], 1001: [4, 5, 6]})
        got = index.search(queries, 10, device=device, filter=allow, exclude=[3])
        narrowed = index.search(
            [[4, 5, 6]], 2, device=device, filter=np.array([1001], np.uint64)
        )
        lines = index.search_json([[1, 2, 3]], 3, device=device, exclude=[1000])
    same(narrowed, brute(want, [[4, 5, 6]], 2, [1001]))
    # (needs the filters applied by the backends' object mask)
    same(got, brute(want, queries, 10, allow, [3]))
    assert '"id":1000' not in lines[0]


def test_read_only_indexes_refuse_writes(built, tmp_path):
    path, _ = built
    memory = genie.Index.from_keywords([[1, 2], [2, 3]])
    assert not memory.live and not memory.writable
    with pytest.raises(ValueError, match=r"built in memory takes no writes"):
        memory.add([5], [[1]])
    with genie.load(path) as file:
        with pytest.raises(ValueError, match=r"writable=True"):
            file.add([5], [[1]])
        with pytest.raises(ValueError, match=r"writable=True"):
            file.delete([1])
        with pytest.raises(ValueError, match=r"not a live index"):
            file.live_stats()
    genie.load(path, writable=True).close()
    with genie.load(str(path) + ".live") as read_only:
        for write in (
            lambda: read_only.add([5], [[1]]),
            lambda: read_only.delete([1]),
            read_only.flush,
            read_only.compact,
        ):
            with pytest.raises(ValueError, match=r"opened read-only"):
                write()
        assert read_only.live_stats()["live_objects"] == 500
    with pytest.raises(ValueError, match=r"holds no live index"):
        genie.load(tmp_path)
    with pytest.raises(FileNotFoundError):
        genie.load(tmp_path / "missing.genie", writable=True)


def test_bad_ids_are_named(tmp_path):
    with genie.Index.create_live(tmp_path / "ids.live") as index:
        with pytest.raises(ValueError, match=r"ids: id 1 is -3: expected an unsigned 64-bit"):
            index.add([1, -3], [[1], [2]])
        with pytest.raises(ValueError, match=r"ids: 1 ids for 2 objects"):
            index.add([1], [[1], [2]])
        with pytest.raises(ValueError, match=r"ids: 3 ids for 2 objects"):
            index.add(np.arange(3), ["1 2", "3"])
        with pytest.raises(ValueError, match=r"ids: id 0 is 9223372036854775808: .*below 2\^63"):
            index.add(np.array([1 << 63], np.uint64), [[1]])
        with pytest.raises(ValueError, match=r"ids: expected integers"):
            index.add(np.array([1.0]), [[1]])
        with pytest.raises(ValueError, match=r"ids: expected a sequence"):
            index.add(4, [[1]])
        with pytest.raises(ValueError, match=r"ids: id 0 is -1"):
            index.delete([-1])
        with pytest.raises(ValueError, match=r"object 1.*keyword 0"):
            index.add([1, 2], ["1 2", "x"])
        with pytest.raises(ValueError, match=r"object 0: expected"):
            index.add([1], [["a"]])
        with pytest.raises(ValueError, match=r"offsets"):
            index.add([1], (np.array([0, 5]), np.array([1, 2])))
        # nothing was written by the refused calls
        assert len(index) == 0 and index.live_stats()["written"] == 0
        assert index.add([], []) == 0


def test_client_writes_to_a_writable_server(cli, device, built, keyword_data):
    path, want = built
    _, queries = keyword_data
    # --refresh-ms 0: every answered write is in every later search (the server's default lets a
    # search that follows another within 250 ms miss the writes between them)
    with serving(
        cli, "--index", f"kw={path}", "--writable", "--refresh-ms", 0, "--device", device
    ) as url:
        client = genie.Client(url)
        same(client.search("kw", queries, 10), brute(want, queries, 10))
        added = new_objects(30, 5)
        assert client.add("kw", range(1000, 1030), added, batch=7) == 30
        want.update(zip(range(1000, 1030), added))
        assert client.add("kw", [2000], ["3 17 40"]) == 1
        want[2000] = [3, 17, 40]
        assert {i["name"]: i["objects"] for i in client.indexes()} == {"kw": 531}
        grown = client.search("kw", queries, 600)
        assert grown[1].shape == (len(queries), 531)
        same(grown, brute(want, queries, 600))
        with pytest.raises(ValueError, match=r"ids: 2 ids for 1 objects"):
            client.add("kw", [1, 2], [[1]])
        with pytest.raises(ValueError, match=r"ids: id 0 is -1"):
            client.add("kw", [-1], [[1]])
        with pytest.raises(ValueError, match=r"object"):
            client.add("kw", [1], ["1 x"])
        with pytest.raises(LookupError):
            client.add("nothing", [1], [[1]])
        assert client.add("kw", [4], [[150, 151]]) == 1
        want[4] = [150, 151]
        assert client.delete("kw", [6, 1001, 77777]) == 2
        del want[6], want[1001]
        assert client.flush("kw")["flushed"] is True
        allow = set(range(0, 2001, 3))
        filtered = client.search("kw", queries, 10, filter=allow, exclude=[3])
        excluded = client.search_json("kw", [[150, 151]], 3, exclude=[4])
        after = client.search("kw", queries + [[150, 151]], 10)
    # (needs the deletes, replaces and filters applied by the backends' object mask)
    same(after, brute(want, queries + [[150, 151]], 10))
    same(filtered, brute(want, queries, 10, allow, [3]))
    assert all(h["id"] != 4 for h in excluded[0]["hits"])
