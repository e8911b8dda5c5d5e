"""Type stubs of genie.dask (docstrings are in the module)."""

from typing import Any, Dict, List, Optional, Tuple

import numpy as np

MANIFEST: str
TABLE_RANGE_ROWS: int

class DistributedIndex:
    client: Any
    path: str
    replace_timeout: float
    poll: float
    max_moves: int
    pipeline: int
    tree_merge: int
    last_search: Dict[str, Any]
    @classmethod
    def build(
        cls,
        client: Any,
        data: Any,
        kind: str = "keywords",
        path: Optional[str] = None,
        device: Optional[str] = None,
        spread: bool = True,
        shards: Optional[int] = None,
        **params: Any,
    ) -> "DistributedIndex": ...
    @classmethod
    def open(cls, client: Any, path: str, device: Optional[str] = None) -> "DistributedIndex": ...
    @property
    def kind(self) -> str: ...
    @property
    def num_objects(self) -> int: ...
    def __len__(self) -> int: ...
    @property
    def params(self) -> Dict[str, Any]: ...
    @property
    def shards(self) -> List[Dict[str, Any]]: ...
    def search(
        self,
        queries: Any,
        k: int,
        device: Optional[str] = None,
        min_count: Optional[int] = None,
        **options: Any,
    ) -> Tuple[np.ndarray, np.ndarray]: ...
    def resident(self) -> Dict[str, List[bool]]: ...
    def close(self) -> None: ...
