"""The other kinds (vectors, sequences, documents, table rows): each built from Python data and
by the `genie` program from the same data in a file, with identical answers, and with the
return values their users know."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import genie
from conftest import write_lines

LETTERS = np.array(list("abcdefghij"))


def words(rng, n):
    return ["".join(rng.choice(LETTERS, size=rng.integers(3, 9))) for _ in range(n)]


def program_answers(cli, kind, data, index, queries, k, *flags):
    """`genie build --kind KIND FLAGS --input DATA --output INDEX`, then the JSON lines of the
    program's search of INDEX for QUERIES at K."""
    cli.run("build", "--quiet", "--kind", kind, *flags, "--input", data, "--output", index)
    return cli.search(index, queries, k)


def test_vectors_as_faiss_and_the_program(cli, device, tmp_path):
    rng = np.random.default_rng(3)
    x = rng.normal(size=(600, 16)).astype(np.float32)
    xq = x[:20] + rng.normal(scale=0.05, size=(20, 16)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "q.npy", xq)
    want = program_answers(cli, "vectors", tmp_path / "x.npy", tmp_path / "v.genie",
                           tmp_path / "q.npy", 5)
    index = genie.VectorIndex(x)  # the codebook family, as the program's default
    assert index.kind == "vectors" and index.ntotal == 600
    assert index.search_json(xq, 5, device=device) == want
    assert genie.load(tmp_path / "v.genie").search_json(xq, 5, device=device) == want
    assert genie.read_queries(tmp_path / "q.npy", kind="vectors").shape == (20, 16)
    d, i = index.search(xq, 5, device=device)
    assert d.shape == i.shape == (20, 5) and d.dtype == np.float32 and i.dtype == np.int64
    assert (i[:, 0] == np.arange(20)).all()  # each query's own vector first
    assert (np.diff(d, axis=1) >= 0).all()
    for line, row in zip(want, i):
        assert [h["id"] for h in json.loads(line)["hits"]] == list(row)
    # save and load: the index and its vectors
    index.save(tmp_path / "saved.genie")
    again = genie.load(tmp_path / "saved.genie")
    assert isinstance(again, genie.VectorIndex)
    assert again.search_json(xq, 5, device=device) == index.search_json(xq, 5, device=device)
    with pytest.raises(ValueError, match="dimension"):
        index.search(xq[:, :8], 5)
    bad = xq.copy()
    bad[1, 3] = np.nan
    with pytest.raises(ValueError, match=r"^queries\[1\]: element 3 is NaN; expected a finite"):
        index.search(bad, 5)
    with pytest.raises(ValueError, match="lsh"):
        genie.VectorIndex(x, lsh="cosine")


@pytest.mark.parametrize("metric", ["cosine", "ip"])
def test_vectors_by_cosine_and_inner_product(device, metric):
    rng = np.random.default_rng(4)
    x = (rng.normal(size=(500, 12)) * rng.uniform(0.2, 3.0, size=(500, 1))).astype(np.float32)
    xq = rng.normal(size=(15, 12)).astype(np.float32)
    index = genie.VectorIndex(x, metric=metric)
    d, i = index.search(xq, 5, device=device, candidates=200)
    dots = xq.astype(np.float64) @ x.T.astype(np.float64)
    if metric == "cosine":
        norms = np.linalg.norm(xq, axis=1)[:, None] * np.linalg.norm(x, axis=1)[None, :]
        want = 1.0 - dots / norms
    else:
        want = -dots
    # each hit's distance is the metric's, ascending; most of the exact top 5 are found
    np.testing.assert_allclose(np.take_along_axis(want, i, axis=1), d, rtol=1e-3, atol=1e-4)
    assert (np.diff(d, axis=1) >= 0).all()
    exact = np.argsort(want, axis=1)[:, :5]
    found = np.mean([len(set(a) & set(b)) / 5 for a, b in zip(i, exact)])
    assert found >= 0.8, found
    with pytest.raises(ValueError, match="metric"):
        genie.VectorIndex(x, metric="dot")


