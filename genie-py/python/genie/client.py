"""A client of `genie serve` (its JSON API over HTTP, see the README's "Serve it"), with the
return values of the local indexes: ``(counts, ids)``, or ``(distances, ids)`` for vectors and
sequences."""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from . import _queries as q


class Client:
    """A client of the server at ``url`` (e.g. ``http://127.0.0.1:7700``); ``token`` is the
    server's ``--token``, sent as ``Authorization: Bearer``. Thread-safe: each call is one
    request."""

    def __init__(self, url: str, token: Optional[str] = None, timeout: float = 60.0) -> None:
        self.url = url.rstrip("/")
        self.token = token
        self.timeout = timeout
        self._kinds: Dict[str, str] = {}
        self._objects: Dict[str, int] = {}

    def _request(self, path: str, body: Optional[dict] = None) -> Any:
        data = None if body is None else json.dumps(body).encode()
        method = "GET" if data is None else "POST"
        req = urllib.request.Request(self.url + path, data=data, method=method)
        if data is not None:
            req.add_header("content-type", "application/json")
        if self.token:
            req.add_header("authorization", f"Bearer {self.token}")
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                return json.loads(resp.read())
        except urllib.error.HTTPError as e:
            raw = e.read()
            try:
                message = json.loads(raw).get("error", raw.decode(errors="replace"))
            except ValueError:
                message = raw.decode(errors="replace")
            raise _error(e.code, message) from None

    def indexes(self) -> List[dict]:
        """The indexes served: ``[{"name", "kind", "objects", "devices"}]``."""
        found = self._request("/v1/indexes")["indexes"]
        self._kinds.update({i["name"]: i["kind"] for i in found})
        self._objects.update({i["name"]: i["objects"] for i in found if "objects" in i})
        return found

    def _kind(self, name: str) -> str:
        if name not in self._kinds:
            self.indexes()
        if name not in self._kinds:
            raise LookupError(f"no index {name!r} on {self.url}")
        return self._kinds[name]

    def search_json(
        self,
        name: str,
        queries: Any,
        k: int = 10,
        min_count: Optional[int] = None,
        **options: Any,
    ) -> List[dict]:
        """The server's results for these queries, one dict per query: the JSON lines of
        `genie search`, parsed. ``k``: a non-negative integer; one beyond the index's objects is
        sent as the number of objects (the same hits)."""
        k = self._k(name, k)
        body: Dict[str, Any] = {"queries": self._queries(name, queries), "k": k}
        if min_count is not None:
            body["min_count"] = min_count
        opts = {key: v for key, v in options.items() if v is not None}
        if opts:
            body["options"] = opts
        path = "/v1/indexes/" + urllib.parse.quote(name, safe="") + "/search"
        return self._request(path, body)["results"]

    def search(
        self,
        name: str,
        queries: Any,
        k: int = 10,
        min_count: Optional[int] = None,
        **options: Any,
    ) -> Tuple[np.ndarray, np.ndarray]:
        """Searches the index ``name``: the queries and the return values as the local index of
        its kind takes and gives them (:meth:`genie.Index.search` and the others): arrays of
        shape ``(nq, min(k, objects))``, where ``objects`` is the number of objects the server
        has in the index (``indexes()``)."""
        k = self._k(name, k)
        results = self.search_json(name, queries, k, min_count, **options)
        kind = self._kind(name)
        ids = np.full((len(results), k), -1, dtype=np.int64)
        if kind in ("vectors", "sequences"):
            fill = np.inf if kind == "vectors" else -1
            dist = np.full((len(results), k), fill, dtype=np.float64)
            for i, r in enumerate(results):
                for j, h in enumerate(r["hits"][:k]):
                    ids[i, j] = h["id"]
                    d = h.get("distance")
                    dist[i, j] = np.inf if d is None else d
            out = dist.astype(np.float32) if kind == "vectors" else dist.astype(np.int64)
            return out, ids
        counts = np.zeros((len(results), k), dtype=np.uint32)
        for i, r in enumerate(results):
            for j, h in enumerate(r["hits"][:k]):
                ids[i, j] = h["id"]
                counts[i, j] = h["count"]
        return counts, ids

    def _k(self, name: str, k: Any) -> int:
        """``k`` checked, and capped at the index's objects (the server answers no more)."""
        self._kind(name)
        return q.k_of(k, self._objects.get(name))

    def _queries(self, name: str, queries: Any) -> list:
        kind = self._kind(name)
        if kind == "vectors":
            x = np.asarray(queries, dtype=np.float32)
            if x.ndim == 1:
                x = x.reshape(1, -1)
            q.finite_rows(x)
            return [[float(v) for v in row] for row in x]
        if kind == "keywords":
            if isinstance(queries, list) and queries and all(isinstance(x, str) for x in queries):
                return list(queries)
            return q.keyword_json(queries)
        if kind == "table":
            if isinstance(queries, (str, dict)):
                queries = [queries]
            return q.lines([q.conditions(x) for x in queries], "query")
        return q.lines(queries, "query")


def _error(status: int, message: str) -> Exception:
    if status in (400, 413):
        return ValueError(message)
    if status == 401:
        return PermissionError(message)
    if status == 404:
        return LookupError(message)
    return RuntimeError(f"{status}: {message}")
