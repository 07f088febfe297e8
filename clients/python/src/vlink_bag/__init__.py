"""Read and write VLink bags from Python: locally without a server (:func:`open`, :class:`RecordReader`,
:class:`Writer`, :class:`RecordWriter`) or from a ``vlink-bag serve`` server (:class:`Client`, :class:`AsyncClient`),
with Apollo's ``RecordReader``/``RecordWriter`` names and pandas DataFrames.

>>> import vlink_bag
>>> with vlink_bag.open("drive.vcap") as bag:
...     df = bag.to_dataframe(urls="imu", start_s=1.45, end_s=1.65)
>>> with vlink_bag.Client("http://127.0.0.1:8765") as client:
...     df = client.bag("drive.vdb").to_dataframe(urls="imu")

Times are µs since recording start unless a name, a ``unit=`` or the type (datetime, timedelta) says otherwise.
"""

from __future__ import annotations

__version__ = "0.1.0"

from .apollo import RecordMessage, RecordReader, RecordWriter
from .aio import AsyncClient, AsyncRemoteBag
from .bagbase import BagBase, EmptyWindowWarning
from .catalog import Catalog, catalog
from .client import DEFAULT_TIMEOUT, Client
from .decode import PayloadDecoder
from . import errors
from .errors import (
    BadRequest,
    BadResponse,
    Conflict,
    ConnectionFailed,
    CorruptBag,
    NotFound,
    NotSupported,
    ReplayError,
    ServerError,
    ServerUnavailable,
    StreamError,
    TooLarge,
    Unauthorized,
    UnsupportedFormat,
    VlinkBagError,
)
from .lake import query
from .frames import ACTIONS, SCHEMA_TYPES, Message, iter_frames
from .local import LocalBag, open_bag
from .remote import Page, RemoteBag
from .replay import Replay
from .writer import Writer

#: ``vlink_bag.open(path)``: a bag file on disk, read without a server (the same API as :class:`RemoteBag`).
open = open_bag  # noqa: A001 - the module-level name users expect, as ``gzip.open``

# `open` is deliberately not in __all__: `from vlink_bag import *` must not shadow the builtin.
__all__ = [
    "__version__",
    "open_bag",
    "query",
    "catalog",
    "Catalog",
    "LocalBag",
    "Writer",
    "RecordReader",
    "RecordWriter",
    "RecordMessage",
    "Client",
    "AsyncClient",
    "RemoteBag",
    "AsyncRemoteBag",
    "BagBase",
    "Page",
    "Replay",
    "Message",
    "PayloadDecoder",
    "EmptyWindowWarning",
    "iter_frames",
    "ACTIONS",
    "SCHEMA_TYPES",
    "DEFAULT_TIMEOUT",
]
# The exceptions, listed once: in errors.py.
__all__ += errors.__all__
