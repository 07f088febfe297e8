"""The client for asyncio programs: :class:`AsyncClient` and :class:`AsyncRemoteBag` offer every route of the sync
client as coroutines (``await bag.info()``, ``async for m in bag.read_messages()``, ``await bag.to_dataframe()``),
over ``httpx.AsyncClient``. Parameters, times, results and errors are those of :class:`~vlink_bag.Client`: both
build the same requests and check the same answers."""

from __future__ import annotations

import asyncio
import os
from collections.abc import AsyncIterator, Sequence
from typing import IO, TYPE_CHECKING, Any

import httpx

from .answers import bags_shape, check_frames, check_status, info_shape, parse_json, schemas_shape
from .bagbase import check_time_base, url_list
from .client import DEFAULT_TIMEOUT, _object, _query_body, connection_error, open_upload, upload_path
from .dataframe import build_dataframe
from .decode import PayloadDecoder
from .errors import StreamError, VlinkBagError
from .frames import Message, iter_frames
from .remote import Page, RemoteBag

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["AsyncClient", "AsyncRemoteBag"]

#: Bytes read from a file per chunk of an upload.
UPLOAD_CHUNK = 1024 * 1024


class AsyncClient:
    """``async with AsyncClient(url, token) as client: bag = await client.bag("drive.vdb")``."""

    def __init__(self, base_url: str, token: str | None = None, timeout: float | httpx.Timeout | None = DEFAULT_TIMEOUT, *, headers: dict[str, str] | None = None, transport: httpx.AsyncBaseTransport | None = None) -> None:
        from .client import Client

        # The sync client's header, token and URL rules, without opening its connection pool.
        template = Client(base_url, token, timeout, headers=headers, transport=httpx.MockTransport(lambda r: httpx.Response(500)))
        template.close()
        self.base_url = template.base_url
        self.display_url = template.display_url
        self.token = template.token
        self.timeout = timeout
        self._headers = template._headers
        self._secrets = template._secrets
        self._http = httpx.AsyncClient(base_url=self.base_url, headers=self._headers, timeout=timeout, transport=transport)

    async def aclose(self) -> None:
        await self._http.aclose()

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def __repr__(self) -> str:
        return f"AsyncClient({self.display_url!r}{', token=***' if self.token else ''})"

    def _url(self, path: str) -> str:
        return self.display_url + path

    def _transport_error(self, path: str, error: httpx.TransportError) -> VlinkBagError:
        return connection_error(self._url(path), error, secrets=self._secrets)

    async def _send(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        try:
            response = await self._http.request(method, path, **kwargs)
        except httpx.TransportError as error:
            raise self._transport_error(path, error) from error
        check_status(response, path)
        return response

    async def _json(self, path: str, params: Any = None, parse: Any = None) -> Any:
        return parse_json(await self._send("GET", path, params=params), path, parse)

    async def query(self, sql: str, limit: int | None = None) -> pd.DataFrame:
        """As :meth:`Client.query`: SQL over the server's lake, as a DataFrame."""
        from .lake import frame_from_answer

        response = await self._send("POST", "/v1/query", json=_query_body(sql, limit))
        return parse_json(response, "/v1/query", frame_from_answer)

    async def health(self) -> dict[str, Any]:
        return await self._json("/v1/health", parse=_object)

    async def bags(self) -> list[dict[str, Any]]:
        return await self._json("/v1/bags", parse=bags_shape)

    async def openapi(self) -> dict[str, Any]:
        return await self._json("/v1/openapi.json", parse=_object)

    async def bag(self, bag_id: str) -> AsyncRemoteBag:
        bag = AsyncRemoteBag(self, bag_id)
        await bag.info()
        return bag

    async def upload(self, source: str | os.PathLike[str] | bytes, bag_id: str) -> dict[str, Any]:
        """``PUT /v1/bags/{id}``: see :meth:`vlink_bag.Client.upload`. A file is streamed in chunks of
        :data:`UPLOAD_CHUNK` bytes (read in a worker thread), never held in memory whole."""
        path = upload_path(bag_id)
        headers = {"content-type": "application/octet-stream"}
        if isinstance(source, (bytes, bytearray, memoryview)):
            response = await self._send("PUT", path, content=bytes(source), headers=headers)
            return parse_json(response, path, _object)
        handle = open_upload(source)
        try:
            headers["content-length"] = str(os.fstat(handle.fileno()).st_size)
            response = await self._send("PUT", path, content=_file_chunks(handle), headers=headers)
        finally:
            handle.close()
        return parse_json(response, path, _object)


async def _file_chunks(handle: IO[bytes]) -> AsyncIterator[bytes]:
    while True:
        chunk = await asyncio.to_thread(handle.read, UPLOAD_CHUNK)
        if not chunk:
            return
        yield chunk


class AsyncRemoteBag(RemoteBag):
    """A bag on the server for asyncio code. The Apollo getters (``get_channellist()`` …) and ``window_us()`` are
    plain methods working on the info fetched by ``await bag.info()`` (done by ``AsyncClient.bag``)."""

    client: AsyncClient  # type: ignore[assignment]

    def __init__(self, client: AsyncClient, bag_id: str) -> None:
        super().__init__(client, bag_id)  # type: ignore[arg-type]

    async def info(self) -> dict[str, Any]:  # type: ignore[override]
        info = await self.client._json(self._path + "/info", parse=info_shape)
        self._info = info
        return info

    def _cached_info(self) -> dict[str, Any]:
        if self._info is None:
            raise VlinkBagError("call `await bag.info()` first", code="INVALID_ARGUMENT")
        return self._info

    async def schemas(self) -> list[dict[str, Any]]:  # type: ignore[override]
        if self._schemas is None:
            self._schemas = await self.client._json(self._path + "/schemas", parse=schemas_shape)
        return self._schemas

    async def get_decoder(self) -> PayloadDecoder:
        if self._decoder is None:
            self._decoder = PayloadDecoder(await self.schemas(), (await self.info()).get("urls") or [])
        return self._decoder

    async def timing(self, factor: float | None = None, urls: str | Sequence[str] | None = None) -> list[dict[str, Any]]:  # type: ignore[override]
        return await self.client._json(*self._timing_request(factor, urls))

    async def density(self, buckets: int = 100, start_time: Any = 0, end_time: Any = None, urls: str | Sequence[str] | None = None, **window: Any) -> dict[str, Any]:  # type: ignore[override]
        return await self.client._json(*self._density_request(buckets, start_time, end_time, urls, window))

    async def read_messages(self, start_time: Any = 0, end_time: Any = None, urls: str | Sequence[str] | None = None, **window: Any) -> AsyncIterator[Message]:  # type: ignore[override]
        """``async for m in bag.read_messages(...)``: the binary stream, parsed as it arrives (``time_base="publish"``:
        the window applies to publish times). Memory and work stay linear in the stream: a message spread over many
        chunks is joined once, when its last byte has come."""
        publish = check_time_base(window.pop("time_base", "log"))
        begin, end = self.window_us(start_time, end_time, **window)
        wanted = url_list(urls)
        if (wanted is not None and not wanted) or (end is not None and end < begin):
            self._warn_empty(begin, end)
            return
        url_params, local = self._url_params(wanted)
        params = self._window_params(begin, end) + url_params + [("format", "binary")] + ([("timeBase", "publish")] if publish else [])
        path = self._path + "/messages"
        url = self.client._url(path)
        keep = None if local is None else frozenset(local)
        start_us = self.start_timestamp_us
        seen = False
        try:
            async with self.client._http.stream("GET", path, params=httpx.QueryParams(tuple(params))) as response:
                if response.status_code != 200:
                    await response.aread()
                check_frames(response, path)
                # Chunks are kept as they come until the frame being received is complete (`need` bytes, once its
                # head is known): then its chunks go to the frame parser (which joins a big payload from them in one
                # copy), the whole frames that follow in the last chunk are parsed from it, and the tail is kept.
                parts: list[bytes] = []
                have = 0
                need = 8
                sized = False  # whether `need` is the size of the frame at parts[0] (else: its 8-byte head)
                chunks = response.aiter_bytes()
                while True:
                    try:
                        chunk = await chunks.__anext__()
                    except StopAsyncIteration:
                        break
                    except httpx.RemoteProtocolError as error:
                        raise StreamError(f"the server ended the message stream early ({error})", url=url) from error
                    if not chunk:
                        continue
                    parts.append(chunk)
                    have += len(chunk)
                    if have < need:
                        continue
                    if len(parts) > 1 and sized:
                        # The frame ends inside the last chunk (it was incomplete before that chunk came).
                        last = parts[-1]
                        split = len(last) - (have - need)
                        for m in iter_frames([*parts[:-1], last[:split]], start_us, source=url):
                            if keep is None or m.topic in keep:
                                seen = True
                                yield m
                        data = last[split:]
                    else:
                        data = parts[0] if len(parts) == 1 else b"".join(parts)  # one chunk, or a head split over two
                    cut = _complete_prefix(data)
                    if cut:
                        for m in iter_frames((data[:cut],), start_us, source=url):
                            if keep is None or m.topic in keep:
                                seen = True
                                yield m
                    tail = data[cut:]
                    parts = [tail] if tail else []
                    have = len(tail)
                    sized = have >= 8
                    need = _frame_size(tail) if sized else 8
                if have:
                    raise StreamError(f"the stream ended inside a frame ({have} of {need} bytes)", url=url)
        except httpx.TransportError as error:
            raise self.client._transport_error(path, error) from error
        if not seen:
            self._warn_empty(begin, end)

    async def page(self, start_time: Any = 0, end_time: Any = None, urls: str | Sequence[str] | None = None, *, limit: int = 1000, cursor: str | None = None, **window: Any) -> Page:  # type: ignore[override]
        """As :meth:`RemoteBag.page`."""
        request = self._page_request(start_time, end_time, urls, limit, cursor, window)
        return request if isinstance(request, Page) else await self.client._json(*request)

    async def iter_pages(self, start_time: Any = 0, end_time: Any = None, urls: str | Sequence[str] | None = None, *, limit: int = 1000, **window: Any) -> AsyncIterator[Page]:  # type: ignore[override]
        """``async for page in bag.iter_pages(...)``: every page of the window, following the cursors."""
        page = await self.page(start_time, end_time, urls, limit=limit, **window)
        yield page
        while page.next is not None:
            page = await self.page(limit=limit, cursor=page.next)
            yield page

    async def to_dataframe(self, urls: str | Sequence[str] | None = None, start_time: Any = 0, end_time: Any = None, decode: bool = True, **window: Any) -> pd.DataFrame:  # type: ignore[override]
        decoder = await self.get_decoder() if decode else None
        rows = [m async for m in self.read_messages(start_time, end_time, urls, **window)]
        return build_dataframe(rows, decoder, self.timezone, self.start_timestamp_us)


def _frame_size(data: bytes) -> int:
    """The size of the frame that starts ``data`` (8-byte head: header length, payload length)."""
    return 8 + int.from_bytes(data[0:4], "little") + int.from_bytes(data[4:8], "little")


def _complete_prefix(data: bytes) -> int:
    """Bytes of ``data`` that hold whole frames."""
    pos = 0
    n = len(data)
    while pos + 8 <= n:
        end = pos + _frame_size(data[pos : pos + 8])
        if end > n:
            break
        pos = end
    return pos
