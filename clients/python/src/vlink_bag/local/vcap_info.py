"""A ``.vcap``'s Info and per-channel templates recovered as VLink's reader does (format reference §5.4), the same
rules as ``packages/backend-mcap/src/vcap/vcap-info.ts``; foreign MCAP files get urls from topics, sers from schema
names, families from encodings and a start at their first message."""

from __future__ import annotations

import datetime as dt
import json
import re
from dataclasses import dataclass
from typing import Any

from ..errors import CorruptBag
from ..header_crc import header_intact
from ..frames import ACTIONS
from ..model import RAW, UNKNOWN, parse_action, parse_schema_type, resolve_schema_type

__all__ = ["describe", "Layout", "Template"]

FORMAT_MAJOR = 2
_INT = re.compile(r"^\s*-?\d+\s*$")


@dataclass
class Template:
    url: str
    action: int
    ser: str
    family: int


@dataclass
class Layout:
    info: dict[str, Any]
    start_ns: int
    templates: dict[int, Template]
    vlink: bool


def _to_int(text: str | None) -> int | None:
    return int(text) if text is not None and _INT.match(text) else None


def _to_num(text: str | None) -> float:
    try:
        value = float(text) if text is not None else 0.0
    except ValueError:
        return 0.0
    return value if value == value and abs(value) != float("inf") else 0.0


def _encoding_family(encoding: str | None) -> int:
    if not encoding:
        return UNKNOWN
    known = parse_schema_type(encoding)
    if known != UNKNOWN:
        return known
    return RAW if encoding.strip().lower() == "jsonschema" else UNKNOWN


def parse_vlink_date(text: str) -> int | None:
    """``YYYY/MM/DD hh:mm:ss[:mmm]`` local time → ms since the epoch (§4.4 step 6)."""
    m = re.match(r"^(\d{4})/(\d{2})/(\d{2}) (\d{2}):(\d{2}):(\d{2})(?::(\d{1,3}))?$", text.strip())
    if not m:
        return None
    y, mo, d, h, mi, s, ms = m.groups()
    local = dt.datetime(int(y), int(mo), int(d), int(h), int(mi), int(s), int(ms or 0) * 1000)
    return int(local.timestamp() * 1000)


