"""A bag on disk, read without a server: the same API as :class:`~vlink_bag.RemoteBag`."""

from __future__ import annotations

import functools
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from ..bagbase import BagBase
from ..errors import NotFound, UnsupportedFormat
from ..frames import Message
from ..paths import bag_path
from .split import SplitRecording
from .timing import analyze_timing, density
from .vcap import VcapFile
from .vdb import VdbFile

__all__ = ["LocalBag", "open_bag", "FORMATS"]

#: Extension → what reads it.
FORMATS = (".vdb", ".vdbx", ".vcap", ".vcapx", ".mcap")


def _open_file(path: Path, display: str | None = None, *, validate_crcs: bool = True) -> Any:
    ext = path.suffix.lower()
    if ext == ".vdb":
        return VdbFile(path, display_path=display)
    if ext in (".vcap", ".mcap"):
        return VcapFile(path, display_path=display, validate_crcs=validate_crcs)
    if ext == ".vdbx":
        return SplitRecording(path, "vdbx", VdbFile, display_path=display)
    if ext == ".vcapx":
        return SplitRecording(path, "vcapx", functools.partial(VcapFile, validate_crcs=validate_crcs), display_path=display)
    raise UnsupportedFormat(f"{path}: not a bag format this client reads ({', '.join(FORMATS)})", url=str(path))


class LocalBag(BagBase):
    """A ``.vdb``, ``.vdbx``, ``.vcap``, ``.vcapx`` or ``.mcap`` file opened read-only. Use as a context manager (or
    call :meth:`close`) to release the file. ``validate_crcs=False`` skips the check of MCAP chunk CRCs (the
    TypeScript reader's ``validateCrcs`` option): a damaged chunk is then read as it is instead of raising
    :class:`CorruptBag`."""

    def __init__(self, path: str | os.PathLike[str], *, validate_crcs: bool = True) -> None:
        self.path = bag_path(path)
        self.id = str(path)
        self._file = _open_file(self.path, str(path), validate_crcs=validate_crcs)
        self._info = None

    def __repr__(self) -> str:
        return f"LocalBag({str(self.path)!r})"

    def __enter__(self) -> LocalBag:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._file.close()

    def info(self) -> dict[str, Any]:
        """The bag's Info, as the server's ``/info`` and ``vlink-bag info --json`` give it."""
        info = dict(self._file.info)
        info["urls"] = [dict(u) for u in info["urls"]]
        self._info = info
        return info

    def schemas(self) -> list[dict[str, Any]]:
        """Embedded schemas: ``name``, ``encoding``, ``schemaType`` and ``data`` (bytes)."""
        return self._file.schemas()

    def attachments(self) -> list[dict[str, Any]]:
        """Attachments of an MCAP file: ``index``, ``name``, ``mediaType``, ``logTime`` and ``createTime`` (ns since the
        epoch, as strings) and ``size``; ``[]`` for formats without attachments."""
        list_attachments = getattr(self._file, "attachments", None)
        return list_attachments() if list_attachments else []

    def attachment(self, index: int) -> bytes:
        """The bytes of attachment ``index`` of :meth:`attachments`; :class:`NotFound` when there is none."""
        read = getattr(self._file, "attachment", None)
        if read is None:
            raise NotFound(f"{self.path} has no attachments", url=str(self.path))
        return read(int(index))

    def _messages(self, begin_us: int, end_us: int | None, urls: list[str] | None) -> Iterator[Message]:
        return self._file.messages(begin_us, end_us, urls, self.start_timestamp_us)

    def timing(self, factor: float | None = None, urls: Any = None) -> list[dict[str, Any]]:
        """Per-url timing as the server's ``/timing`` computes it: ``url``, ``count``, ``rateHz``, ``intervalUs``
        {min, p50, p99, max} and ``gaps`` [{startUs, lengthUs}] (intervals longer than ``factor`` × the median)."""
        from ..bagbase import url_list

        return analyze_timing(self.read_messages(urls=urls), 1.5 if factor is None else factor, url_list(urls))

    def _align_parquet(self, query: dict[str, Any]) -> bytes:
        """Runs ``vlink-bag align`` on the file (the alignment is the TypeScript library's, so local = remote)."""
        from ..align import run_cli_align

        return run_cli_align(self.path, query)

    def density(self, buckets: int = 100, start_time: Any = 0, end_time: Any = None, urls: Any = None, **window: Any) -> dict[str, Any]:
        """Messages per url and time bucket, as the server's ``/density``."""
        begin, end = self.window_us(start_time, end_time, **window)
        return density(self, buckets, begin, end, urls)


def open_bag(path: str | os.PathLike[str], *, validate_crcs: bool = True) -> LocalBag:
    """Opens a bag file on disk (``.vdb``, ``.vdbx``, ``.vcap``, ``.vcapx``, ``.mcap``) without a server. MCAP chunks
    are checked against their CRCs as they are read (a mismatch is :class:`CorruptBag`, as on the server);
    ``validate_crcs=False`` skips that check."""
    return LocalBag(path, validate_crcs=validate_crcs)
