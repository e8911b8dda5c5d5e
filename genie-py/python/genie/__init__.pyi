"""Type stubs of the genie package (the API; docstrings are in the modules)."""

import os
from typing import (
    AbstractSet,
    Any,
    Dict,
    List,
    Mapping,
    Optional,
    Sequence,
    Tuple,
    Type,
    TypeVar,
    Union,
)

import numpy as np
import numpy.typing as npt

__version__: str

PathLike = Union[str, "os.PathLike[str]"]
IntArray = npt.ArrayLike
#: One keyword query: an array of keywords, a tuple (lo, hi) or (lo, hi, weight) of arrays of
#: inclusive ranges and their weights, or a line of `genie search`'s text form ("7 10-20 3:2").
KeywordQuery = Union[IntArray, Tuple[IntArray, IntArray], Tuple[IntArray, IntArray, IntArray], str]
#: Keyword queries: a list of them, or a CSR (offsets, keywords) or (offsets, lo, hi, weight).
KeywordQueries = Union[
    Sequence[KeywordQuery],
    Tuple[IntArray, IntArray],
    Tuple[IntArray, IntArray, IntArray, IntArray],
]
#: A table query: a dict of conditions {"age": (30, 40), "workclass": "Private"}, or a string.
TableQuery = Union[Mapping[str, Any], str]
#: counts (uint32, 0 where there is no hit) and ids (int64, -1 where there is none), of shape
#: (nq, min(k, number of objects)): k is a non-negative integer (else ValueError), and a k beyond
#: the number of objects gives (and costs) what k = the number of objects does. The same holds
#: for every search's arrays below (Client.search: the objects the server has in the index).
Counts = Tuple[npt.NDArray[np.uint32], npt.NDArray[np.int64]]
#: Object ids: a sequence, set or 1-D NumPy array of non-negative integers (unsigned 64-bit; ids
#: of objects added to a live index are below 2^63, since answers give ids as int64). A
#: search's filter (only these ids) or exclusion (never these), objects to add or delete.
Ids = Union[Sequence[int], AbstractSet[int], npt.NDArray[np.integer]]
#: Keyword objects: a list of keyword arrays, a CSR pair (offsets, keywords), or (to add to a
#: live index) a list of keyword lines ("3 17 40").
KeywordObjects = Union[Sequence[IntArray], Tuple[IntArray, IntArray], Sequence[str]]

def kinds() -> List[str]: ...
def load(
    path: PathLike, writable: bool = False
) -> Union["Index", "VectorIndex", "SequenceIndex", "DocumentIndex", "TableIndex"]: ...
def read_queries(path: PathLike, kind: str = "keywords", **options: Any) -> Any: ...

_T = TypeVar("_T", bound="_Base")

class _Base:
    @property
    def kind(self) -> str: ...
    @property
    def path(self) -> str: ...
    @property
    def live(self) -> bool: ...
    @property
    def writable(self) -> bool: ...
    @property
    def closed(self) -> bool: ...
    def close(self) -> None: ...
    def __enter__(self: "_T") -> "_T": ...
    def __exit__(self, *exc: Any) -> None: ...
    @property
    def num_objects(self) -> int: ...
    def __len__(self) -> int: ...
    @property
    def metadata(self) -> Dict[str, Any]: ...
    def backend(self, device: Optional[str] = None) -> str: ...
    def last_timings(self) -> Dict[str, float]: ...
    def save(self, path: PathLike) -> None: ...
    @classmethod
    def create_live(cls: Type["_T"], path: PathLike, **options: Any) -> "_T": ...
    def delete(self, ids: Ids) -> int: ...
    def flush(self) -> None: ...
    def compact(self) -> None: ...
    def live_stats(self) -> Dict[str, int]: ...
    def search_json(
        self,
        queries: Any,
        k: int,
        device: Optional[str] = None,
        min_count: Optional[int] = None,
        filter: Optional[Ids] = None,
        exclude: Optional[Ids] = None,
        **options: Any,
    ) -> List[str]: ...

