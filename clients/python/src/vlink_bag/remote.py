"""A bag on a ``vlink-bag serve`` server: the same API as a local bag (:mod:`vlink_bag.bagbase`), read through
``GET /v1/bags/{id}/…``, plus JSON pages, the server's timing and density analyses and WebSocket replays."""

from __future__ import annotations

import base64
import math
from collections.abc import Iterator, Sequence
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import httpx

from .bagbase import BagBase, url_list
from .errors import BadRequest, StreamError, error_from_response
from .frames import ACTIONS, Message, data_type_for, iter_frames

if TYPE_CHECKING:  # pragma: no cover
    from .client import Client
    from .replay import Replay

__all__ = ["RemoteBag", "Page", "ms_text"]

_ACTION_VALUES = {text: i for i, text in enumerate(ACTIONS)}


def ms_text(us: int) -> str:
    """µs → the server's ms text, exact (µs become ms with 3 decimals)."""
    return f"{us // 1000}.{us % 1000:03d}" if us % 1000 else str(us // 1000)


class Page:
    """One page of ``GET …/messages?format=json``: the messages and the opaque cursor of the next page (None at the
    end)."""

    __slots__ = ("messages", "next")

    def __init__(self, messages: list[Message], next: str | None) -> None:  # noqa: A002 - the server's name
        self.messages = messages
        self.next = next

    def __repr__(self) -> str:
        return f"Page({len(self.messages)} messages, next={self.next!r})"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Page) and (self.messages, self.next) == (other.messages, other.next)


