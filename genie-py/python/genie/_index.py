"""The index classes: one per kind of data, each a thin wrapper of the extension's handle (the
genie library's index, opened as `genie search` opens it, or a live index as
`genie serve --writable` opens it)."""

from __future__ import annotations

import json
import os
import re
import tempfile
import warnings
from typing import Any, Dict, List, Optional, Tuple

import numpy as np

from . import _genie
from . import _queries as q


def _options(options: Dict[str, Any]) -> str:
    return json.dumps({k: v for k, v in options.items() if v is not None})


class _Base:
    """What every index has: its kind, size, metadata, device, save, JSON-line search and
    close."""

    _kind = ""

    def __init__(self) -> None:  # pragma: no cover - replaced by the kinds' constructors
        raise TypeError("use a kind's constructor or genie.load")

    @classmethod
    def _wrap(cls, handle: Any, tmp: Optional[tempfile.TemporaryDirectory] = None) -> Any:
        self = object.__new__(cls)
        self._handle = handle
        # an index built from Python data lives in a temporary folder as long as it does
        self._tmp = tmp
        return self

    def _build_from_file(
        self, write, name: str, what: str, first_line: int, options: Dict[str, Any]
    ) -> None:
        """Builds the index as `genie build` does, from the file ``name`` that ``write`` writes in
        a temporary folder; errors name ``what`` (the argument the data came in; item ``i`` on
        line ``first_line + i`` of the file), not the file."""
        tmp = tempfile.TemporaryDirectory(prefix="genie-")
        try:
            source = os.path.join(tmp.name, name)
            write(source)
            index = os.path.join(tmp.name, "index.genie")
            try:
                _genie.build(self._kind, source, index, _options(options))
            except (ValueError, OSError) as e:
                raise type(e)(_named(str(e), source, tmp.name, what, first_line)) from None
            self._handle = _genie.Handle.load(index)
        except BaseException:
            tmp.cleanup()
            raise
        self._tmp = tmp
        _warn_if_empty(self, what)

    @property
    def kind(self) -> str:
        """The kind of data: keywords, vectors, sequences, documents or table."""
        return self._handle.kind

    @property
    def path(self) -> str:
        """The index file, or the folder of a live index (for an index built in memory, the
        name it was given)."""
        return os.fspath(self._handle.path)

    @property
    def live(self) -> bool:
        """Whether this is a live index (a folder of segments and a write-ahead log, see
        :meth:`Index.add`)."""
        return self._handle.live

    @property
    def writable(self) -> bool:
        """Whether the index takes writes: a live index opened with ``writable=True`` (or made by
        :meth:`Index.create_live`)."""
        return self._handle.writable

    @property
    def closed(self) -> bool:
        """Whether :meth:`close` was called."""
        return self._handle.closed

    def close(self) -> None:
        """Lets go of the index: its searches stop (those under way finish first) and its files
        are released, a live index's included, so that it can be opened again at once (a live
        index is held open by one handle at a time). Every acknowledged write is in the live
        index's log already; closing does not flush. Later calls raise ValueError, but ``close``
        may be called again. ``with genie.load(...) as index:`` closes at the end of the block;
        an index no longer referenced is closed too."""
        self._handle.close()
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None

    def __enter__(self) -> Any:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()

    @classmethod
    def create_live(cls, path: "os.PathLike[str] | str", **options: Any) -> Any:
        """An empty live index of this kind in the folder ``path`` (made if missing; it must
        not hold a live index already), open for writes, with the kind's build options
        (documents: ``keep_stop_words``). ``genie.load(path, writable=True)`` opens it again
        (after :meth:`close`). Keyword and document indexes start empty; a table index starts
        from a built one (its columns and bins come from the data: ``genie.load(path,
        writable=True)`` on the built file), as does a vector index (its hash functions or
        codebook come from the data). Sequence indexes start empty with their ``ngram``,
        ``alphabet`` and ``no_pad``."""
        return cls._wrap(
            _genie.Handle.create_live(os.fspath(path), cls._kind, _options(options))
        )

    def delete(self, ids: Any) -> int:
        """Deletes the objects of ``ids`` (a sequence or 1-D array of integers; ids of no
        object are skipped) from a live index opened for writes. Returns how many of them the
        index held, once the deletes are in its log on disk."""
        return self._handle.delete(q.ids(ids, "ids"))

    def flush(self) -> None:
        """Writes what a live index holds only in its log (objects and deletes) to its segment
        files and starts a new log, so that opening it replays nothing. Live indexes flush in
        the background too (every million objects or minute); this is never needed for
        durability."""
        self._handle.flush()

    def compact(self) -> None:
        """Flushes a live index, then merges all its segments into one, leaving out the objects
        deleted or replaced (a built index file it was made from stays as it is)."""
        self._handle.compact()

    def live_stats(self) -> Dict[str, int]:
        """A live index's counters: ``written`` and ``deleted`` (objects, since it was opened),
        ``segments``, ``live_objects``, ``flushes``, ``merges``, ``log_syncs``. ValueError for an
        index that is not live."""
        return dict(self._handle.live_stats())

    @property
    def num_objects(self) -> int:
        """The number of objects (rows, vectors, sequences, documents)."""
        return self._handle.num_objects

    def __len__(self) -> int:
        return self._handle.num_objects

    @property
    def metadata(self) -> dict:
        """The index's metadata (what built it, and the kind's parameters)."""
        return json.loads(self._handle.metadata)

    def last_timings(self) -> Dict[str, float]:
        """Where the last search spent its time, in milliseconds: ``parse``, ``search`` (the
        engine; on a GPU also its ``device_*`` and ``host_*`` stages) and ``output``."""
        return dict(self._handle.last_timings())

    def backend(self, device: Optional[str] = None) -> str:
        """Where searches on ``device`` run, e.g. ``cpu (rayon, 16 threads)`` or the GPU's name."""
        return self._handle.backend(device)

    def save(self, path: "os.PathLike[str] | str") -> None:
        """Writes the index and its side files to ``path``: the files `genie build` writes, which
        `genie search`, `genie serve` and :func:`genie.load` read."""
        self._handle.save(os.fspath(path))

    def search_json(
        self,
        queries: Any,
        k: int,
        device: Optional[str] = None,
        min_count: Optional[int] = None,
        filter: Any = None,
        exclude: Any = None,
        **options: Any,
    ) -> List[str]:
        """The JSON lines `genie search` writes for these queries (one per query, without the
        line end): ``{"query":0,"hits":[{"id":12,"count":3}]}``, with ``distance`` for vectors
        and sequences, ``exact`` and ``candidates`` for sequences. At most ``k`` hits a query
        (``k`` a non-negative integer; one beyond the number of objects costs no more than
        that). ``filter`` and ``exclude`` as :meth:`Index.search` takes them (indexes of
        keywords, documents and table rows)."""
        return self._search(queries, k, device, min_count, options, True, filter, exclude)

    def _k(self, k: Any) -> int:
        return q.k_of(k, self._handle.num_objects)

    def _search(
        self, queries, k, device, min_count, options, as_json, filter=None, exclude=None,
        where=None,
    ) -> Any:
        k = self._k(k)
        texts = self._texts(queries)
        return self._handle.search_texts(
            texts, k, min_count, device, _options(options), as_json,
            q.ids(filter, "filter"), q.ids(exclude, "exclude"), _where(where),
        )

    def _texts(self, queries: Any) -> List[str]:
        return q.lines(queries, "query")

    def __repr__(self) -> str:
        name = type(self).__name__
        if self.closed:
            return f"<genie.{name} (closed)>"
        live = f", live at {self.path}" if self.live else ""
        return f"<genie.{name} of {self.num_objects} objects{live}>"


