"""Python inputs in the forms the extension takes: keyword objects and keyword queries as CSR
arrays, table conditions as text, texts checked to be one line each."""

from __future__ import annotations

import math
import operator
from typing import Any, Mapping, Optional, Sequence, Tuple

import numpy as np

INT_TYPES = (np.uint32, np.int32, np.uint64, np.int64)

#: the largest k the extension takes (it caps k at the number of objects itself too)
K_MAX = (1 << 32) - 1


def k_of(k: Any, objects: Optional[int]) -> int:
    """``k`` checked to be a non-negative integer and capped at ``objects`` (the number of
    objects; ``None`` when not known yet): a larger k gives the same hits, and answer arrays
    ``min(k, objects)`` columns."""
    if isinstance(k, (bool, np.bool_)):
        raise ValueError(f"k: expected a non-negative integer (hits per query), found {k!r}")
    try:
        k = operator.index(k)
    except TypeError:
        raise ValueError(
            f"k: expected a non-negative integer (hits per query), found {k!r}"
        ) from None
    if k < 0:
        raise ValueError(f"k: expected a non-negative integer (hits per query), found {k}")
    return min(k, K_MAX if objects is None else objects)


def _ints(a: Any, what: str) -> np.ndarray:
    """A 1-D C-ordered integer array, without a copy when ``a`` already is one of genie's types."""
    arr = np.asarray(a)
    if arr.size == 0 and arr.dtype.kind not in "iu":
        arr = arr.astype(np.uint32)
    if arr.ndim != 1:
        raise ValueError(f"{what}: expected a 1-D array of integers, found {arr.ndim} dimensions")
    if arr.dtype.kind not in "iu":
        raise ValueError(f"{what}: expected integers, found dtype {arr.dtype}")
    if arr.dtype.type not in INT_TYPES:
        arr = arr.astype(np.int64)
    # aligned too: an array unpickled from a buffer (as dask sends them) may not be, and the
    # extension reads arrays in place
    return np.require(arr, requirements=["C", "A"])


def ids(a: Any, what: str) -> Optional[np.ndarray]:
    """Object ids (a filter's, an exclusion's, objects' to add or delete) as a 1-D integer array
    (``None`` stays ``None``): a sequence or NumPy array of integers, or a set. Their range (an
    unsigned 64-bit integer each) is checked where they are used."""
    if a is None:
        return None
    if isinstance(a, (set, frozenset)):
        a = sorted(a)
    if isinstance(a, (str, bytes)) or np.ndim(a) == 0:
        raise ValueError(f"{what}: expected a sequence or 1-D array of ids, found {a!r}")
    return _ints(a, what)


def id_list(a: Any, what: str) -> list:
    """:func:`ids` as a list of Python ints (for JSON), each checked to be an unsigned 64-bit
    integer as the extension checks them (``ids: id 3 is -1: expected ...``)."""
    arr = ids(a, what)
    out = [int(v) for v in arr]
    for i, v in enumerate(out):
        if not 0 <= v < 1 << 64:
            raise ValueError(f"{what}: id {i} is {v}: expected an unsigned 64-bit integer")
    return out


def aligned_rows(a: Any, dtype: Any) -> np.ndarray:
    """``a`` as a C-ordered, aligned array of ``dtype`` (copied only when it is not one)."""
    return np.require(np.asarray(a, dtype=dtype), requirements=["C", "A"])


def finite_rows(x: np.ndarray) -> None:
    """Raises ValueError naming the first element of the rows of ``x`` (query vectors) that is
    NaN or infinite (JSON has no such number), as the extension says it."""
    bad = ~np.isfinite(x)
    if bad.any():
        i, j = (int(v) for v in np.argwhere(bad)[0])
        v = x[i, j]
        what = "NaN" if np.isnan(v) else ("inf" if v > 0 else "-inf")
        raise ValueError(f"queries[{i}]: element {j} is {what}; expected a finite number")


def _concat(parts: Sequence[np.ndarray], dtype: Any) -> np.ndarray:
    return np.concatenate(parts).astype(dtype, copy=False) if parts else np.zeros(0, dtype)


def objects_csr(objects: Any) -> Tuple[np.ndarray, np.ndarray]:
    """Keyword objects as ``(offsets, keywords)``: a tuple is a CSR pair already (read in place);
    a list (or 2-D array) holds one keyword array per object."""
    if isinstance(objects, tuple):
        if len(objects) != 2:
            raise ValueError(
                "objects: a tuple is a CSR pair (offsets, keywords), "
                f"found a tuple of {len(objects)}"
            )
        return _ints(objects[0], "offsets"), _ints(objects[1], "keywords")
    rows = [_ints(o, f"object {i}") for i, o in enumerate(objects)]
    offsets = np.zeros(len(rows) + 1, dtype=np.uint64)
    np.cumsum([len(r) for r in rows], out=offsets[1:])
    return offsets, _concat([r.astype(np.int64, copy=False) for r in rows], np.int64)


