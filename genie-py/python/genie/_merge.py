"""How :mod:`genie.dask` joins the shards' answers: local ids made global, the exact top-``k``
of the shards' hits per query, and the answers of consecutive query chunks stacked."""

from __future__ import annotations

from typing import Any, Sequence, Tuple

import numpy as np


def _local_to_global(ids: np.ndarray, runs: np.ndarray) -> np.ndarray:
    """Local ids (``-1`` none) as global ids by the shard's runs ``(local, global, length)``."""
    if len(runs) == 1:
        return np.where(ids >= 0, ids + (runs[0, 1] - runs[0, 0]), -1)
    r = np.searchsorted(runs[:, 0], ids, side="right") - 1
    r = np.clip(r, 0, len(runs) - 1)
    return np.where(ids >= 0, ids - runs[r, 0] + runs[r, 1], -1)


def _merge(parts: Sequence[Tuple[Any, ...]], k: int, by_distance: bool) -> Tuple[Any, Any, Any]:
    """The exact top-``k`` of the shards' answers: ``(counts, ids, distances or None)``; hits by
    count descending then id ascending, or by distance ascending, count descending, id
    ascending."""
    if not by_distance and all(p[2] is None for p in parts):
        return _merge_counts(parts, k)
    return _merge_sorted(parts, k, by_distance)


def _merge_sorted(parts: Sequence[Tuple[Any, ...]], k: int,
                  by_distance: bool) -> Tuple[Any, Any, Any]:
    """:func:`_merge` by a lexicographic sort of each query's hits."""
    counts = np.concatenate([np.asarray(p[0], dtype=np.int64) for p in parts], axis=1)
    ids = np.concatenate([np.asarray(p[1], dtype=np.int64) for p in parts], axis=1)
    dist = None
    if any(p[2] is not None for p in parts):
        dist = np.concatenate(
            [np.full(np.shape(p[1]), np.inf) if p[2] is None else np.asarray(p[2], np.float64)
             for p in parts], axis=1)
    none = ids < 0
    counts = np.where(none, 0, counts)
    id_key = np.where(none, np.iinfo(np.int64).max, ids)
    keys = [id_key, -counts]
    if by_distance:
        keys.append(np.where(none, np.inf, dist))
    order = np.lexsort(keys, axis=1)[:, :k]
    take = lambda a: np.take_along_axis(a, order, axis=1)  # noqa: E731
    counts, ids = take(counts), np.where(take(none), -1, take(ids))
    dist = None if dist is None else np.where(ids < 0, np.inf, take(dist))
    return _pad(counts, ids, dist, k)


def _merge_counts(parts: Sequence[Tuple[Any, ...]], k: int) -> Tuple[Any, Any, None]:
    """:func:`_merge` by count descending then id ascending, in the extension (each query's hits
    of all the shards cut to the ``k`` best, the queries on all cores, the GIL released)."""
    from ._genie import merge_counts

    # (arrays sent between processes may come unaligned: copied then)
    counts, ids = merge_counts([np.require(p[0], np.uint32, "CA") for p in parts],
                               [np.require(p[1], np.int64, "CA") for p in parts], k)
    return counts, ids, None


def _pad(counts: Any, ids: Any, dist: Any, k: int) -> Tuple[Any, Any, Any]:
    """The answers widened to ``k`` hits (fewer hits than ``k`` in all the shards together)."""
    width = counts.shape[1]
    if width < k:
        pad = k - width
        counts = np.pad(counts, ((0, 0), (0, pad)))
        ids = np.pad(ids, ((0, 0), (0, pad)), constant_values=-1)
        if dist is not None:
            dist = np.pad(dist, ((0, 0), (0, pad)), constant_values=np.inf)
    return counts, ids, dist


def _stack(answers: Sequence[Tuple[Any, Any, Any]]) -> Tuple[Any, Any, Any]:
    """The merged answers of consecutive query chunks as one."""
    counts = np.concatenate([a[0] for a in answers])
    ids = np.concatenate([a[1] for a in answers])
    dist = None if answers[0][2] is None else np.concatenate([a[2] for a in answers])
    return counts, ids, dist