def _warn_if_empty(index: Any, what: str) -> None:
    """A warning, as `genie build` gives, when an index holds no objects."""
    if index.num_objects == 0:
        warnings.warn(
            f"the index holds no objects: {what} has none", UserWarning, stacklevel=3
        )


class Index(_Base):
    """An index of keyword objects: each object a set of unsigned 32-bit keywords, each query a
    list of keywords or weighted keyword ranges; a hit's count is the weighted number of the
    object's keywords inside the query's ranges.

    Build one with :meth:`Index.from_keywords`, or open a file with :func:`genie.load`.

    A **live** index takes writes while it is searched: objects added with ids of one's own,
    replaced and deleted (:meth:`add`, :meth:`delete`), each write durable when it returns.
    It is a folder: :meth:`Index.create_live` makes an empty one, and
    ``genie.load(path, writable=True)`` opens one, or makes an index file's own
    (``PATH.live``, beside the file, which is never changed), as ``genie serve --writable``
    does. Searches see every write that returned before them.
    """

    _kind = "keywords"

    def add(self, ids: Any, objects: Any) -> int:
        """Adds ``objects`` to a live index opened for writes, with the ids ``ids`` (one each, in
        order; an id the index holds has its object replaced; the last of a repeated id wins).
        Returns the number of objects written, once they are in the index's log on disk (a
        crash after that loses none of them); searches from then on see them.

        ``ids``: a sequence or 1-D NumPy array of integers from 0 to 2^63 - 1 (answers give
        ids as int64). ``objects``: as :meth:`from_keywords` takes them (a list of keyword
        arrays, or a CSR pair ``(offsets, keywords)``), or a list of keyword lines
        (``"3 17 40"``, as `genie add` reads them). An index not open for writes raises
        ValueError, as do ids that are not such integers or not one per object. The GIL is
        released while the objects are written."""
        ids = q.ids(ids, "ids")
        if isinstance(objects, (list, tuple)) and objects and all(
            isinstance(o, str) for o in objects
        ):
            return self._handle.add_lines(ids, q.lines(objects, "object"))
        if isinstance(objects, str):
            raise ValueError("objects: expected a list of objects, found one string")
        offsets, keywords = q.objects_csr(objects)
        return self._handle.add_csr(ids, offsets, keywords)

    @classmethod
    def from_keywords(cls, objects: Any, name: str = "<memory>") -> "Index":
        """The index of ``objects``: a list of integer arrays (one per object, duplicates count
        once), or a CSR pair ``(offsets, keywords)`` of NumPy arrays as SciPy's
        ``indptr``/``indices`` (uint64 or int64 offsets and uint32 or int32 keywords are read in
        place). Object ids are the positions in the list. ``name`` stands for the input in the
        metadata and in messages."""
        offsets, keywords = q.objects_csr(objects)
        index = cls._wrap(_genie.Handle.from_csr(offsets, keywords, name))
        _warn_if_empty(index, "objects")
        return index

    def search(
        self,
        queries: Any,
        k: int,
        device: Optional[str] = None,
        min_count: Optional[int] = None,
        filter: Any = None,
        exclude: Any = None,
    ) -> Tuple[np.ndarray, np.ndarray]:
        """The top-``k`` objects of each query, as ``(counts, ids)`` arrays of shape
        ``(nq, k)``: counts uint32, ids int64, ``-1`` (count 0) where a query has fewer hits;
        hits by count descending, then id ascending (the order of `genie search`). ``k``: a
        non-negative integer (else ValueError); a ``k`` beyond the number of objects gives
        ``min(k, len(index))`` columns and costs no more than that. Ids are the objects' ids:
        their rows (0, 1, ...) in an index built from a file or list, the ids they were added
        with in a live index.

        ``queries``: a list with one query per element, an array of keywords or a tuple
        ``(lo, hi)`` or ``(lo, hi, weight)`` of arrays (inclusive ranges and their weights); a
        list of lines of `genie search`'s text form (``"7 10-20 3:2"``); or a tuple
        ``(offsets, keywords)`` or ``(offsets, lo, hi, weight)``, a CSR of all queries (read in
        place; :func:`genie.read_queries` reads a queries file so).
        ``device``: ``"auto"``, ``"cpu"``, ``"gpu"`` or ``"gpu:N"`` (default: the
        ``GENIE_DEVICE`` environment variable, else auto, as the `genie` program); the index is
        placed on a device the first time it is searched there. ``min_count``: only hits of at
        least that count.

        ``filter``: only objects of these ids may be hits; ``exclude``: objects of these ids
        may not (each a sequence, set or 1-D array of non-negative integers; both may be
        given). They are applied before the top-``k`` is chosen, so a query still gets ``k``
        hits whenever ``k`` objects it may return match; ids of no object are ignored.
        """
        return self._search(queries, k, device, min_count, {}, False, filter, exclude)[:2]

    def _search(
        self, queries, k, device, min_count, options, as_json, filter=None, exclude=None
    ) -> Any:
        k = self._k(k)
        texts = isinstance(queries, (list, tuple)) and len(queries) > 0
        if texts and all(isinstance(x, str) for x in queries):
            return super()._search(
                list(queries), k, device, min_count, options, as_json, filter, exclude
            )
        offsets, lo, hi, w = q.keyword_items(queries)
        return self._handle.search_items(
            offsets, lo, hi, w, k, min_count, device, as_json,
            q.ids(filter, "filter"), q.ids(exclude, "exclude"),
        )


