"""HTTP client for a ``vlink-bag serve`` server (``@vlink/bag-server``, API ``/v1``)."""

from __future__ import annotations

import base64
import json
import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import httpx

from .decode import PayloadDecoder
from .errors import (
    BadRequest,
    ConnectionFailed,
    StreamError,
    VlinkBagError,
    error_from_response,
)
from .frames import ACTIONS, Message, data_type_for, iter_frames

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from .replay import Replay

__all__ = ["Client", "RemoteBag", "Page", "DEFAULT_TIMEOUT"]

#: Seconds to connect, and to wait for each read (a stream may take as long as it needs overall).
DEFAULT_TIMEOUT = 30.0
_ACTION_VALUES = {text: i for i, text in enumerate(ACTIONS)}
# Beyond 2**53 µs (285 years) a window end means "to the end" (Apollo passes 2**64 - 1 for that).
_OPEN_END = 2**53


def _window_ms(value: float | int | None, name: str) -> str | None:
    """µs since recording start → the server's ms text (exact: integer µs become ms with 3 decimals)."""
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or (isinstance(value, float) and not math.isfinite(value)):
        raise BadRequest(f"{name} must be a number of µs ≥ 0, not {value!r}", code="INVALID_ARGUMENT")
    if value < 0:
        raise BadRequest(f"{name} must be ≥ 0 (µs since recording start), not {value}", code="INVALID_ARGUMENT")
    us = int(round(value))
    return f"{us // 1000}.{us % 1000:03d}" if us % 1000 else str(us // 1000)


def _url_list(urls: str | Iterable[str] | None) -> list[str] | None:
    if urls is None:
        return None
    if isinstance(urls, str):
        return [urls]
    out = list(urls)
    for url in out:
        if not isinstance(url, str):
            raise BadRequest(f"urls must be strings, not {url!r}", code="INVALID_ARGUMENT")
    return out


@dataclass
class Page:
    """One page of ``GET …/messages?format=json``: the messages and the opaque cursor of the next page (None at the
    end)."""

    messages: list[Message]
    next: str | None


class Client:
    """A connection to a vlink-bag server.

    >>> with Client("http://127.0.0.1:8765") as client:
    ...     for summary in client.bags():
    ...         print(summary["id"], summary["messageCount"])
    ...     bag = client.bag("drive.vdb")

    Args:
        base_url: ``http://host:port`` (a path prefix behind a reverse proxy is kept).
        token: the server's bearer token (``vlink-bag serve --token``), if it has one (None or ``""``: none).
        timeout: seconds, or an ``httpx.Timeout``: connect timeout, and the longest wait for each read.
        headers: extra headers for every request.
        transport: an ``httpx`` transport (tests, proxies).
    """

    def __init__(
        self,
        base_url: str,
        token: str | None = None,
        timeout: float | httpx.Timeout | None = DEFAULT_TIMEOUT,
        *,
        headers: dict[str, str] | None = None,
        transport: httpx.BaseTransport | None = None,
    ) -> None:
        if "://" not in base_url:
            base_url = "http://" + base_url
        self.base_url = base_url.rstrip("/")
        self.token = token
        self.timeout = timeout
        all_headers = {"user-agent": f"vlink-bag-python/{_version()}"}
        if headers:
            all_headers.update(headers)
        if token:  # "" (e.g. an unset environment variable) means no token
            all_headers["authorization"] = f"Bearer {token}"
        self._headers = all_headers
        self._http = httpx.Client(base_url=self.base_url, headers=all_headers, timeout=timeout, transport=transport)

    # -- lifecycle ----------------------------------------------------------------------------------------------
    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Client({self.base_url!r}{', token=***' if self.token else ''})"

    # -- API ----------------------------------------------------------------------------------------------------
    def health(self) -> dict[str, Any]:
        """``{"ok": True, "version": …}``. Needs no token."""
        return dict(self._json("/v1/health"))

    def bags(self) -> list[dict[str, Any]]:
        """Every bag under the served root: ``id``, ``format``, ``size``, ``modified``, ``messageCount`` (None and an
        ``error`` {code, message} for a bag that does not open)."""
        return list(self._json("/v1/bags")["bags"])

    def bag(self, bag_id: str) -> RemoteBag:
        """Opens a bag by id (its path relative to the served root, e.g. ``"runs/drive.vcap"``). Fetches its info, so a
        missing or unreadable bag raises here (:class:`NotFound`, :class:`CorruptBag`, …)."""
        bag = RemoteBag(self, bag_id)
        bag.info()
        return bag

    def openapi(self) -> dict[str, Any]:
        """The server's OpenAPI 3.1 document."""
        return dict(self._json("/v1/openapi.json"))

    # -- plumbing -----------------------------------------------------------------------------------------------
    def _url(self, path: str) -> str:
        return self.base_url + path

    def _request(self, path: str, params: Any = None) -> httpx.Response:
        try:
            response = self._http.get(path, params=params)
        except httpx.TransportError as error:
            raise _connection_error(self._url(path), error) from error
        if response.status_code >= 400:
            raise error_from_response(response.status_code, response.content, str(response.url))
        return response

    def _json(self, path: str, params: Any = None) -> Any:
        response = self._request(path, params)
        try:
            return response.json()
        except ValueError as error:
            raise VlinkBagError(f"the server answered {path} with something that is not JSON", code="BAD_RESPONSE", status=response.status_code, url=str(response.url)) from error


def _connection_error(url: str, error: BaseException) -> ConnectionFailed:
    if isinstance(error, httpx.TimeoutException):
        what = "timed out"
    elif isinstance(error, httpx.ConnectError):
        what = "cannot connect"
    elif isinstance(error, httpx.RemoteProtocolError):
        what = "the connection broke"
    else:
        what = "connection failed"
    return ConnectionFailed(f"{what} to {url}: {error or type(error).__name__}", url=url)


def _version() -> str:
    from . import __version__

    return __version__


class RemoteBag:
    """A bag on the server, read like Apollo's ``cyber_py3.record.RecordReader``.

    Times: every ``start_time``/``end_time`` and every message ``timestamp`` is in **microseconds since recording
    start** (the bag's own time base), both window ends inclusive; ``abs_timestamp`` is µs since the Unix epoch.
    (Apollo uses absolute nanoseconds; VLink bags store µs relative to the start.) The replay's ``seek`` takes ms, as
    the server's replay commands do.
    """

    def __init__(self, client: Client, bag_id: str) -> None:
        if not isinstance(bag_id, str) or not bag_id:
            raise BadRequest("a bag id is a non-empty string", code="INVALID_ARGUMENT")
        self.client = client
        self.id = bag_id
        self._path = f"/v1/bags/{quote(bag_id, safe='')}"
        self._info: dict[str, Any] | None = None
        self._schemas: list[dict[str, Any]] | None = None
        self._decoder: PayloadDecoder | None = None

    def __repr__(self) -> str:
        return f"RemoteBag({self.id!r} on {self.client.base_url})"

    # -- metadata -----------------------------------------------------------------------------------------------
    def info(self) -> dict[str, Any]:
        """The bag's Info (as ``vlink-bag info --json``): ``messageCount``, ``totalDuration`` (ms), ``startTimestamp``
        (ms since epoch), ``urls`` (per url [+ action for .vcap]: ``url``, ``ser``, ``schemaType``, ``count``, ``size``,
        ``freq``…), …. Always asks the server (a bag may still be recording); the Apollo-style getters use the copy
        fetched last."""
        info = dict(self.client._json(self._path + "/info"))
        self._info = info
        return info

    def _cached_info(self) -> dict[str, Any]:
        return self._info if self._info is not None else self.info()

    def reset(self) -> None:
        """Forgets the cached info, schemas and decoder (Apollo's ``reset``)."""
        self._info = None
        self._schemas = None
        self._decoder = None

    @property
    def start_timestamp_us(self) -> int:
        """Recording start, µs since the Unix epoch."""
        return int(self._cached_info()["startTimestamp"]) * 1000

    @property
    def duration_us(self) -> int:
        """µs from recording start to the last message."""
        return int(round(float(self._cached_info()["totalDuration"]) * 1000))

    def schemas(self) -> list[dict[str, Any]]:
        """Embedded schemas: ``name``, ``encoding``, ``schemaType`` and ``data`` (bytes, e.g. a FileDescriptorSet)."""
        if self._schemas is None:
            raw = self.client._json(self._path + "/schemas")["schemas"]
            self._schemas = [{**s, "data": base64.b64decode(s.get("data") or "")} for s in raw]
        return self._schemas

    def timing(self, factor: float | None = None, urls: str | Sequence[str] | None = None) -> list[dict[str, Any]]:
        """Per-url timing, sorted by url: ``url``, ``count``, ``rateHz``, ``intervalUs`` {min, p50, p99, max} (µs; None
        with fewer than two messages) and ``gaps`` [{startUs, lengthUs}], where a gap is an interval longer than
        ``factor`` × the url's median period (server default 1.5)."""
        params: list[tuple[str, str]] = []
        if factor is not None:
            if isinstance(factor, bool) or not isinstance(factor, (int, float)) or not factor > 0 or not math.isfinite(factor):
                raise BadRequest(f"factor must be a positive number, not {factor!r}", code="INVALID_ARGUMENT")
            text = repr(float(factor))
            params.append(("factor", text if "e" not in text else f"{factor:.12f}".rstrip("0")))
        url_list = _url_list(urls)
        local = url_list is not None and any("," in u for u in url_list)  # the server splits urls at commas
        if url_list is not None and not local:
            params.extend(("urls", u) for u in url_list)
        body = self.client._json(self._path + "/timing", params or None)
        results = list(body["urls"] if isinstance(body, dict) else body)
        if local:
            wanted = set(url_list or ())
            results = [r for r in results if r.get("url") in wanted]
        return results

    # Apollo RecordReader equivalents ------------------------------------------------------------------------------
    def get_channellist(self) -> list[str]:
        """The urls of the bag, each once, in the order of its info."""
        seen: dict[str, None] = {}
        for meta in self._cached_info()["urls"]:
            seen.setdefault(meta["url"], None)
        return list(seen)

    def _metas(self, url: str) -> list[dict[str, Any]]:
        return [m for m in self._cached_info()["urls"] if m["url"] == url]

    def get_messagenumber(self, url: str) -> int:
        """Messages recorded on ``url`` (all actions); 0 for an unknown url."""
        return sum(int(m.get("count", 0)) for m in self._metas(url))

    def get_messagetype(self, url: str) -> str:
        """The url's type name (ser; ``"Req|Resp"`` for RPC urls); ``""`` for an unknown url."""
        metas = self._metas(url)
        return str(metas[0]["ser"]) if metas else ""

    def get_protodesc(self, url: str) -> bytes:
        """The serialized ``FileDescriptorSet`` embedded for the url's type (the request's for an RPC url), or ``b""``
        when the bag has none. Apollo returns its own ProtoDesc here; a FileDescriptorSet is the standard equivalent
        (``google.protobuf.descriptor_pb2.FileDescriptorSet.FromString``)."""
        ser = self.get_messagetype(url)
        if not ser:
            return b""
        names = [ser, *ser.split("|")] if "|" in ser else [ser]
        by_name = {s["name"]: s for s in self.schemas()}
        for name in names:
            schema = by_name.get(name)
            if schema is not None:
                return bytes(schema["data"])
        return b""

    def get_header(self) -> dict[str, Any]:
        """The bag's header: its info without the per-url table."""
        return {k: v for k, v in self._cached_info().items() if k != "urls"}

    def get_headerstring(self) -> str:
        """The header as JSON text (Apollo returns a serialized protobuf header; VLink bags have none)."""
        return json.dumps(self.get_header(), sort_keys=True)

    # -- messages -----------------------------------------------------------------------------------------------
    def _query(self, start_time: float | None, end_time: float | None, urls: list[str] | None) -> list[tuple[str, str]]:
        params: list[tuple[str, str]] = []
        begin = _window_ms(start_time, "start_time") if start_time else None
        end = _window_ms(end_time, "end_time") if end_time is not None and end_time < _OPEN_END else None
        if start_time and end_time is not None and end_time < start_time:
            raise BadRequest(f"end_time {end_time} is before start_time {start_time}", code="INVALID_ARGUMENT")
        if begin is not None:
            params.append(("begin", begin))
        if end is not None:
            params.append(("end", end))
        if urls is not None:
            for url in urls:
                params.append(("urls", url))
        return params

    def read_messages(
        self,
        start_time: float = 0,
        end_time: float | None = None,
        urls: str | Sequence[str] | None = None,
    ) -> Iterator[Message]:
        """Yields the messages of ``[start_time, end_time]`` (µs since recording start, inclusive; ``end_time=None`` =
        to the end) in recording order, optionally only those of ``urls``.

        Streams the server's binary format and parses it incrementally: memory stays bounded by the largest message
        plus a 64 KiB chunk, whatever the size of the bag. Leaving the loop early closes the connection (on the
        generator's ``close()``, which ``for`` … ``break`` triggers once the generator is collected; call
        ``.close()`` on it to be immediate).

        Each :class:`Message` has ``topic``, ``message`` (bytes), ``data_type``, ``timestamp``, ``abs_timestamp``,
        ``action`` and ``schema_type``, and unpacks like Apollo's tuples: ``for topic, data, data_type, t in …``.
        """
        url_list = _url_list(urls)
        if url_list is not None and len(url_list) == 0:
            return iter(())
        start_us = self.start_timestamp_us
        # The server splits the urls parameter at commas: a url containing one is filtered here instead.
        local = url_list is not None and any("," in u for u in url_list)
        params = self._query(start_time, end_time, None if local else url_list)
        params.append(("format", "binary"))
        frames = self._stream(params, start_us)
        if local:
            wanted = frozenset(url_list or ())
            return (m for m in frames if m.topic in wanted)
        return frames

    def _stream(self, params: list[tuple[str, str]], start_us: int) -> Iterator[Message]:
        client = self.client
        path = self._path + "/messages"
        url = client._url(path)
        try:
            with client._http.stream("GET", path, params=httpx.QueryParams(tuple(params))) as response:
                if response.status_code >= 400:
                    response.read()
                    raise error_from_response(response.status_code, response.content, str(response.url))
                try:
                    yield from iter_frames(response.iter_bytes(), start_us, source=url)
                except httpx.RemoteProtocolError as error:
                    raise StreamError(f"the server ended the message stream early ({error})", url=url) from error
        except httpx.TransportError as error:
            raise _connection_error(url, error) from error

    def page(
        self,
        start_time: float = 0,
        end_time: float | None = None,
        urls: str | Sequence[str] | None = None,
        *,
        limit: int = 1000,
        cursor: str | None = None,
    ) -> Page:
        """One JSON page (``limit`` ≤ 10 000 messages). Pass the returned ``next`` as ``cursor`` for the following
        page (the cursor carries the window and urls, and stays valid across server restarts)."""
        if isinstance(limit, bool) or not isinstance(limit, int) or limit < 1:
            raise BadRequest(f"limit must be a positive integer, not {limit!r}", code="INVALID_ARGUMENT")
        url_list = _url_list(urls)
        params = [] if cursor is not None else self._query(start_time, end_time, url_list)
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
            )
            for m in body["messages"]
        ]
        return Page(messages, body.get("next"))

    def iter_pages(
        self,
        start_time: float = 0,
        end_time: float | None = None,
        urls: str | Sequence[str] | None = None,
        *,
        limit: int = 1000,
    ) -> Iterator[Page]:
        """Every page of the window, following the cursors."""
        page = self.page(start_time, end_time, urls, limit=limit)
        yield page
        while page.next is not None:
            page = self.page(limit=limit, cursor=page.next)
            yield page

    # -- decoding -----------------------------------------------------------------------------------------------
    @property
    def decoder(self) -> PayloadDecoder:
        """The bag's :class:`PayloadDecoder` (built from its embedded schemas on first use)."""
        if self._decoder is None:
            self._decoder = PayloadDecoder(self.schemas())
        return self._decoder

    def message_class(self, type_name: str) -> Any:
        """The protobuf class generated from the bag's embedded descriptors for ``type_name`` (e.g. ``"demo.Pose"``),
        or None. ``bag.message_class(m.data_type).FromString(m.message)`` decodes a message."""
        return self.decoder.message_class(type_name)

    def decode(self, message: Message) -> Any:
        """The payload decoded: a protobuf message, a JSON value, or text; the bytes unchanged when the bag says
        nothing about how to decode them."""
        kind, value, _ = self.decoder.decode(message)
        return message.message if kind is None else value

    def to_dataframe(
        self,
        urls: str | Sequence[str] | None = None,
        start_time: float = 0,
        end_time: float | None = None,
        decode: bool = True,
    ) -> pd.DataFrame:
        """The messages of a window as a pandas DataFrame, one row per message.

        Columns: ``timestamp`` (µs since recording start), ``time`` (UTC datetime), ``topic``, ``action``,
        ``data_type``, ``size``; then, with ``decode=True``, the decoded payload: protobuf fields (through the bag's
        embedded FileDescriptorSet) and JSON object keys as columns, nested ones joined with ``.`` (``vel.x``), repeated
        fields as lists, enums as names; ``value`` for other JSON values, ``text`` for text payloads; and ``message``
        (bytes) for rows that do not decode, with ``decode_error`` when decoding was attempted and failed. A decoded
        field whose name clashes with one of the columns above is prefixed ``msg.``. ``decode=False`` gives the
        ``message`` bytes of every row.

        Needs pandas (``pip install 'vlink-bag[pandas]'``).
        """
        try:
            import pandas as pd
        except ImportError as error:  # pragma: no cover - exercised only without the extra
            raise ImportError("to_dataframe needs pandas: pip install 'vlink-bag[pandas]'") from error
        meta_names = ("timestamp", "time", "topic", "action", "data_type", "size")
        timestamps: list[int] = []
        absolute: list[int] = []
        topics: list[str] = []
        actions: list[str] = []
        types: list[str] = []
        sizes: list[int] = []
        payloads: list[bytes | None] = []
        errors: list[str | None] = []
        records: list[dict[str, Any]] = []
        decoder = self.decoder if decode else None
        undecoded = 0
        failed = 0
        for m in self.read_messages(start_time, end_time, urls):
            timestamps.append(m.timestamp)
            absolute.append(m.abs_timestamp)
            topics.append(m.topic)
            actions.append(m.action)
            types.append(m.data_type)
            sizes.append(len(m.message))
            if decoder is None:
                payloads.append(m.message)
                continue
            fields, why = decoder.fields(m)
            if fields is None:
                undecoded += 1
                payloads.append(m.message)
                records.append({})
                errors.append(why)
                if why is not None:
                    failed += 1
            else:
                payloads.append(None)
                errors.append(None)
                records.append({(f"msg.{k}" if k in meta_names or k in ("message", "decode_error") else k): v for k, v in fields.items()})
        frame = pd.DataFrame(
            {
                "timestamp": pd.array(timestamps, dtype="int64"),
                "time": pd.to_datetime(pd.array(absolute, dtype="int64"), unit="us", utc=True),
                "topic": topics,
                "action": actions,
                "data_type": types,
                "size": pd.array(sizes, dtype="int64"),
            }
        )
        if decoder is None:
            frame["message"] = pd.Series(payloads, dtype=object)
            return frame
        parts = [frame]
        if any(records):
            fields_frame = pd.DataFrame.from_records(records, index=frame.index)
            parts.append(fields_frame)
        if undecoded:
            extra = {"message": pd.Series(payloads, dtype=object, index=frame.index)}
            if failed:
                extra["decode_error"] = pd.Series(errors, dtype=object, index=frame.index)
            parts.append(pd.DataFrame(extra))
        return pd.concat(parts, axis=1) if len(parts) > 1 else frame

    # -- replay -------------------------------------------------------------------------------------------------
    def replay(
        self,
        rate: float = 1.0,
        urls: str | Sequence[str] | None = None,
        start_time: float = 0,
        end_time: float | None = None,
        *,
        times: int = 1,
        paused: bool = False,
        open_timeout: float | None = 10.0,
    ) -> Replay:
        """A WebSocket replay at the recording's pace × ``rate`` (0 = as fast as you read, nothing dropped), as an
        async iterator of :class:`Message` with ``pause()``, ``resume()``, ``step()``, ``seek(ms)``, ``set_rate()``,
        ``stop()``::

            async with bag.replay(rate=2.0, urls=["imu"]) as player:
                async for m in player:
                    ...

        ``start_time``/``end_time`` are µs since recording start; ``times`` passes (≤ 0 loops until stopped);
        ``paused`` starts paused (``step()`` sends one message at a time). See :class:`vlink_bag.replay.Replay`.
        """
        from .replay import Replay

        return Replay(self, rate=rate, urls=_url_list(urls), start_time=start_time, end_time=end_time, times=times, paused=paused, open_timeout=open_timeout)