def describe(profile: str, summary: Any, metadata: list[Any], path: str, file_size: int, *, recovered: bool = False, file_statistics: bool = True) -> Layout:
    vlink = profile == "vlink"
    complete = not recovered  # a file read by a linear scan for want of a summary is not complete
    stats = summary.statistics
    if not file_statistics:
        if vlink:
            raise CorruptBag(f"{path}: vcap file has no Statistics record", code="CORRUPT_FILE")
        complete = False
    count = stats.message_count if stats else 0
    first_ms = stats.message_start_time // 1_000_000 if count else None
    last_ms = stats.message_end_time // 1_000_000 if count else None
    by_name: dict[str, list[dict[str, str]]] = {}
    for record in metadata:
        by_name.setdefault(record.name, []).append(dict(record.metadata))

    foreign_mcap = not vlink and not path.lower().endswith((".vcap", ".vcapx"))
    version, compression, process, date, tag, timezone = "0.0.0", "Unknown", "Unknown", "Unknown", "Empty", 0
    start: int | None
    if vlink:
        header = (by_name.get("VLinkHeader") or [None])[0]
        if header is None:
            complete = False
        elif header_intact(header) is False:
            # Every frame's time counts from its start_timestamp, which nothing else in the file confirms (§5.6).
            raise CorruptBag(
                f"{path}: VLinkHeader is damaged (its header_crc32 does not match its values): repair it with `vlink-bag fix`",
                code="CORRUPT_FILE",
            )

        def get(key: str) -> str | None:
            nonlocal complete
            value = header.get(key) if header else None
            if not value:
                complete = False
            return value or None

        v = get("version")
        if v is not None:
            major = _to_int(v.split(".")[0])
            if major != FORMAT_MAJOR:
                raise CorruptBag(f"vcap version {v} is not {FORMAT_MAJOR}.x", code="VERSION_MISMATCH", url=path)
            version = v
        compression = get("compress") or "Unknown"
        process = get("process") or "Unknown"
        date = get("date") or "Unknown"
        tz = get("timezone")
        timezone = (_to_int(tz) or 0) if tz is not None else 0
        tag = (header or {}).get("tag") or "Empty"
        start = _to_int((header or {}).get("start_timestamp") or None)
        if start is None:
            start = parse_vlink_date(date) if date != "Unknown" else None
            complete = False
        if start is None:
            start = first_ms if first_ms is not None else 0
    else:
        start = first_ms if first_ms is not None else 0
        local = dt.datetime.fromtimestamp(start / 1000).astimezone()
        date = local.strftime("%Y/%m/%d %H:%M:%S") + f":{local.microsecond // 1000:03d}"
        offset = local.utcoffset()
        timezone = int(offset.total_seconds() // 60) if offset else 0
        kinds = sorted({c.compression or "None" for c in summary.chunk_indexes})
        compression = ",".join(kinds) if kinds else "None"

    blank = total = 0
    if first_ms is not None and last_ms is not None:
        blank = first_ms - start
        if blank < 0:
            blank = 0
            start = first_ms
        total = max(0, last_ms - start)

    counts = dict(stats.channel_message_counts) if stats else {}
    metas: dict[int, dict[str, Any]] = {}
    actions: dict[int, int] = {}
    if vlink:
        for name, records in by_name.items():
            if not name.startswith("VLinkChannel_"):
                continue
            id_text = name[len("VLinkChannel_") :]
            cid = int(id_text) if id_text.isdigit() else -1
            channel = summary.channels.get(cid)
            m = records[0]
            if channel is None or cid not in counts or m.get("index") != str(cid - 1) or cid in metas or len(records) > 1:
                complete = False
                continue
            schema = summary.schemas.get(channel.schema_id)
            ser = m["ser"] if "ser" in m else (schema.name if schema else "")
            family = resolve_schema_type(parse_schema_type(m.get("encoding")), ser, schema.encoding if schema else None) if "encoding" in m else _family_of(summary, channel)
            action = parse_action(m.get("action") or channel.metadata.get("action"))
            count_value = _to_int(m.get("count"))
            metas[cid] = {
                "index": cid - 1,
                "url": channel.topic,
                "type": m.get("type") or "Unknown",
                "action": ACTIONS[action],
                "ser": ser,
                "schemaType": family,
                "count": count_value if count_value is not None else int(counts.get(cid, 0)),
                "size": _to_num(m.get("size")),
                "loss": _to_num(m.get("loss")),
                "freq": _to_num(m.get("freq")),
            }
            actions[cid] = action
    for ordinal, channel in enumerate(sorted(summary.channels.values(), key=lambda c: c.id)):
        if channel.id in metas:
            continue
        if vlink and counts.get(channel.id, 0) > 0:
            complete = False
        action = parse_action(channel.metadata.get("action"))
        schema = summary.schemas.get(channel.schema_id)
        metas[channel.id] = {
            "index": channel.id - 1 if vlink else ordinal,
            "url": channel.topic,
            "type": "Event",
            "action": ACTIONS[action],
            "ser": schema.name if schema else "",
            "schemaType": _family_of(summary, channel),
            "count": int(counts.get(channel.id, 0)),
            "size": 0,
            "loss": 0,
            "freq": 0,
            # A foreign .mcap's payload encoding (MCAP's well-known name, e.g. cbor), as the TypeScript reader of
            # .mcap files gives it (its .vcap reader, and so this one for a foreign file named .vcap, does not).
            **({"encoding": channel.message_encoding} if foreign_mcap and channel.message_encoding else {}),
        }
        actions[channel.id] = action

    # Url-keyed ser and family (step 8): conflicts make the value unknown; "" and "Bytes" yield to a specific ser.
    ser_by_url: dict[str, str | None] = {}
    family_by_url: dict[str, int | None] = {}
    for m in metas.values():
        url = m["url"]
        s = ser_by_url.get(url, ...)
        if s is ... or s == "" or s == "Bytes":
            ser_by_url[url] = m["ser"] or (s if isinstance(s, str) else "") or ""
        elif s is not None and m["ser"] and m["ser"] != "Bytes" and m["ser"] != s:
            ser_by_url[url] = None
        f = family_by_url.get(url, ...)
        if f is ... or f == UNKNOWN:
            family_by_url[url] = m["schemaType"]
        elif f is not None and m["schemaType"] != UNKNOWN and m["schemaType"] != f:
            family_by_url[url] = None
    templates = {
        cid: Template(m["url"], actions[cid], ser_by_url.get(m["url"]) or "", family_by_url.get(m["url"]) or UNKNOWN) for cid, m in metas.items()
    }
    urls = sorted(metas.values(), key=lambda m: m["index"])
    for m in urls:
        for key in ("size", "loss", "freq"):
            if isinstance(m[key], float) and m[key].is_integer():
                m[key] = int(m[key])
    info = {
        "path": path,
        "format": "vcap" if path.lower().endswith((".vcap", ".vcapx")) or vlink else "mcap",
        "version": version,
        "storageType": "vcap" if vlink else "mcap",
        "messageCount": int(count),
        "totalDuration": total,
        "blankDuration": blank,
        "timeAccuracy": "MicroSecond",
        "compressionType": compression,
        "processName": process,
        "dateTime": date,
        "tagName": tag,
        "hasCompleted": complete,
        "timezone": timezone,
        "startTimestamp": start,
        "splitCount": 1,
        "splitBySize": 0,
        "splitByTime": 0,
        "hasSchema": any(len(s.data) > 0 for s in summary.schemas.values()),
        "totalRawSize": sum(m["size"] for m in urls),
        "fileSize": file_size,
        "urls": urls,
    }
    counters = _counters((by_name.get("VLinkBagCounters") or [None])[-1])
    if counters:
        info["counters"] = counters
    return Layout(info, start * 1_000_000, templates, vlink)


def _counters(record: dict[str, str] | None) -> dict[str, dict[str, int]]:
    """The last ``VLinkBagCounters`` record (format reference §5.5): url → JSON object cause → count; anything else is
    left out."""
    table: dict[str, dict[str, int]] = {}
    for url, text in (record or {}).items():
        try:
            causes = json.loads(text)
        except ValueError:
            continue
        if not isinstance(causes, dict):
            continue
        clean = {c: n for c, n in causes.items() if isinstance(n, int) and not isinstance(n, bool) and n > 0}
        if clean:
            table[url] = dict(sorted(clean.items()))
    return dict(sorted(table.items()))


def _family_of(summary: Any, channel: Any) -> int:
    schema = summary.schemas.get(channel.schema_id)
    found = _encoding_family(schema.encoding if schema else None)
    return found if found != UNKNOWN else _encoding_family(channel.message_encoding)