class VectorIndex(_Base):
    """An index of dense vectors hashed by an LSH family (or IVF-PQ codebooks), searched as in
    faiss: ``search(xq, k) -> (distances, ids)``, re-ranked by the exact distance.

    ``x``: a 2-D array of vectors (one per row; converted to float32). ``lsh``: the family,
    ``codebook`` by default (IVF cells and product-quantization codes, with ``metric`` ``l2``,
    ``cosine`` or ``ip``, the inner product, whose distances are minus the inner product), or
    an LSH family: ``e2lsh`` (Euclidean), ``l1``, ``rbh`` (Laplacian kernel), ``srp`` (angle).
    Other build options as `genie build --kind vectors` takes them: ``metric``, ``functions``,
    ``width``, ``buckets``, ``bits``, ``seed``, ``candidates``, ``target_recall``, ``cells``,
    ``subspaces``, ``rerank`` (what a codebook index re-ranks from: ``f32``, the default;
    ``f16``; ``sq8``; or ``codes``, no copy). The build tunes its search defaults for
    ``target_recall`` (default 0.95) on a held-out sample, as the program does.
    """

    _kind = "vectors"

    def __init__(self, x: Any, lsh: Optional[str] = None, **options: Any) -> None:
        x = q.aligned_rows(x, np.float32)
        if x.ndim != 2:
            raise ValueError(f"vectors: expected a 2-D array, found {x.ndim} dimensions")
        if lsh is not None:
            options["lsh"] = lsh
        self._build_from_file(lambda p: np.save(p, x), "vectors.npy", "x", 0, options)

    @property
    def ntotal(self) -> int:
        """The number of vectors (as faiss names it)."""
        return self.num_objects

    def add(self, ids: Any, x: Any) -> int:
        """Adds the rows of ``x`` (a 2-D array, converted to float32) with the ids ``ids`` to a
        live index opened for writes (``genie.load(path, writable=True)`` on a built vector
        index), as faiss's ``add_with_ids``; an id it holds has its vector replaced. The vectors
        are hashed by the index's own functions (or codebook) and re-ranked by the exact
        distance like the built ones."""
        x = q.aligned_rows(x, np.float32)
        if x.ndim == 1:
            x = x.reshape(1, -1)
        if x.ndim != 2:
            raise ValueError(f"x: expected a 2-D array, found {x.ndim} dimensions")
        return self._handle.add_vectors(q.ids(ids, "ids"), x)

    def search(
        self,
        xq: Any,
        k: int,
        device: Optional[str] = None,
        min_count: Optional[int] = None,
        filter: Any = None,
        exclude: Any = None,
        **options: Any,
    ) -> Tuple[np.ndarray, np.ndarray]:
        """The ``k`` nearest vectors found for each row of ``xq``: ``(distances, ids)`` of shape
        ``(nq, min(k, ntotal))``, distances float32 ascending (``inf`` and id ``-1`` where there
        are fewer hits): the index's own distance (Euclidean for ``e2lsh`` and a codebook of
        metric ``l2``, not squared as faiss's ``IndexFlatL2`` gives it; L1 for ``l1`` and
        ``rbh``; the cosine distance ``1 - cos`` for ``srp`` and metric ``cosine``; minus the
        inner product for metric ``ip``).
        Options: ``candidates`` (how many candidates are re-ranked), and for codebook indexes
        ``probes``, ``entries``, ``levels``. ``filter`` and ``exclude`` as :meth:`Index.search`
        takes them: the answers are the nearest allowed vectors (a filter admitting few vectors
        is answered exactly)."""
        _, ids, dist, _ = self._search(
            xq, k, device, min_count, options, False, filter, exclude
        )
        if dist is None:
            dist = np.full(ids.shape, np.inf)
        return dist.astype(np.float32), ids

    def _search(
        self, queries, k, device, min_count, options, as_json, filter=None, exclude=None
    ) -> Any:
        k = self._k(k)
        x = q.aligned_rows(queries, np.float32)
        if x.ndim == 1:
            x = x.reshape(1, -1)
        if x.ndim != 2:
            raise ValueError(f"queries: expected a 2-D array, found {x.ndim} dimensions")
        return self._handle.search_vectors(
            x, k, min_count, device, _options(options), as_json,
            q.ids(filter, "filter"), q.ids(exclude, "exclude"),
        )