def keyword_items(queries: Any) -> Tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Keyword queries as a CSR of items ``(offsets, lo, hi, weight)``.

    ``queries`` is a tuple ``(offsets, keywords)`` (a CSR of keywords), a tuple
    ``(offsets, lo, hi, weight)`` (a CSR of items, read in place), or a list with one query per
    element: an array of keywords, or a tuple ``(lo, hi)`` or ``(lo, hi, weight)`` of arrays.
    """
    if isinstance(queries, tuple):
        if len(queries) == 2:
            offsets, kw = _ints(queries[0], "offsets"), _ints(queries[1], "keywords")
            return offsets, kw, kw, np.ones(len(kw), dtype=np.uint32)
        if len(queries) == 4:
            names = ("offsets", "lo", "hi", "weight")
            o, lo, hi, w = (_ints(a, n) for a, n in zip(queries, names))
            return o, lo, hi, w
        raise ValueError(
            "queries: a tuple is a CSR, (offsets, keywords) or (offsets, lo, hi, weight); "
            f"found a tuple of {len(queries)}"
        )
    los, his, ws, counts = [], [], [], []
    for i, q in enumerate(queries):
        if isinstance(q, tuple):
            if len(q) not in (2, 3):
                raise ValueError(f"query {i}: expected (lo, hi) or (lo, hi, weight) arrays")
            lo, hi = _ints(q[0], f"query {i} lo"), _ints(q[1], f"query {i} hi")
            w = _ints(q[2], f"query {i} weight") if len(q) == 3 else np.ones(len(lo), np.int64)
            if not len(lo) == len(hi) == len(w):
                raise ValueError(f"query {i}: lo, hi and weight differ in length")
        else:
            lo = hi = _ints(q, f"query {i}")
            w = np.ones(len(lo), np.int64)
        los.append(lo.astype(np.int64, copy=False))
        his.append(hi.astype(np.int64, copy=False))
        ws.append(w.astype(np.int64, copy=False))
        counts.append(len(lo))
    offsets = np.zeros(len(counts) + 1, dtype=np.uint64)
    np.cumsum(counts, out=offsets[1:])
    return (
        offsets,
        _concat(los, np.int64),
        _concat(his, np.int64),
        _concat(ws, np.int64),
    )


def keyword_json(queries: Any) -> list:
    """Keyword queries in the server's JSON form: per query a list of ``[lo, hi, weight]``."""
    offsets, lo, hi, w = keyword_items(queries)
    out = []
    for i in range(len(offsets) - 1):
        a, b = int(offsets[i]), int(offsets[i + 1])
        out.append([[int(lo[j]), int(hi[j]), int(w[j])] for j in range(a, b)])
    return out


def lines(texts: Any, what: str) -> list:
    """Texts that must each be one line (the `genie` program reads them one per line)."""
    if isinstance(texts, str):
        raise ValueError(f"{what}: expected a list of strings, found one string")
    out = []
    for i, t in enumerate(texts):
        if not isinstance(t, str):
            raise ValueError(f"{what} {i}: expected a string, found {type(t).__name__}")
        if "\n" in t or "\r" in t:
            raise ValueError(f"{what} {i}: a line break inside: each is one line")
        out.append(t)
    return out


def _number(v: Any) -> str:
    if isinstance(v, (bool, np.bool_)):
        raise ValueError(f"expected a number or a string, found {v!r}")
    if isinstance(v, (float, np.floating)) and math.isfinite(v) and float(v).is_integer():
        return str(int(v))
    return str(v)


def _spec(name: str, value: Any) -> str:
    if isinstance(value, tuple):
        if len(value) != 2:
            raise ValueError(f"condition {name}: a range is (lo, hi), found {value!r}")
        lo, hi = value
        return ("" if lo is None else _number(lo)) + ".." + ("" if hi is None else _number(hi))
    text = value if isinstance(value, str) else _number(value)
    if any(c.isspace() for c in text.strip()):
        raise ValueError(f"condition {name}: a value with a space inside cannot be searched")
    return text.strip()


def conditions(query: Any) -> str:
    """A table query as the text `genie search` reads: a dict of conditions becomes
    ``age=30..40 workclass=Private`` (a value, a ``(lo, hi)`` range with ``None`` for an open
    end); a string is taken as it is (conditions, or a CSV row)."""
    if isinstance(query, str):
        return query
    if not isinstance(query, Mapping):
        raise ValueError(f"expected a dict of conditions or a string, found {type(query).__name__}")
    parts = []
    for name, value in query.items():
        if not isinstance(name, str) or not name or any(c.isspace() or c == "=" for c in name):
            raise ValueError(f"condition {name!r}: not a column name genie can search")
        parts.append(f"{name}={_spec(name, value)}")
    return " ".join(parts)