@pytest.mark.parametrize("rerank", ["f16", "sq8", "codes"])
def test_vectors_rerank_forms(device, rerank, tmp_path):
    rng = np.random.default_rng(5)
    centres = rng.normal(size=(20, 16)) * 4
    x = (centres[rng.integers(0, 20, 2000)] + rng.normal(size=(2000, 16))).astype(np.float32)
    xq = x[:30] + rng.normal(size=(30, 16)).astype(np.float32) * 0.1
    index = genie.VectorIndex(x, rerank=rerank)
    d, i = index.search(xq, 5, device=device, candidates=300)
    dist = np.linalg.norm(xq[:, None, :].astype(np.float64) - x[None, :, :], axis=2)
    exact = np.argsort(dist, axis=1)[:, :5]
    found = np.mean([len(set(a) & set(b)) / 5 for a, b in zip(i, exact)])
    # the compact copies keep the float copy's answers nearly; the codes approximate them
    assert found >= (0.9 if rerank != "codes" else 0.4), found
    assert (np.diff(d, axis=1) >= 0).all()
    if rerank != "codes":
        np.testing.assert_allclose(np.take_along_axis(dist, i, axis=1), d, rtol=0.05, atol=0.05)
    index.save(tmp_path / "r.genie")
    again = genie.load(tmp_path / "r.genie")
    assert again.search_json(xq, 5, device=device) == index.search_json(xq, 5, device=device)
    with pytest.raises(ValueError, match="rerank"):
        genie.VectorIndex(x, rerank="f8")


@pytest.mark.parametrize("lsh", [None, "e2lsh"])
def test_vectors_filtered(device, lsh):
    rng = np.random.default_rng(8)
    x = rng.normal(size=(800, 8)).astype(np.float32)
    xq = rng.normal(size=(12, 8)).astype(np.float32)
    index = genie.VectorIndex(x, lsh=lsh)
    allowed = np.arange(0, 800, 97)  # 9 vectors: every one re-ranked, the answer exact
    d, i = index.search(xq, 5, device=device, filter=allowed, exclude=[97])
    kept = np.setdiff1d(allowed, [97])
    dist = np.linalg.norm(xq[:, None, :] - x[None, kept, :], axis=2)
    want = kept[np.argsort(dist, axis=1)[:, :5]]
    assert (i == want).all()
    np.testing.assert_allclose(d, np.sort(dist, axis=1)[:, :5], rtol=1e-4)


def test_sequences_by_edit_distance(cli, device, tmp_path):
    rng = np.random.default_rng(5)
    seqs = words(rng, 400)
    queries = [s[:-1] + "a" for s in seqs[:30]] + ["", "zzzz"]
    write_lines(tmp_path / "s.txt", seqs)
    write_lines(tmp_path / "q.txt", queries)
    want = program_answers(cli, "sequences", tmp_path / "s.txt", tmp_path / "s.genie",
                           tmp_path / "q.txt", 4, "--ngram", 2)
    index = genie.SequenceIndex(seqs, ngram=2)
    assert index.search_json(queries, 4, device=device) == want
    d, i = index.search(queries, 4, device=device)
    assert d.dtype == np.int64 and i.dtype == np.int64 and d.shape == (32, 4)
    for line, drow, irow in zip(want, d, i):
        hits = json.loads(line)["hits"]
        assert [h["id"] for h in hits] == [x for x in irow if x >= 0]
        assert [h["distance"] for h in hits] == [x for x in drow if x >= 0]
    index.save(tmp_path / "saved.genie")
    assert cli.search(tmp_path / "saved.genie", tmp_path / "q.txt", 4) == want
    with pytest.raises(ValueError, match="line break"):
        genie.SequenceIndex(["ab\ncd"])


def test_documents_by_shared_words(cli, device, tmp_path):
    rng = np.random.default_rng(9)
    vocab = words(rng, 80)
    docs = [" ".join(rng.choice(vocab, size=rng.integers(2, 10))) for _ in range(300)]
    queries = [" ".join(rng.choice(vocab, size=3)) for _ in range(25)] + ["The and of"]
    write_lines(tmp_path / "d.txt", docs)
    write_lines(tmp_path / "q.txt", queries)
    want = program_answers(cli, "documents", tmp_path / "d.txt", tmp_path / "d.genie",
                           tmp_path / "q.txt", 6)
    index = genie.DocumentIndex(docs)
    assert index.search_json(queries, 6, device=device) == want
    counts, ids = index.search(queries, 6, device=device)
    assert counts.shape == (26, 6) and (ids[-1] == -1).all()
    index.save(tmp_path / "saved.genie")
    assert cli.search(tmp_path / "saved.genie", tmp_path / "q.txt", 6) == want


def test_packed_postings_answer_as_plain(cli, device, tmp_path):
    rng = np.random.default_rng(10)
    vocab = words(rng, 60)
    docs = [" ".join(rng.choice(vocab, size=rng.integers(2, 12))) for _ in range(2000)]
    queries = [" ".join(rng.choice(vocab, size=4)) for _ in range(30)]
    write_lines(tmp_path / "d.txt", docs)
    write_lines(tmp_path / "q.txt", queries)
    want = program_answers(cli, "documents", tmp_path / "d.txt", tmp_path / "plain.genie",
                           tmp_path / "q.txt", 7)
    packed = program_answers(cli, "documents", tmp_path / "d.txt", tmp_path / "packed.genie",
                             tmp_path / "q.txt", 7, "--postings", "packed")
    assert packed == want
    assert (tmp_path / "packed.genie").stat().st_size < (tmp_path / "plain.genie").stat().st_size
    info = json.loads(cli.run("info", "--json", "--index", tmp_path / "packed.genie"))
    assert info["list_array"] == "packed" and info["bytes_per_posting"] < 4
    index = genie.DocumentIndex(docs, postings="packed")
    assert index.search_json(queries, 7, device=device) == want
    with pytest.raises(ValueError, match="postings"):
        genie.DocumentIndex(docs, postings="zipped")