class SequenceIndex(_Base):
    """An index of sequences (strings) under edit distance, by ordered n-grams.

    ``sequences``: a list of strings, one line each. ``ngram``: the n-gram length (default 3).
    ``alphabet``: ``"chars"`` (default) or ``"bytes"``; ``no_pad`` as `genie build`.
    """

    _kind = "sequences"

    def __init__(self, sequences: Any, ngram: int = 3, **options: Any) -> None:
        texts = q.lines(sequences, "sequence")
        options["ngram"] = ngram
        self._build_from_file(
            lambda p: _write_lines(p, texts), "sequences.txt", "sequences", 1, options
        )

    def add(self, ids: Any, sequences: Any) -> int:
        """Adds ``sequences`` (a list of strings) with the ids ``ids`` to a live index opened
        for writes, as :meth:`Index.add` does. Their n-grams join the index's dictionary. A
        search of a live sequence index verifies ``candidates`` objects of each segment by edit
        distance, counting again with twice as many while the answer is not proven, up to
        ``max_candidates``; ``search_json`` says whether each answer is proven exact."""
        return self._handle.add_lines(q.ids(ids, "ids"), q.lines(sequences, "sequence"))

    def search(
        self,
        queries: Any,
        k: int,
        device: Optional[str] = None,
        min_count: Optional[int] = None,
        filter: Any = None,
        exclude: Any = None,
        **options: Any,
    ) -> Tuple[np.ndarray, np.ndarray]:
        """The ``k`` sequences nearest by edit distance to each query string: ``(distances,
        ids)`` of shape ``(nq, min(k, len(index)))``, distances int64 (``-1`` and id ``-1``
        where there are fewer hits). Options: ``candidates``, ``max_candidates``,
        ``exhaustive``. ``search_json`` also says per query whether the answer is proven
        exact. ``filter`` and ``exclude`` as :meth:`Index.search` takes them, where the library
        filters sequence indexes (so far it refuses them with ValueError)."""
        _, ids, dist, _ = self._search(
            queries, k, device, min_count, options, False, filter, exclude
        )
        if dist is None:
            dist = np.full(ids.shape, -1.0)
        out = np.where(ids >= 0, dist, -1)
        return out.astype(np.int64), ids


