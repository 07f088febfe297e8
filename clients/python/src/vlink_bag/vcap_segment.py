"""One ``.vcap`` file written with VLink's MCAP mapping (format reference §5.1-§5.3) through the official ``mcap``
library's ``Writer``: profile ``vlink``, ``VLinkHeader`` metadata after the header, one channel per (url, action)
with metadata ``{action}``, schema records for protobuf/flatbuffers only, per-channel 1-based sequences, log time =
publish time = ``timestamp_us·1000 + start_ms·10⁶`` ns, and ``VLinkChannel_<id>`` metadata at close — what
``packages/backend-mcap/src/vcap/vcap-file-writer.ts`` writes."""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field
from typing import Any, BinaryIO

from mcap.writer import CompressionType, Writer as McapWriter

from . import __version__
from .errors import Conflict
from .header_crc import with_header_crc
from .model import FLATBUFFERS, PROTOBUF, UNKNOWN, counts_for_frequency, schema_type_label, url_kind
from .frames import ACTIONS

__all__ = ["VcapSegment", "ChannelState", "vlink_date"]

LIBRARY = f"vlink-bag-python {__version__}"
FORMAT_VERSION = "2.1.0"


def vlink_date(epoch_ms: int, timezone_minutes: int | None = None) -> str:
    """``YYYY/MM/DD hh:mm:ss:mmm`` in the recording's timezone (VLink's ``date``: the writer's local wall clock)."""
    tz = dt.timezone(dt.timedelta(minutes=timezone_minutes)) if timezone_minutes is not None else None
    local = dt.datetime.fromtimestamp(epoch_ms // 1000, tz=tz) if tz else dt.datetime.fromtimestamp(epoch_ms // 1000)
    return local.strftime("%Y/%m/%d %H:%M:%S") + f":{epoch_ms % 1000:03d}"


@dataclass
class ChannelState:
    id: int
    url: str
    action: int
    ser: str
    family: int
    count: int = 0
    size: int = 0
    first_us: int = -1
    last_us: int = -1
    extra: dict[str, Any] = field(default_factory=dict)

    @property
    def freq(self) -> float:
        span = self.last_us - self.first_us
        return self.count / (span / 1e6) if span > 0 else 0.0


class VcapSegment:
    def __init__(
        self,
        stream: BinaryIO,
        *,
        start_ms: int,
        opened_ms: int,
        timezone: int,
        tag: str,
        process: str,
        zstd: bool,
        chunk_size: int,
        schemas: dict[str, tuple[str, bytes, int]],
    ) -> None:
        self.stream = stream
        self.start_ns = start_ms * 1_000_000
        self.schemas = schemas  # name → (encoding, data, family), recording-wide
        self.writer = McapWriter(
            stream,
            chunk_size=chunk_size,
            compression=CompressionType.ZSTD if zstd else CompressionType.NONE,
        )
        self.writer.start(profile="vlink", library=LIBRARY)
        self.writer.add_metadata(
            "VLinkHeader",
            with_header_crc({
                "tag": tag,
                "version": FORMAT_VERSION,
                "compress": "zstd" if zstd else "None",
                "process": process,
                "date": vlink_date(opened_ms, timezone),
                "timezone": str(timezone),
                "start_timestamp": str(start_ms),
            }),
        )
        self.channels: dict[tuple[str, int], ChannelState] = {}
        self.schema_ids: dict[str, int] = {}
        self.bytes = 0  # uncompressed payload bytes (split by size counts these, as VLink does)
        self.max_us = -1

    def schema_id(self, name: str) -> int:
        """The schema record for ``name`` (registered once per file); 0 when VLink would not embed it."""
        found = self.schemas.get(name)
        if found is None:
            return 0
        encoding, data, family = found
        if family not in (PROTOBUF, FLATBUFFERS) or not data:
            return 0
        sid = self.schema_ids.get(name)
        if sid is None:
            sid = self.schema_ids[name] = self.writer.register_schema(name, encoding or schema_type_label(family), data)
        return sid

    def channel(self, url: str, action: int, ser: str, family: int) -> ChannelState:
        key = (url, action)
        ch = self.channels.get(key)
        if ch is not None:
            if ch.ser and ser and ser != ch.ser:
                raise Conflict(f'{url}: ser "{ser}" conflicts with "{ch.ser}" stored for this url and action', code="SCHEMA_CONFLICT")
            if ch.family != UNKNOWN and family != UNKNOWN and family != ch.family:
                raise Conflict(f"{url}: family {schema_type_label(family)} conflicts with {schema_type_label(ch.family)}", code="SCHEMA_CONFLICT")
            if not ch.ser and ser:
                ch.ser = ser
            if ch.family == UNKNOWN:
                ch.family = family
            return ch
        method = url_kind(action) == "Method"
        sid = 0 if method else self.schema_id(ser)
        encoding = ""
        if not method:
            found = self.schemas.get(ser)
            encoding = (found[0] if found and sid else "") or schema_type_label(family)
        cid = self.writer.register_channel(url, encoding, sid, {"action": ACTIONS[action]})
        ch = self.channels[key] = ChannelState(cid, url, action, ser, family)
        return ch

    def write(self, ch: ChannelState, timestamp_us: int, data: bytes) -> None:
        ch.count += 1
        ch.size += len(data)
        if counts_for_frequency(ch.action):
            if ch.first_us < 0 or timestamp_us < ch.first_us:
                ch.first_us = timestamp_us
            if timestamp_us > ch.last_us:
                ch.last_us = timestamp_us
        if timestamp_us > self.max_us:
            self.max_us = timestamp_us
        self.bytes += len(data)
        t = self.start_ns + timestamp_us * 1000
        self.writer.add_message(ch.id, log_time=t, data=data, publish_time=t, sequence=ch.count)

    def embed(self, name: str) -> None:
        """A schema pushed on its own (VLink ``push_schema``): its record is written now."""
        self.schema_id(name)

    def close(self, losses: dict[str, float]) -> None:
        self.writer.flush()  # the last chunk before the per-channel metadata, as the TS writer orders them
        for ch in sorted(self.channels.values(), key=lambda c: c.id):
            loss = losses.get(ch.url, 0.0)
            self.writer.add_metadata(
                f"VLinkChannel_{ch.id}",
                {
                    "index": str(ch.id - 1),
                    "type": url_kind(ch.action),
                    "action": ACTIONS[ch.action],
                    "encoding": schema_type_label(ch.family),
                    "ser": ch.ser,
                    "count": str(ch.count),
                    "size": str(ch.size),
                    "loss": f"{loss:.6f}",
                    "freq": f"{ch.freq:.6f}",
                },
            )
        self.writer.finish()
        self.stream.close()
