"""Writing bags from Python: :class:`Writer` produces ``.vcap`` files (VLink's MCAP profile, through the official
``mcap`` library) and ``.vcapx`` split recordings (a manifest plus ``<stem>.<n>.vcap`` segments, format reference
§4.1-§4.3 and §6) that the TypeScript reader, ``vlink-bag check`` and the MCAP readers accept.

>>> with Writer("out/run.vcap") as w:
...     w.write("imu", b'{"x": 1}', timestamp=0, ser="json")
...     w.write("pose", pose_message, timestamp=dt.timedelta(milliseconds=50))  # protobuf: schema embedded
"""

from __future__ import annotations

import datetime as dt
import json
import os
import sys
import time
from pathlib import Path
from typing import Any

from .apollo_types import to_file_descriptor_set
from .errors import BadRequest, VlinkBagError
from .frames import ACTIONS
from .model import CDR, PROTOBUF, RAW, SCHEMA_TYPE_LABELS, UNKNOWN, parse_action, parse_schema_type, resolve_schema_type, ser_for_action
from .paths import bag_path
from .times import recording_tz, to_relative_us
from .vcap_segment import FORMAT_VERSION, VcapSegment, vlink_date

__all__ = ["Writer", "descriptor_set_of"]

DEFAULT_CHUNK = 4 * 1024 * 1024


def descriptor_set_of(message_or_class: Any) -> tuple[str, bytes]:
    """(full type name, serialized FileDescriptorSet with its imports) of a protobuf message, class or descriptor."""
    from google.protobuf import descriptor_pb2

    descriptor = getattr(message_or_class, "DESCRIPTOR", message_or_class)
    files: dict[str, Any] = {}

    def add(fd: Any) -> None:
        if fd.name in files:
            return
        for dep in fd.dependencies:
            add(dep)
        proto = descriptor_pb2.FileDescriptorProto()
        fd.CopyToProto(proto)
        files[fd.name] = proto

    add(descriptor.file)
    return descriptor.full_name, descriptor_pb2.FileDescriptorSet(file=list(files.values())).SerializeToString()


