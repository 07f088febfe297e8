"""Apollo's ``cyber_py3.record`` API over VLink bags: :class:`RecordReader` and :class:`RecordWriter` with Apollo's
names, arguments, units (absolute nanoseconds) and return types (``ProtoDesc`` and ``Header`` bytes), so scripts
written for Apollo records run on ``.vcap``/``.vdb`` bags. The README's "Apollo parity" table lists every method."""

from __future__ import annotations

import operator
import os
from collections.abc import Iterator
from typing import Any, NamedTuple

from .apollo_types import to_file_descriptor_set
from .bagbase import BagBase
from .errors import BadRequest, VlinkBagError
from .paths import bag_path

__all__ = ["RecordReader", "RecordWriter", "RecordMessage"]

_END = 18446744073709551615  # Apollo's default end_time (uint64 max)


def _ns(time: Any) -> int:
    """Apollo's time, a uint64 of ns: an int (numpy's too). int("t") raised a bare ValueError, and a float was
    truncated without a word."""
    try:
        if not isinstance(time, bool):
            return operator.index(time)
    except TypeError:
        pass
    raise BadRequest(f"time must be an integer of ns since the epoch, not {type(time).__name__}", code="INVALID_ARGUMENT")


def _count(value: Any, name: str) -> int:
    """A segmentation size or interval: an integer ≥ 0 (0: none), as Apollo's uint64 settings."""
    if not isinstance(value, bool):
        try:
            number = operator.index(value)
            if number >= 0:
                return number
        except TypeError:
            pass
    raise BadRequest(f"{name} must be an integer ≥ 0, not {value!r}", code="INVALID_ARGUMENT")


class RecordMessage(NamedTuple):
    """What Apollo's ``read_messages`` yields: ``topic`` (channel), ``message`` (bytes), ``data_type``, ``timestamp``
    (absolute ns since the epoch)."""

    topic: str
    message: bytes
    data_type: str
    timestamp: int


