"""genie.Client against `genie serve` started here on a free loopback port: the same answers as
the local index, errors as exceptions."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import serving

import genie

TOKEN = "s3cret"


@pytest.fixture()
def server(cli, device, keyword_data, tmp_path):
    """`genie serve` of a keyword index and a document index on 127.0.0.1, port 0."""
    objects, _ = keyword_data
    genie.Index.from_keywords(objects).save(tmp_path / "kw.genie")
    docs = ["red apple pie", "green apple", "blue sky over the sea", "red sky at night"]
    genie.DocumentIndex(docs).save(tmp_path / "docs.genie")
    with serving(
        cli, "--index", f"kw={tmp_path / 'kw.genie'}", "--index",
        f"docs={tmp_path / 'docs.genie'}", "--device", device, "--token", TOKEN,
    ) as url:
        yield url, tmp_path


def test_client_answers_as_the_local_index(server, device, keyword_data):
    url, path = server
    objects, queries = keyword_data
    client = genie.Client(url, token=TOKEN)
    names = {i["name"]: i["kind"] for i in client.indexes()}
    assert names == {"kw": "keywords", "docs": "documents"}
    local = genie.load(path / "kw.genie")
    for k, min_count in ((10, None), (3, None), (100, 2)):
        got = client.search("kw", queries, k, min_count=min_count)
        want = local.search(queries, k, device=device, min_count=min_count)
        assert np.array_equal(got[0], want[0]) and np.array_equal(got[1], want[1])
    items = [([1, 50], [20, 60], [2, 1])]
    assert np.array_equal(client.search("kw", items, 5)[1], local.search(items, 5)[1])
    texts = ["1-20:2 50-60"]
    assert np.array_equal(client.search("kw", texts, 5)[1], local.search(texts, 5)[1])
    docs = genie.load(path / "docs.genie")
    q = ["red apple", "sky"]
    assert np.array_equal(client.search("docs", q, 3)[1], docs.search(q, 3, device=device)[1])
    results = client.search_json("docs", q, 3)
    assert results[0]["hits"][0] == {"id": 0, "count": 2}


def test_client_errors(server):
    url, _ = server
    with pytest.raises(PermissionError):
        genie.Client(url).indexes()
    client = genie.Client(url, token=TOKEN)
    with pytest.raises(LookupError):
        client.search("nothing", [[1]], 3)
    with pytest.raises(ValueError, match=r"queries\[0\]"):
        client.search("kw", ["5-4"], 3)


def test_client_writes_need_a_writable_server(server):
    url, _ = server
    client = genie.Client(url, token=TOKEN)
    with pytest.raises(PermissionError, match="--writable"):
        client.add("kw", [1], [[1, 2]])
    with pytest.raises(PermissionError, match="--writable"):
        client.delete("kw", [1])
