"""Messages and the incremental parser of the server's binary frame layout.

The layout (``GET /v1/bags/{id}/messages?format=binary``, and one frame per binary message on the replay WebSocket),
all integers little-endian::

    offset  size     field
    0       4        headerLen   u32   bytes of the header that follows
    4       4        payloadLen  u32
    8       8        timestamp   i64   µs since recording start
    16      1        action      u8    ActionType (5 = Pub …)
    17      1        schemaType  u8    SchemaType (1 = raw, 3 = protobuf …)
    18      2        urlLen      u16
    20      urlLen   url         UTF-8
    …       2        serLen      u16
    …       serLen   ser         UTF-8
    …       8        publishTime i64 µs since recording start (version 2: only when it differs from timestamp)
    (header bytes past these are skipped: later versions may add fields)
    8+headerLen  payloadLen  payload
"""

from __future__ import annotations

import struct
from collections.abc import Iterable, Iterator
from typing import Any

from .errors import StreamError

__all__ = ["Message", "ACTIONS", "SCHEMA_TYPES", "iter_frames", "parse_frame", "data_type_for"]

#: ActionType value → the text the server and VLink use (index = value).
ACTIONS: tuple[str, ...] = ("Unknown", "C/Req", "C/Resp", "S/Req", "S/Resp", "Pub", "Sub", "Set", "Get")
#: SchemaType value → name.
SCHEMA_TYPES: dict[int, str] = {0: "unknown", 1: "raw", 2: "zerocopy", 3: "protobuf", 4: "flatbuffers", 5: "cdr"}

_HEAD = struct.Struct("<IIqBBH")  # headerLen, payloadLen, timestamp, action, schemaType, urlLen: 20 bytes
_HEAD_BYTES = _HEAD.size
_MIN_HEADER = 14  # timestamp + action + schemaType + urlLen + serLen
_PUBLISH = struct.Struct("<q")


class Message:
    """One recorded message.

    Attributes:
        topic: the VLink url (Apollo's channel name).
        message: the payload bytes, exactly as recorded.
        data_type: the message's type name (ser). For RPC urls, whose ser is ``"Req|Resp"``, the half that applies to
            this message's action (requests the left, responses the right), as the server's decoder picks it.
        timestamp: µs since recording start (the bag's time base, and the unit of every ``start_time``/``end_time``):
            the log time, when the recorder received the message.
        publish_time: the publish (sample) time, µs since recording start (may be negative): when the source
            produced the message. Equal to ``timestamp`` where the writer was given none.
        abs_timestamp: µs since the Unix epoch (recording start + ``timestamp``).
        action: ``"Pub"``, ``"Sub"``, ``"Set"``, ``"Get"``, ``"C/Req"``, ``"C/Resp"``, ``"S/Req"``, ``"S/Resp"`` or
            ``"Unknown"``.
        schema_type: SchemaType number (1 raw, 3 protobuf, 4 flatbuffers, 5 cdr, …).

    Like the tuples of Apollo's ``RecordReader.read_messages``, a message unpacks to
    ``(topic, message, data_type, timestamp)``.
    """

    __slots__ = ("topic", "message", "data_type", "timestamp", "abs_timestamp", "action", "schema_type", "publish_time")

    def __init__(
        self,
        topic: str,
        message: bytes,
        data_type: str,
        timestamp: int,
        abs_timestamp: int,
        action: str = "Pub",
        schema_type: int = 1,
        publish_time: int | None = None,
    ) -> None:
        self.topic = topic
        self.message = message
        self.data_type = data_type
        self.timestamp = timestamp
        self.abs_timestamp = abs_timestamp
        self.action = action
        self.schema_type = schema_type
        self.publish_time = timestamp if publish_time is None else publish_time

    # Apollo-style tuple unpacking: for topic, data, data_type, timestamp in bag.read_messages(): …
    def __iter__(self) -> Iterator[Any]:
        return iter((self.topic, self.message, self.data_type, self.timestamp))

    def __len__(self) -> int:
        return 4

    def __getitem__(self, index: int) -> Any:
        return (self.topic, self.message, self.data_type, self.timestamp)[index]

    @property
    def channel_name(self) -> str:
        """Apollo's name for :attr:`topic`."""
        return self.topic

    @property
    def url(self) -> str:
        """VLink's name for :attr:`topic`."""
        return self.topic

    @property
    def size(self) -> int:
        return len(self.message)

    def _key(self) -> tuple[Any, ...]:
        return (self.topic, self.message, self.data_type, self.timestamp, self.abs_timestamp, self.action, self.schema_type, self.publish_time)

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Message):
            return NotImplemented
        return self._key() == other._key()

    __hash__ = None  # type: ignore[assignment]  # mutable

    def __repr__(self) -> str:
        payload = self.message if len(self.message) <= 16 else self.message[:16] + b"..."
        return (
            f"Message(topic={self.topic!r}, timestamp={self.timestamp}, action={self.action!r}, "
            f"data_type={self.data_type!r}, size={len(self.message)}, message={payload!r})"
        )


