"""Python client for vlink-bag servers (``vlink-bag serve``): list bags, read messages as a stream, decode protobuf
through the bags' embedded descriptors into pandas DataFrames, and control WebSocket replays.

>>> from vlink_bag import Client
>>> with Client("http://127.0.0.1:8765") as client:
...     bag = client.bag("drive.vdb")
...     for m in bag.read_messages(urls=["imu"]):
...         print(m.timestamp, m.topic, len(m.message))

Times are µs since recording start unless a name says otherwise.
"""

from __future__ import annotations

from .client import DEFAULT_TIMEOUT, Client, Page, RemoteBag
from .decode import PayloadDecoder
from .errors import (
    BadRequest,
    Conflict,
    ConnectionFailed,
    CorruptBag,
    NotFound,
    NotSupported,
    ReplayError,
    ServerError,
    ServerUnavailable,
    StreamError,
    Unauthorized,
    UnsupportedFormat,
    VlinkBagError,
)
from .frames import ACTIONS, SCHEMA_TYPES, Message, iter_frames
from .replay import Replay

__version__ = "0.1.0"

__all__ = [
    "__version__",
    "Client",
    "RemoteBag",
    "Page",
    "Replay",
    "Message",
    "PayloadDecoder",
    "iter_frames",
    "ACTIONS",
    "SCHEMA_TYPES",
    "DEFAULT_TIMEOUT",
    "VlinkBagError",
    "BadRequest",
    "Unauthorized",
    "NotFound",
    "UnsupportedFormat",
    "CorruptBag",
    "Conflict",
    "NotSupported",
    "ServerError",
    "ServerUnavailable",
    "ConnectionFailed",
    "StreamError",
    "ReplayError",
]