class DocumentIndex(_Base):
    """An index of short documents (strings) by their words; a hit's count is the number of
    distinct words it shares with the query. ``keep_stop_words`` as `genie build`."""

    _kind = "documents"

    def __init__(self, documents: Any, **options: Any) -> None:
        texts = q.lines(documents, "document")
        self._build_from_file(
            lambda p: _write_lines(p, texts), "documents.txt", "documents", 1, options
        )

    def add(self, ids: Any, documents: Any) -> int:
        """Adds ``documents`` (a list of strings) with the ids ``ids`` to a live index opened
        for writes, as :meth:`Index.add` does (an id it holds has its document replaced).
        Words the index has not seen become words of its dictionary, so later queries find
        them."""
        return self._handle.add_lines(q.ids(ids, "ids"), q.lines(documents, "document"))

    def search(
        self,
        queries: Any,
        k: int,
        device: Optional[str] = None,
        min_count: Optional[int] = None,
        filter: Any = None,
        exclude: Any = None,
    ) -> Tuple[np.ndarray, np.ndarray]:
        """The top-``k`` documents of each query string: ``(counts, ids)`` of shape
        ``(nq, min(k, len(index)))`` as :meth:`Index.search`, ``filter`` and ``exclude`` too
        (ids: the documents' positions)."""
        return self._search(queries, k, device, min_count, {}, False, filter, exclude)[:2]


