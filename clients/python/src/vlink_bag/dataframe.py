"""Messages → pandas DataFrame (and Arrow/Polars), shared by local and remote bags so both give identical frames.

Columns: ``timestamp`` (int64 µs since recording start), ``time`` (datetime64 in the recording's timezone),
``elapsed`` (Timedelta since recording start), ``topic``, ``action``, ``data_type``, ``size``; then the decoded
payload's fields (protobuf, JSON, CDR), ``text``/``value``, and ``message`` (bytes) with ``decode_error`` for rows
that did not decode.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from .decode import PayloadDecoder
from .frames import Message

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["build_dataframe", "META_COLUMNS"]

META_COLUMNS = ("timestamp", "time", "elapsed", "topic", "action", "data_type", "size")
_RESERVED = frozenset(META_COLUMNS) | {"message", "decode_error"}


def _pandas() -> Any:
    try:
        import pandas as pd
    except ImportError as error:  # pragma: no cover - exercised only without the extra
        raise ImportError("DataFrames need pandas: pip install 'vlink-bag[pandas]'") from error
    return pd


def build_dataframe(messages: Iterable[Message], decoder: PayloadDecoder | None, tz: dt.tzinfo) -> pd.DataFrame:
    """One row per message, in reading order. ``decoder`` None keeps every payload's bytes in ``message``."""
    pd = _pandas()
    import numpy as np

    rows = list(messages)
    timestamps = np.fromiter((m.timestamp for m in rows), dtype=np.int64, count=len(rows))
    absolute = np.fromiter((m.abs_timestamp for m in rows), dtype=np.int64, count=len(rows))
    payloads = [m.message for m in rows]
    frame = pd.DataFrame(
        {
            "timestamp": timestamps,
            "time": pd.to_datetime(absolute, unit="us", utc=True).tz_convert(tz),
            "elapsed": pd.to_timedelta(timestamps, unit="us"),
            "topic": [m.topic for m in rows],
            "action": [m.action for m in rows],
            "data_type": [m.data_type for m in rows],
            "size": np.fromiter((len(p) for p in payloads), dtype=np.int64, count=len(rows)),
        }
    )
    if decoder is None:
        frame["message"] = pd.Series(payloads, dtype=object)
        return frame
    if not rows:
        return frame
    # Decode per (type, schema type): raw urls cost one dict lookup per row.
    plan: dict[tuple[str, int], bool] = {}
    records: list[dict[str, Any]] | None = None
    errors: list[str | None] | None = None
    kept: list[bytes | None] | None = None
    for i, m in enumerate(rows):
        key = (m.data_type, m.schema_type)
        decodable = plan.get(key)
        if decodable is None:
            decodable = plan[key] = decoder.may_decode(m)
        if not decodable:
            continue
        fields, why = decoder.fields(m)
        if fields is None:
            if why is not None:
                if errors is None:
                    errors = [None] * len(rows)
                errors[i] = why
            continue
        if records is None:
            records = [{} for _ in rows]
        records[i] = {(f"msg.{k}" if k in _RESERVED else k): v for k, v in fields.items()}
        if kept is None:
            kept = list(payloads)
        kept[i] = None
    parts = [frame]
    if records is not None:
        parts.append(pd.DataFrame.from_records(records, index=frame.index))
    undecoded = payloads if kept is None else kept
    if kept is None or any(p is not None for p in kept):
        extra = {"message": pd.Series(undecoded, dtype=object, index=frame.index)}
        if errors is not None:
            extra["decode_error"] = pd.Series(errors, dtype=object, index=frame.index)
        parts.append(pd.DataFrame(extra))
    return pd.concat(parts, axis=1) if len(parts) > 1 else frame
