"""Keyword objects: built from lists and CSR pairs, searched in every query form, with answers
identical to the `genie` program's on the same inputs; save/load round trips with files the
program reads; bad inputs raise the program's messages."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

import genie
from conftest import REPO, write_lines


def lines_of(index, queries, k, device, **kw):
    return index.search_json(queries, k, device=device, **kw)


def test_example_data_as_the_program(cli, device, tmp_path):
    objects = REPO / "examples/data/objects.txt"
    queries = REPO / "examples/data/queries.txt"
    cli.run("build", "--quiet", "--input", objects, "--output", tmp_path / "demo.genie")
    want = cli.search(tmp_path / "demo.genie", queries, 3)
    rows = [[int(x) for x in line.split()] for line in objects.read_text().splitlines()]
    index = genie.Index.from_keywords(rows)
    texts = queries.read_text().splitlines()
    assert lines_of(index, texts, 3, device) == want
    assert lines_of(genie.load(tmp_path / "demo.genie"), texts, 3, device) == want
    # the file's queries read as the program reads them, searched as a CSR of items
    items = genie.read_queries(queries)
    assert lines_of(index, items, 3, device) == want
    counts, ids = index.search(items, 3, device=device)
    for line, c, i in zip(want, counts, ids):
        hits = json.loads(line)["hits"]
        assert [h["id"] for h in hits] == [x for x in i if x >= 0]
        assert [h["count"] for h in hits] == [x for x in c if x > 0]


def test_random_objects_every_form(cli, device, keyword_data, tmp_path):
    objects, queries = keyword_data
    write_lines(tmp_path / "o.txt", objects)
    write_lines(tmp_path / "q.txt", queries)
    cli.run("build", "--quiet", "--input", tmp_path / "o.txt", "--output", tmp_path / "o.genie")
    for k in (1, 10, 600):
        want = cli.search(tmp_path / "o.genie", tmp_path / "q.txt", k)
        from_lists = genie.Index.from_keywords(objects)
        assert lines_of(from_lists, queries, k, device) == want
        offsets = np.zeros(len(objects) + 1, dtype=np.int64)
        offsets[1:] = np.cumsum([len(o) for o in objects])
        for dtype in (np.uint32, np.int32, np.int64, np.uint64):
            kw = np.concatenate(objects).astype(dtype)
            from_csr = genie.Index.from_keywords((offsets, kw))
            assert lines_of(from_csr, queries, k, device) == want, dtype
        # queries as (lo, hi, weight) items and as a CSR of keywords
        items = [(q, q, np.ones(len(q), np.uint32)) for q in queries]
        assert lines_of(from_lists, items, k, device) == want
        qoff = np.zeros(len(queries) + 1, dtype=np.uint64)
        qoff[1:] = np.cumsum([len(q) for q in queries])
        csr = (qoff, np.concatenate(queries).astype(np.uint32))
        assert lines_of(from_lists, csr, k, device) == want
    counts, ids = from_lists.search(queries, 5, device=device)
    assert counts.shape == ids.shape == (len(queries), 5)
    assert counts.dtype == np.uint32 and ids.dtype == np.int64


def test_ranges_weights_and_min_count(cli, device, keyword_data, tmp_path):
    objects, _ = keyword_data
    write_lines(tmp_path / "o.txt", objects)
    texts = ["10-40:2 7 100-120", "0-199", "5:3 6:2 7", "", "150-160:4 3"]
    (tmp_path / "q.txt").write_text("\n".join(texts) + "\n")
    cli.run("build", "--quiet", "--input", tmp_path / "o.txt", "--output", tmp_path / "o.genie")
    index = genie.Index.from_keywords(objects)
    for extra in ([], ["--min-count", 3]):
        want = cli.search(tmp_path / "o.genie", tmp_path / "q.txt", 50, *extra)
        min_count = extra[1] if extra else None
        assert lines_of(index, texts, 50, device, min_count=min_count) == want
        items = genie.read_queries(tmp_path / "q.txt")
        assert lines_of(index, items, 50, device, min_count=min_count) == want
    counts, ids = index.search(items, 50, device=device, min_count=3)
    assert ((counts >= 3) | (ids == -1)).all()
    assert ((counts == 0) == (ids == -1)).all()


def test_save_load_round_trip(cli, device, keyword_data, tmp_path):
    objects, queries = keyword_data
    index = genie.Index.from_keywords(objects)
    index.save(tmp_path / "saved.genie")
    loaded = genie.load(tmp_path / "saved.genie")
    assert isinstance(loaded, genie.Index) and len(loaded) == len(objects)
    assert loaded.kind == "keywords"
    want = lines_of(index, queries, 10, device)
    assert lines_of(loaded, queries, 10, device) == want
    write_lines(tmp_path / "q.txt", queries)
    assert cli.search(tmp_path / "saved.genie", tmp_path / "q.txt", 10) == want
    loaded.save(tmp_path / "copy.genie")
    assert lines_of(genie.load(tmp_path / "copy.genie"), queries, 10, device) == want
    info = cli.run("info", "--index", tmp_path / "copy.genie")
    assert str(len(objects)) in info


def test_bad_inputs_raise_the_programs_messages(cli, tmp_path):
    with pytest.raises(FileNotFoundError, match="nowhere.genie"):
        genie.load(tmp_path / "nowhere.genie")
    (tmp_path / "bad.genie").write_bytes(b"not an index at all, but long enough to be read" * 4)
    with pytest.raises(ValueError) as e:
        genie.load(tmp_path / "bad.genie")
    assert str(e.value) in cli.fails("info", "--index", tmp_path / "bad.genie")
    index = genie.Index.from_keywords([[1, 2], [2, 3]])
    with pytest.raises(ValueError, match="invalid item 5-4: lo must not exceed hi"):
        index.search([([5], [4])], 3)
    with pytest.raises(ValueError, match="weights start at 1"):
        index.search([([1], [2], [0])], 3)
    with pytest.raises(ValueError, match=r"query 1: bad item \"4-x\""):
        index.search(["1 2", "4-x"], 3)
    # the program's message for the same line of a file
    (tmp_path / "q.txt").write_text("1 2\n4-x\n")
    index.save(tmp_path / "i.genie")
    assert 'bad item "4-x"' in cli.fails("search", "--index", tmp_path / "i.genie",
                                         "--queries", tmp_path / "q.txt", "--k", "3")
    with pytest.raises(ValueError, match="expected an unsigned 32-bit integer"):
        genie.Index.from_keywords([[1, -2]])
    with pytest.raises(ValueError, match="the first offset is 1: expected 0"):
        genie.Index.from_keywords((np.array([1, 2]), np.array([5, 6], np.uint32)))
    with pytest.raises(ValueError, match="expected integers"):
        genie.Index.from_keywords([[1.5]])
    with pytest.raises(ValueError, match="auto, cpu or gpu|expected"):
        index.search([[1]], 3, device="tpu")
    with pytest.raises(FileNotFoundError):
        genie.read_queries(tmp_path / "missing.txt")


def test_gpu_without_a_gpu_is_an_error(device):
    if device != "cpu":
        pytest.skip("skipped: the suite runs on a GPU")
    from genie import _genie  # noqa: F401

    index = genie.Index.from_keywords([[1, 2]])
    try:
        backend = index.backend("gpu")
    except RuntimeError as e:
        assert "GPU" in str(e)
    else:  # a machine with a GPU
        assert "cpu" not in backend.lower()


def test_unaligned_arrays_are_read(device):
    # arrays unpickled from a buffer (as dask sends them) may be unaligned: copied, not misread
    def unaligned(a):
        raw = np.frombuffer(b"\0" + a.tobytes(), dtype=a.dtype, offset=1)
        assert not raw.flags.aligned
        return raw

    index = genie.Index.from_keywords(
        (unaligned(np.array([0, 2, 3], np.uint64)), unaligned(np.array([1, 2, 3], np.uint32))))
    counts, ids = index.search((unaligned(np.array([0, 2], np.uint64)),
                                unaligned(np.array([1, 3], np.uint32))), 2, device=device)
    assert ids.tolist() == [[0, 1]] and counts.tolist() == [[1, 1]]
    x = np.random.default_rng(1).normal(size=(50, 8)).astype(np.float32)
    v = genie.VectorIndex(unaligned(x).reshape(50, 8), lsh="e2lsh", width=4.0, candidates=50)
    _, vi = v.search(unaligned(x[:3]).reshape(3, 8), 1, device=device)
    assert vi[:, 0].tolist() == [0, 1, 2]


def test_last_timings_say_where_a_search_went(device):
    rng = np.random.default_rng(31)
    objects = [rng.choice(50, size=6, replace=False) for _ in range(400)]
    index = genie.Index.from_keywords(objects)
    assert index.last_timings() == {}
    index.search(objects[:30], 5, device=device)
    t = index.last_timings()
    for stage in ("parse", "search", "output"):
        assert stage in t and t[stage] >= 0.0
    assert ("device_match" in t) == (device == "gpu")