class Index(_Base):
    @classmethod
    def from_keywords(
        cls, objects: Union[Sequence[IntArray], Tuple[IntArray, IntArray]], name: str = "<memory>"
    ) -> "Index": ...
    def add(self, ids: Ids, objects: KeywordObjects) -> int: ...
    def search(
        self,
        queries: KeywordQueries,
        k: int,
        device: Optional[str] = None,
        min_count: Optional[int] = None,
        filter: Optional[Ids] = None,
        exclude: Optional[Ids] = None,
    ) -> Counts: ...

class VectorIndex(_Base):
    def __init__(self, x: npt.ArrayLike, lsh: Optional[str] = None, **options: Any) -> None: ...
    @property
    def ntotal(self) -> int: ...
    def add(self, ids: Ids, x: npt.ArrayLike) -> int: ...
    def search(
        self,
        xq: npt.ArrayLike,
        k: int,
        device: Optional[str] = None,
        min_count: Optional[int] = None,
        filter: Optional[Ids] = None,
        exclude: Optional[Ids] = None,
        **options: Any,
    ) -> Tuple[npt.NDArray[np.float32], npt.NDArray[np.int64]]: ...

class SequenceIndex(_Base):
    def __init__(self, sequences: Sequence[str], ngram: int = 3, **options: Any) -> None: ...
    def add(self, ids: Ids, sequences: Sequence[str]) -> int: ...
    def search(
        self,
        queries: Sequence[str],
        k: int,
        device: Optional[str] = None,
        min_count: Optional[int] = None,
        filter: Optional[Ids] = None,
        exclude: Optional[Ids] = None,
        **options: Any,
    ) -> Tuple[npt.NDArray[np.int64], npt.NDArray[np.int64]]: ...

class DocumentIndex(_Base):
    def __init__(self, documents: Sequence[str], **options: Any) -> None: ...
    def add(self, ids: Ids, documents: Sequence[str]) -> int: ...
    def search(
        self,
        queries: Sequence[str],
        k: int,
        device: Optional[str] = None,
        min_count: Optional[int] = None,
        filter: Optional[Ids] = None,
        exclude: Optional[Ids] = None,
    ) -> Counts: ...

class TableIndex(_Base):
    def __init__(self, table: Any, **options: Any) -> None: ...
    def add(self, ids: Ids, rows: Any) -> int: ...
    def search(
        self,
        queries: Union[TableQuery, Sequence[TableQuery]],
        k: int,
        device: Optional[str] = None,
        min_count: Optional[int] = None,
        radius: Optional[int] = None,
        filter: Optional[Ids] = None,
        exclude: Optional[Ids] = None,
        where: Optional[TableQuery] = None,
    ) -> Counts: ...

class Client:
    url: str
    token: Optional[str]
    timeout: float
    def __init__(self, url: str, token: Optional[str] = None, timeout: float = 60.0) -> None: ...
    def indexes(self) -> List[Dict[str, Any]]: ...
    def add(self, name: str, ids: Ids, objects: KeywordObjects, batch: int = 16384) -> int: ...
    def delete(self, name: str, ids: Ids) -> int: ...
    def flush(self, name: str) -> Dict[str, Any]: ...
    def search(
        self,
        name: str,
        queries: Any,
        k: int = 10,
        min_count: Optional[int] = None,
        filter: Optional[Ids] = None,
        exclude: Optional[Ids] = None,
        where: Optional[TableQuery] = None,
        **options: Any,
    ) -> Tuple[np.ndarray, npt.NDArray[np.int64]]: ...
    def search_json(
        self,
        name: str,
        queries: Any,
        k: int = 10,
        min_count: Optional[int] = None,
        filter: Optional[Ids] = None,
        exclude: Optional[Ids] = None,
        where: Optional[TableQuery] = None,
        **options: Any,
    ) -> List[Dict[str, Any]]: ...
