"""A bag on a ``vlink-bag serve`` server: the same API as a local bag (:mod:`vlink_bag.bagbase`), read through
``GET /v1/bags/{id}/…``, plus JSON pages, the server's timing and density analyses and WebSocket replays."""

from __future__ import annotations

import base64
import binascii
import json
import math
from collections.abc import Callable, Iterator, Sequence
from decimal import Decimal
from numbers import Real
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import httpx

from .answers import ShapeError, check_frames, check_status, field, info_shape, obj, objects, schemas_shape, text
from .bagbase import BagBase, check_time_base, url_list
from .errors import BadRequest, StreamError
from .frames import ACTIONS, Message, data_type_for, iter_frames

if TYPE_CHECKING:  # pragma: no cover
    from .client import Client
    from .replay import Replay

__all__ = ["RemoteBag", "Page", "ms_text", "needs_local_filter"]

_ACTION_VALUES = {name: i for i, name in enumerate(ACTIONS)}
#: A page cursor of this client (a server cursor plus the urls filtered here): ``vpy1.`` + base64url of JSON. Server
#: cursors are plain base64url, so the dot tells them apart.
_CURSOR_PREFIX = "vpy1."

#: A request: (path, query parameters, the parser of the JSON answer). The sync and the async bag send the same ones.
Request = tuple[str, Any, Callable[[Any], Any]]


def needs_local_filter(url: str) -> bool:
    """Whether the server's ``urls=`` parameter cannot carry ``url`` as it is: the server splits that parameter at
    commas, trims each url (JavaScript's ``trim()``) and drops empty ones. Such urls are sent as exact ``url=``
    parameters, and filtered by the client as well (for servers from before ``url=``)."""
    return url == "" or "," in url or url[0].isspace() or url[-1].isspace() or url[0] == "\ufeff" or url[-1] == "\ufeff"


def factor_text(factor: Any) -> str:
    """A timing factor as the server's ``factor`` parameter takes it (``^\\d+(\\.\\d+)?$``: no exponent)."""
    if isinstance(factor, bool) or not isinstance(factor, Real) or not math.isfinite(float(factor)) or not float(factor) > 0:
        raise BadRequest(f"factor must be a positive number, not {factor!r}", code="INVALID_ARGUMENT")
    return format(Decimal(repr(float(factor))), "f")


def _check_limit(limit: Any) -> None:
    if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
        raise BadRequest(f"limit must be a positive integer, not {limit!r}", code="INVALID_ARGUMENT")


