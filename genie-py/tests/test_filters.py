"""Searches with filters (only these ids) and exclusions (never these), applied before the
top-k: keyword and document indexes against brute force, the ids checked, the kinds that cannot
filter saying so."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import brute, same

import genie


def test_keyword_filters_and_exclusions(keyword_data, device, tmp_path):
    objects, queries = keyword_data
    want = dict(enumerate(objects))
    allow = set(range(0, 500, 3))
    deny = list(range(0, 500, 2))
    cases = [(allow, ()), (None, deny), (allow, deny), (set(), ()), (None, [])]
    path = tmp_path / "kw.genie"
    genie.Index.from_keywords(objects).save(path)
    index = genie.load(path)
    same(index.search(queries, 10, device=device), brute(want, queries, 10))
    got = {
        i: index.search(queries, 10, device=device, filter=a, exclude=d)
        for i, (a, d) in enumerate(cases)
    }
    texts = [" ".join(str(int(x)) for x in q) for q in queries]
    by_text = index.search(texts, 10, device=device, filter=np.array(sorted(allow)))
    lines = index.search_json(queries[:2], 4, device=device, filter=sorted(allow))
    least = index.search(queries, 10, device=device, min_count=2, exclude=deny)
    # (needs the filters applied by the backends' object mask)
    for i, (a, d) in enumerate(cases):
        same(got[i], brute(want, queries, 10, a, d))
    same(by_text, brute(want, queries, 10, allow))
    assert [line.count('"id"') for line in lines] == [
        int((brute(want, [q], 4, allow)[1] >= 0).sum()) for q in queries[:2]
    ]
    counts, ids = brute(want, queries, 10, None, deny)
    same(least, (np.where(counts >= 2, counts, 0), np.where(counts >= 2, ids, -1)))


def test_filter_and_exclude_are_checked(keyword_data):
    objects, queries = keyword_data
    index = genie.Index.from_keywords(objects)
    with pytest.raises(ValueError, match=r"filter: id 1 is -4: expected an unsigned 64-bit"):
        index.search(queries, 3, filter=[1, -4])
    with pytest.raises(ValueError, match=r"exclude: expected integers"):
        index.search(queries, 3, exclude=[1.5])
    with pytest.raises(ValueError, match=r"filter: expected a sequence or 1-D array of ids"):
        index.search(queries, 3, filter=7)
    with pytest.raises(ValueError, match=r"exclude: expected a 1-D array"):
        index.search(queries, 3, exclude=[[1, 2]])


def test_documents_filter(device):
    docs = genie.DocumentIndex(["red apple pie", "green apple", "red sky", "apple"])
    got = docs.search(["red apple"], 3, device=device, filter=[1, 2, 3], exclude={3})
    # (needs the filters applied by the backends' object mask)
    assert got[1].tolist() == [[1, 2, -1]] and got[0].tolist() == [[1, 1, 0]]


def test_kinds_that_cannot_filter_say_so(device):
    seqs = genie.SequenceIndex(["hello", "world", "help"])
    with pytest.raises(ValueError, match=r"filters are not supported by indexes of sequences"):
        seqs.search(["helo"], 2, device=device, filter=[1])
    with pytest.raises(ValueError, match=r"filters are not supported by indexes of sequences"):
        seqs.search_json(["helo"], 2, device=device, exclude=[1])
