"""Live indexes of documents and table rows from Python: documents learn new words, table rows
keep the build's bins; the same through genie.Client against `genie serve --writable`. Expected
answers are computed by brute force over the documents' word sets."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest
from conftest import serving

import genie


def words(doc: str) -> set:
    return {w.lower() for w in re.findall(r"\w+", doc)} - {"the", "a", "of", "and", "in"}


def brute(docs: dict, query: str, k: int):
    q = words(query)
    hits = sorted(
        ((i, len(words(d) & q)) for i, d in docs.items() if words(d) & q),
        key=lambda h: (-h[1], h[0]),
    )[:k]
    return [i for i, _ in hits], [c for _, c in hits]


def hits(index, query: str, k: int, **kw):
    counts, ids = index.search([query], k, **kw)
    keep = ids[0] >= 0
    return list(ids[0][keep]), list(counts[0][keep])


DOCS = ["river stone maple", "cloud river", "ember quartz", "violet harbor lantern"]


def test_a_live_document_index_learns_words_and_keeps_them(tmp_path, device):
    path = tmp_path / "docs.genie"
    genie.DocumentIndex(DOCS).save(path)
    want = dict(enumerate(DOCS))
    with genie.load(path, writable=True) as index:
        assert isinstance(index, genie.DocumentIndex) and index.writable
        # falcon and copper are words the built file never saw
        assert index.add([10, 11], ["Falcon over the river", "copper falcon"]) == 2
        want.update({10: "Falcon over the river", 11: "copper falcon"})
        assert index.delete([1]) == 1
        del want[1]
        for query in ("falcon river", "copper", "ember harbor falcon"):
            assert hits(index, query, 5, device=device) == brute(want, query, 5), query
        # a filter applies before the top-k
        assert hits(index, "falcon", 5, device=device, filter=[11]) == ([11], [1])
        index.compact()
    with genie.load(str(path) + ".live", writable=True) as again:
        assert len(again) == len(want)
        assert hits(again, "falcon copper", 5, device=device) == brute(want, "falcon copper", 5)
        again.add([12], ["meadow falcon"])
        want[12] = "meadow falcon"
        assert hits(again, "meadow", 5, device=device) == ([12], [1])


def test_empty_live_indexes_of_documents_and_the_kinds_that_refuse(tmp_path, device):
    with genie.DocumentIndex.create_live(tmp_path / "d", keep_stop_words=True) as index:
        assert index.add([5, 6], ["the cat", "a dog"]) == 2
        assert hits(index, "the", 5, device=device) == ([5], [1])
        with pytest.raises(ValueError, match=r"document 0: expected a string"):
            index.add([7], [3])
        assert len(index) == 2
    with pytest.raises(ValueError, match=r"radius"):
        genie.DocumentIndex.create_live(tmp_path / "x", radius=2)
    with pytest.raises(ValueError, match=r"cannot be created"):
        genie.VectorIndex.create_live(tmp_path / "v")
    with genie.SequenceIndex.create_live(tmp_path / "s", ngram=2) as seqs:
        assert seqs.add([1, 2, 3], ["kitten", "sitting", "mitten"]) == 3
        dist, ids = seqs.search(["kitten"], 2, device=device)
        assert ids[0].tolist() == [1, 3] and dist[0].tolist() == [0, 1]
        (line,) = seqs.search_json(["kitten"], 1, device=device)
        assert json.loads(line)["exact"] is True
    with pytest.raises(ValueError, match=r"table"):
        genie.TableIndex.create_live(tmp_path / "t")


def test_live_table_rows_keep_the_build_bins(tmp_path, device):
    table = pd.DataFrame(
        {"age": list(range(20, 60)), "job": ["clerk", "pilot"] * 20}
    )
    path = tmp_path / "t.genie"
    genie.TableIndex(table).save(path)
    with genie.load(path, writable=True) as index:
        assert isinstance(index, genie.TableIndex)
        new = pd.DataFrame({"age": [25, 200], "job": ["pilot", "clerk"]})
        assert index.add([100, 101], new) == 2
        assert index.add([102], [{"age": -5, "job": "pilot"}]) == 1
        assert index.add([103], ["31, clerk"]) == 1
        assert len(index) == 44

        def met(query):
            counts, ids = index.search([query], 100, device=device)
            return set(ids[0][counts[0] == len(query)].tolist())

        assert {5, 100} <= met({"age": 25})
        assert {39, 101} <= met({"age": 59})
        assert {0, 102} <= met({"age": 20})
        assert 102 in met({"age": 20, "job": "pilot"})
        with pytest.raises(ValueError, match=r"astronaut"):
            index.add([7], [{"age": 30, "job": "astronaut"}])
        with pytest.raises(ValueError, match=r"rows: expected"):
            index.add([7], "31, clerk")
        assert len(index) == 44


def test_the_client_writes_documents_and_rows(cli, tmp_path, device):
    docs = tmp_path / "docs.genie"
    genie.DocumentIndex(DOCS).save(docs)
    rows = tmp_path / "t.genie"
    genie.TableIndex(pd.DataFrame({"age": [20, 40, 60], "job": ["a", "b", "a"]})).save(rows)
    with serving(
        cli, "--index", f"d={docs}", "--index", f"t={rows}", "--writable",
        "--refresh-ms", 0, "--device", device,
    ) as url:
        client = genie.Client(url)
        assert client.add("d", [20], ["copper lantern"]) == 1
        counts, ids = client.search("d", ["copper lantern"], 2)
        assert ids[0].tolist() == [20, 3] and counts[0].tolist() == [2, 1]
        assert client.add("t", [9], [{"age": 61, "job": "b"}]) == 1
        assert client.add("t", [10], pd.DataFrame({"age": [20], "job": ["b"]})) == 1
        counts, ids = client.search("t", [{"age": 60, "job": "b"}], 1)
        assert ids[0].tolist() == [9] and counts[0].tolist() == [2]
        with pytest.raises(ValueError, match=r"astronaut"):
            client.add("t", [11], [{"age": 30, "job": "astronaut"}])


def test_a_live_vector_index_finds_what_was_written(cli, tmp_path, device):
    rng = np.random.default_rng(3)
    centres = rng.uniform(-10, 10, size=(8, 16))
    data = (centres[np.arange(600) % 8] + rng.uniform(-1, 1, size=(600, 16))).astype(np.float32)
    path = tmp_path / "v.genie"
    genie.VectorIndex(data[:500], lsh="e2lsh").save(path)
    with genie.load(path, writable=True) as index:
        assert isinstance(index, genie.VectorIndex) and index.writable
        ids = np.arange(1000, 1100)
        assert index.add(ids, data[500:]) == 100
        assert index.delete([1003, 7]) == 2
        dist, got = index.search(data[500:510], 1, device=device)
        want = [1000 + i for i in range(10)]
        assert [g for g, w in zip(got[:, 0], want) if w != 1003] == [w for w in want if w != 1003]
        assert got[3, 0] != 1003 and float(dist[0, 0]) == 0.0
        dist, got = index.search(data[7:8], 5, device=device)
        assert 7 not in got[0]
        _, got = index.search(data[520:521], 5, device=device, filter=[1020, 1021, 2])
        assert got[0][0] == 1020 and set(got[0][got[0] >= 0]) <= {1020, 1021, 2}
        assert index.live_stats()["live_objects"] == 598
        with pytest.raises(ValueError, match=r"16"):
            index.add([1], np.zeros((1, 3), np.float32))
    with serving(
        cli, "--index", f"v={path}", "--writable", "--refresh-ms", 0, "--device", device
    ) as url:
        client = genie.Client(url)
        assert client.add("v", [5000], data[10:11] + 50) == 1
        dist, got = client.search("v", data[10:11] + 50, 1)
        assert got[0].tolist() == [5000] and float(dist[0, 0]) == 0.0


def test_where_filters_on_table_indexes(cli, tmp_path, device):
    table = pd.DataFrame(
        {"age": [(20 + i * 7) % 65 for i in range(90)], "job": ["clerk", "pilot", "nurse"] * 30}
    )
    index = genie.TableIndex(table)
    queries = [{"age": (30, 40)}, "job=nurse age=25"]
    counts, ids = index.search(queries, 90, device=device)
    for where, keep in (({"job": "pilot"}, lambda i: table.job[i] == "pilot"),
                        ("job=clerk", lambda i: table.job[i] == "clerk")):
        got_c, got_i = index.search(queries, 5, device=device, where=where)
        for row in range(len(queries)):
            want = [(i, c) for i, c in zip(ids[row], counts[row]) if i >= 0 and keep(i)][:5]
            got = [(i, c) for i, c in zip(got_i[row], got_c[row]) if i >= 0]
            assert got == want, (where, row)
    # ids and a condition together; a category no row has
    _, got = index.search(queries[:1], 90, device=device, where={"job": "pilot"}, filter=range(45))
    assert set(got[0][got[0] >= 0]) <= {i for i in range(45) if table.job[i] == "pilot"}
    counts, _ = index.search(queries[:1], 5, device=device, where="job=astronaut")
    assert counts.sum() == 0
    with pytest.raises(ValueError, match=r"salary"):
        index.search(queries, 5, device=device, where="salary=3")
    path = tmp_path / "t.genie"
    index.save(path)
    with serving(cli, "--index", f"t={path}", "--device", device) as url:
        client = genie.Client(url)
        got_c, got_i = client.search("t", queries, 5, where={"job": "pilot"})
        local_c, local_i = index.search(queries, 5, device=device, where={"job": "pilot"})
        assert (got_i == local_i).all() and (got_c == local_c).all()
