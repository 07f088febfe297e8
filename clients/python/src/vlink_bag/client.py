"""HTTP client for a ``vlink-bag serve`` server (``@vlink/bag-server``, API ``/v1``)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

import httpx

from .errors import ConnectionFailed, VlinkBagError, error_from_response
from .remote import Page, RemoteBag

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Client", "RemoteBag", "Page", "DEFAULT_TIMEOUT", "connection_error"]

#: Seconds to connect, and to wait for each read (a stream may take as long as it needs overall).
DEFAULT_TIMEOUT = 30.0


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

    def upload(self, source: str | os.PathLike[str] | bytes, bag_id: str) -> dict[str, Any]:
        """Saves a bag on the server (``PUT /v1/bags/{id}``, needs the server's token): ``source`` is a local file
        (e.g. written with :class:`vlink_bag.Writer`) or its bytes; ``bag_id`` the path under the served root
        (``"results/run1.vcap"``). The server checks that it is a bag it reads, never overwrites (409 ``ALREADY_EXISTS``
        → :class:`Conflict`) and limits the size (413 → :class:`LimitReached`). Returns the new bag's summary
        (``id``, ``format``, ``size``, ``messageCount``)."""
        if not isinstance(bag_id, str) or not bag_id:
            raise VlinkBagError("a bag id is a non-empty string", code="INVALID_ARGUMENT")
        path = f"/v1/bags/{quote(bag_id, safe='')}"
        if isinstance(source, (bytes, bytearray, memoryview)):
            content: Any = bytes(source)
            handle = None
        else:
            handle = open(Path(source), "rb")  # streamed, not read into memory
            content = handle
        try:
            response = self._send("PUT", path, content=content, headers={"content-type": "application/octet-stream"})
        finally:
            if handle is not None:
                handle.close()
        return dict(response.json())

    def query(self, sql: str, limit: int | None = None) -> pd.DataFrame:
        """SQL over the server's lake (``POST /v1/query``; the server was started with ``--catalog``/``--export``):
        a DataFrame with TIMESTAMP columns in UTC, ``df.attrs["types"]`` (DuckDB's) and ``df.attrs["truncated"]``
        (more rows than ``limit`` — the server's default 1000 — were left out). Bad SQL raises :class:`BadRequest`
        (``QUERY_ERROR``); a server without a lake :class:`NotFound`."""
        from .lake import frame_from_answer

        return frame_from_answer(self._post_json("/v1/query", _query_body(sql, limit)))

    # -- plumbing -----------------------------------------------------------------------------------------------
    def _url(self, path: str) -> str:
        return self.base_url + path

    def _send(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        """One request: no answer is :class:`ConnectionFailed`, an error status the server's error as its exception."""
        try:
            response = self._http.request(method, path, **kwargs)
        except httpx.TransportError as error:
            raise connection_error(self._url(path), error) from error
        if response.status_code >= 400:
            raise error_from_response(response.status_code, response.content, str(response.url))
        return response

    def _request(self, path: str, params: Any = None) -> httpx.Response:
        return self._send("GET", path, params=params)

    def _post_json(self, path: str, body: Any) -> Any:
        return self._send("POST", path, json=body).json()

    def _json(self, path: str, params: Any = None) -> Any:
        response = self._request(path, params)
        try:
            return response.json()
        except ValueError as error:
            raise VlinkBagError(f"the server answered {path} with something that is not JSON", code="BAD_RESPONSE", status=response.status_code, url=str(response.url)) from error


def _query_body(sql: str, limit: int | None) -> dict[str, Any]:
    if not isinstance(sql, str) or not sql.strip():
        raise VlinkBagError("a query is a non-empty SQL string", code="INVALID_ARGUMENT")
    return {"sql": sql} if limit is None else {"sql": sql, "limit": int(limit)}


def connection_error(url: str, error: BaseException) -> ConnectionFailed:
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