def _wrap_cursor(cursor: str, urls: list[str]) -> str:
    data = json.dumps({"cursor": cursor, "urls": urls}, separators=(",", ":")).encode("utf-8")
    return _CURSOR_PREFIX + base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def _unwrap_cursor(cursor: str) -> tuple[str, list[str] | None]:
    """(the server's cursor, the urls this client filters) of a cursor ``page()`` returned."""
    if not isinstance(cursor, str) or not cursor:
        raise BadRequest(f"cursor must be the non-empty string a page's `next` holds, not {cursor!r}", code="INVALID_ARGUMENT")
    if not cursor.startswith(_CURSOR_PREFIX):
        return cursor, None
    try:
        raw = cursor[len(_CURSOR_PREFIX) :]
        body = json.loads(base64.urlsafe_b64decode(raw + "=" * (-len(raw) % 4)))
        inner, urls = body["cursor"], body["urls"]
        if not isinstance(inner, str) or not isinstance(urls, list) or not all(isinstance(u, str) for u in urls):
            raise TypeError("wrong shape")
    except (ValueError, KeyError, TypeError, binascii.Error):
        raise BadRequest("invalid query parameter \"cursor\": not a cursor this client issued", code="INVALID_ARGUMENT") from None
    return inner, urls


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
        return f"RemoteBag({self.id!r} on {self.client.display_url})"

    def info(self) -> dict[str, Any]:
        """The bag's Info (as ``vlink-bag info --json``). Always asks the server (a bag may still be recording); the
        Apollo-style getters use the copy fetched last. An info without ``startTimestamp``, ``totalDuration`` or
        ``urls`` (not a vlink-bag server, or a proxy's page) is a :class:`BadResponse` here, not at the first read."""
        info = self.client._json(self._path + "/info", parse=info_shape)
        self._info = info
        return info

    def reset(self) -> None:
        super().reset()
        self._schemas = None

    def schemas(self) -> list[dict[str, Any]]:
        """Embedded schemas: ``name``, ``encoding``, ``schemaType`` and ``data`` (bytes, e.g. a FileDescriptorSet)."""
        if self._schemas is None:
            self._schemas = self.client._json(self._path + "/schemas", parse=schemas_shape)
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
        """The urls as query parameters, and the urls to filter here too (None: the server's filter is exact).

        ``urls=`` is split at commas and trimmed by the server, so when one url cannot travel that way
        (:func:`needs_local_filter`: a comma, surrounding whitespace, empty) every url goes as an exact ``url=``
        parameter (the server's, repeatable, taken as it is). A server from before ``url=`` ignores it and answers
        every url: the client keeps the wanted ones itself, so the result is exact either way."""
        wanted = url_list(urls)
        if wanted is None:
            return [], None
        if not wanted:
            return [], wanted
        if any(needs_local_filter(u) for u in wanted):
            return [("url", u) for u in wanted], wanted
        return [("urls", u) for u in wanted], None

    def _timing_request(self, factor: Any, urls: str | Sequence[str] | None) -> Request:
        params: list[tuple[str, str]] = [] if factor is None else [("factor", factor_text(factor))]
        url_params, local = self._url_params(urls)
        keep = None if local is None else frozenset(local)

        def parse(body: Any) -> list[dict[str, Any]]:
            results = list(objects(field(body, "urls") if isinstance(body, dict) else body, "urls"))
            return results if keep is None else [r for r in results if r.get("url") in keep]

        return self._path + "/timing", params + url_params or None, parse

    def timing(self, factor: float | None = None, urls: str | Sequence[str] | None = None) -> list[dict[str, Any]]:
        """``GET …/timing``: per url ``count``, ``rateHz``, ``intervalUs`` {min, p50, p99, max} and ``gaps``
        [{startUs, lengthUs}], a gap being an interval longer than ``factor`` × the median (server default 1.5)."""
        return self.client._json(*self._timing_request(factor, urls))

    def _density_request(self, buckets: Any, start_time: Any, end_time: Any, urls: str | Sequence[str] | None, window: dict[str, Any]) -> Request:
        if isinstance(buckets, bool) or not isinstance(buckets, int) or buckets < 1:
            raise BadRequest(f"buckets must be a positive integer, not {buckets!r}", code="INVALID_ARGUMENT")
        begin, end = self.window_us(start_time, end_time, **window)
        params = [("buckets", str(buckets))]
        if begin:
            params.append(("begin", ms_text(begin)))
        if end is not None:
            params.append(("end", ms_text(max(end, 0))))
        url_params, local = self._url_params(urls)
        keep = None if local is None else frozenset(local)

        def parse(body: Any) -> dict[str, Any]:
            answer = dict(obj(body))
            rows = objects(field(answer, "urls"), "urls")
            if keep is not None:
                answer["urls"] = [u for u in rows if u.get("url") in keep]
                answer["total"] = sum(int(u.get("count") or 0) for u in answer["urls"])
            return answer

        return self._path + "/density", params + url_params, parse

    def density(self, buckets: int = 100, start_time: Any = 0, end_time: Any = None, urls: str | Sequence[str] | None = None, **window: Any) -> dict[str, Any]:
        """``GET …/density``: messages per url and time bucket: ``beginMs``, ``endMs``, ``buckets``, ``bucketMs``,
        ``total``, ``urls`` [{url, count, max, counts}]."""
        return self.client._json(*self._density_request(buckets, start_time, end_time, urls, window))

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

    def _page_request(self, start_time: Any, end_time: Any, urls: str | Sequence[str] | None, limit: Any, cursor: str | None, window: dict[str, Any]) -> Request | Page:
        """The request of one JSON page, or the page itself when there is nothing to ask (``urls=[]``)."""
        _check_limit(limit)
        publish = check_time_base(window.pop("time_base", "log"))
        params: list[tuple[str, str]] = []
        if cursor is None:
            begin, end = self.window_us(start_time, end_time, **window)
            wanted = url_list(urls)
            if wanted is not None and not wanted:
                return Page([], None)
            url_params, local = self._url_params(wanted)
            params = self._window_params(begin, end) + url_params + ([("timeBase", "publish")] if publish else [])
            server_cursor = None
        else:
            server_cursor, local = _unwrap_cursor(cursor)
        params.append(("limit", str(limit)))
        params.append(("format", "json"))
        if server_cursor is not None:
            params.append(("cursor", server_cursor))
        start_us = self.start_timestamp_us
        keep = None if local is None else frozenset(local)

        def parse(body: Any) -> Page:
            answer = obj(body)
            messages = [_page_message(m, i, start_us) for i, m in enumerate(objects(field(answer, "messages"), "messages"))]
            following = answer.get("next")
            if following is not None:
                text(following, "next")
            if keep is not None:
                messages = [m for m in messages if m.topic in keep]
                if following is not None:
                    following = _wrap_cursor(following, sorted(keep))
            return Page(messages, following)

        return self._path + "/messages", params, parse

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
        page (the cursor carries the window, urls and time base, and stays valid across server restarts). Times as
        :meth:`read_messages`, ``time_base="publish"`` included. Urls with a comma or surrounding whitespace go as
        exact ``url=`` parameters; a server from before that parameter answers every url, and the client keeps the
        wanted ones: its pages may then hold fewer than ``limit`` messages (even none) while ``next`` goes on."""
        request = self._page_request(start_time, end_time, urls, limit, cursor, window)
        return request if isinstance(request, Page) else self.client._json(*request)

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
        :class:`ConnectionFailed`, an error status the server's error, any other answer than a 200 (a redirect) or,
        for ``/messages``, one without the frame stream's headers :class:`BadResponse`, a body cut short
        :class:`StreamError`."""
        path = self._path + route
        url = self.client._url(path)
        try:
            with self.client._http.stream("GET", path, params=httpx.QueryParams(tuple(params))) as response:
                if response.status_code != 200:
                    response.read()
                if route == "/messages":
                    check_frames(response, path)
                else:
                    check_status(response, path, exact=200)
                try:
                    yield from response.iter_bytes()
                except httpx.RemoteProtocolError as error:
                    raise StreamError(f"the server ended the {what} stream early ({error})", url=url) from error
        except httpx.TransportError as error:
            raise self.client._transport_error(path, error) from error

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


def _page_message(m: dict[str, Any], i: int, start_us: int) -> Message:
    """One message of a JSON page."""
    where = f"messages[{i}]"
    url = text(field(m, "url", where), f"{where}.url")
    timestamp = field(m, "timestamp", where)
    if isinstance(timestamp, bool) or not isinstance(timestamp, (int, str)):
        raise ShapeError(f"{where}.timestamp is not an integer")
    ts = int(timestamp)
    data = m.get("data") or ""
    publish = m.get("publishTime")
    return Message(
        url,
        base64.b64decode(text(data, f"{where}.data")),
        data_type_for(str(m.get("serType", "")), _ACTION_VALUES.get(m.get("action", ""), 0)),
        ts,
        start_us + ts,
        str(m.get("action", "Unknown")),
        int(m.get("schemaType", 0)),
        int(publish) if publish is not None else None,
    )
