"""What :mod:`genie.dask` runs on the workers: each process's cache of open shards (loaded from
their files, kept resident between searches), a shard's build, its search with local ids made
global, and a node of the tree merge."""

from __future__ import annotations

import threading
import time
from typing import Any, Dict, List, Optional, Sequence, Tuple

import numpy as np

from . import _index
from . import _queries as q
from ._merge import _local_to_global, _merge


_SHARDS: Dict[str, Any] = {}
_LOCK = threading.Lock()


def _shard_name(i: int) -> str:
    return f"shard-{i:05d}.genie"


def _load_shard(i: int, path: str) -> Any:
    """Shard ``i`` from ``path``, from this process's cache or its file."""
    with _LOCK:
        index = _SHARDS.get(path)
        if index is not None:
            return index
        try:
            index = _index.load(path)
        except FileNotFoundError as e:
            raise FileNotFoundError(f"shard {i}: its file {path} is missing ({e})") from None
        except (ValueError, OSError) as e:
            raise ValueError(f"shard {i}: its file {path} is not a sound genie index: {e}") from None
        _SHARDS[path] = index
        return index


def _drop_shards(paths: Sequence[str]) -> int:
    with _LOCK:
        return sum(_SHARDS.pop(p, None) is not None for p in paths)


def _resident(path: str) -> bool:
    return path in _SHARDS


def _rows(parts: Sequence[Any]) -> Any:
    """The objects of several partitions, in order, as one list, array or DataFrame."""
    first = parts[0] if parts else []
    if isinstance(first, np.ndarray):
        return np.concatenate(parts) if len(parts) > 1 else first
    if hasattr(first, "iloc"):
        import pandas as pd

        if len(parts) == 1:
            return first
        return pd.concat(parts, ignore_index=True)
    out: List[Any] = []
    for p in parts:
        out.extend(p.tolist() if hasattr(p, "tolist") else p)
    return out


def _texts(rows: Any) -> List[str]:
    if hasattr(rows, "iloc"):
        if getattr(rows, "ndim", 1) == 2:
            if rows.shape[1] != 1:
                raise ValueError("a dataframe of texts must have one column")
            rows = rows.iloc[:, 0]
        rows = rows.tolist()
    return [str(x) for x in rows]


def _with_range_rows(df: Any, ranges: Dict[str, Tuple[Any, Any]]) -> Any:
    """``df`` with two rows appended: each numeric column's global minimum, then maximum (other
    columns repeat the first row's value)."""
    import pandas as pd

    if len(df) == 0:
        raise ValueError("a table shard without rows")
    extra = pd.concat([df.iloc[:1], df.iloc[:1]], ignore_index=True)
    for col, (lo, hi) in ranges.items():
        extra[col] = pd.Series([lo, hi], dtype=df[col].dtype)
    return pd.concat([df, extra], ignore_index=True)


def _build_shard(i: int, path: str, kind: str, params: Dict[str, Any], device: Optional[str],
                 *parts: Any) -> Dict[str, Any]:
    """Builds shard ``i`` of ``parts``, saves it at ``path``, keeps it open; its size and the
    index's metadata."""
    params = dict(params)
    rows = _rows(parts)
    if kind == "keywords":
        if isinstance(rows, np.ndarray):
            if rows.ndim != 2:
                raise ValueError("keywords: a dask array of keywords must have one row per object")
            n, width = rows.shape
            offsets = np.arange(n + 1, dtype=np.uint64) * np.uint64(width)
            index = _index.Index.from_keywords((offsets, q.aligned_rows(rows.ravel(), rows.dtype)),
                                               name=f"shard {i}")
        else:
            index = _index.Index.from_keywords(list(rows), name=f"shard {i}")
    elif kind == "vectors":
        x = rows if isinstance(rows, np.ndarray) else np.asarray(list(rows), dtype=np.float32)
        index = _index.VectorIndex(x, **params)
    elif kind == "sequences":
        index = _index.SequenceIndex(_texts(rows), **params)
    elif kind == "documents":
        index = _index.DocumentIndex(_texts(rows), **params)
    elif kind == "table":
        ranges = {c: tuple(v) for c, v in params.pop("_ranges").items()}
        index = _index.TableIndex(_with_range_rows(rows, ranges), **params)
    else:
        raise ValueError(f"kind: expected one of {', '.join(_kinds())}, found {kind!r}")
    index.save(path)
    del index
    index = _load_shard(i, path)
    if device is not None:
        index.backend(device)
    return {"objects": len(rows), "metadata": index.metadata}


def _open_shard(i: int, path: str, device: Optional[str]) -> int:
    index = _load_shard(i, path)
    if device is not None:
        index.backend(device)
    return index.num_objects


def _search_shard(i: int, path: str, kind: str, objects: int, runs: Any, queries: Any, k: int,
                  device: Optional[str], min_count: Optional[int], options: Dict[str, Any],
                  pause: float) -> Tuple[Any, ...]:
    """Shard ``i``'s top-``k`` of each query, with global ids: ``(counts, ids, distances or None,
    exact or None, seconds of the search)``."""
    if pause:
        time.sleep(pause)
    index = _load_shard(i, path)
    t = time.perf_counter()
    counts, ids, dist, exact = index._search(queries, k, device, min_count, options, False)
    seconds = time.perf_counter() - t
    ids = np.asarray(ids)
    if kind == "table":
        ids = np.where(ids >= objects, -1, ids)  # the range rows
    return counts, _local_to_global(ids, np.asarray(runs, dtype=np.int64)), dist, exact, seconds


def _seconds(part: Tuple[Any, ...], worker: str) -> List[Tuple[str, float]]:
    """The searches' seconds an answer carries, per worker: a shard's answer its own search's
    (on ``worker``), a merged answer those of the searches it joins."""
    return [(worker, part[4])] if isinstance(part[4], float) else list(part[4])


def _merge_pair(a: Tuple[Any, ...], b: Tuple[Any, ...], wa: str, wb: str, k: int,
                by_distance: bool) -> Tuple[Any, ...]:
    """Two answers of one query chunk (shards' or merged ones) merged on a worker: a node of the
    tree merge, in the form of a shard's answer (its seconds those of the searches it joins)."""
    counts, ids, dist = _merge([a, b], k, by_distance)
    return counts, ids, dist, None, _seconds(a, wa) + _seconds(b, wb)