class RecordReader:
    """``RecordReader(file_name)``: a bag file (``.vdb``, ``.vdbx``, ``.vcap``, ``.vcapx``, ``.mcap``) or an opened bag
    (local or :class:`~vlink_bag.RemoteBag`), read with Apollo's semantics."""

    def __init__(self, file_name: str | os.PathLike[str] | BagBase) -> None:
        from .local import open_bag

        self.bag: BagBase = file_name if isinstance(file_name, BagBase) else open_bag(file_name)

    def read_messages(self, start_time: int = 0, end_time: int = _END) -> Iterator[RecordMessage]:
        """Messages with ``start_time ≤ t ≤ end_time`` (absolute ns; 0 and uint64 max: the whole bag), in the bag's
        reading order."""
        start_us = self.bag.start_timestamp_us
        begin = None if not start_time else max(0, -(-int(start_time) // 1000) - start_us)
        end = None if end_time is None or int(end_time) >= 2**63 else int(end_time) // 1000 - start_us
        if end is not None and end < 0:
            return
        for m in self.bag.read_messages(begin or 0, end):
            yield RecordMessage(m.topic, m.message, m.data_type, m.abs_timestamp * 1000)

    def get_messagenumber(self, channel_name: str) -> int:
        return self.bag.get_messagenumber(channel_name)

    def get_messagetype(self, channel_name: str) -> str:
        return self.bag.get_messagetype(channel_name)

    def get_protodesc(self, channel_name: str) -> bytes:
        """Apollo's serialized ``ProtoDesc`` of the channel's type (``b""`` when the bag embeds none)."""
        return self.bag.get_protodesc(channel_name, apollo=True)

    def get_headerstring(self) -> bytes:
        """A serialized ``apollo.cyber.proto.Header`` filled from the bag's header."""
        return bytes(self.bag.get_headerstring(apollo=True))  # type: ignore[arg-type]

    def reset(self) -> None:
        self.bag.reset()

    def get_channellist(self) -> list[str]:
        return self.bag.get_channellist()

    def close(self) -> None:
        close = getattr(self.bag, "close", None)
        if close is not None:
            close()

    def __enter__(self) -> RecordReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


class RecordWriter:
    """``RecordWriter(file_segmentation_size_kb=0, file_segmentation_interval_sec=0)`` then ``open(path)``. The path
    must end with ``.vcap`` (or ``.vcapx`` with segmentation). The recording starts at the first message's time
    (its ms), so absolute times become VLink's relative µs exactly."""

    def __init__(self, file_segmentation_size_kb: int = 0, file_segmentation_interval_sec: int = 0) -> None:
        # The path goes to open(): RecordWriter("x.vcap") raised "invalid literal for int()".
        self._size_kb = _count(file_segmentation_size_kb, "file_segmentation_size_kb")
        self._interval_s = _count(file_segmentation_interval_sec, "file_segmentation_interval_sec")
        self._path: str | None = None
        self._writer: Any = None
        self._channels: dict[str, tuple[str, bytes]] = {}
        self._counts: dict[str, int] = {}

    def open(self, path: str | os.PathLike[str]) -> bool:
        self._path = str(bag_path(path))
        return True

    def set_size_fileseg(self, size_kilobytes: int) -> bool:
        self._size_kb = _count(size_kilobytes, "size_kilobytes")
        return True

    def set_intervaltime_fileseg(self, time_sec: int) -> bool:
        self._interval_s = _count(time_sec, "time_sec")
        return True

    def write_channel(self, channel_name: str, type_name: str, proto_desc: bytes) -> bool:
        """Declares a channel's type; ``proto_desc`` is Apollo's ``ProtoDesc`` or a ``FileDescriptorSet`` (embedded
        as the type's schema), or ``b""``. Anything else is a :class:`BadRequest` (it was a bare ``ValueError`` from the
        descriptor's parser)."""
        if not isinstance(channel_name, str) or not channel_name or not isinstance(type_name, str):
            raise BadRequest("write_channel takes a channel name and a type name (str)", code="INVALID_ARGUMENT")
        if not isinstance(proto_desc, (bytes, bytearray, memoryview)):
            raise BadRequest(f"proto_desc must be bytes, not {type(proto_desc).__name__}", code="INVALID_ARGUMENT")
        try:
            fds = to_file_descriptor_set(bytes(proto_desc)) if proto_desc else b""
        except ValueError as error:
            raise BadRequest(f"{channel_name}: proto_desc is neither Apollo's ProtoDesc nor a FileDescriptorSet ({error})", code="INVALID_ARGUMENT") from None
        self._channels[channel_name] = (type_name, fds)
        if self._writer is not None and proto_desc:
            self._writer.add_schema(type_name, self._channels[channel_name][1])
        return True

    def write_message(self, channel_name: str, data: Any, time: int, raw: bool = True) -> bool:
        """Writes a message at ``time`` (absolute ns). ``raw=False``: ``data`` is a protobuf message to serialize."""
        if self._path is None:
            raise VlinkBagError("open() the writer first", code="CLOSED")
        time = _ns(time)
        if not raw:
            if not self._channels.get(channel_name, ("", b""))[1] and hasattr(data, "DESCRIPTOR"):
                from .writer import descriptor_set_of

                self._channels[channel_name] = descriptor_set_of(data)
            data = data.SerializeToString()
        if self._writer is None:
            from .writer import Writer

            segmented = self._size_kb > 0 or self._interval_s > 0
            self._writer = Writer(
                self._path,
                start_time=int(time) // 1_000_000,
                **({"segment_size": self._size_kb * 1024 or None, "segment_interval": self._interval_s or None} if segmented else {}),
            )
            for type_name, fds in self._channels.values():
                if fds:
                    self._writer.add_schema(type_name, fds)
        type_name = self._channels.get(channel_name, ("", b""))[0]
        start_ns = self._writer.start_ms * 1_000_000
        if int(time) < start_ns:
            raise BadRequest(f"time {time} ns is before the recording start {start_ns} ns", code="INVALID_ARGUMENT")
        family = 3 if self._channels.get(channel_name, ("", b""))[1] else None
        self._writer.write(channel_name, bytes(data), (int(time) - start_ns) // 1000, ser=type_name, schema_type=family)
        self._counts[channel_name] = self._counts.get(channel_name, 0) + 1
        return True

    def get_messagenumber(self, channel_name: str) -> int:
        return self._counts.get(channel_name, 0)

    def get_messagetype(self, channel_name: str) -> str:
        return self._channels.get(channel_name, ("", b""))[0]

    def get_protodesc(self, channel_name: str) -> bytes:
        from .apollo_types import fds_to_proto_desc

        type_name, fds = self._channels.get(channel_name, ("", b""))
        return fds_to_proto_desc(fds, type_name) if fds else b""

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()

    def __enter__(self) -> RecordWriter:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
