"""What every bag offers, local (:func:`vlink_bag.open`) or remote (:class:`RemoteBag`): time windows in any of the
accepted types, Apollo's ``RecordReader`` getters, DataFrames, Arrow and Polars tables. A subclass provides
``info()``, ``schemas()`` and ``_messages(begin_us, end_us, urls)``."""

from __future__ import annotations

import datetime as dt
import json
import warnings
from collections.abc import Iterable, Iterator, Sequence
from typing import TYPE_CHECKING, Any

from .dataframe import build_dataframe
from .decode import PayloadDecoder
from .errors import BadRequest
from .frames import Message
from .times import recording_tz, window

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["BagBase", "url_list", "EmptyWindowWarning"]


class EmptyWindowWarning(UserWarning):
    """A time window that lies outside the recording gave no messages."""


def url_list(urls: str | Iterable[str] | None) -> list[str] | None:
    if urls is None:
        return None
    if isinstance(urls, str):
        return [urls]
    out = list(urls)
    for url in out:
        if not isinstance(url, str):
            raise BadRequest(f"urls must be strings, not {url!r}", code="INVALID_ARGUMENT")
    return out


class BagBase:
    """Shared API of local and remote bags. Times: see :mod:`vlink_bag.times`."""

    _info: dict[str, Any] | None = None
    _decoder: PayloadDecoder | None = None
    _warned_empty = False

    # -- to be provided ------------------------------------------------------------------------------------------
    def info(self) -> dict[str, Any]:  # pragma: no cover - abstract
        raise NotImplementedError

    def schemas(self) -> list[dict[str, Any]]:  # pragma: no cover - abstract
        raise NotImplementedError

    def _messages(self, begin_us: int, end_us: int | None, urls: list[str] | None) -> Iterator[Message]:  # pragma: no cover
        raise NotImplementedError

    # -- header-derived values -----------------------------------------------------------------------------------
    def _cached_info(self) -> dict[str, Any]:
        return self._info if self._info is not None else self.info()

    @property
    def start_timestamp_us(self) -> int:
        """Recording start, µs since the Unix epoch."""
        return int(self._cached_info()["startTimestamp"]) * 1000

    @property
    def duration_us(self) -> int:
        """µs from recording start to the last message (whole ms, as the header stores it)."""
        return int(round(float(self._cached_info()["totalDuration"]) * 1000))

    @property
    def timezone(self) -> dt.timezone:
        """The recording's timezone (header ``timezone``, minutes east of UTC): the ``time`` column's."""
        return recording_tz(self._cached_info().get("timezone"))

    @property
    def start_time(self) -> dt.datetime:
        """Recording start as an aware datetime in the recording's timezone."""
        return dt.datetime.fromtimestamp(self.start_timestamp_us / 1e6, tz=self.timezone)

    def window_us(self, start_time: Any = 0, end_time: Any = None, *, unit: str = "us", start_s: float | None = None, end_s: float | None = None) -> tuple[int, int | None]:
        """The (begin, end) µs since start, inclusive, that these arguments mean (``end`` None: to the end)."""
        return window(start_time, end_time, start_us=self.start_timestamp_us, tz=self.timezone, unit=unit, start_s=start_s, end_s=end_s)

    # -- messages -----------------------------------------------------------------------------------------------
    def read_messages(
        self,
        start_time: Any = 0,
        end_time: Any = None,
        urls: str | Sequence[str] | None = None,
        *,
        unit: str = "us",
        start_s: float | None = None,
        end_s: float | None = None,
        time_base: str = "log",
    ) -> Iterator[Message]:
        """Yields the messages of the window in reading order (VLink's: ``elapsed, rowid`` for .vdb, file order for
        .vcap), optionally only those of ``urls``. Times: µs since start, ``unit=``, ``start_s``/``end_s``, datetimes,
        timedeltas, pandas/numpy times (:mod:`vlink_bag.times`); both ends inclusive. ``time_base="publish"`` applies
        the window to the messages' publish (sample) times instead of their log times; they keep the reading order.

        Each :class:`Message` unpacks like Apollo's tuples: ``for topic, data, data_type, t in …``."""
        publish = check_time_base(time_base)
        begin, end = self.window_us(start_time, end_time, unit=unit, start_s=start_s, end_s=end_s)
        wanted = url_list(urls)
        looks_like_seconds = self._seconds_hint(start_time, begin, end, {"unit": unit, "start_s": start_s})
        if (wanted is not None and not wanted) or (end is not None and end < begin):
            self._warn_empty(begin, end, looks_like_seconds)
            return iter(())
        messages = self._publish_messages(begin, end, wanted) if publish else self._messages(begin, end, wanted)
        return self._watch_empty(messages, begin, end, looks_like_seconds)

    def _publish_messages(self, begin_us: int, end_us: int | None, urls: list[str] | None) -> Iterator[Message]:
        """The messages whose publish time is in the window, in reading order. Publish times are not indexed: this
        reads every message of ``urls`` (a server does the same, next to the file)."""
        return (m for m in self._messages(0, None, urls) if m.publish_time >= begin_us and (end_us is None or m.publish_time <= end_us))

    @staticmethod
    def _seconds_hint(start_time: Any, begin: int, end: int | None, window: dict[str, Any]) -> bool:
        """Floats in µs spanning less than 1 ms are most likely seconds given without ``unit='s'``."""
        return window.get("unit", "us") == "us" and window.get("start_s") is None and isinstance(start_time, float) and end is not None and end - begin < 1000

    def _watch_empty(self, messages: Iterator[Message], begin: int, end: int | None, seconds_hint: bool) -> Iterator[Message]:
        any_message = False
        for m in messages:
            any_message = True
            yield m
        if not any_message:
            self._warn_empty(begin, end, seconds_hint)

    def _warn_empty(self, begin: int, end: int | None, seconds_hint: bool = False) -> None:
        """Warns (once per bag) when a window that gave nothing lies outside the recording, or looks like seconds
        passed as µs."""
        duration = self.duration_us
        outside = begin > duration + 999 or (end is not None and end < 0)
        if not (outside or seconds_hint) or self._warned_empty:
            return
        self._warned_empty = True
        where = f"is outside the recording (0 … {duration} µs)" if outside else f"is less than 1 ms wide (the recording: 0 … {duration} µs)"
        hint = "; floats are µs unless unit='s' (or start_s=/end_s=) says seconds" if seconds_hint else ""
        warnings.warn(
            f"the window [{begin}, {'end' if end is None else end}] µs since start {where}: no messages{hint}",
            EmptyWindowWarning,
            stacklevel=3,
        )

    # -- decoding -----------------------------------------------------------------------------------------------
    @property
    def decoder(self) -> PayloadDecoder:
        """The bag's :class:`PayloadDecoder` (built from its embedded schemas on first use)."""
        if self._decoder is None:
            self._decoder = PayloadDecoder(self.schemas(), self.info().get("urls") or [])
        return self._decoder

    def message_class(self, type_name: str) -> Any:
        """The protobuf class generated from the bag's embedded descriptors for ``type_name``, or None."""
        return self.decoder.message_class(type_name)

    def decode(self, message: Message) -> Any:
        """The payload decoded (protobuf message, JSON value, text, CDR as dict); the bytes when it does not decode."""
        if not isinstance(message, Message):
            raise BadRequest(f"decode takes a Message of read_messages(), not {type(message).__name__}", code="INVALID_ARGUMENT")
        kind, value, _ = self.decoder.decode(message)
        return message.message if kind is None else value

    def to_dataframe(
        self,
        urls: str | Sequence[str] | None = None,
        start_time: Any = 0,
        end_time: Any = None,
        decode: bool = True,
        *,
        unit: str = "us",
        start_s: float | None = None,
        end_s: float | None = None,
        time_base: str = "log",
    ) -> pd.DataFrame:
        """The window's messages as a DataFrame, one row per message: ``timestamp`` (µs since start), ``time``
        (recording's timezone), ``elapsed`` (Timedelta), ``topic``, ``action``, ``data_type``, ``size``, then decoded
        fields (``decode=True``) or ``message`` bytes. See the README, "Decoding and DataFrames"."""
        messages = self.read_messages(start_time, end_time, urls, unit=unit, start_s=start_s, end_s=end_s, time_base=time_base)
        return build_dataframe(messages, self.decoder if decode else None, self.timezone, self.start_timestamp_us)

    def to_arrow(self, *args: Any, **kwargs: Any) -> Any:
        """:meth:`to_dataframe` as a ``pyarrow.Table`` (``pip install 'vlink-bag[arrow]'``)."""
        try:
            import pyarrow as pa
        except ImportError as error:  # pragma: no cover
            raise ImportError("to_arrow needs pyarrow: pip install 'vlink-bag[arrow]'") from error
        return pa.Table.from_pandas(self.to_dataframe(*args, **kwargs), preserve_index=False)

    def to_polars(self, *args: Any, **kwargs: Any) -> Any:
        """:meth:`to_dataframe` as a ``polars.DataFrame`` (``pip install 'vlink-bag[polars]'``)."""
        try:
            import polars as pl
        except ImportError as error:  # pragma: no cover
            raise ImportError("to_polars needs polars: pip install 'vlink-bag[polars]'") from error
        return pl.from_arrow(self.to_arrow(*args, **kwargs))

    # -- alignment ----------------------------------------------------------------------------------------------
    def align(
        self,
        base: str | float,
        *,
        time_base: str = "log",
        match: dict[str, str] | None = None,
        default_match: str = "nearest",
        tolerance_us: float | None = None,
        missing: str = "null",
    ) -> pd.DataFrame:
        """The bag's urls aligned onto one timeline, decoded into columns (``@vlink/bag-align``, as ``vlink-bag
        align``): ``base`` a url (one row per message) or a rate in Hz (``30`` or ``"30hz"``); ``time_base`` ``log``
        or ``publish``; ``match`` url → ``nearest`` / ``previous`` / ``linear`` (default: every data url with
        ``default_match``); ``tolerance_us`` the largest distance to a matched sample; ``missing`` ``null`` /
        ``ffill`` / ``drop``. Columns: ``time`` then ``<url>.<field>`` (``<url>#time`` the time of the sample used),
        times as UTC timestamps; the JSON description (columns, parameters, counts) is in ``df.attrs["align"]``.
        Needs pyarrow (``vlink-bag[arrow]``); a local bag also needs the ``vlink-bag`` CLI (see the README)."""
        from .align import align_query, check_urls, parquet_dataframe

        query = align_query(base, time_base=time_base, match=match, default_match=default_match, tolerance_us=tolerance_us, missing=missing)
        check_urls(self._cached_info(), query)
        return parquet_dataframe(self._align_parquet(query))

    def _align_parquet(self, query: dict[str, Any]) -> bytes:  # pragma: no cover - abstract
        raise NotImplementedError

    # -- Apollo RecordReader getters -----------------------------------------------------------------------------
    def get_channellist(self) -> list[str]:
        """Every url once, sorted (Apollo's ``get_channellist`` order)."""
        return sorted({meta["url"] for meta in self._cached_info()["urls"]})

    def _metas(self, url: str) -> list[dict[str, Any]]:
        return [m for m in self._cached_info()["urls"] if m["url"] == url]

    def get_messagenumber(self, url: str) -> int:
        """Messages recorded on ``url`` (all actions); 0 for an unknown url."""
        return sum(int(m.get("count", 0)) for m in self._metas(url))

    def get_messagetype(self, url: str) -> str:
        """The url's type name (ser); ``"Req|Resp"`` for RPC urls (messages carry their half); ``""`` if unknown."""
        metas = self._metas(url)
        return str(metas[0]["ser"]) if metas else ""

    def get_protodesc(self, url: str, *, apollo: bool = False) -> bytes:
        """The url's protobuf descriptor: a serialized ``FileDescriptorSet`` (default), or with ``apollo=True``
        Apollo's ``apollo.cyber.proto.ProtoDesc`` (what Apollo's ``get_protodesc`` returns). ``b""`` when none."""
        from .apollo_types import fds_to_proto_desc

        ser = self.get_messagetype(url)
        if not ser:
            return b""
        names = [ser, *ser.split("|")] if "|" in ser else [ser]
        by_name = {s["name"]: s for s in self.schemas()}
        for name in names:
            schema = by_name.get(name)
            if schema is not None and schema.get("schemaType") == 3:
                data = bytes(schema["data"])
                return fds_to_proto_desc(data, name) if apollo else data
        return b""

    @property
    def counters(self) -> dict[str, dict[str, int]]:
        """The recording's counters by cause, url → cause → count (format reference §2.13): what the writer could not
        store (``queueDepth``, ``queueMemory``, ``limit``, ``schemaConflict``, ``storageError``, …) and the causes the
        application counted with ``writer.count`` (``submitFailed``, ``missedSlot``, …). Empty when none."""
        return dict(self._cached_info().get("counters") or {})

    def get_header(self) -> dict[str, Any]:
        """The bag's header: its info without the per-url table."""
        return {k: v for k, v in self._cached_info().items() if k != "urls"}

    def get_headerstring(self, *, apollo: bool = False) -> str | bytes:
        """The header as JSON text (default), or with ``apollo=True`` a serialized ``apollo.cyber.proto.Header`` (the
        bytes Apollo's ``get_headerstring`` returns), filled from this bag's info."""
        if apollo:
            from .apollo_types import apollo_header

            return apollo_header(self._cached_info())
        return json.dumps(self.get_header(), sort_keys=True)

    def reset(self) -> None:
        """Forgets cached info, schemas and decoder (Apollo's ``reset``)."""
        self._info = None
        self._decoder = None
        self._warned_empty = False


def check_time_base(time_base: str) -> bool:
    """True for ``"publish"``, False for ``"log"``; anything else is a :class:`BadRequest`."""
    if time_base not in ("log", "publish"):
        raise BadRequest(f"time_base must be 'log' or 'publish', not {time_base!r}", code="INVALID_ARGUMENT")
    return time_base == "publish"
