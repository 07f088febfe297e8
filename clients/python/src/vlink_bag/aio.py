"""The client for asyncio programs: :class:`AsyncClient` and :class:`AsyncRemoteBag` offer every route of the sync
client as coroutines (``await bag.info()``, ``async for m in bag.read_messages()``, ``await bag.to_dataframe()``),
over ``httpx.AsyncClient``. Parameters, times and results are those of :class:`~vlink_bag.Client`."""

from __future__ import annotations

import base64
import os
from collections.abc import AsyncIterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import httpx

from .bagbase import check_time_base, url_list
from .client import DEFAULT_TIMEOUT, _query_body, connection_error
from .dataframe import build_dataframe
from .decode import PayloadDecoder
from .errors import BadRequest, StreamError, VlinkBagError, error_from_response
from .frames import Message, iter_frames
from .remote import Page, RemoteBag

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["AsyncClient", "AsyncRemoteBag"]


class AsyncClient:
    """``async with AsyncClient(url, token) as client: bag = await client.bag("drive.vdb")``."""

    def __init__(self, base_url: str, token: str | None = None, timeout: float | httpx.Timeout | None = DEFAULT_TIMEOUT, *, headers: dict[str, str] | None = None, transport: httpx.AsyncBaseTransport | None = None) -> None:
        from .client import Client

        # The sync client's header and URL rules, without opening its connection pool.
        template = Client(base_url, token, timeout, headers=headers, transport=httpx.MockTransport(lambda r: httpx.Response(500)))
        template.close()
        self.base_url = template.base_url
        self.token = token
        self._headers = template._headers
        self._http = httpx.AsyncClient(base_url=self.base_url, headers=self._headers, timeout=timeout, transport=transport)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def _url(self, path: str) -> str:
        return self.base_url + path

    async def _json(self, path: str, params: Any = None) -> Any:
        try:
            response = await self._http.get(path, params=params)
        except httpx.TransportError as error:
            raise connection_error(self._url(path), error) from error
        if response.status_code >= 400:
            raise error_from_response(response.status_code, response.content, str(response.url))
        try:
            return response.json()
        except ValueError as error:
            raise VlinkBagError(f"the server answered {path} with something that is not JSON", code="BAD_RESPONSE", status=response.status_code) from error

    async def query(self, sql: str, limit: int | None = None) -> pd.DataFrame:
        """As :meth:`Client.query`: SQL over the server's lake, as a DataFrame."""
        from .lake import frame_from_answer

        body = _query_body(sql, limit)
        try:
            response = await self._http.post("/v1/query", json=body)
        except httpx.TransportError as error:
            raise connection_error(self._url("/v1/query"), error) from error
        if response.status_code >= 400:
            raise error_from_response(response.status_code, response.content, str(response.url))
        return frame_from_answer(response.json())

    async def health(self) -> dict[str, Any]:
        return dict(await self._json("/v1/health"))

    async def bags(self) -> list[dict[str, Any]]:
        return list((await self._json("/v1/bags"))["bags"])

    async def openapi(self) -> dict[str, Any]:
        return dict(await self._json("/v1/openapi.json"))

    async def bag(self, bag_id: str) -> AsyncRemoteBag:
        bag = AsyncRemoteBag(self, bag_id)
        await bag.info()
        return bag

    async def upload(self, source: str | os.PathLike[str] | bytes, bag_id: str) -> dict[str, Any]:
        """``PUT /v1/bags/{id}``: see :meth:`vlink_bag.Client.upload`."""
        path = f"/v1/bags/{quote(bag_id, safe='')}"
        content = bytes(source) if isinstance(source, (bytes, bytearray, memoryview)) else Path(source).read_bytes()
        try:
            response = await self._http.put(path, content=content, headers={"content-type": "application/octet-stream"})
        except httpx.TransportError as error:
            raise connection_error(self._url(path), error) from error
        if response.status_code >= 400:
            raise error_from_response(response.status_code, response.content, str(response.url))
        return dict(response.json())


