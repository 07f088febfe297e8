"""Split recordings: ``.vdbx``/``.vcapx`` manifests (format reference §4.1, §4.4, §6) read as one bag. Totals and
url table come from the manifest, segments are read in manifest order, ``.vcapx`` segments are put on the first
segment's time base (as ``packages/core/src/split/split-reader.ts`` does)."""

from __future__ import annotations

import json
import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from ..errors import CorruptBag, NotFound
from ..frames import Message
from ..model import parse_schema_type, resolve_schema_type

__all__ = ["SplitRecording"]

_MAX_MANIFEST = 256 * 1024 * 1024


class SplitRecording:
    def __init__(self, path: str | os.PathLike[str], flavor: str, open_segment: Any, *, display_path: str | None = None) -> None:
        self.path = Path(path)
        if not self.path.is_file():
            raise NotFound(f"no such .{flavor} manifest: {self.path}", url=str(self.path))
        if self.path.stat().st_size > _MAX_MANIFEST:
            raise CorruptBag(f"{self.path} is too big to be a manifest", code="CORRUPT_FILE")
        try:
            manifest = json.loads(self.path.read_text("utf-8"))
            header = manifest["VLinkHeader"]
            names = manifest["VLinkFiles"]
            url_rows = manifest.get("VLinkUrls", [])
            if not isinstance(header, dict) or not isinstance(names, list) or not isinstance(url_rows, list):
                raise TypeError("wrong shape")
        except (ValueError, KeyError, TypeError) as error:
            raise CorruptBag(f"{self.path} is not a .{flavor} manifest: {error}", code="CORRUPT_FILE") from error
        if not names:
            raise CorruptBag(f"{self.path}: the manifest lists no segments", code="CORRUPT_FILE")
        self.segments: list[Any] = []
        try:
            for name in names:
                if not isinstance(name, str) or "/" in name or "\\" in name or name in (".", ".."):
                    raise CorruptBag(f"{self.path}: segment entry {name!r} is not a file name", code="CORRUPT_FILE")
                segment = self.path.parent / name
                if not segment.is_file():
                    raise NotFound(f'segment "{name}" listed in the manifest does not exist', url=str(segment))
                opened = open_segment(segment)
                self.segments.append(opened)
                # A copy of an earlier segment's file put in this one's place would give that segment's frames twice:
                # the segments of one recording never share start, first frame, duration and count (as the TypeScript
                # reader tells them).
                same = ("startTimestamp", "blankDuration", "totalDuration", "messageCount")
                for earlier_name, earlier in zip(names, self.segments[:-1]):
                    if opened.info["messageCount"] > 0 and all(earlier.info[k] == opened.info[k] for k in same):
                        raise CorruptBag(f'{self.path}: segment "{name}" repeats "{earlier_name}" (its start, duration and count)', code="CORRUPT_FILE", url=str(segment))
        except BaseException:
            self.close()
            raise
        first_start = int(self.segments[0].info["startTimestamp"])
        # .vcapx: timestamps are relative to each segment's start; .vdbx elapsed values already share one base.
        self.offsets = [(int(s.info["startTimestamp"]) - first_start) * 1000 if flavor == "vcapx" else 0 for s in self.segments]
        urls = []
        for row in url_rows:
            ser = str(row.get("ser", ""))
            meta = {"index": int(row.get("index", 0)), "url": str(row.get("url", "")), "type": str(row.get("type", "Unknown"))}
            if flavor == "vcapx":
                meta["action"] = str(row.get("action", "Unknown"))
            meta.update(
                ser=ser,
                schemaType=resolve_schema_type(parse_schema_type(str(row.get("encoding", ""))), ser),
                count=int(row.get("count", 0)),
                size=row.get("size", 0),
                loss=row.get("loss", 0),
                freq=row.get("freq", 0),
            )
            urls.append(meta)
        urls.sort(key=(lambda m: (m["url"], m["index"])) if flavor == "vdbx" else (lambda m: m["index"]))
        with_messages = [s.info for s in self.segments if s.info["messageCount"] > 0]
        self.info: dict[str, Any] = {
            "path": display_path or str(self.path),
            "format": flavor,
            "version": f"{header.get('major', 0)}.{header.get('minor', 0)}.{header.get('patch', 0)}",
            "storageType": "SQLite3" if flavor == "vdbx" else "vcap",
            "messageCount": int(header.get("count", 0)),
            "totalDuration": int(int(header.get("duration", 0)) / 1000),
            "blankDuration": min((i["blankDuration"] for i in with_messages), default=0),
            "timeAccuracy": str(header.get("accuracy", "MicroSecond")),
            "compressionType": str(header.get("compress", "None")),
            "processName": str(header.get("process", "")),
            "dateTime": str(header.get("date", "")),
            "tagName": str(header.get("tag") or "Empty"),
            "hasCompleted": bool(header.get("complete", True)),
            "timezone": int(header.get("timezone", 480)),
            "startTimestamp": int(header.get("start_timestamp", first_start)),
            "splitCount": len(self.segments),
            "splitBySize": int(header.get("split_by_size", 0)),
            "splitByTime": int(header.get("split_by_time", 0)),
            "hasSchema": any(s.info["hasSchema"] for s in self.segments),
            "totalRawSize": sum(u["size"] for u in urls),
            "fileSize": sum(s.info["fileSize"] for s in self.segments),
            "urls": urls,
        }
        # The recording's counters live in the segment open when they were last stored: the last one that has them.
        counters = next((s.info["counters"] for s in reversed(self.segments) if s.info.get("counters")), None)
        if counters:
            self.info["counters"] = counters

    def close(self) -> None:
        for segment in self.segments:
            segment.close()

    def schemas(self) -> list[dict[str, Any]]:
        out: list[dict[str, Any]] = []
        seen: set[tuple[str, int]] = set()
        for segment in self.segments:
            for schema in segment.schemas():
                key = (schema["name"], schema["schemaType"])
                if key not in seen:
                    seen.add(key)
                    out.append(schema)
        return out

    def messages(self, begin_us: int, end_us: int | None, urls: Sequence[str] | None, start_us: int) -> Iterator[Message]:
        for segment, offset in zip(self.segments, self.offsets):
            seg_begin = max(0, begin_us - offset)
            seg_end = None if end_us is None else end_us - offset
            if seg_end is not None and seg_end < 0:
                continue
            for m in segment.messages(seg_begin, seg_end, urls, start_us + offset):
                if offset:
                    m.timestamp += offset
                yield m
