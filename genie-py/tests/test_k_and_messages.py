"""What a new user hits first: k checked and capped at the number of objects (a k beyond them
costs nothing more), and messages that name what the user passed (the argument of a build, the
query and element of a NaN), never the temporary files a build goes through."""

from __future__ import annotations

import re
import tempfile

import numpy as np
import pandas as pd
import pytest

import genie

K_MESSAGE = r"^k: expected a non-negative integer \(hits per query\), found "


@pytest.fixture(scope="module")
def indexes():
    """One small index of each kind, with queries for it."""
    rng = np.random.default_rng(2)
    x = rng.normal(size=(40, 6)).astype(np.float32)
    df = pd.DataFrame({"age": rng.integers(20, 60, size=30),
                       "sex": rng.choice(["Male", "Female"], size=30)})
    return {
        "keywords": (genie.Index.from_keywords([[1, 2], [2, 3], [3, 4, 5], [9]]), [[2, 3], [9]]),
        "vectors": (genie.VectorIndex(x, seed=1), x[:3] + 0.01),
        "sequences": (genie.SequenceIndex(["kitten", "sitting", "mitten", "fitting"], ngram=2),
                      ["kitten", "bitten"]),
        "documents": (genie.DocumentIndex(["red apple", "green apple pie", "blue sky"]),
                      ["apple pie", "sky"]),
        "table": (genie.TableIndex(df), [{"age": (30, 40)}, {"sex": "Male"}]),
    }


KINDS = ["keywords", "vectors", "sequences", "documents", "table"]


@pytest.mark.parametrize("kind", KINDS)
@pytest.mark.parametrize("k", [-1, 1.5, 2.0, "3", None, True])
def test_a_bad_k_is_a_value_error_naming_k(indexes, kind, k):
    index, queries = indexes[kind]
    with pytest.raises(ValueError, match=K_MESSAGE + re.escape(repr(k)) + "$"):
        index.search(queries, k)
    with pytest.raises(ValueError, match=K_MESSAGE):
        index.search_json(queries, k)


@pytest.mark.parametrize("kind", KINDS)
def test_k_beyond_the_objects_gives_as_many_columns_as_objects(indexes, kind, device):
    index, queries = indexes[kind]
    n = index.num_objects
    nq = len(queries)
    want = index.search(queries, n, device=device)
    assert want[0].shape == want[1].shape == (nq, n)
    # 10**6 was 12 MB of answers a query; 10**10 and 2**64 overflowed the extension's k
    for k in (n + 1, 10**6, 10**10, 2**64, np.int64(10**12)):
        got = index.search(queries, k, device=device)
        assert got[0].shape == got[1].shape == (nq, n), k
        for g, w in zip(got, want):
            np.testing.assert_array_equal(g, w)
        assert index.search_json(queries, k, device=device) == index.search_json(
            queries, n, device=device)
    # with min_count (the answers' path, not the columns'), the same width
    if kind != "vectors":
        got = index.search(queries, 10**6, device=device, min_count=1)
        assert got[1].shape == (nq, n)
    # k = 0: no columns
    assert index.search(queries, 0, device=device)[1].shape == (nq, 0)


def test_the_extension_caps_k_itself(indexes, device):
    """The handle under the Python classes allocates no more than the objects for a large k."""
    index, _ = indexes["keywords"]
    counts, ids, _, _ = index._handle.search_texts(["2 3", "9"], 10**6, None, device)
    assert counts.shape == ids.shape == (2, 4)
    assert ids[0].tolist() == [1, 0, 2, -1] and counts[0].tolist() == [2, 1, 1, 0]
    documents, _ = indexes["documents"]
    _, ids, _, _ = documents._handle.search_texts(["apple"], 10**6, 1, device)
    assert ids.tolist() == [[0, 1, -1]]


def test_a_vector_build_names_the_argument_and_the_row(tmp_path):
    x = np.ones((10, 4), dtype=np.float32)
    x[7, 2] = np.nan
    with pytest.raises(ValueError) as e:
        genie.VectorIndex(x)
    message = str(e.value)
    assert message.startswith("x: row 7, column 2: NaN is not a finite number"), message
    assert message.count("row 7") == 1
    assert tempfile.gettempdir() not in message and "vectors.npy" not in message, message
    x[7, 2] = -np.inf
    with pytest.raises(ValueError, match=r"^x: row 7, column 2: -inf is not a finite number"):
        genie.VectorIndex(x)
    with pytest.raises(ValueError, match=r"^x: no vector to index$"):
        genie.VectorIndex(np.ones((0, 4), dtype=np.float32))


def test_a_table_build_names_the_argument():
    df = pd.DataFrame({"age": [30, 40], "sex": ["Male", "Female"]})
    with pytest.raises(ValueError) as e:
        genie.TableIndex(df, numeric=["height"])
    message = str(e.value)
    assert message.startswith("table: unknown attribute \"height\""), message
    assert tempfile.gettempdir() not in message and "table.csv" not in message, message


def test_the_temporary_file_is_replaced_wherever_it_is_named():
    """The rewriting of a build's message, on the forms the library writes: the file twice with
    the build's wrapper between (or once), a line of a text file, the folder elsewhere."""
    from genie._index import _named

    src, folder = "/tmp/genie-ab12/vectors.npy", "/tmp/genie-ab12"
    assert _named(f"{src}: cannot build a vector index: {src}: vector 7 (0-based), column 2: "
                  "NaN is not a finite number", src, folder, "x", 0) == (
        "x: row 7, column 2: NaN is not a finite number")
    assert _named(f"{src}: vector 7 (0-based), column 2: NaN", src, folder, "x", 0) == (
        "x: row 7, column 2: NaN")
    src = "/tmp/genie-ab12/sequences.txt"
    assert _named(f"{src}:3: line is not valid UTF-8", src, folder, "sequences", 1) == (
        "sequences[2]: line is not valid UTF-8")
    src = "/tmp/genie-ab12/table.csv"
    assert _named(f"{src}:5: expected 3 fields", src, folder, "table", 2) == (
        "table[3]: expected 3 fields")
    assert _named(f"cannot write {folder}/index.genie", src, folder, "table", 2) == (
        "cannot write index.genie")


def test_a_nan_in_a_query_vector_is_named_before_json(indexes, device):
    index, queries = indexes["vectors"]
    bad = np.array(queries, dtype=np.float32)
    bad[2, 4] = np.nan
    with pytest.raises(ValueError, match=r"^queries\[2\]: element 4 is NaN; expected a finite"):
        index.search(bad, 3, device=device)
    bad[2, 4] = np.inf
    with pytest.raises(ValueError, match=r"^queries\[2\]: element 4 is inf; expected a finite"):
        index.search_json(bad, 3, device=device)


@pytest.mark.parametrize(
    "build",
    [
        lambda: genie.Index.from_keywords([]),
        lambda: genie.SequenceIndex([]),
        lambda: genie.DocumentIndex([]),
    ],
    ids=["keywords", "sequences", "documents"],
)
def test_an_index_of_no_objects_warns(build):
    with pytest.warns(UserWarning, match="the index holds no objects"):
        index = build()
    assert len(index) == 0


def test_an_index_of_objects_does_not_warn():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert len(genie.Index.from_keywords([[1, 2]])) == 1
