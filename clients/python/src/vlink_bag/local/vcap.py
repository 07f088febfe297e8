"""``.vcap`` (VLink's MCAP profile, format reference §5) and any ``.mcap`` file, read through the official ``mcap``
library: its seeking reader gives the header, summary, statistics, chunk indexes and metadata; chunks are loaded and
decompressed with its ``Chunk``/``get_chunk_data_stream``. Only the message records inside a chunk are cut here
(``struct.unpack_from`` in one loop, no object per record besides the message itself): that loop is the difference in
speed against ``iter_messages`` (see ``bench/python_read.py``). Order and times follow the TypeScript reader
(``packages/backend-mcap/src/vcap``): file order inside the window, ``timestamp = (logTime − start_ns) // 1000``.
"""

from __future__ import annotations

import io
import os
import struct
import zlib
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

from mcap.exceptions import McapError
from mcap.reader import make_reader
from mcap.records import Attachment, AttachmentIndex, Chunk, Message as McapMessage
from mcap.stream_reader import StreamReader, get_chunk_data_stream
from mcap.data_stream import ReadDataStream

from ..errors import CorruptBag, NotFound
from ..frames import ACTIONS, Message, data_type_for
from .vcap_info import describe

__all__ = ["VcapFile"]

_MSG = struct.Struct("<HIQQ")  # channel id, sequence, log time, publish time
_REC = struct.Struct("<BQ")
_MESSAGE_OPCODE = 0x05


