"""HTTP client for a ``vlink-bag serve`` server (``@vlink/bag-server``, API ``/v1``)."""

from __future__ import annotations

import operator
import os
from pathlib import Path
from typing import IO, TYPE_CHECKING, Any
from urllib.parse import quote, urlsplit, urlunsplit

import httpx

from .answers import bags_shape, check_status, mask_url, obj, parse_json
from .errors import BadRequest, ConnectionFailed, NotFound, VlinkBagError
from .remote import Page, RemoteBag

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["Client", "RemoteBag", "Page", "DEFAULT_TIMEOUT", "connection_error", "clean_token", "normalize_base_url"]

#: Seconds to connect, and to wait for each read (a stream may take as long as it needs overall).
DEFAULT_TIMEOUT = 30.0


def normalize_base_url(base_url: str) -> str:
    """``host:port`` → ``http://host:port``; the scheme in lower case (``HTTP://`` works for REST and replay alike);
    no trailing slash. Anything but http(s) is a :class:`BadRequest`."""
    if not isinstance(base_url, str) or not base_url.strip():
        raise BadRequest(f"base_url must be a non-empty string such as 'http://127.0.0.1:8765', not {type(base_url).__name__}", code="INVALID_ARGUMENT")
    url = base_url.strip()
    if "://" not in url:
        url = "http://" + url
    try:
        parts = urlsplit(url)
    except ValueError as error:
        raise BadRequest(f"base_url {mask_url(url)!r} is not a URL: {error}", code="INVALID_ARGUMENT") from None
    scheme = parts.scheme.lower()
    if scheme not in ("http", "https") or not parts.netloc:
        raise BadRequest(f"base_url must be an http:// or https:// URL, not {mask_url(url)!r}", code="INVALID_ARGUMENT")
    return urlunsplit((scheme, parts.netloc, parts.path, parts.query, parts.fragment)).rstrip("/")


def clean_token(token: str | None) -> str | None:
    """The bearer token without the surrounding whitespace a file or an environment variable brings (``open(…).read()``
    ends with a newline); None for none (None, ``""``, only whitespace). A token with whitespace, a control character
    or a non-ASCII character inside is a :class:`BadRequest` (which never shows the token)."""
    if token is None:
        return None
    if not isinstance(token, str):
        raise BadRequest(f"token must be a string, not {type(token).__name__}", code="INVALID_ARGUMENT")
    token = token.strip()
    for i, char in enumerate(token):
        if char.isspace() or not 0x21 <= ord(char) <= 0x7E:
            what = "whitespace" if char.isspace() else "a control character" if ord(char) < 0x21 or ord(char) == 0x7F else "a non-ASCII character"
            raise BadRequest(
                f"the token has {what} at position {i} of {len(token)} (the token is not shown): a bearer token is one word of printable ASCII",
                code="INVALID_ARGUMENT",
            )
    return token or None


