"""LZAV decompression (the per-row codec of ``.vdb`` files, format reference §3) and the VLink compression frame.

Two implementations with the same acceptance rules as the TypeScript decoder (``packages/core/src/codecs/lzav``):
a small C extension (``_lzav_c``, built at install when a C compiler is there) and a pure-Python port (``_pure``),
used when the extension is absent. :data:`IMPLEMENTATION` says which one is in use; ``VLINK_BAG_PURE_LZAV=1`` forces
the pure one (tests use it to cover both).
"""

from __future__ import annotations

import os

from . import _pure
from .errors import LzavError

__all__ = ["decompress", "unpack_frame", "is_frame", "IMPLEMENTATION", "LzavError", "FRAME_HEAD", "FRAME_FOOT"]

#: Compression frame magics (format reference §3.1): head ``17 49 B2 6F`` + u32 BE original size … foot ``A7 05 ED 71``.
FRAME_HEAD = b"\x17\x49\xb2\x6f"
FRAME_FOOT = b"\xa7\x05\xed\x71"
#: The claimed size of a frame must be 1 … 256 MiB (VLink's decompressor refuses others).
MAX_FRAME_SIZE = 256 * 1024 * 1024
_MAX_BLOCK = 0x7FFFFFFF
# As in the TS decoder: a large claim out of proportion to the input is walked without writing first.
_PRECHECK_MIN = 1 << 20
_PRECHECK_RATIO = 8

_c_decode = None
if os.environ.get("VLINK_BAG_PURE_LZAV", "") not in ("1", "true"):
    try:
        from ._lzav_c import decode as _c_decode  # type: ignore[no-redef]
    except ImportError:  # built without a C compiler: the pure-Python decoder is used
        _c_decode = None

#: ``"c"`` or ``"python"``.
IMPLEMENTATION = "c" if _c_decode is not None else "python"


def decompress(data: bytes | bytearray | memoryview, raw_length: int) -> bytes:
    """Decompresses a raw LZAV stream (format 3 or 2) to exactly ``raw_length`` bytes. Raises :class:`LzavError`
    (``CORRUPT_DATA``) for anything wrong with the stream, ``ValueError`` for a bad ``raw_length``."""
    if isinstance(raw_length, bool) or not isinstance(raw_length, int) or raw_length < 0:
        raise ValueError(f"lzav: raw_length must be a non-negative integer, got {raw_length!r}")
    if raw_length > _MAX_BLOCK:
        raise ValueError(f"lzav: raw_length {raw_length} exceeds the 2 GiB LZAV block limit")
    src = bytes(data) if not isinstance(data, bytes) else data
    if not src or raw_length == 0:
        if not src and raw_length == 0:
            return b""
        raise LzavError("empty stream for non-empty data" if not src else "non-empty stream for empty data")
    fmt = src[0] >> 4
    if fmt not in (2, 3):
        raise LzavError(f"unsupported stream format {fmt}")
    if _c_decode is not None:
        try:
            if raw_length >= _PRECHECK_MIN and raw_length / _PRECHECK_RATIO > len(src):
                _c_decode(src, raw_length, True)
            return _c_decode(src, raw_length, False)
        except ValueError as error:
            raise LzavError(str(error)) from None
    if raw_length >= _PRECHECK_MIN and raw_length / _PRECHECK_RATIO > len(src):
        _pure.decode(src, raw_length, True)
    return _pure.decode(src, raw_length)


def is_frame(blob: bytes) -> bool:
    """Whether a stored blob is a compression frame (format reference §3.2 rules 2-4)."""
    return len(blob) >= 13 and blob[:4] == FRAME_HEAD and blob[-4:] == FRAME_FOOT


def unpack_frame(blob: bytes) -> bytes:
    """The original bytes of a compression frame (§3.1). Raises :class:`LzavError` for a claimed size outside
    1 … 256 MiB or a stream that does not decode to exactly that size."""
    size = int.from_bytes(blob[4:8], "big")
    if size < 1 or size > MAX_FRAME_SIZE:
        raise LzavError(f"compression frame claims {size} bytes (1 … {MAX_FRAME_SIZE} allowed)")
    return decompress(blob[8:-4], size)