class VcapFile:
    """One MCAP file (VLink profile or foreign) opened read-only."""

    def __init__(self, path: str | os.PathLike[str], *, display_path: str | None = None, validate_crcs: bool = True) -> None:
        self.path = Path(path)
        self.validate_crcs = validate_crcs
        if not self.path.is_file():
            raise NotFound(f"no such file: {self.path}", url=str(self.path))
        self.file = open(self.path, "rb")
        try:
            self.reader = make_reader(self.file)
            header = self.reader.get_header()
            try:
                summary = self.reader.get_summary()
            except (McapError, struct.error, EOFError, ValueError):
                summary = None  # a damaged footer or summary: read by a linear scan, as a missing one
            # As the TypeScript reader: a summary that lacks what it should index is completed by scanning the data
            # section; a file without one is read by a linear scan (foreign files only: a VLink file needs a fix).
            self.linear = summary is None or not _sufficient(summary)
            file_statistics = summary is not None and summary.statistics is not None
            if not self.linear:
                metadata = list(self.reader.iter_metadata())
            else:
                if summary is None and header.profile == "vlink":
                    raise CorruptBag(f"{self.path} has no summary (an unfinished recording): repair it with `vlink-bag fix`", code="CORRUPT_FILE")
                scan, metadata = _scan(self.file)
                if summary is not None:
                    scan.schemas = {**scan.schemas, **summary.schemas}
                    scan.channels = {**scan.channels, **summary.channels}
                    scan.statistics = summary.statistics or scan.statistics
                summary = scan
            self.summary = summary
            self.layout = describe(
                header.profile, summary, metadata, display_path or str(self.path), self.path.stat().st_size,
                recovered=file_statistics is False and self.linear and not summary.chunk_indexes and not file_statistics,
                file_statistics=file_statistics,
            )
        except (McapError, struct.error, EOFError, ValueError) as error:
            self.close()
            # Some of these errors have no text of their own (an EOFError at the first read of an empty file).
            reason = str(error) or type(error).__name__
            if self.path.stat().st_size == 0:
                reason = "the file is empty"
            raise CorruptBag(f"{self.path} is not a readable MCAP file: {reason}", code="CORRUPT_FILE") from error
        except BaseException:
            self.close()
            raise
        self.info = self.layout.info
        # channel id → (url, data type: the RPC half for its action, action text, family)
        self.templates: dict[int, tuple[str, str, str, int]] = {
            cid: (t.url, data_type_for(t.ser, t.action), ACTIONS[t.action], t.family) for cid, t in self.layout.templates.items()
        }

    def close(self) -> None:
        f = getattr(self, "file", None)
        if f is not None:
            f.close()

    def attachments(self) -> list[dict[str, Any]]:
        """The file's attachments in file order, as the TypeScript reader lists them in ``Info.attachments``."""
        return [
            {"index": i, "name": a.name, "mediaType": a.media_type, "logTime": str(a.log_time), "createTime": str(a.create_time), "size": a.data_size}
            for i, a in enumerate(self._attachment_indexes())
        ]

    def attachment(self, index: int) -> bytes:
        """The bytes of attachment ``index`` (its CRC checked by the mcap library when it has one)."""
        indexes = self._attachment_indexes()
        if not 0 <= index < len(indexes):
            raise NotFound(f"{self.path} has no attachment {index}", url=str(self.path))
        try:
            if indexes[index].offset >= 0:
                # Indexed: read that one record where the summary says it is.
                self.file.seek(indexes[index].offset)
                record = next(iter(StreamReader(self.file, skip_magic=True, validate_crcs=True).records))
            else:
                record = self._scan_attachments()[index]
        except (McapError, struct.error, EOFError, ValueError, StopIteration) as error:
            raise CorruptBag(f"{self.path}: attachment {index} cannot be read: {error}", code="CORRUPT_FILE") from error
        if not isinstance(record, Attachment):
            raise CorruptBag(f"{self.path}: attachment {index} is not where the summary says", code="CORRUPT_FILE")
        return bytes(record.data)

    def _attachment_indexes(self) -> list[AttachmentIndex]:
        # The summary's attachment indexes (no pass over the data) when the file has a summary; a file read by a
        # linear scan has none, so one pass over its records finds the attachments (offset -1: read them by a scan).
        if getattr(self, "_attachments", None) is None:
            if not self.linear:
                self._attachments = list(self.summary.attachment_indexes)
            else:
                self._attachments = [
                    AttachmentIndex(offset=-1, length=0, log_time=a.log_time, create_time=a.create_time, data_size=len(a.data), name=a.name, media_type=a.media_type)
                    for a in self._scan_attachments()
                ]
        return self._attachments

    def _scan_attachments(self) -> list[Attachment]:
        self.file.seek(0)
        try:
            return [r for r in StreamReader(self.file, skip_magic=False, validate_crcs=True).records if isinstance(r, Attachment)]
        except (McapError, struct.error, EOFError, ValueError) as error:
            raise CorruptBag(f"{self.path}: its attachments cannot be read: {error}", code="CORRUPT_FILE") from error

    def schemas(self) -> list[dict[str, Any]]:
        from ..model import RAW, parse_schema_type

        return [
            {"name": s.name, "encoding": s.encoding, "schemaType": RAW if s.encoding.strip().lower() == "jsonschema" else parse_schema_type(s.encoding), "data": bytes(s.data)}
            for s in self.summary.schemas.values()
        ]

    def messages(self, begin_us: int, end_us: int | None, urls: Sequence[str] | None, start_us: int) -> Iterator[Message]:
        templates = self.templates
        if urls is not None:
            wanted = frozenset(urls)
            keep = {cid for cid, t in templates.items() if t[0] in wanted}
            if not keep:
                return
        else:
            keep = None
        start_ns = self.layout.start_ns
        lo = start_ns + begin_us * 1000 if begin_us > 0 else 0
        hi = start_ns + end_us * 1000 + 999 if end_us is not None else 2**64 - 1
        if lo > hi:
            return
        rel_start_us = self.info["startTimestamp"] * 1000
        chunk_indexes = [] if self.linear else sorted(self.summary.chunk_indexes, key=lambda c: c.chunk_start_offset)
        if not chunk_indexes:
            yield from self._unchunked(lo, hi, keep, start_ns, rel_start_us)
            return
        f = self.file
        for ci in chunk_indexes:
            if ci.message_end_time < lo or ci.message_start_time > hi:
                continue
            if keep is not None and ci.message_index_offsets and not keep.intersection(ci.message_index_offsets):
                continue
            f.seek(ci.chunk_start_offset + 1 + 8)
            try:
                chunk = Chunk.read(ReadDataStream(f))
                data = _chunk_records(chunk)
            except (McapError, EOFError, ValueError, RuntimeError) as error:
                raise CorruptBag(f"{self.path}: damaged chunk at offset {ci.chunk_start_offset}: {error}", code="CORRUPT_FILE") from error
            self._check_crc(chunk, data, ci.chunk_start_offset)
            if chunk.message_start_time != ci.message_start_time or chunk.message_end_time != ci.message_end_time:
                # Another chunk copied over this one (its CRC is its own) would be read in its place: as the TypeScript
                # reader, the chunk header's times must be those of its index.
                raise CorruptBag(
                    f"{self.path}: the chunk at offset {ci.chunk_start_offset} is not the one its index describes: its messages span "
                    f"{chunk.message_start_time}..{chunk.message_end_time} ns, the index says {ci.message_start_time}..{ci.message_end_time}",
                    code="CORRUPT_FILE",
                )
            yield from self._chunk_messages(data, ci.chunk_start_offset, lo, hi, keep, start_ns, rel_start_us)

    def _check_crc(self, chunk: Chunk, data: bytes, offset: int) -> None:
        """A chunk's records against its CRC (when it has one), as the TypeScript reader checks them: a flipped bit in
        a payload is a :class:`CorruptBag`, not a wrong value (``validate_crcs=False`` skips it, as there)."""
        if self.validate_crcs and chunk.uncompressed_crc != 0 and zlib.crc32(data) != chunk.uncompressed_crc:
            raise CorruptBag(f"chunk CRC mismatch (offset {offset})", code="CORRUPT_FILE", url=str(self.path))

    def _chunk_messages(self, data: bytes, offset: int, lo: int, hi: int, keep: set[int] | None, start_ns: int, rel_start_us: int) -> Iterator[Message]:
        """The message records of one chunk's records in the window, in file order."""
        templates = self.templates
        unpack_msg = _MSG.unpack_from
        unpack_rec = _REC.unpack_from
        pos = 0
        n = len(data)
        while pos + 9 <= n:
            opcode, rec_len = unpack_rec(data, pos)
            body = pos + 9
            pos = body + rec_len
            if opcode != _MESSAGE_OPCODE:
                continue
            if pos > n or rec_len < _MSG.size:
                raise CorruptBag(f"{self.path}: a message record overruns its chunk at offset {offset}", code="CORRUPT_FILE")
            cid, _seq, log_time, pub = unpack_msg(data, body)
            if log_time < lo or log_time > hi:
                continue
            t = templates.get(cid)
            if t is None or (keep is not None and cid not in keep):
                continue
            ts = (log_time - start_ns) // 1000
            publish = ts if pub == log_time else (pub - start_ns) // 1000
            yield Message(t[0], data[body + 22 : pos], t[1], ts, rel_start_us + ts, t[2], t[3], publish)

    def _unchunked(self, lo: int, hi: int, keep: set[int] | None, start_ns: int, rel_start_us: int) -> Iterator[Message]:
        """Files without chunk indexes (or without a summary): one pass over the records, in file order; chunks met
        on the way are checked and cut like indexed ones."""
        f = self.file
        f.seek(0)
        start = 8  # after the magic: where the record being read begins
        # No writer puts one chunk in a file twice; damage can (bytes copied over others): its messages would come
        # twice. Told by the chunk's fields and its records' CRC, as the TypeScript scan tells them by their bytes.
        seen: dict[tuple[Any, ...], int] = {}
        try:
            for record in StreamReader(f, skip_magic=False, emit_chunks=True).records:
                end = f.tell()
                if isinstance(record, Chunk):
                    key = (
                        record.message_start_time,
                        record.message_end_time,
                        record.uncompressed_size,
                        record.uncompressed_crc,
                        record.compression,
                        len(record.data),
                        zlib.crc32(record.data),
                    )
                    first = seen.setdefault(key, start)
                    if first != start:
                        raise CorruptBag(
                            f"{self.path}: the chunk at offset {start} repeats the chunk at offset {first} (damage)",
                            code="CORRUPT_FILE",
                            url=str(self.path),
                        )
                    if record.message_end_time >= lo and record.message_start_time <= hi:
                        data = _chunk_records(record)
                        self._check_crc(record, data, start)
                        yield from self._chunk_messages(data, start, lo, hi, keep, start_ns, rel_start_us)
                elif isinstance(record, McapMessage):
                    if lo <= record.log_time <= hi and (keep is None or record.channel_id in keep):
                        t = self.templates.get(record.channel_id)
                        if t is not None:
                            ts = (record.log_time - start_ns) // 1000
                            publish = ts if record.publish_time == record.log_time else (record.publish_time - start_ns) // 1000
                            yield Message(t[0], bytes(record.data), t[1], ts, rel_start_us + ts, t[2], t[3], publish)
                start = end
        except (McapError, struct.error, EOFError, ValueError, RuntimeError) as error:
            raise CorruptBag(f"{self.path}: damaged record at offset {start}: {error or type(error).__name__}", code="CORRUPT_FILE", url=str(self.path)) from error


