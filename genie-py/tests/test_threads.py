"""Several Python threads searching one index at once (the GIL is released while they search)
get the answers a single thread gets."""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor

import numpy as np

import genie


def test_threads_share_one_index(device, keyword_data):
    objects, queries = keyword_data
    index = genie.Index.from_keywords(objects)
    counts, ids = index.search(queries, 10, device=device)

    def one(i):
        sub = queries[i % 7 :] if i % 2 else queries
        c, d = index.search(sub, 10, device=device)
        return sub is queries, c, d, index.search_json(sub[:5], 10, device=device)

    with ThreadPoolExecutor(max_workers=8) as pool:
        results = list(pool.map(one, range(48)))
    want_lines = index.search_json(queries[:5], 10, device=device)
    for i, (whole, c, d, lines) in enumerate(results):
        start = 0 if whole else i % 7
        assert np.array_equal(c, counts[start:]) and np.array_equal(d, ids[start:])
        if whole:
            assert lines == want_lines


def test_threads_place_an_index_once(device):
    index = genie.Index.from_keywords([[1, 2, 3], [2, 3], [3]])
    with ThreadPoolExecutor(max_workers=6) as pool:
        got = list(pool.map(lambda _: index.search([[3, 2]], 3, device=device)[1], range(24)))
    for ids in got:
        assert ids.tolist() == [[0, 1, 2]]


def test_threads_write_and_search_a_live_index(device, tmp_path):
    """Threads adding to one live index while others search it: each write is seen by the
    searches after it returned, and all of them in the end."""
    index = genie.Index.create_live(tmp_path / "threads.live")

    def writer(t):
        for j in range(10):
            i = t * 100 + j
            assert index.add([i], [[1, 10_000 + i]]) == 1
            counts, ids = index.search([[10_000 + i]], 1, device=device)
            assert ids.tolist() == [[i]] and counts.tolist() == [[1]]
        return t

    def reader(_):
        counts, ids = index.search([[1]], 100, device=device)
        found = ids[ids >= 0]
        assert (counts[0, : len(found)] == 1).all() and (np.diff(found) > 0).all()
        return len(found)

    with ThreadPoolExecutor(max_workers=8) as pool:
        writes = [pool.submit(writer, t) for t in range(4)]
        reads = [pool.submit(reader, r) for r in range(40)]
        assert sorted(w.result() for w in writes) == [0, 1, 2, 3]
        assert all(0 <= r.result() <= 40 for r in reads)
    counts, ids = index.search([[1]], 100, device=device)
    assert sorted(ids[0].tolist()) == sorted(t * 100 + j for t in range(4) for j in range(10))
    index.close()
