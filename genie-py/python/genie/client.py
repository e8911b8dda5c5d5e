"""A client of `genie serve` (its JSON API over HTTP, see the README's "Serve it"), with the
return values of the local indexes: ``(counts, ids)``, or ``(distances, ids)`` for vectors and
sequences; and the writes of live indexes (`genie serve --writable`)."""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from . import _queries as q
from ._index import _rows_json, _where


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

    def _path(self, name: str, route: str) -> str:
        return "/v1/indexes/" + urllib.parse.quote(name, safe="") + "/" + route

    def add(self, name: str, ids: Any, objects: Any, batch: int = 16384) -> int:
        """Adds objects to the live index ``name`` of a server started with
        ``genie serve --writable``, or replaces those of ids it holds: ``ids`` and ``objects``
        as :meth:`genie.Index.add` takes them (ids from 0 to 2^63 - 1, one per object; keyword
        arrays, a CSR pair or keyword lines; documents as strings; table rows as
        :meth:`genie.TableIndex.add` takes them; vectors as the rows of a 2-D float array). Sent ``batch`` objects a request, each request
        durable on the server when it is answered. Returns the objects written. An index the
        server takes no writes to raises PermissionError; bad ids or objects ValueError."""
        keys = q.id_list(ids, "ids")
        if isinstance(objects, str):
            raise ValueError("objects: expected a list of objects, found one string")
        if isinstance(objects, (list, tuple)) and objects and all(
            isinstance(o, str) for o in objects
        ):
            sent: list = q.lines(objects, "object")
        elif hasattr(objects, "columns") or hasattr(objects, "to_pylist") or (
            isinstance(objects, (list, tuple)) and objects
            and all(isinstance(o, dict) for o in objects)
        ):
            sent = json.loads(_rows_json(objects))
        elif isinstance(objects, np.ndarray) and objects.dtype.kind == "f":
            if objects.ndim != 2:
                raise ValueError(
                    f"objects: expected a 2-D array of vectors, found {objects.ndim} dimensions"
                )
            sent = objects.astype(np.float64).tolist()
        else:
            offsets, keywords = q.objects_csr(objects)
            kw = [int(v) for v in keywords]
            sent = [kw[int(offsets[i]) : int(offsets[i + 1])] for i in range(len(offsets) - 1)]
        if len(keys) != len(sent):
            raise ValueError(
                f"ids: {len(keys)} ids for {len(sent)} objects: expected one id per object"
            )
        for i, v in enumerate(keys):
            if v >= 1 << 63:
                raise ValueError(
                    f"ids: id {i} is {v}: expected an id below 2^63 (answers give ids as int64)"
                )
        if batch < 1:
            raise ValueError(f"batch: expected a positive number of objects, found {batch}")
        written = 0
        try:
            for start in range(0, len(keys), batch):
                chunk = [
                    {"id": i, "object": o}
                    for i, o in zip(keys[start : start + batch], sent[start : start + batch])
                ]
                written += self._request(self._path(name, "objects"), {"objects": chunk})[
                    "written"
                ]
        finally:
            self._objects.pop(name, None)
        return written

    def delete(self, name: str, ids: Any) -> int:
        """Deletes the objects of ``ids`` from the live index ``name`` (a server started with
        ``genie serve --writable``); returns how many of them it held, once the deletes are
        durable on the server."""
        keys = q.id_list(ids, "ids")
        try:
            return self._request(self._path(name, "delete"), {"ids": keys})["deleted"]
        finally:
            self._objects.pop(name, None)

    def flush(self, name: str) -> dict:
        """Has the server write the live index ``name``'s log to its segment files (see
        :meth:`genie.Index.flush`): ``{"flushed": True, "segments": n}``."""
        return self._request(self._path(name, "flush"), {})

    def search_json(
        self,
        name: str,
        queries: Any,
        k: int = 10,
        min_count: Optional[int] = None,
        filter: Any = None,
        exclude: Any = None,
        where: Any = None,
        **options: Any,
    ) -> List[dict]:
        """The server's results for these queries, one dict per query: the JSON lines of
        `genie search`, parsed. ``k``: a non-negative integer; one beyond the index's objects is
        sent as the number of objects (the same hits). ``filter``: only objects of these ids;
        ``exclude``: never these (as :meth:`genie.Index.search` takes them; the server applies
        them before the top-k); ``where``: only rows that meet these conditions (a table index,
        as :meth:`genie.TableIndex.search` takes it)."""
        k = self._k(name, k)
        body: Dict[str, Any] = {"queries": self._queries(name, queries), "k": k}
        if min_count is not None:
            body["min_count"] = min_count
        if filter is not None:
            body["filter"] = {"ids": q.id_list(filter, "filter")}
        if where is not None:
            body.setdefault("filter", {})["where"] = _where(where)
        if exclude is not None:
            body["exclude"] = {"ids": q.id_list(exclude, "exclude")}
        opts = {key: v for key, v in options.items() if v is not None}
        if opts:
            body["options"] = opts
        return self._request(self._path(name, "search"), body)["results"]

    def search(
        self,
        name: str,
        queries: Any,
        k: int = 10,
        min_count: Optional[int] = None,
        filter: Any = None,
        exclude: Any = None,
        where: Any = None,
        **options: Any,
    ) -> Tuple[np.ndarray, np.ndarray]:
        """Searches the index ``name``: the queries and the return values as the local index of
        its kind takes and gives them (:meth:`genie.Index.search` and the others, ``filter``
        and ``exclude`` included): arrays of shape ``(nq, min(k, objects))``, where ``objects``
        is the number of objects the server has in the index (``indexes()``; asked again after
        this client's writes, while another client's writes show after ``indexes()``)."""
        k = self._k(name, k)
        results = self.search_json(
            name, queries, k, min_count, filter, exclude, where, **options
        )
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
        if name not in self._objects:
            self.indexes()
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
    if status in (401, 403):
        return PermissionError(message)
    if status == 404:
        return LookupError(message)
    return RuntimeError(f"{status}: {message}")
