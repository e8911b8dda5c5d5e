"""Live indexes of documents and table rows from Python: documents learn new words, table rows
keep the build's bins; the same through genie.Client against `genie serve --writable`. Expected
answers are computed by brute force over the documents' word sets."""

from __future__ import annotations

import re

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
    with pytest.raises(ValueError, match=r"do not take writes"):
        genie.VectorIndex.create_live(tmp_path / "v")
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
