"""genie.Client against `genie serve` started here on a free loopback port: the same answers as
the local index, errors as exceptions."""

from __future__ import annotations

import re
import subprocess
import threading
import time

import numpy as np
import pytest

import genie

TOKEN = "s3cret"


@pytest.fixture()
def server(cli, device, keyword_data, tmp_path):
    """`genie serve` of a keyword index and a document index on 127.0.0.1, port 0."""
    objects, _ = keyword_data
    genie.Index.from_keywords(objects).save(tmp_path / "kw.genie")
    docs = ["red apple pie", "green apple", "blue sky over the sea", "red sky at night"]
    genie.DocumentIndex(docs).save(tmp_path / "docs.genie")
    proc = subprocess.Popen(
        [str(cli.path), "serve", "--index", f"kw={tmp_path / 'kw.genie'}",
         "--index", f"docs={tmp_path / 'docs.genie'}", "--listen", "127.0.0.1:0",
         "--device", device, "--token", TOKEN],
        stderr=subprocess.PIPE, text=True,
    )
    found = {}

    def read():
        for line in proc.stderr:
            m = re.search(r"listening on (http://\S+)", line)
            if m and "url" not in found:
                found["url"] = m.group(1)

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    deadline = time.monotonic() + 120
    while "url" not in found and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    try:
        assert "url" in found, "genie serve did not start listening"
        yield found["url"], tmp_path
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=30)


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