class Client:
    """A connection to a vlink-bag server.

    >>> with Client("http://127.0.0.1:8765") as client:
    ...     for summary in client.bags():
    ...         print(summary["id"], summary["messageCount"])
    ...     bag = client.bag("drive.vdb")

    Args:
        base_url: ``http://host:port`` (a path prefix behind a reverse proxy is kept; a ``user:password@`` part is
            masked in ``repr``, messages and the errors' ``url``).
        token: the server's bearer token (``vlink-bag serve --token``), if it has one (None or ``""``: none).
            Surrounding whitespace (the newline of a token file) is stripped; whitespace or control characters inside
            are a :class:`BadRequest`. The token never appears in ``repr`` or in an error message.
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
        self.base_url = normalize_base_url(base_url)
        #: The base URL as shown in repr, messages and errors (a password replaced by ``***``).
        self.display_url = mask_url(self.base_url)
        self.token = clean_token(token)
        self.timeout = timeout
        all_headers = {"user-agent": f"vlink-bag-python/{_version()}"}
        if headers:
            all_headers.update(headers)
        if self.token:  # "" (e.g. an unset environment variable) means no token
            all_headers["authorization"] = f"Bearer {self.token}"
        self._headers = all_headers
        password = urlsplit(self.base_url).password
        self._secrets = tuple(secret for secret in (self.token, password) if secret)
        self._http = httpx.Client(base_url=self.base_url, headers=all_headers, timeout=timeout, transport=transport)

    # -- lifecycle ----------------------------------------------------------------------------------------------
    def close(self) -> None:
        self._http.close()

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Client({self.display_url!r}{', token=***' if self.token else ''})"

    # -- API ----------------------------------------------------------------------------------------------------
    def health(self) -> dict[str, Any]:
        """``{"ok": True, "version": …}``. Needs no token."""
        return self._json("/v1/health", parse=_object)

    def bags(self) -> list[dict[str, Any]]:
        """Every bag under the served root: ``id``, ``format``, ``size``, ``modified``, ``messageCount`` (None and an
        ``error`` {code, message} for a bag that does not open)."""
        return self._json("/v1/bags", parse=bags_shape)

    def bag(self, bag_id: str) -> RemoteBag:
        """Opens a bag by id (its path relative to the served root, e.g. ``"runs/drive.vcap"``). Fetches its info, so a
        missing or unreadable bag raises here (:class:`NotFound`, :class:`CorruptBag`, …)."""
        bag = RemoteBag(self, bag_id)
        bag.info()
        return bag

    def openapi(self) -> dict[str, Any]:
        """The server's OpenAPI 3.1 document."""
        return self._json("/v1/openapi.json", parse=_object)

    def upload(self, source: str | os.PathLike[str] | bytes, bag_id: str) -> dict[str, Any]:
        """Saves a bag on the server (``PUT /v1/bags/{id}``, needs the server's token): ``source`` is a local file
        (e.g. written with :class:`vlink_bag.Writer`) or its bytes; ``bag_id`` the path under the served root
        (``"results/run1.vcap"``). The server checks that it is a bag it reads, never overwrites (409 ``ALREADY_EXISTS``
        → :class:`Conflict`) and limits the size (413 → :class:`TooLarge`). Returns the new bag's summary
        (``id``, ``format``, ``size``, ``messageCount``)."""
        path = upload_path(bag_id)
        if isinstance(source, (bytes, bytearray, memoryview)):
            content: Any = bytes(source)
            handle = None
        else:
            handle = open_upload(source)  # streamed, not read into memory
            content = handle
        try:
            response = self._send("PUT", path, content=content, headers={"content-type": "application/octet-stream"})
        finally:
            if handle is not None:
                handle.close()
        return parse_json(response, path, _object)

    def query(self, sql: str, limit: int | None = None) -> pd.DataFrame:
        """SQL over the server's lake (``POST /v1/query``; the server was started with ``--catalog``/``--export``):
        a DataFrame with the values and dtypes :func:`vlink_bag.query` gives locally (converted by the DuckDB types
        of the answer, in ``df.attrs["types"]``; TIMESTAMP columns in UTC) and ``df.attrs["truncated"]`` (more rows
        than ``limit`` — the server's default 1000 — were left out). Bad SQL raises :class:`BadRequest`
        (``QUERY_ERROR``); a server without a lake :class:`NotFound`."""
        from .lake import frame_from_answer

        return self._post_json("/v1/query", _query_body(sql, limit), frame_from_answer)

    # -- plumbing -----------------------------------------------------------------------------------------------
    def _url(self, path: str) -> str:
        """The URL of ``path`` as messages show it (credentials masked)."""
        return self.display_url + path

    def _transport_error(self, path: str, error: httpx.TransportError) -> VlinkBagError:
        return connection_error(self._url(path), error, secrets=self._secrets)

    def _send(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        """One request: no answer is :class:`ConnectionFailed`, an error status the server's error as its exception,
        any other status but a success (a redirect) :class:`BadResponse`."""
        try:
            response = self._http.request(method, path, **kwargs)
        except httpx.TransportError as error:
            raise self._transport_error(path, error) from error
        check_status(response, path)
        return response

    def _request(self, path: str, params: Any = None) -> httpx.Response:
        return self._send("GET", path, params=params)

    def _post_json(self, path: str, body: Any, parse: Any = None) -> Any:
        return parse_json(self._send("POST", path, json=body), path, parse)

    def _json(self, path: str, params: Any = None, parse: Any = None) -> Any:
        """``GET path`` as JSON, put through ``parse`` (a shape check: anything else is :class:`BadResponse`)."""
        return parse_json(self._request(path, params), path, parse)


def _object(body: Any) -> dict[str, Any]:
    return dict(obj(body))


def upload_path(bag_id: str) -> str:
    if not isinstance(bag_id, str) or not bag_id:
        raise BadRequest("a bag id is a non-empty string", code="INVALID_ARGUMENT")
    return f"/v1/bags/{quote(bag_id, safe='')}"


def open_upload(source: str | os.PathLike[str]) -> IO[bytes]:
    """The file to upload, opened for reading: a missing file is :class:`NotFound`, others :class:`VlinkBagError`."""
    path = Path(source)
    try:
        return open(path, "rb")
    except FileNotFoundError:
        raise NotFound(f"no such file to upload: {path}", url=str(path)) from None
    except OSError as error:
        raise VlinkBagError(f"cannot read {path} to upload it: {error.strerror or error}", code="IO_ERROR", url=str(path)) from None


def _query_body(sql: str, limit: int | None) -> dict[str, Any]:
    if not isinstance(sql, str) or not sql.strip():
        raise BadRequest("a query is a non-empty SQL string", code="INVALID_ARGUMENT")
    if limit is None:
        return {"sql": sql}
    try:
        rows = operator.index(limit) if not isinstance(limit, bool) else -1
    except TypeError:
        rows = -1
    if rows < 0:
        raise BadRequest(f"limit must be an integer ≥ 0, not {limit!r}", code="INVALID_ARGUMENT")
    return {"sql": sql, "limit": rows}


def connection_error(url: str, error: BaseException, *, secrets: tuple[str, ...] = ()) -> VlinkBagError:
    """The exception for a request that got no answer: :class:`ConnectionFailed` naming the URL and why (the reason
    with ``secrets``, the token and password, replaced by ``***``); a request httpx refused to send (an illegal header
    value) is a :class:`BadRequest`."""
    reason = str(error) or type(error).__name__
    for secret in secrets:
        reason = reason.replace(secret, "***")
    if isinstance(error, httpx.LocalProtocolError):
        return BadRequest(f"the request to {url} could not be sent: {reason}", code="INVALID_ARGUMENT", url=url)
    if isinstance(error, httpx.TimeoutException):
        what = "timed out"
    elif isinstance(error, httpx.ConnectError):
        what = "cannot connect"
    elif isinstance(error, httpx.RemoteProtocolError):
        what = "the connection broke"
    else:
        what = "connection failed"
    return ConnectionFailed(f"{what} to {url}: {reason}", url=url)


def _version() -> str:
    from . import __version__

    return __version__
