"""genie: a match-count inverted index for similarity search on NVIDIA GPUs, or the CPU with the
same results (GENIE, Zhou et al.). The Python front end of the genie library, as the `genie`
program is: the same indexes, files, answers and messages.

Keyword objects::

    import genie
    index = genie.Index.from_keywords([[1, 4, 7], [2, 4, 8], [4, 8, 9]])
    counts, ids = index.search([[4, 8], ([1], [2], [3])], k=2)   # keywords, or (lo, hi, weight)

Live keyword indexes take writes while they are searched, each durable when it returns::

    live = genie.Index.create_live("my.live")          # or genie.load("kw.genie", writable=True)
    live.add([17, 40], [[1, 4, 7], [4, 8]])            # ids of one's own; an id again replaces
    live.delete([17])
    counts, ids = live.search([[4, 8]], k=10, exclude=[40])   # filter=ids: only those
    live.close()

Other kinds: :class:`VectorIndex` (``search(xq, k) -> (distances, ids)`` as in faiss),
:class:`SequenceIndex`, :class:`DocumentIndex`, :class:`TableIndex` (a pandas DataFrame or a
pyarrow Table, queried by dicts of conditions). :func:`load` opens files written by
`genie build` or :meth:`Index.save`, and live index folders; :class:`Client` searches a
`genie serve` server, and writes to its live indexes.

Searches release the GIL, and several threads may search one index at once. They run on the
GPU when there is one (the CUDA driver and NVRTC are loaded at run time), else on the CPU;
``device="cpu"``/``"gpu"``/``"gpu:N"`` or the ``GENIE_DEVICE`` environment variable choose.
"""

from ._genie import __version__, kinds
from ._index import (
    DocumentIndex,
    Index,
    SequenceIndex,
    TableIndex,
    VectorIndex,
    load,
    read_queries,
)
from .client import Client

__all__ = [
    "Client",
    "DocumentIndex",
    "Index",
    "SequenceIndex",
    "TableIndex",
    "VectorIndex",
    "__version__",
    "kinds",
    "load",
    "read_queries",
]