def _chunk_records(chunk: Chunk) -> bytes:
    """A chunk's records, decompressed. Uncompressed chunks are used as read (no copy); zstd and lz4 go through the
    libraries the ``mcap`` package uses, and anything else through its own ``get_chunk_data_stream``. The CRC is
    checked by the caller (:meth:`VcapFile._check_crc`)."""
    if not chunk.compression:
        return chunk.data if isinstance(chunk.data, bytes) else bytes(chunk.data)
    if chunk.compression == "zstd":
        import zstandard

        return zstandard.decompress(chunk.data, chunk.uncompressed_size)
    stream, length = get_chunk_data_stream(chunk, validate_crc=False)
    return stream.read(length)


def _sufficient(s: Any) -> bool:
    """The summary indexes everything (``isSufficient`` of ``packages/backend-mcap/src/mcap/mcap-reader.ts``)."""
    st = s.statistics
    if st is None or len(s.channels) < st.channel_count:
        return False
    if any(cid not in s.channels for cid in st.channel_message_counts):
        return False
    if any(c.schema_id != 0 and c.schema_id not in s.schemas for c in s.channels.values()):
        return False
    if len(s.chunk_indexes) < st.chunk_count or (st.chunk_count > 0 and not s.chunk_indexes):
        return False
    return len(s.metadata_indexes) >= st.metadata_count


def _scan(f: io.BufferedReader) -> tuple[Any, list[Any]]:
    """A summary rebuilt by reading every record (foreign files written without one)."""
    from mcap.records import Channel, Metadata, Schema, Statistics
    from mcap.summary import Summary

    f.seek(0)
    summary = Summary()
    metadata = []
    counts: dict[int, int] = {}
    first = last = None
    for record in StreamReader(f, skip_magic=False, emit_chunks=False).records:
        if isinstance(record, Schema):
            summary.schemas[record.id] = record
        elif isinstance(record, Channel):
            summary.channels[record.id] = record
        elif isinstance(record, Metadata):
            metadata.append(record)
        elif isinstance(record, McapMessage):
            counts[record.channel_id] = counts.get(record.channel_id, 0) + 1
            first = record.log_time if first is None else min(first, record.log_time)
            last = record.log_time if last is None else max(last, record.log_time)
    summary.statistics = Statistics(
        message_count=sum(counts.values()),
        schema_count=len(summary.schemas),
        channel_count=len(summary.channels),
        attachment_count=0,
        metadata_count=len(metadata),
        chunk_count=0,
        message_start_time=first or 0,
        message_end_time=last or 0,
        channel_message_counts=counts,
    )
    return summary, metadata
