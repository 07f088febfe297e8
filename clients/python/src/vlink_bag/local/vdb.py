"""``.vdb`` files read with the standard library's ``sqlite3`` (format reference §2, §3, §7.5): the same Info, url
maps, row order and decompression as the TypeScript reader (``packages/backend-sqlite/src/vdb``)."""

from __future__ import annotations

import os
import sqlite3
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from .. import lzav
from ..errors import CorruptBag, NotFound, VlinkBagError
from ..frames import ACTIONS, Message, data_type_for
from ..model import parse_action, parse_schema_type, resolve_schema_type

__all__ = ["VdbFile"]

FORMAT_MAJOR = 2
_NONE_LIKE = frozenset({"", "None", "NONE", "none"})
_KINDS = frozenset({"Method", "Event", "Field", "Unknown"})


def _int(value: Any) -> int:
    if isinstance(value, (int, float)):
        return int(value)
    try:
        return int(float(value))
    except (TypeError, ValueError):
        return 0


def _num(value: Any) -> float:
    try:
        return float(value) if value is not None else 0.0
    except (TypeError, ValueError):
        return 0.0


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    return str(value)


class VdbFile:
    """One ``.vdb`` opened read-only. ``info``/``schemas`` as the server reports them; :meth:`messages` is the §7.5
    cursor (``ORDER BY elapsed, rowid`` when an elapsed index exists, else ``rowid``)."""

    def __init__(self, path: str | os.PathLike[str], *, display_path: str | None = None) -> None:
        self.path = Path(path)
        if not self.path.is_file():
            raise NotFound(f"no such file: {self.path}", url=str(self.path))
        try:
            # Read-only, and without creating a journal next to someone else's recording.
            self.db = sqlite3.connect(f"{self.path.resolve().as_uri()}?mode=ro", uri=True, check_same_thread=False)
            self.db.execute("PRAGMA busy_timeout = 100")
            self._read_facts(display_path or str(self.path))
        except sqlite3.DatabaseError as error:
            self.close()
            text = str(error)
            if "locked" in text or "busy" in text:
                raise VlinkBagError(f"{self.path} is locked by a writer: {text}", code="IO_ERROR") from error
            raise CorruptBag(f"{self.path} is not a readable .vdb: {text}", code="CORRUPT_FILE") from error

    def close(self) -> None:
        db = getattr(self, "db", None)
        if db is not None:
            db.close()
            self.db = None  # type: ignore[assignment]

    # -- facts (§2.10) ------------------------------------------------------------------------------------------
    def _read_facts(self, display_path: str) -> None:
        db = self.db
        try:
            header = db.execute(
                "SELECT major, minor, patch, count, duration, accuracy, compress, process, date, tag, complete, timezone, start_timestamp FROM VLinkHeader LIMIT 1;"
            ).fetchone()
        except sqlite3.OperationalError as error:
            raise CorruptBag(f"{self.path} has no VLinkHeader table ({error})", code="CORRUPT_FILE") from error
        if header is None:
            raise CorruptBag("VLinkHeader has no row", code="CORRUPT_FILE", url=str(self.path))
        major, minor, patch, count, duration, accuracy, compress, process, date, tag, complete, timezone, start = header
        if _int(major) != FORMAT_MAJOR:
            raise CorruptBag(f"format major version {_int(major)} is not {FORMAT_MAJOR}", code="VERSION_MISMATCH", url=str(self.path))
        accuracy = _text(accuracy)
        if accuracy != "MicroSecond":
            raise CorruptBag(f'time accuracy "{accuracy}" is not MicroSecond', code="CORRUPT_FILE", url=str(self.path))
        compress = _text(compress)
        start_ts = _int(start)
        is_complete = _int(complete) == 1
        if start_ts < 0:
            start_ts, is_complete = 0, False
        has_schema = db.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='VLinkSchemas' LIMIT 1;").fetchone() is not None
        if has_schema:
            has_schema = _int(db.execute("SELECT EXISTS(SELECT 1 FROM VLinkSchemas LIMIT 1);").fetchone()[0]) == 1
        metas: list[dict[str, Any]] = []
        self.by_id: dict[int, tuple[str, tuple[str, ...], int]] = {}
        self.ids_by_url: dict[str, list[int]] = {}
        for uid, url, kind, ser, encoding, n, loss, size, freq in db.execute("SELECT id, url, type, ser, encoding, count, loss, size, freq FROM VLinkUrls;"):
            # The url column is TEXT, which SQLite keeps numbers out of: a number or NULL there, or an id that is not an
            # integer, is damage (another table's page copied over this one's), as the TypeScript reader says.
            if url is None or isinstance(url, (int, float)) or not isinstance(uid, int):
                what = "no url" if url is None else f"the number {url}" if isinstance(url, (int, float)) else f"the id {uid!r}"
                raise CorruptBag(f"a VLinkUrls row (id {uid!r}) holds {what}: the table is damaged", code="CORRUPT_FILE", url=str(self.path))
            index, url, ser = _int(uid), _text(url), _text(ser)
            family = resolve_schema_type(parse_schema_type(_text(encoding)), ser)
            kind = _text(kind)
            metas.append(
                {
                    "index": index,
                    "url": url,
                    "type": kind if kind in _KINDS else "Unknown",
                    "ser": ser,
                    "schemaType": family,
                    "count": _int(n),
                    "size": _int(size),
                    "loss": _num(loss),
                    "freq": _num(freq),
                }
            )
            self.by_id[index] = (url, tuple(data_type_for(ser, a) for a in range(len(ACTIONS))), family)
            self.ids_by_url.setdefault(url, []).append(index)
        if is_complete and _int(count) > 0 and not metas:
            # Every row of a closed file has its url: none named means a damaged table, not a recording of nothing.
            raise CorruptBag(f"the header counts {_int(count)} messages, but VLinkUrls names no url: the table is damaged", code="CORRUPT_FILE", url=str(self.path))
        if is_complete:
            # SQLite does not read bytes after the last page: a closed file with more is two files in one (`cat a.vdb
            # b.vdb > c.vdb`), which would read as the first alone (as the TypeScript reader refuses it).
            pages = _int(db.execute("PRAGMA page_count;").fetchone()[0])
            page_size = _int(db.execute("PRAGMA page_size;").fetchone()[0])
            extra = os.path.getsize(self.path) - pages * page_size
            if pages > 0 and page_size > 0 and extra > 0:
                raise CorruptBag(f"{extra} bytes follow the database's last page, which SQLite does not read (another file appended to it?)", code="CORRUPT_FILE", url=str(self.path))
        metas.sort(key=lambda m: (m["url"], m["index"]))
        indexes = {_text(r[0]) for r in db.execute("SELECT name FROM sqlite_master WHERE type='index' AND tbl_name='VLinkDatas';")}
        self.indexed = "idx_elapsed_url" in indexes or "idx_elapsed" in indexes
        first = db.execute("SELECT elapsed FROM VLinkDatas ORDER BY elapsed LIMIT 1;" if self.indexed else "SELECT elapsed FROM VLinkDatas LIMIT 1;").fetchone()
        blank = max(0, int(_int(first[0]) / 1000)) if first else 0
        total = int(_int(duration) / 1000)
        if self.indexed and is_complete:
            last = db.execute("SELECT elapsed FROM VLinkDatas ORDER BY elapsed DESC LIMIT 1;").fetchone()
            if last is not None and int(_int(last[0]) / 1000) > blank:
                total = int(_int(last[0]) / 1000)
        self.compressed = compress not in _NONE_LIKE
        self.has_publish_times = db.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='VLinkBagPublishTimes' LIMIT 1;").fetchone() is not None
        self.info: dict[str, Any] = {
            "path": display_path,
            "format": "vdb",
            "version": f"{_int(major)}.{_int(minor)}.{_int(patch)}",
            "storageType": "SQLite3",
            "messageCount": _int(count),
            "totalDuration": total,
            "blankDuration": blank,
            "timeAccuracy": accuracy,
            "compressionType": compress,
            "processName": _text(process),
            "dateTime": _text(date),
            "tagName": "Empty" if tag is None else _text(tag),
            "hasCompleted": is_complete,
            "timezone": _int(timezone),
            "startTimestamp": start_ts,
            "splitCount": 1,
            "splitBySize": 0,
            "splitByTime": 0,
            "hasSchema": has_schema,
            "totalRawSize": sum(m["size"] for m in metas),
            "fileSize": self.path.stat().st_size,
            "urls": metas,
        }
        counters = _read_counters(db)
        if counters:
            self.info["counters"] = counters

    def schemas(self) -> list[dict[str, Any]]:
        """``name``, ``encoding``, ``schemaType``, ``data`` (bytes), once per (name, family)."""
        try:
            rows = self.db.execute("SELECT ser, encoding, data FROM VLinkSchemas;").fetchall()
        except sqlite3.OperationalError:
            return []  # no schema table (an older file)
        except sqlite3.DatabaseError as error:
            raise self._read_error("reading its schemas", error) from error
        out: list[dict[str, Any]] = []
        seen: set[tuple[str, int]] = set()
        for ser, encoding, data in rows:
            name, enc = _text(ser), _text(encoding)
            family = parse_schema_type(enc)
            if (name, family) in seen:
                continue
            seen.add((name, family))
            out.append({"name": name, "encoding": enc, "schemaType": family, "data": bytes(data or b"")})
        return out

    # -- rows (§7.5) --------------------------------------------------------------------------------------------
    def _rowid_ordered(self) -> bool:
        """Whether rowid order is (elapsed, rowid) order: true when no row's elapsed goes backwards, which VLink's
        writers guarantee for in-order data. Then rows are read by rowid, 2-3× faster than through the elapsed index.
        Checked once per file (one pass over the elapsed column), and only for a completed file (one still being
        written may grow out of order)."""
        known = getattr(self, "_monotonic", None)
        if known is not None:
            return known
        monotonic = False
        if self.indexed and self.info["hasCompleted"]:
            monotonic = True
            last = -(2**63)
            for (elapsed,) in self.db.execute("SELECT elapsed FROM VLinkDatas ORDER BY rowid"):
                if elapsed is None or elapsed < last:
                    monotonic = False
                    break
                last = elapsed
        self._monotonic = monotonic
        return monotonic

    def _rowid_range(self, begin_us: int, end_us: int | None) -> tuple[int, int] | None:
        """The rows of [begin, end] as a rowid range (rowid-ordered files only), found through the elapsed index."""
        first = self.db.execute("SELECT rowid FROM VLinkDatas WHERE elapsed >= ? ORDER BY elapsed, rowid LIMIT 1", (begin_us,)).fetchone()
        if end_us is None:
            last = self.db.execute("SELECT MAX(rowid) FROM VLinkDatas").fetchone()
        else:
            last = self.db.execute("SELECT rowid FROM VLinkDatas WHERE elapsed <= ? ORDER BY elapsed DESC, rowid DESC LIMIT 1", (end_us,)).fetchone()
        if first is None or last is None or last[0] is None or first[0] > last[0]:
            return None
        return int(first[0]), int(last[0])

    def _read_error(self, what: str, error: sqlite3.DatabaseError) -> VlinkBagError:
        """A sqlite error while reading, as the client's error: a lock is ``IO_ERROR``, anything else (a damaged page:
        "database disk image is malformed") :class:`CorruptBag` naming the file and what failed."""
        text = str(error) or type(error).__name__
        if "locked" in text or "busy" in text:
            return VlinkBagError(f"the .vdb is locked by a writer: {what} failed ({text})", code="IO_ERROR", url=str(self.path))
        return CorruptBag(f"the .vdb is damaged: {what} failed ({text})", code="CORRUPT_FILE", url=str(self.path))

    def messages(self, begin_us: int, end_us: int | None, urls: Sequence[str] | None, start_us: int) -> Iterator[Message]:
        """The rows of the window in VLink's reading order, as Messages. A damaged file that opened (its header and
        url table are fine) but fails on a row page is a :class:`CorruptBag` here, not a bare ``sqlite3`` error."""
        try:
            yield from self._rows(begin_us, end_us, urls, start_us)
        except sqlite3.DatabaseError as error:
            window = f"[{begin_us}, {'end' if end_us is None else end_us}] µs"
            raise self._read_error(f"reading the messages of {window}", error) from error

    def _rows(self, begin_us: int, end_us: int | None, urls: Sequence[str] | None, start_us: int) -> Iterator[Message]:
        where: list[str] = []
        params: list[Any] = []
        if urls is not None:
            ids = [i for u in urls for i in self.ids_by_url.get(u, ())]
            if not ids:
                return
            where.append(f"url IN ({','.join('?' * len(ids))})")
            params.extend(ids)
        by_rowid = self._rowid_ordered()
        if by_rowid:
            if begin_us > 0 or end_us is not None:
                span = self._rowid_range(begin_us, end_us)
                if span is None:
                    return
                where.append("VLinkDatas.rowid BETWEEN ? AND ?")
                params.extend(span)
        else:
            if begin_us > 0:
                where.append("elapsed >= ?")
                params.append(begin_us)
            if end_us is not None:
                where.append("elapsed <= ?")
                params.append(end_us)
        # Publish times (format reference §2.14) live in a side table keyed by rowid; a row without one has elapsed.
        if self.has_publish_times:
            sql = "SELECT elapsed, url, action, data, VLinkBagPublishTimes.publish FROM VLinkDatas LEFT JOIN VLinkBagPublishTimes ON VLinkBagPublishTimes.id = VLinkDatas.rowid"
        else:
            sql = "SELECT elapsed, url, action, data, NULL FROM VLinkDatas"
        if where:
            sql += " WHERE " + " AND ".join(where)
        sql += " ORDER BY elapsed, VLinkDatas.rowid;" if self.indexed and not by_rowid else " ORDER BY VLinkDatas.rowid;"
        by_id = self.by_id
        compressed = self.compressed
        # SQLite trusts the elapsed index for `ORDER BY elapsed`: a time going back is a damaged index, and a whole read
        # of a closed file that steps over fewer or more rows than its header counts is too (as the TypeScript reader).
        ordered = self.indexed and not by_rowid
        last = float("-inf")
        whole = urls is None and begin_us <= 0 and end_us is None and self.info["hasCompleted"]
        stepped = 0
        head, foot = lzav.FRAME_HEAD, lzav.FRAME_FOOT
        unpack = lzav.unpack_frame
        action_of: dict[Any, int] = {}
        cursor = self.db.execute(sql, params)
        cursor.arraysize = 1024
        try:
            while True:
                rows = cursor.fetchmany()
                if not rows:
                    if whole and stepped != self.info["messageCount"]:
                        raise CorruptBag(
                            f"VLinkDatas gave {stepped} rows, the header counts {self.info['messageCount']}: the table or its index is damaged",
                            code="CORRUPT_FILE",
                            url=str(self.path),
                        )
                    return
                stepped += len(rows)
                for elapsed, uid, action_text, data, publish in rows:
                    if ordered and isinstance(elapsed, int):
                        if elapsed < last:
                            raise CorruptBag(
                                f"elapsed {elapsed} after {last}: the elapsed index is out of order (a damaged index)",
                                code="CORRUPT_FILE",
                                url=str(self.path),
                            )
                        last = elapsed
                    entry = by_id.get(uid)
                    if entry is None:
                        continue  # a row of an unknown url is skipped, as VLink's readers do
                    action = action_of.get(action_text)
                    if action is None:
                        action = action_of[action_text] = parse_action(action_text if isinstance(action_text, str) else None)
                    if data is None:
                        data = b""
                    elif compressed and len(data) >= 13 and data[:4] == head and data[-4:] == foot:
                        try:
                            data = unpack(data)
                        except VlinkBagError as error:
                            raise CorruptBag(f"cannot decompress a row of {entry[0]} at {elapsed} µs: {error.message}", code="CORRUPT_DATA", url=str(self.path)) from error
                    yield Message(entry[0], data, entry[1][action], elapsed, start_us + elapsed, ACTIONS[action], entry[2], publish)
        finally:
            cursor.close()


def _read_counters(db: Any) -> dict[str, dict[str, int]]:
    """The recording's counters by cause (``VLinkBagCounters``, format reference §2.13): url → cause → count; rows that
    are not a url, a cause and a positive integer are left out."""
    if db.execute("SELECT 1 FROM sqlite_master WHERE type='table' AND name='VLinkBagCounters' LIMIT 1;").fetchone() is None:
        return {}
    table: dict[str, dict[str, int]] = {}
    try:
        rows = db.execute("SELECT url, cause, count FROM VLinkBagCounters;").fetchall()
    except Exception:  # a damaged table says nothing
        return {}
    for url, cause, n in rows:
        if isinstance(url, str) and isinstance(cause, str) and isinstance(n, int) and not isinstance(n, bool) and n > 0:
            table.setdefault(url, {})[cause] = table.get(url, {}).get(cause, 0) + n
    return {u: dict(sorted(c.items())) for u, c in sorted(table.items())}