def data_type_for(ser: str, action: int) -> str:
    """The type name that applies to ``action``: RPC urls carry ``"Req|Resp"`` (format reference §2.6)."""
    if 1 <= action <= 4:
        bar = ser.find("|")
        if bar >= 0:
            return ser[:bar] if action in (1, 3) else ser[bar + 1 :]
    return ser


class _Names:
    """Decodes and caches the url/ser part of frame headers, which repeats (a handful of urls per bag)."""

    __slots__ = ("cache",)

    def __init__(self) -> None:
        self.cache: dict[bytes, tuple[str, tuple[str, ...], int]] = {}

    def lookup(self, key: bytes, url_len: int) -> tuple[str, tuple[str, ...], int]:
        """(url, data type per action, the header length without a publish time: 14 + urlLen + serLen)."""
        found = self.cache.get(key)
        if found is not None:
            return found
        if url_len + 2 > len(key):
            raise StreamError(f"frame header too short for its url ({url_len} bytes)")
        try:
            url = key[:url_len].decode("utf-8")
            ser_len = key[url_len] | (key[url_len + 1] << 8)
            if url_len + 2 + ser_len > len(key):
                raise StreamError(f"frame header too short for its ser ({ser_len} bytes)")
            ser = key[url_len + 2 : url_len + 2 + ser_len].decode("utf-8")
        except UnicodeDecodeError as error:
            raise StreamError(f"frame url/ser is not UTF-8: {error}") from None
        found = (url, tuple(data_type_for(ser, a) for a in range(len(ACTIONS))), 14 + url_len + ser_len)
        if len(self.cache) > 4096:
            self.cache.clear()
        self.cache[key] = found
        return found


def parse_frame(data: bytes, start_us: int = 0) -> Message:
    """Parses one complete frame (a replay WebSocket message)."""
    messages = list(iter_frames((data,), start_us))
    if len(messages) != 1:
        raise StreamError(f"expected one frame, found {len(messages)}")
    return messages[0]


#: Payloads at least this big that span chunks are assembled straight from the chunks (one copy).
_LARGE_PAYLOAD = 64 * 1024


def iter_frames(chunks: Iterable[bytes], start_us: int = 0, *, source: str | None = None) -> Iterator[Message]:
    """Parses frames from a stream of byte chunks of any size, yielding each :class:`Message` as soon as it is
    complete. Memory stays bounded by the largest frame plus one chunk: small frames are parsed in place out of the
    chunk they arrived in; a big payload spanning chunks is joined from them in one copy.

    Raises :class:`StreamError` when the stream ends inside a frame or a header is malformed.
    """
    unpack = _HEAD.unpack_from
    unpack_publish = _PUBLISH.unpack_from
    names = _Names()
    lookup = names.cache.get
    actions = ACTIONS
    n_actions = len(actions)
    it = iter(chunks)
    buf = b""
    pos = 0
    n = 0
    while True:
        # Parse every complete frame in buf[pos:].
        need = _HEAD_BYTES
        while n - pos >= _HEAD_BYTES:
            header_len, payload_len, ts, action, schema_type, url_len = unpack(buf, pos)
            body = pos + 8 + header_len
            if body > n or header_len < _MIN_HEADER:
                if header_len < _MIN_HEADER:
                    raise StreamError(f"frame header too short ({header_len} bytes)", url=source)
                # The header first; a big payload is then joined straight from the chunks below.
                need = body - pos if payload_len >= _LARGE_PAYLOAD else body - pos + payload_len
                break
            end = body + payload_len
            key = buf[pos + 20 : body]
            names_ = lookup(key)
            if names_ is None:
                names_ = names.lookup(key, url_len)
            if end > n:
                if payload_len < _LARGE_PAYLOAD:
                    need = end - pos
                    break
                # A big payload: join it from this chunk's tail and the next chunks, without an intermediate buffer.
                pieces: list[Any] = [memoryview(buf)[body:n]]
                have = n - body
                rest = b""
                while have < payload_len:
                    chunk = next(it, None)
                    if chunk is None:
                        raise StreamError(f"the stream ended inside a frame ({8 + header_len + have} of {8 + header_len + payload_len} bytes)", url=source)
                    take = payload_len - have
                    if len(chunk) > take:
                        rest = bytes(chunk[take:])
                        pieces.append(memoryview(chunk)[:take])
                        have = payload_len
                    else:
                        pieces.append(chunk)
                        have += len(chunk)
                payload = b"".join(pieces)
                del pieces
                buf, pos, n = rest, 0, len(rest)
            else:
                payload = buf[body:end]
                pos = end
            yield Message(
                names_[0],
                payload,
                names_[1][action] if action < n_actions else names_[1][0],
                ts,
                start_us + ts,
                actions[action] if action < n_actions else "Unknown",
                schema_type,
                unpack_publish(key, names_[2] - 12)[0] if header_len >= names_[2] + 8 else ts,
            )
        # Need more bytes: gather chunks until `need` bytes follow pos, then join once.
        have = n - pos
        parts = [buf[pos:]] if have else []
        while have < need:
            chunk = next(it, None)
            if chunk is None:
                if have == 0:
                    return
                raise StreamError(f"the stream ended inside a frame ({have} of {need} bytes)", url=source)
            if chunk:
                parts.append(chunk)
                have += len(chunk)
        buf = parts[0] if len(parts) == 1 else b"".join(parts)
        if not isinstance(buf, bytes):
            buf = bytes(buf)
        pos = 0
        n = len(buf)