def _local_tz_minutes(epoch_ms: int) -> int:
    offset = dt.datetime.fromtimestamp(epoch_ms / 1000).astimezone().utcoffset()
    return int(offset.total_seconds() // 60) if offset else 0


MAX_EXACT_US = 2**53 - 1


def _explicit_family(schema_type: Any) -> int:
    """The family ``schema_type`` names: a number as VLink's ``resolve_type`` takes it (one outside the enum is no
    family, guessed from the ser as the TypeScript writer does; it was stored as it came), a label case-insensitively.
    A label no family has, or another type, is an ``INVALID_ARGUMENT`` (it was taken for "unknown" without a word)."""
    if schema_type is None or schema_type == "":
        return UNKNOWN
    if isinstance(schema_type, int) and not isinstance(schema_type, bool):
        return schema_type if UNKNOWN < schema_type <= CDR else UNKNOWN
    if isinstance(schema_type, str):
        found = parse_schema_type(schema_type)
        if found != UNKNOWN or schema_type.strip().lower() == "unknown":
            return found
    raise BadRequest(f"schema_type must be a family number (0–{CDR}) or one of {sorted(SCHEMA_TYPE_LABELS)}, not {schema_type!r}", code="INVALID_ARGUMENT")


class Writer:
    """Writes a ``.vcap`` file, or a ``.vcapx`` split recording when the path ends with ``.vcapx``.

    Args:
        path: ``….vcap`` or ``….vcapx`` (missing directories are created; an existing file is replaced, as VLink's
            writers do).
        start_time: recording start: a datetime, or ms since the epoch; default now.
        timezone: minutes east of UTC stored in the header (the ``time`` column's zone); default the local zone.
        tag, process: header ``tag`` and ``process`` (default ``"Empty"`` and the script's name).
        compress: ``"none"`` (default, VLink's default) or ``"zstd"`` chunks.
        chunk_size: bytes per MCAP chunk (VLink's ``cache_size``, 4 MiB).
        segment_size: ``.vcapx`` only: bytes of payload per segment (VLink ``split_by_size``).
        segment_interval: ``.vcapx`` only: seconds (or a timedelta) per segment (VLink ``split_by_time``; wins over
            ``segment_size``).
    """

    def __init__(
        self,
        path: str | os.PathLike[str],
        *,
        start_time: dt.datetime | int | None = None,
        timezone: int | None = None,
        tag: str = "Empty",
        process: str | None = None,
        compress: str = "none",
        chunk_size: int = DEFAULT_CHUNK,
        segment_size: int | None = None,
        segment_interval: float | dt.timedelta | None = None,
    ) -> None:
        self.path = bag_path(path)
        ext = self.path.suffix.lower()
        if ext not in (".vcap", ".vcapx"):
            raise BadRequest(f"Writer writes .vcap or .vcapx files, not {self.path.name}", code="UNSUPPORTED_FORMAT")
        self.split = ext == ".vcapx"
        if not self.split and (segment_size or segment_interval):
            raise BadRequest("segment_size/segment_interval need a .vcapx path (a split recording)", code="INVALID_ARGUMENT")
        if compress not in ("none", "zstd"):
            raise BadRequest(f"compress must be 'none' or 'zstd', not {compress!r}", code="INVALID_ARGUMENT")
        if isinstance(start_time, dt.datetime):
            aware = start_time if start_time.tzinfo else start_time.astimezone()
            self.start_ms = int(aware.timestamp() * 1000)
        elif start_time is None:
            self.start_ms = int(time.time() * 1000)
        else:
            self.start_ms = int(start_time)
        self.timezone = _local_tz_minutes(self.start_ms) if timezone is None else int(timezone)
        self.tag = tag or "Empty"
        self.process = process or Path(sys.argv[0] if sys.argv and sys.argv[0] else "python").stem or "python"
        self.zstd = compress == "zstd"
        self.chunk_size = int(chunk_size)
        interval = segment_interval.total_seconds() if isinstance(segment_interval, dt.timedelta) else segment_interval
        self.split_by_time_ms = int(round((interval or 0) * 1000))
        self.split_by_size = 0 if self.split_by_time_ms > 0 else int(segment_size or (1 << 30 if self.split else 0))
        self._schemas: dict[str, tuple[str, bytes, int]] = {}
        self._losses: dict[str, float] = {}
        self._clock0 = time.monotonic()
        self._closed = False
        self._files: list[str] = []
        self._urls: dict[tuple[str, int], dict[str, Any]] = {}  # recording-wide (url, action) totals, .vcapx
        self._count = 0
        self._max_us = -1
        self.path.parent.mkdir(parents=True, exist_ok=True)
        if self.split:
            self._write_manifest(complete=False)
        self._segment = self._open_segment(0, self.start_ms)

    # -- lifecycle ------------------------------------------------------------------------------------------------
    def __enter__(self) -> Writer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _segment_path(self, index: int) -> Path:
        return self.path if not self.split else self.path.with_name(f"{self.path.stem}.{index + 1}.vcap")

    def _open_segment(self, index: int, opened_ms: int) -> VcapSegment:
        stream = open(self._segment_path(index), "wb")
        self._segment_index = index
        segment = VcapSegment(
            stream,
            start_ms=self.start_ms,
            opened_ms=opened_ms,
            timezone=self.timezone,
            tag=self.tag,
            process=self.process,
            zstd=self.zstd,
            chunk_size=self.chunk_size,
            schemas=self._schemas,
        )
        for name in self._schemas:
            segment.embed(name)
        return segment

    def close(self) -> None:
        """Writes the per-channel metadata, the summary and (``.vcapx``) the final manifest. Idempotent."""
        if self._closed:
            return
        self._closed = True
        self._segment.close(self._losses)
        if self.split:
            self._files.append(self._segment_path(self._segment_index).name)
            self._write_manifest(complete=True)

    # -- schemas ----------------------------------------------------------------------------------------------------
    def add_schema(self, name: str, data: bytes, encoding: str = "protobuf") -> None:
        """Embeds a schema (VLink ``push_schema``): a ``FileDescriptorSet`` (or Apollo's ``ProtoDesc``, converted) for
        protobuf, a ``.bfbs`` for flatbuffers. Messages whose ser is ``name`` then decode from the bag alone."""
        family = parse_schema_type(encoding)
        blob = to_file_descriptor_set(bytes(data)) if family == PROTOBUF else bytes(data)
        known = self._schemas.get(name)
        if known is not None and (known[1] != blob or known[2] != family):
            raise VlinkBagError(f"schema {name} was added already with other data", code="SCHEMA_CONFLICT")
        self._schemas[name] = (encoding, blob, family)
        if not self._closed:
            self._segment.embed(name)

    def add_message_type(self, message_or_class: Any) -> str:
        """Embeds a protobuf type (and its imports) from a message, class or descriptor; returns its full name."""
        name, fds = descriptor_set_of(message_or_class)
        if name not in self._schemas:
            self.add_schema(name, fds, "protobuf")
        return name

    def set_url_loss(self, url: str, loss: float) -> None:
        """Loss ratio of a url, written into its channels' metadata at close (> 1 → −1, unknown)."""
        self._losses[url] = -1.0 if loss > 1 else float(loss)

    # -- messages ---------------------------------------------------------------------------------------------------
    def elapsed_us(self) -> int:
        """The writer's clock: µs since it was created (VLink's auto timestamp)."""
        return int((time.monotonic() - self._clock0) * 1_000_000)

    def write(self, url: str, data: Any, timestamp: Any = None, *, ser: str | None = None, schema_type: int | str | None = None, action: str | int = "Pub", unit: str = "us") -> int:
        """Stores one message and returns its timestamp (µs since start).

        ``data``: bytes; a protobuf message (serialized, its type embedded, ser = its full name); a dict or list (JSON,
        ser ``json``); a str (ser ``text``). ``timestamp``: µs since start (or in ``unit``), a datetime (absolute), a
        timedelta (relative), pandas/numpy times; None = the writer's clock. ``action``: ``"Pub"``, ``"Sub"``,
        ``"Set"``, ``"Get"``, ``"C/Req"``, ``"C/Resp"``, ``"S/Req"``, ``"S/Resp"`` (or its number)."""
        if self._closed:
            raise VlinkBagError("the writer is closed", code="CLOSED")
        if not isinstance(url, str) or not url:
            raise BadRequest("url must be a non-empty string", code="INVALID_ARGUMENT")
        payload, ser, family = self._payload(url, data, ser, schema_type)
        act = action if isinstance(action, int) and 0 <= action <= 8 else parse_action(str(action))
        if isinstance(action, str) and act == 0 and action != "Unknown":
            raise BadRequest(f"action must be one of {ACTIONS}, not {action!r}", code="INVALID_ARGUMENT")
        us = self.elapsed_us() if timestamp is None else to_relative_us(timestamp, name="timestamp", start_us=self.start_ms * 1000, tz=recording_tz(self.timezone), unit=unit)
        if us is None or us < 0:
            raise BadRequest(f"timestamp {timestamp!r} is before the recording start", code="INVALID_ARGUMENT")
        if us > MAX_EXACT_US:
            # As the TypeScript writer refuses it: past 2^53 µs no reader holds the time exactly (and past 2^64 ns the
            # record's field cannot hold it: struct.error).
            raise BadRequest(f"timestamp {us} µs is past the largest exact time (2^53 − 1 µs)", code="INVALID_ARGUMENT")
        if self.split:
            self._maybe_split(us, len(payload))
        found = self._schemas.get(ser_for_action(ser, act))
        if family == UNKNOWN:
            family = resolve_schema_type(None, ser, found[0] if found else None)
        ch = self._segment.channel(url, act, ser, family)
        self._segment.write(ch, us, payload)
        self._count += 1
        self._max_us = max(self._max_us, us)
        if self.split:
            self._account(ch, us, len(payload))
        return us

    def _payload(self, url: str, data: Any, ser: str | None, schema_type: int | str | None) -> tuple[bytes, str, int]:
        family = _explicit_family(schema_type)
        if isinstance(data, (bytes, bytearray, memoryview)):
            return bytes(data), ser or "", family
        if hasattr(data, "SerializeToString") and hasattr(data, "DESCRIPTOR"):
            name = self.add_message_type(data)
            return data.SerializeToString(), ser or name, PROTOBUF
        if isinstance(data, str):
            return data.encode("utf-8"), ser or "text", family or RAW
        if isinstance(data, (dict, list)):
            return json_payload(url, data), ser or "json", family or RAW
        raise BadRequest(f"data must be bytes, a protobuf message, a str or a dict/list, not {type(data).__name__}", code="INVALID_ARGUMENT")

    # -- split recordings (.vcapx) --------------------------------------------------------------------------------
    def _maybe_split(self, us: int, size: int) -> None:
        segment = self._segment
        if not segment.channels:
            return
        index = self._segment_index
        if self.split_by_time_ms > 0:
            due = us > self.split_by_time_ms * 1000 * (index + 1)
        else:
            due = self.split_by_size > 0 and segment.bytes + size > self.split_by_size
        if not due:
            return
        segment.close(self._losses)
        self._files.append(self._segment_path(index).name)
        self._segment = self._open_segment(index + 1, self.start_ms + us // 1000)
        self._write_manifest(complete=False)

    def _account(self, ch: Any, us: int, size: int) -> None:
        entry = self._urls.get((ch.url, ch.action))
        if entry is None:
            entry = self._urls[(ch.url, ch.action)] = {"index": len(self._urls), "ch": ch, "count": 0, "size": 0, "first": -1, "last": -1}
        entry["ch"] = ch
        entry["count"] += 1
        entry["size"] += size
        if 5 <= ch.action <= 8:
            entry["first"] = us if entry["first"] < 0 else min(entry["first"], us)
            entry["last"] = max(entry["last"], us)

    def _write_manifest(self, *, complete: bool) -> None:
        from .model import schema_type_label, url_kind

        major, minor, patch = (int(p) for p in FORMAT_VERSION.split("."))
        urls = []
        for (url, action), e in self._urls.items():
            span = e["last"] - e["first"]
            urls.append(
                {
                    "index": e["index"],
                    "url": url,
                    "type": url_kind(action),
                    "action": ACTIONS[action],
                    "ser": e["ch"].ser,
                    "encoding": schema_type_label(e["ch"].family),
                    "count": e["count"],
                    "size": e["size"],
                    "loss": float(self._losses.get(url, 0.0)),
                    "freq": float(e["count"] / (span / 1e6)) if span > 0 else 0.0,
                }
            )
        manifest = {
            "VLinkHeader": {
                "major": major,
                "minor": minor,
                "patch": patch,
                "count": self._count,
                "duration": max(0, self._max_us),
                "accuracy": "MicroSecond",
                "compress": "zstd" if self.zstd else "None",
                "process": self.process,
                "date": vlink_date(self.start_ms, self.timezone),
                "tag": self.tag,
                "split_by_size": self.split_by_size,
                "split_by_time": self.split_by_time_ms,
                "complete": complete,
                "timezone": self.timezone,
                "start_timestamp": self.start_ms,
            },
            "VLinkUrls": urls,
            "VLinkFiles": list(self._files),
        }
        temp = self.path.with_name(self.path.name + ".tmp")
        temp.write_text(json.dumps(manifest, indent=4, ensure_ascii=False))
        os.replace(temp, self.path)


def json_payload(url: str, data: Any) -> bytes:
    """``data`` as compact JSON text. JSON has no NaN or Infinity: Python's ``json`` would write them as bare words
    that every other vlink-bag tool (the TypeScript decoder behind ``cat --decode``, the server's ``decode=true``,
    export, align) cannot parse, so the url's payloads would stop decoding to objects. They are refused here with the
    place of the value (write ``None``, JSON's null, for a missing value). Integers of any size are kept exact (the
    TypeScript side keeps those past 2^53 as decimal strings)."""
    try:
        return json.dumps(data, separators=(",", ":"), allow_nan=False).encode("utf-8")
    except ValueError:
        where, value = _non_finite(data, "data")
        raise BadRequest(
            f"url {url!r}: {where} is {value!r}, which JSON cannot hold (other tools would read the payload as text, "
            "not JSON): write None (null) or a finite number",
            code="INVALID_ARGUMENT",
        ) from None
    except (TypeError, RecursionError) as error:
        raise BadRequest(f"url {url!r}: the payload is not JSON-serializable: {error}", code="INVALID_ARGUMENT") from None


def _non_finite(value: Any, where: str) -> tuple[str, Any]:
    """The first NaN/Infinity inside ``value`` and where it is (``data['x'][2]``)."""
    stack = [(value, where)]
    while stack:
        item, place = stack.pop()
        if isinstance(item, float):
            if item != item or item in (float("inf"), float("-inf")):
                return place, item
        elif isinstance(item, dict):
            stack.extend(reversed([(v, f"{place}[{k!r}]") for k, v in item.items()]))
        elif isinstance(item, (list, tuple)):
            stack.extend(reversed([(v, f"{place}[{i}]") for i, v in enumerate(item)]))
    return where, "a non-finite number"