def people(n=300, seed=11):
    rng = np.random.default_rng(seed)
    return pd.DataFrame({
        "age": rng.integers(17, 90, size=n),
        "workclass": rng.choice(["Private", "State-gov", "Self-emp"], size=n),
        "hours": np.round(rng.uniform(1, 99, size=n), 1),
        "sex": rng.choice(["Male", "Female"], size=n),
    })


CONDITIONS = [
    {"age": (30, 40), "workclass": "Private"},
    {"hours": (None, 20.5), "sex": "Female"},
    {"age": 50},
    {"workclass": "Nobody"},
    "age=20..25 sex=Male",
]


def test_table_from_pandas_and_arrow(cli, device, tmp_path):
    df = people()
    df.to_csv(tmp_path / "t.csv", index=False)
    texts = [genie._queries.conditions(c) for c in CONDITIONS]
    write_lines(tmp_path / "q.txt", texts)
    want = program_answers(cli, "table", tmp_path / "t.csv", tmp_path / "t.genie",
                           tmp_path / "q.txt", 8)
    index = genie.TableIndex(df)
    assert index.search_json(CONDITIONS, 8, device=device) == want
    counts, ids = index.search(CONDITIONS, 8, device=device)
    assert counts.shape == (5, 8) and (ids[3] == -1).all()
    assert (counts[0] == 2).all()  # many rows meet both conditions
    rows = df.iloc[ids[0]]
    assert rows.age.between(30, 40).all() and (rows.workclass == "Private").all()
    # a row as a CSV line, searched with a radius, as the program does
    row = ",".join(str(v) for v in df.iloc[7])
    write_lines(tmp_path / "r.txt", [row])
    want_row = cli.search(tmp_path / "t.genie", tmp_path / "r.txt", 3, "--radius", 1)
    assert index.search_json([row], 3, device=device, radius=1) == want_row
    with pytest.raises(ValueError, match="unknown attribute"):
        index.search([{"height": 3}], 3)
    with pytest.raises(ValueError, match="pandas DataFrame or a pyarrow Table"):
        genie.TableIndex([[1, 2]])
    with pytest.raises(ValueError, match="a space inside"):
        index.search([{"workclass": "Self emp"}], 3)


def test_table_from_arrow(cli, device, tmp_path):
    # pyarrow is installed by .ci/run; a machine without it (a device run) skips this one
    pa = pytest.importorskip("pyarrow")
    import pyarrow.csv as pacsv

    table = pa.Table.from_pandas(people(), preserve_index=False)
    pacsv.write_csv(table, tmp_path / "a.csv")
    texts = [genie._queries.conditions(c) for c in CONDITIONS]
    write_lines(tmp_path / "q.txt", texts)
    want = program_answers(cli, "table", tmp_path / "a.csv", tmp_path / "a.genie",
                           tmp_path / "q.txt", 8)
    assert genie.TableIndex(table).search_json(CONDITIONS, 8, device=device) == want
    assert genie.TableIndex(table).search(CONDITIONS, 8, device=device)[0][0].tolist() == [2] * 8


def test_a_kind_of_ones_own_takes_its_declared_keywords(tmp_path):
    # the template kind `letters` (one module and one register call in the library, no line of
    # this package about it), in the wheel when built with the feature test-kind, as CI builds it
    if "letters" not in genie.kinds():
        pytest.skip("this wheel was built without the feature test-kind (CI builds it with)")
    write_lines(tmp_path / "w.txt", ["abc", "xyz", "abd"])
    genie._genie.build("letters", str(tmp_path / "w.txt"), str(tmp_path / "w.genie"), "{}")
    index = genie.load(tmp_path / "w.genie")
    assert index.kind == "letters"
    plain = index.search_json(["abd"], 2)
    assert [h["id"] for h in json.loads(plain[0])["hits"]] == [2, 0]
    # its declared option as a Python keyword, checked against its declaration
    assert index.search_json(["ABD"], 2, case="fold") == plain
    with pytest.raises(ValueError, match="keep or fold"):
        index.search_json(["abd"], 2, case="upper")
    with pytest.raises(ValueError, match="radius"):
        index.search_json(["abd"], 2, radius=1)
