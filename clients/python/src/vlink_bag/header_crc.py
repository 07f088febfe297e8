"""vlink-bag's ``header_crc32`` key of a ``.vcap`` VLinkHeader (format reference §5.6), as
``packages/backend-mcap/src/vcap/header-crc.ts``: the CRC-32 of the header's other entries written as ``key=value\\n``
lines in key order, in decimal. The header lies outside every chunk, so no chunk CRC covers it, and every frame's time
counts from its ``start_timestamp``."""

from __future__ import annotations

import zlib
from collections.abc import Mapping

__all__ = ["HEADER_CRC_KEY", "header_crc", "header_intact", "with_header_crc"]

HEADER_CRC_KEY = "header_crc32"


def header_crc(entries: Mapping[str, str]) -> str:
    lines = "".join(f"{key}={entries[key]}\n" for key in sorted(entries) if key != HEADER_CRC_KEY)
    return str(zlib.crc32(lines.encode("utf-8")))


def with_header_crc(entries: dict[str, str]) -> dict[str, str]:
    """``entries`` with their ``header_crc32`` entry last."""
    own = {key: value for key, value in entries.items() if key != HEADER_CRC_KEY}
    return {**own, HEADER_CRC_KEY: header_crc(own)}


def header_intact(header: Mapping[str, str]) -> bool | None:
    """True or False by the header's CRC; None when it has none (VLink's own files)."""
    stored = header.get(HEADER_CRC_KEY)
    return None if stored is None else stored == header_crc(header)
