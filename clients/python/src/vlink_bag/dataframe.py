"""Messages → pandas DataFrame (and Arrow/Polars), shared by local and remote bags so both give identical frames.

Columns: ``timestamp`` (int64 µs since recording start: the log time), ``publish_time`` (int64 µs since recording
start: the publish/sample time, equal to ``timestamp`` where the message has none), ``time`` (datetime64 of the log
time in the recording's timezone),
``elapsed`` (Timedelta since recording start), ``topic``, ``action``, ``data_type`` (categoricals: a bag has a handful
of each), ``size``; then the decoded payload's fields (protobuf, JSON, CDR), ``text``/``value``, and ``message``
(bytes) with ``decode_error`` for rows that did not decode.

Rows are gathered as columns (:class:`Columns`): the remote reader fills them straight from the binary stream
without a Message object per row (``frames.frames_to_columns``), local readers from their messages.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from .decode import PayloadDecoder
from .frames import Message

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["build_dataframe", "Columns", "META_COLUMNS"]

META_COLUMNS = ("timestamp", "publish_time", "time", "elapsed", "topic", "action", "data_type", "size")
_RESERVED = frozenset(META_COLUMNS) | {"message", "decode_error"}


class Columns:
    """Rows as columns: ``timestamps`` (µs since start), ``publish_times`` (µs; None = all equal to the timestamps),
    ``keys`` (index into ``kinds``), ``payloads``; ``kinds`` holds one (topic, action, data_type, schema_type) per
    distinct combination."""

    __slots__ = ("timestamps", "publish_times", "keys", "payloads", "kinds", "_index")

    def __init__(self) -> None:
        self.timestamps: list[int] = []
        self.publish_times: Any = None
        self.keys: list[int] = []
        self.payloads: list[bytes] = []
        self.kinds: list[tuple[str, str, str, int]] = []
        self._index: dict[tuple[str, str, str, int], int] = {}

    def kind(self, topic: str, action: str, data_type: str, schema_type: int) -> int:
        key = (topic, action, data_type, schema_type)
        found = self._index.get(key)
        if found is None:
            found = self._index[key] = len(self.kinds)
            self.kinds.append(key)
        return found

    @classmethod
    def of(cls, messages: Iterable[Message]) -> Columns:
        out = cls()
        index = out._index
        kind = out.kind
        ts, keys, payloads = out.timestamps, out.keys, out.payloads
        publish: list[int] = []
        out.publish_times = publish
        for m in messages:
            k = index.get((m.topic, m.action, m.data_type, m.schema_type))
            if k is None:
                k = kind(m.topic, m.action, m.data_type, m.schema_type)
            ts.append(m.timestamp)
            publish.append(m.publish_time)
            keys.append(k)
            payloads.append(m.message)
        return out

    def __len__(self) -> int:
        return len(self.payloads)


def _pandas() -> Any:
    try:
        import pandas as pd
    except ImportError as error:  # pragma: no cover - exercised only without the extra
        raise ImportError("DataFrames need pandas: pip install 'vlink-bag[pandas]'") from error
    return pd


def _categorical(pd: Any, np: Any, codes: Any, kinds: list[tuple[str, str, str, int]], field: int) -> Any:
    names = sorted({k[field] for k in kinds})
    position = {name: i for i, name in enumerate(names)}
    lookup = np.array([position[k[field]] for k in kinds], dtype=np.int32)
    return pd.Categorical.from_codes(lookup[codes] if len(codes) else codes, categories=names)


def build_dataframe(rows: Columns | Iterable[Message], decoder: PayloadDecoder | None, tz: dt.tzinfo, start_us: int) -> pd.DataFrame:
    """One row per message, in reading order. ``decoder`` None keeps every payload's bytes in ``message``."""
    pd = _pandas()
    import numpy as np

    cols = rows if isinstance(rows, Columns) else Columns.of(rows)
    n = len(cols)
    timestamps = np.asarray(cols.timestamps, dtype=np.int64)
    codes = np.asarray(cols.keys, dtype=np.int32)
    payloads = cols.payloads
    kinds = cols.kinds
    frame = pd.DataFrame(
        {
            "timestamp": timestamps,
            "publish_time": timestamps if cols.publish_times is None else np.asarray(cols.publish_times, dtype=np.int64),
            "time": pd.to_datetime(timestamps + start_us, unit="us", utc=True).tz_convert(tz),
            "elapsed": pd.to_timedelta(timestamps, unit="us"),
            "topic": _categorical(pd, np, codes, kinds, 0),
            "action": _categorical(pd, np, codes, kinds, 1),
            "data_type": _categorical(pd, np, codes, kinds, 2),
            "size": np.fromiter(map(len, payloads), dtype=np.int64, count=n),
        }
    )
    if decoder is None:
        frame["message"] = pd.Series(payloads, dtype=object)
        return frame
    if n == 0:
        return frame
    # Decode per kind: rows of raw kinds are never looked at one by one.
    decodable = [decoder.may_decode(Message(t, b"", d, 0, 0, a, s)) for t, a, d, s in kinds]
    records: list[dict[str, Any]] | None = None
    errors: list[str | None] | None = None
    kept: list[bytes | None] | None = None
    if any(decodable):
        wanted = np.flatnonzero(np.array(decodable, dtype=bool)[codes])
        for i in wanted.tolist():
            topic, action, data_type, schema_type = kinds[int(codes[i])]
            m = Message(topic, payloads[i], data_type, int(timestamps[i]), 0, action, schema_type)
            fields, why = decoder.fields(m)
            if fields is None:
                if why is not None:
                    if errors is None:
                        errors = [None] * n
                    errors[i] = why
                continue
            if records is None:
                records = [{} for _ in range(n)]
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