class TableIndex(_Base):
    """An index of the rows of a table: a pandas DataFrame or a pyarrow Table. Numeric columns
    are cut into ``bins`` equal-width intervals, the others are categorical (``numeric`` and
    ``categorical`` name columns to force); a hit's count is the number of conditions the row
    meets."""

    _kind = "table"

    def __init__(self, table: Any, **options: Any) -> None:
        self._build_from_file(lambda p: _write_csv(table, p), "table.csv", "table", 2, options)

    def add(self, ids: Any, rows: Any) -> int:
        """Adds ``rows`` with the ids ``ids`` to a live index opened for writes, as
        :meth:`Index.add` does. ``rows``: a pandas DataFrame or pyarrow Table with the index's
        columns (by name; a column left out is missing in every row), a list of dicts by
        column name, or a list of CSV lines in the table's column order. Rows keep the bins of
        the build: a number outside a column's range goes to its first or last interval; a
        category the build did not see raises ValueError."""
        return self._handle.add_json(q.ids(ids, "ids"), _rows_json(rows))

    def search(
        self,
        queries: Any,
        k: int,
        device: Optional[str] = None,
        min_count: Optional[int] = None,
        radius: Optional[int] = None,
        filter: Any = None,
        exclude: Any = None,
        where: Any = None,
    ) -> Tuple[np.ndarray, np.ndarray]:
        """The top-``k`` rows of each query: ``(counts, ids)`` of shape
        ``(nq, min(k, len(index)))`` as :meth:`Index.search`, ``filter`` and ``exclude`` too
        (ids: the rows' positions). A query is a dict of conditions,
        ``{"age": (30, 40), "workclass": "Private"}`` (a value, or a ``(lo, hi)`` range with
        ``None`` for an open end), or a string as `genie search` reads it (conditions
        ``age=30..40``, or a CSV row searched ``radius`` intervals around each number).

        ``where``: only rows that meet these conditions may be hits (a dict or a string as a
        query takes them; every condition met), applied before the top-``k`` like ``filter``.
        A numeric interval passes the rows of every bin it touches: the index keeps bins, not
        the values."""
        opts = {"radius": radius}
        return self._search(
            queries, k, device, min_count, opts, False, filter, exclude, where
        )[:2]

    def _texts(self, queries: Any) -> List[str]:
        if isinstance(queries, (str, dict)):
            queries = [queries]
        return q.lines([q.conditions(x) for x in queries], "query")