class AsyncRemoteBag(RemoteBag):
    """A bag on the server for asyncio code. The Apollo getters (``get_channellist()`` …) and ``window_us()`` are
    plain methods working on the info fetched by ``await bag.info()`` (done by ``AsyncClient.bag``)."""

    client: AsyncClient  # type: ignore[assignment]

    def __init__(self, client: AsyncClient, bag_id: str) -> None:
        super().__init__(client, bag_id)  # type: ignore[arg-type]

    async def info(self) -> dict[str, Any]:  # type: ignore[override]
        info = dict(await self.client._json(self._path + "/info"))
        self._info = info
        return info

    def _cached_info(self) -> dict[str, Any]:
        if self._info is None:
            raise VlinkBagError("call `await bag.info()` first", code="INVALID_ARGUMENT")
        return self._info

    async def schemas(self) -> list[dict[str, Any]]:  # type: ignore[override]
        if self._schemas is None:
            raw = (await self.client._json(self._path + "/schemas"))["schemas"]
            self._schemas = [{**s, "data": base64.b64decode(s.get("data") or "")} for s in raw]
        return self._schemas

    async def get_decoder(self) -> PayloadDecoder:
        if self._decoder is None:
            self._decoder = PayloadDecoder(await self.schemas(), (await self.info()).get("urls") or [])
        return self._decoder

    async def timing(self, factor: float | None = None, urls: str | Sequence[str] | None = None) -> list[dict[str, Any]]:  # type: ignore[override]
        params = [("factor", repr(float(factor)))] if factor is not None else []
        if factor is not None and not factor > 0:
            raise BadRequest(f"factor must be a positive number, not {factor!r}", code="INVALID_ARGUMENT")
        url_params, local = self._url_params(urls)
        body = await self.client._json(self._path + "/timing", params + url_params or None)
        results = list(body["urls"])
        return results if local is None else [r for r in results if r.get("url") in set(local)]

    async def density(self, buckets: int = 100, start_time: Any = 0, end_time: Any = None, urls: str | Sequence[str] | None = None, **window: Any) -> dict[str, Any]:  # type: ignore[override]
        from .remote import ms_text

        begin, end = self.window_us(start_time, end_time, **window)
        params = [("buckets", str(buckets))] + ([("begin", ms_text(begin))] if begin else []) + ([("end", ms_text(max(end, 0)))] if end is not None else [])
        url_params, _ = self._url_params(urls)
        return dict(await self.client._json(self._path + "/density", params + url_params))

    async def read_messages(self, start_time: Any = 0, end_time: Any = None, urls: str | Sequence[str] | None = None, **window: Any) -> AsyncIterator[Message]:  # type: ignore[override]
        """``async for m in bag.read_messages(...)``: the binary stream, parsed as it arrives (``time_base="publish"``:
        the window applies to publish times)."""
        publish = check_time_base(window.pop("time_base", "log"))
        begin, end = self.window_us(start_time, end_time, **window)
        wanted = url_list(urls)
        if (wanted is not None and not wanted) or (end is not None and end < begin):
            self._warn_empty(begin, end)
            return
        url_params, local = self._url_params(wanted)
        params = self._window_params(begin, end) + url_params + [("format", "binary")] + ([("timeBase", "publish")] if publish else [])
        path = self._path + "/messages"
        keep = None if local is None else frozenset(local)
        start_us = self.start_timestamp_us
        seen = False
        try:
            async with self.client._http.stream("GET", path, params=httpx.QueryParams(tuple(params))) as response:
                if response.status_code >= 400:
                    await response.aread()
                    raise error_from_response(response.status_code, response.content, str(response.url))
                pending: list[bytes] = []
                async for chunk in response.aiter_bytes():
                    pending.append(chunk)
                    # Parse every complete frame received so far; keep the incomplete tail.
                    data = b"".join(pending)
                    cut = _complete_prefix(data)
                    pending = [data[cut:]] if cut < len(data) else []
                    for m in iter_frames((data[:cut],), start_us, source=self.client._url(path)):
                        if keep is None or m.topic in keep:
                            seen = True
                            yield m
                if pending and pending[0]:
                    raise StreamError("the server ended the message stream inside a frame", url=self.client._url(path))
        except httpx.TransportError as error:
            raise connection_error(self.client._url(path), error) from error
        if not seen:
            self._warn_empty(begin, end)

    async def page(self, start_time: Any = 0, end_time: Any = None, urls: str | Sequence[str] | None = None, *, limit: int = 1000, cursor: str | None = None, **window: Any) -> Page:  # type: ignore[override]
        from .frames import data_type_for
        from .remote import _ACTION_VALUES

        params: list[tuple[str, str]] = []
        if cursor is None:
            begin, end = self.window_us(start_time, end_time, **window)
            params = self._window_params(begin, end) + [("urls", u) for u in url_list(urls) or ()]
        params += [("limit", str(limit)), ("format", "json")] + ([("cursor", cursor)] if cursor else [])
        body = await self.client._json(self._path + "/messages", params)
        start_us = self.start_timestamp_us
        return Page(
            [
                Message(m["url"], base64.b64decode(m.get("data") or ""), data_type_for(m.get("serType", ""), _ACTION_VALUES.get(m.get("action", ""), 0)), int(m["timestamp"]), start_us + int(m["timestamp"]), m.get("action", "Unknown"), int(m.get("schemaType", 0)), int(m["publishTime"]) if m.get("publishTime") is not None else None)
                for m in body["messages"]
            ],
            body.get("next"),
        )

    async def to_dataframe(self, urls: str | Sequence[str] | None = None, start_time: Any = 0, end_time: Any = None, decode: bool = True, **window: Any) -> pd.DataFrame:  # type: ignore[override]
        decoder = await self.get_decoder() if decode else None
        rows = [m async for m in self.read_messages(start_time, end_time, urls, **window)]
        return build_dataframe(rows, decoder, self.timezone, self.start_timestamp_us)


def _complete_prefix(data: bytes) -> int:
    """Bytes of ``data`` that hold whole frames (8-byte head: header length, payload length)."""
    pos = 0
    n = len(data)
    while pos + 8 <= n:
        end = pos + 8 + int.from_bytes(data[pos : pos + 4], "little") + int.from_bytes(data[pos + 4 : pos + 8], "little")
        if end > n:
            break
        pos = end
    return pos