def frames_to_columns(buf: bytes, columns: Any, *, source: str | None = None, native: bool = True) -> Any:
    """Fills an empty :class:`~vlink_bag.dataframe.Columns` from a complete binary body, without a Message per frame:
    with the C extension one pass in C (``split_frames``), else one ``unpack_from`` and one dict lookup (on the
    header bytes from ``action`` to the end of ``ser``) per frame. Raises :class:`StreamError` for a truncated or
    malformed body."""
    split = _native_split() if native else None
    if split is not None:
        try:
            payloads, times, kinds, headers = split(buf)
        except ValueError as error:
            raise StreamError(f"{error} (a body of {len(buf)} bytes)", url=source) from None
        import numpy as np

        ids = []
        # Per distinct header (from `action` on): its publish time (version 2: 8 bytes after ser), or None.
        header_publish: list[int | None] = []
        for header in headers:
            action, schema_type, url_len = header[0], header[1], header[2] | (header[3] << 8)
            url, types, plain = _Names().lookup(header[4:], url_len)
            act = action if action < len(ACTIONS) else 0
            ids.append(columns.kind(url, ACTIONS[act], types[act], schema_type))
            header_publish.append(_PUBLISH.unpack_from(header, plain - 8)[0] if len(header) >= plain else None)
        columns.timestamps = np.frombuffer(times, dtype="<i8")
        which = np.frombuffer(kinds, dtype=np.int32)
        columns.keys = np.array(ids, dtype=np.int32)[which] if ids else np.zeros(0, dtype=np.int32)
        columns.payloads = payloads
        if any(p is not None for p in header_publish):
            own = np.array([p if p is not None else 0 for p in header_publish], dtype=np.int64)[which]
            has = np.array([p is not None for p in header_publish], dtype=bool)[which]
            columns.publish_times = np.where(has, own, columns.timestamps)
        return columns
    unpack = _HEAD.unpack_from
    unpack_publish = _PUBLISH.unpack_from
    seen: dict[bytes, tuple[int, int]] = {}
    timestamps, keys, payloads = columns.timestamps, columns.keys, columns.payloads
    publish: list[int] = []
    columns.publish_times = publish
    n = len(buf)
    pos = 0
    while pos < n:
        if n - pos < _HEAD_BYTES:
            raise StreamError(f"the stream ended inside a frame ({n - pos} of {_HEAD_BYTES} header bytes)", url=source)
        header_len, payload_len, ts, action, schema_type, url_len = unpack(buf, pos)
        if header_len < _MIN_HEADER:
            raise StreamError(f"frame header too short ({header_len} bytes)", url=source)
        body = pos + 8 + header_len
        end = body + payload_len
        if end > n:
            raise StreamError(f"the stream ended inside a frame ({n - pos} of {end - pos} bytes)", url=source)
        key = buf[pos + 16 : body]
        found = seen.get(key)
        if found is None:
            url, types, plain = _Names().lookup(buf[pos + 20 : body], url_len)
            act = action if action < len(ACTIONS) else 0
            found = seen[key] = (columns.kind(url, ACTIONS[act], types[act], schema_type), plain)
        k, plain = found
        publish.append(unpack_publish(buf, pos + 8 + plain)[0] if header_len >= plain + 8 else ts)
        timestamps.append(ts)
        keys.append(k)
        payloads.append(buf[body:end])
        pos = end
    return columns


def _native_split() -> Any:
    try:
        from .lzav import _c_decode

        if _c_decode is None:
            return None
        from .lzav._lzav_c import split_frames
    except ImportError:
        return None
    return split_frames