def _named(message: str, source: str, folder: str, what: str, first_line: int) -> str:
    """A build's message about the temporary file ``source`` (in ``folder``), said of ``what``,
    the argument its data came in: ``SOURCE: cannot build a vector index: SOURCE: vector 7
    (0-based), column 2: ...`` is ``x: row 7, column 2: ...``; ``SOURCE:12: ...`` (a line) is
    ``what[i]: ...``, ``i`` the 0-based position of the item written on line ``first_line + i``
    (``first_line`` 0: the file's lines are not the items)."""
    src = re.escape(source)
    # the file named twice with the build's wrapper between them: named once
    message = re.sub(src + r": cannot build an? [\w-]+ index: (?=" + src + ")", "", message)

    def at(m: "re.Match[str]") -> str:
        line = m.group(1)
        if line is None or first_line == 0:
            return what
        return f"{what}[{int(line) - first_line}]"

    message = re.sub(src + r"(?::(\d+))?", at, message)
    # anything else in the temporary folder
    message = message.replace(folder + os.sep, "").replace(folder, "")
    return re.sub(r"\bvector (\d+) \(0-based\)", r"row \1", message)


def _write_lines(path: str, texts: List[str]) -> None:
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for t in texts:
            f.write(t)
            f.write("\n")


def _write_csv(table: Any, path: str) -> None:
    """A DataFrame or an Arrow table as the CSV file `genie build --kind table` reads."""
    if hasattr(table, "to_csv"):
        table.to_csv(path, index=False)
        return
    if hasattr(table, "schema") and hasattr(table, "column_names"):
        import pyarrow.csv as pacsv

        pacsv.write_csv(table, path)
        return
    raise ValueError(
        f"table: expected a pandas DataFrame or a pyarrow Table, found {type(table).__name__}"
    )


_CLASSES = {
    "keywords": Index,
    "vectors": VectorIndex,
    "sequences": SequenceIndex,
    "documents": DocumentIndex,
    "table": TableIndex,
}


def load(path: "os.PathLike[str] | str", writable: bool = False) -> Any:
    """Opens an index file written by `genie build` or :meth:`save`, or a live index folder, as
    the class of its kind (:class:`Index`, :class:`VectorIndex`, ...). Raises FileNotFoundError
    when there is no such file and ValueError when it is not a sound genie index.

    ``writable=True`` opens a live index for writes (:meth:`Index.add`, :meth:`Index.delete`):
    the folder ``path``, or for an index file its live index ``PATH.live`` (made on first use,
    with the file as its first segment; the file itself is never changed), as
    ``genie serve --writable`` does. Without it a live index folder is opened for searches
    only, and an index file is the file as it was built (its ``PATH.live`` is opened by
    loading that folder). A live index is open in one handle at a time (its log is locked):
    :meth:`close` it before opening it again."""
    handle = _genie.Handle.load(os.fspath(path), writable)
    return _CLASSES.get(handle.kind, _Base)._wrap(handle)


def read_queries(path: "os.PathLike[str] | str", kind: str = "keywords", **options: Any) -> Any:
    """Reads a queries file as `genie search` does: for keywords the CSR of items
    ``(offsets, lo, hi, weight)`` that :meth:`Index.search` takes, for vectors a float32 array,
    for the other kinds a list of strings. Errors name the file and line."""
    return _genie.read_queries(kind, os.fspath(path), _options(options))


def _rows_json(rows: Any) -> str:
    """Table rows as a JSON array (each row an object by column, or a CSV line)."""
    if hasattr(rows, "to_pylist"):  # a pyarrow Table
        rows = rows.to_pylist()
    elif hasattr(rows, "to_json") and hasattr(rows, "columns"):  # a pandas DataFrame
        return rows.to_json(orient="records")
    if isinstance(rows, (str, bytes)) or not isinstance(rows, (list, tuple)):
        raise ValueError(
            "rows: expected a DataFrame, a pyarrow Table, a list of dicts or a list of CSV "
            f"lines, found {type(rows).__name__}"
        )

    def plain(v: Any) -> Any:
        return v.item() if hasattr(v, "item") else v

    return json.dumps(
        [
            {str(k): plain(v) for k, v in r.items()} if isinstance(r, dict) else r
            for r in rows
        ]
    )


def _where(where: Any) -> Optional[str]:
    """A ``where`` condition as the conditions text (a dict or a string)."""
    if where is None:
        return None
    if isinstance(where, dict):
        return q.conditions(where)
    if isinstance(where, str):
        return where
    raise ValueError(
        f"where: expected a dict of conditions or a string, found {type(where).__name__}"
    )