class RemoteBag(BagBase):
    """A bag on the server, read like Apollo's ``RecordReader`` (see :class:`~vlink_bag.bagbase.BagBase` for the
    methods shared with local bags)."""

    def __init__(self, client: Client, bag_id: str) -> None:
        if not isinstance(bag_id, str) or not bag_id:
            raise BadRequest("a bag id is a non-empty string", code="INVALID_ARGUMENT")
        self.client = client
        self.id = bag_id
        self._path = f"/v1/bags/{quote(bag_id, safe='')}"
        self._info = None
        self._schemas: list[dict[str, Any]] | None = None
        self._decoder = None

    def __repr__(self) -> str:
        return f"RemoteBag({self.id!r} on {self.client.base_url})"

    def info(self) -> dict[str, Any]:
        """The bag's Info (as ``vlink-bag info --json``). Always asks the server (a bag may still be recording); the
        Apollo-style getters use the copy fetched last."""
        info = dict(self.client._json(self._path + "/info"))
        self._info = info
        return info

    def reset(self) -> None:
        super().reset()
        self._schemas = None

    def schemas(self) -> list[dict[str, Any]]:
        """Embedded schemas: ``name``, ``encoding``, ``schemaType`` and ``data`` (bytes, e.g. a FileDescriptorSet)."""
        if self._schemas is None:
            raw = self.client._json(self._path + "/schemas")["schemas"]
            self._schemas = [{**s, "data": base64.b64decode(s.get("data") or "")} for s in raw]
        return self._schemas

    def attachments(self) -> list[dict[str, Any]]:
        """Attachments of a foreign bag (MCAP) as its info lists them: ``index``, ``name``, ``mediaType``, ``logTime``
        and ``createTime`` (ns since the epoch, as strings) and ``size``; ``[]`` for formats without attachments."""
        return [dict(a) for a in self.info().get("attachments") or []]

    def attachment(self, index: int) -> bytes:
        """``GET …/attachments/{index}``: the bytes of one attachment (:class:`NotFound` when there is none)."""
        return self.client._request(f"{self._path}/attachments/{int(index)}").content

    # -- analyses ------------------------------------------------------------------------------------------------
    def _url_params(self, urls: str | Sequence[str] | None) -> tuple[list[tuple[str, str]], list[str] | None]:
        """The urls as query parameters; urls with a comma (which the server splits at) are filtered here instead."""
        wanted = url_list(urls)
        if wanted is not None and any("," in u for u in wanted):
            return [], wanted
        return [("urls", u) for u in wanted or ()], None

    def timing(self, factor: float | None = None, urls: str | Sequence[str] | None = None) -> list[dict[str, Any]]:
        """``GET …/timing``: per url ``count``, ``rateHz``, ``intervalUs`` {min, p50, p99, max} and ``gaps``
        [{startUs, lengthUs}], a gap being an interval longer than ``factor`` × the median (server default 1.5)."""
        params: list[tuple[str, str]] = []
        if factor is not None:
            if isinstance(factor, bool) or not isinstance(factor, (int, float)) or not factor > 0 or not math.isfinite(factor):
                raise BadRequest(f"factor must be a positive number, not {factor!r}", code="INVALID_ARGUMENT")
            text = repr(float(factor))
            params.append(("factor", text if "e" not in text else f"{factor:.12f}".rstrip("0")))
        url_params, local = self._url_params(urls)
        body = self.client._json(self._path + "/timing", params + url_params or None)
        results = list(body["urls"] if isinstance(body, dict) else body)
        if local is not None:
            results = [r for r in results if r.get("url") in set(local)]
        return results

    def density(self, buckets: int = 100, start_time: Any = 0, end_time: Any = None, urls: str | Sequence[str] | None = None, **window: Any) -> dict[str, Any]:
        """``GET …/density``: messages per url and time bucket: ``beginMs``, ``endMs``, ``buckets``, ``bucketMs``,
        ``total``, ``urls`` [{url, count, max, counts}]."""
        if isinstance(buckets, bool) or not isinstance(buckets, int) or buckets < 1:
            raise BadRequest(f"buckets must be a positive integer, not {buckets!r}", code="INVALID_ARGUMENT")
        begin, end = self.window_us(start_time, end_time, **window)
        params = [("buckets", str(buckets))]
        if begin:
            params.append(("begin", ms_text(begin)))
        if end is not None:
            params.append(("end", ms_text(max(end, 0))))
        url_params, local = self._url_params(urls)
        body = dict(self.client._json(self._path + "/density", params + url_params))
        if local is not None:
            body["urls"] = [u for u in body["urls"] if u["url"] in set(local)]
            body["total"] = sum(u["count"] for u in body["urls"])
        return body

    # -- messages -----------------------------------------------------------------------------------------------
    def _window_params(self, begin: int, end: int | None) -> list[tuple[str, str]]:
        params: list[tuple[str, str]] = []
        if begin:
            params.append(("begin", ms_text(begin)))
        if end is not None:
            params.append(("end", ms_text(end)))
        return params

    def _publish_messages(self, begin_us: int, end_us: int | None, urls: list[str] | None) -> Iterator[Message]:
        # The server applies a publish window next to the file (``timeBase=publish``).
        return self._messages(begin_us, end_us, urls, publish=True)

    def _messages(self, begin_us: int, end_us: int | None, urls: list[str] | None, *, publish: bool = False) -> Iterator[Message]:
        start_us = self.start_timestamp_us
        url_params, local = self._url_params(urls)
        params = self._window_params(begin_us, end_us) + url_params + ([("timeBase", "publish")] if publish else [])
        params.append(("format", "binary"))
        frames = self._stream(params, start_us)
        if local is not None:
            wanted = frozenset(local)
            return (m for m in frames if m.topic in wanted)
        return frames

    def _stream(self, params: list[tuple[str, str]], start_us: int) -> Iterator[Message]:
        url = self.client._url(self._path + "/messages")
        return iter_frames(self._body(params, "/messages", "message"), start_us, source=url)

    def page(
        self,
        start_time: Any = 0,
        end_time: Any = None,
        urls: str | Sequence[str] | None = None,
        *,
        limit: int = 1000,
        cursor: str | None = None,
        **window: Any,
    ) -> Page:
        """One JSON page (``limit`` ≤ 10 000 messages). Pass the returned ``next`` as ``cursor`` for the following
        page (the cursor carries the window and urls, and stays valid across server restarts)."""
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise BadRequest(f"limit must be a positive integer, not {limit!r}", code="INVALID_ARGUMENT")
        params: list[tuple[str, str]] = []
        if cursor is None:
            begin, end = self.window_us(start_time, end_time, **window)
            params = self._window_params(begin, end) + [("urls", u) for u in url_list(urls) or ()]
        params.append(("limit", str(limit)))
        params.append(("format", "json"))
        if cursor is not None:
            params.append(("cursor", cursor))
        body = self.client._json(self._path + "/messages", params)
        start_us = self.start_timestamp_us
        messages = [
            Message(
                m["url"],
                base64.b64decode(m.get("data") or ""),
                data_type_for(m.get("serType", ""), _ACTION_VALUES.get(m.get("action", ""), 0)),
                int(m["timestamp"]),
                start_us + int(m["timestamp"]),
                m.get("action", "Unknown"),
                int(m.get("schemaType", 0)),
                int(m["publishTime"]) if m.get("publishTime") is not None else None,
            )
            for m in body["messages"]
        ]
        return Page(messages, body.get("next"))

    def iter_pages(self, start_time: Any = 0, end_time: Any = None, urls: str | Sequence[str] | None = None, *, limit: int = 1000, **window: Any) -> Iterator[Page]:
        """Every page of the window, following the cursors."""
        page = self.page(start_time, end_time, urls, limit=limit, **window)
        yield page
        while page.next is not None:
            page = self.page(limit=limit, cursor=page.next)
            yield page

    def to_dataframe(self, urls: str | Sequence[str] | None = None, start_time: Any = 0, end_time: Any = None, decode: bool = True, **window: Any) -> Any:
        """See :meth:`BagBase.to_dataframe`. Reads the window's binary stream in one go and fills the columns straight
        from it (no Message object per row); the result is the same as reading the file locally."""
        from .bagbase import check_time_base
        from .dataframe import Columns, build_dataframe
        from .frames import frames_to_columns

        time_base = window.pop("time_base", "log")
        publish = check_time_base(time_base)
        begin, end = self.window_us(start_time, end_time, **window)
        wanted = url_list(urls)
        url_params, local = self._url_params(wanted)
        if local is not None or (wanted is not None and not wanted) or (end is not None and end < begin):
            return super().to_dataframe(urls, start_time, end_time, decode, time_base=time_base, **window)
        start_us = self.start_timestamp_us
        decoder = self.decoder if decode else None
        params = self._window_params(begin, end) + url_params + [("format", "binary")] + ([("timeBase", "publish")] if publish else [])
        columns = frames_to_columns(self._fetch(params), Columns(), source=self.client._url(self._path + "/messages"))
        if not len(columns):
            self._warn_empty(begin, end, self._seconds_hint(start_time, begin, end, window))
        return build_dataframe(columns, decoder, self.timezone, start_us)

    def _align_parquet(self, query: dict[str, Any]) -> bytes:
        """``GET …/align?format=parquet``: the server aligns, the Parquet comes back whole."""
        params = [("base", query["base"]), ("timeBase", query["timeBase"]), ("defaultMatch", query["defaultMatch"])]
        params += [("missing", query["missing"]), ("format", "parquet")]
        params += [("match", item) for item in query["match"]]
        if "toleranceUs" in query:
            params.append(("tolerance", f"{query['toleranceUs'] / 1000:.3f}"))
        return self._fetch(params, "/align")

    def _fetch(self, params: list[tuple[str, str]], route: str = "/messages") -> bytes:
        """A whole binary response (a DataFrame holds every payload anyway)."""
        return b"".join(self._body(params, route, route[1:]))

    def _body(self, params: list[tuple[str, str]], route: str, what: str) -> Iterator[bytes]:
        """The body of ``GET <bag><route>`` as it arrives: no answer or a dropped connection is
        :class:`ConnectionFailed`, an error status the server's error, a body cut short :class:`StreamError`."""
        from .client import connection_error

        path = self._path + route
        url = self.client._url(path)
        try:
            with self.client._http.stream("GET", path, params=httpx.QueryParams(tuple(params))) as response:
                if response.status_code >= 400:
                    response.read()
                    raise error_from_response(response.status_code, response.content, str(response.url))
                try:
                    yield from response.iter_bytes()
                except httpx.RemoteProtocolError as error:
                    raise StreamError(f"the server ended the {what} stream early ({error})", url=url) from error
        except httpx.TransportError as error:
            raise connection_error(url, error) from error

    # -- replay -------------------------------------------------------------------------------------------------
    def replay(
        self,
        rate: float = 1.0,
        urls: str | Sequence[str] | None = None,
        start_time: Any = 0,
        end_time: Any = None,
        *,
        times: int = 1,
        paused: bool = False,
        open_timeout: float | None = 10.0,
        **window: Any,
    ) -> Replay:
        """A WebSocket replay at the recording's pace × ``rate`` (0 = as fast as you read), as an async iterator of
        :class:`Message` with ``pause()``, ``resume()``, ``step()``, ``seek(ms)``, ``set_rate()``, ``stop()``.
        ``start_time``/``end_time`` accept every time type (:mod:`vlink_bag.times`)."""
        from .replay import Replay

        begin, end = self.window_us(start_time, end_time, **window)
        return Replay(self, rate=rate, urls=url_list(urls), start_time=begin, end_time=end, times=times, paused=paused, open_timeout=open_timeout)
