"""Exceptions raised by the client. Every one is a :class:`VlinkBagError` carrying the server's error ``code``."""

from __future__ import annotations

from typing import Any

__all__ = [
    "VlinkBagError",
    "BadRequest",
    "Unauthorized",
    "NotFound",
    "UnsupportedFormat",
    "CorruptBag",
    "Conflict",
    "TooLarge",
    "NotSupported",
    "ServerError",
    "ServerUnavailable",
    "ConnectionFailed",
    "StreamError",
    "BadResponse",
    "ReplayError",
]


class VlinkBagError(Exception):
    """Base class. ``code`` is the server's stable error code (``NOT_FOUND``, ``INVALID_ARGUMENT``, …) or one of the
    client's own (``CONNECTION_FAILED``, ``STREAM_ERROR``); ``status`` the HTTP status when there was a response;
    ``url`` the request URL."""

    default_code = "INTERNAL"

    def __init__(self, message: str, *, code: str | None = None, status: int | None = None, url: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code or self.default_code
        self.status = status
        self.url = url

    def __str__(self) -> str:
        where = f" ({self.status} {self.url})" if self.status is not None and self.url else f" ({self.url})" if self.url else ""
        return f"{self.code}: {self.message}{where}"

    def __reduce__(self) -> Any:  # keep keyword arguments when pickled (multiprocessing, joblib)
        return (_rebuild, (type(self), self.message, self.code, self.status, self.url))


def _rebuild(cls: type[VlinkBagError], message: str, code: str, status: int | None, url: str | None) -> VlinkBagError:
    return cls(message, code=code, status=status, url=url)


class BadRequest(VlinkBagError, ValueError):
    """400 ``INVALID_ARGUMENT``: a malformed parameter (the message names it), or a bad replay command; ``QUERY_ERROR``:
    SQL the lake refused or failed on (DuckDB's message)."""

    default_code = "INVALID_ARGUMENT"


class Unauthorized(VlinkBagError, PermissionError):
    """401 ``UNAUTHORIZED``: missing or wrong bearer token."""

    default_code = "UNAUTHORIZED"


class NotFound(VlinkBagError, LookupError):
    """404 ``NOT_FOUND`` (no such bag under the served root) or ``ROUTE_NOT_FOUND`` (server without that route)."""

    default_code = "NOT_FOUND"


class UnsupportedFormat(VlinkBagError):
    """415 ``UNSUPPORTED_FORMAT``: not a bag format the server reads."""

    default_code = "UNSUPPORTED_FORMAT"


class CorruptBag(VlinkBagError):
    """422 ``CORRUPT_FILE`` / ``CORRUPT_DATA`` / ``VERSION_MISMATCH``: the bag cannot be read."""

    default_code = "CORRUPT_FILE"


class Conflict(VlinkBagError):
    """409 ``SCHEMA_CONFLICT``, or ``ALREADY_EXISTS`` (an upload to an id that exists: uploads never overwrite)."""

    default_code = "SCHEMA_CONFLICT"


class TooLarge(VlinkBagError):
    """413 ``TOO_LARGE``: an upload beyond the server's limit."""

    default_code = "TOO_LARGE"


class NotSupported(VlinkBagError):
    """501 ``NOT_SUPPORTED``: the server build lacks the feature."""

    default_code = "NOT_SUPPORTED"


class ServerError(VlinkBagError):
    """5xx ``INTERNAL`` / ``IO_ERROR`` and anything else unexpected."""

    default_code = "INTERNAL"


class ServerUnavailable(ServerError):
    """503 ``CLOSED``, ``QUEUE_FULL``, ``LIMIT_REACHED``, ``DRIVER_MISSING``: try again later or fix the server."""

    default_code = "CLOSED"


class ConnectionFailed(VlinkBagError, ConnectionError):
    """No HTTP answer at all: refused, unreachable, timed out, or the connection dropped. The message names the URL."""

    default_code = "CONNECTION_FAILED"


class StreamError(VlinkBagError):
    """A message stream ended in the middle of a frame (the server aborts a stream it cannot finish), or its bytes do
    not follow the frame layout."""

    default_code = "STREAM_ERROR"


class BadResponse(VlinkBagError):
    """``BAD_RESPONSE``: an answer that is not what the API defines: not JSON, JSON of another shape, a redirect (the
    message names its ``Location``), or a message stream without the frame layout's headers. Usually a proxy, a login
    page or another web server at the URL, or a server of another version."""

    default_code = "BAD_RESPONSE"


class ReplayError(VlinkBagError):
    """An ``error`` event from the replay WebSocket that is not one of the codes above."""

    default_code = "INTERNAL"


_BY_CODE: dict[str, type[VlinkBagError]] = {
    "INVALID_ARGUMENT": BadRequest,
    "QUERY_ERROR": BadRequest,
    "UNAUTHORIZED": Unauthorized,
    "NOT_FOUND": NotFound,
    "ROUTE_NOT_FOUND": NotFound,
    "UNSUPPORTED_FORMAT": UnsupportedFormat,
    "CORRUPT_FILE": CorruptBag,
    "CORRUPT_DATA": CorruptBag,
    "VERSION_MISMATCH": CorruptBag,
    "SCHEMA_CONFLICT": Conflict,
    "ALREADY_EXISTS": Conflict,
    "TOO_LARGE": TooLarge,
    "NOT_SUPPORTED": NotSupported,
    "CLOSED": ServerUnavailable,
    "QUEUE_FULL": ServerUnavailable,
    "LIMIT_REACHED": ServerUnavailable,
    "DRIVER_MISSING": ServerUnavailable,
    "IO_ERROR": ServerError,
    "INTERNAL": ServerError,
    "BAD_RESPONSE": BadResponse,
}

_BY_STATUS: dict[int, type[VlinkBagError]] = {
    400: BadRequest,
    401: Unauthorized,
    403: Unauthorized,
    404: NotFound,
    409: Conflict,
    413: TooLarge,
    415: UnsupportedFormat,
    422: CorruptBag,
    501: NotSupported,
    503: ServerUnavailable,
}


def error_class(code: str | None, status: int | None = None) -> type[VlinkBagError]:
    """The exception class for a server code, else for an HTTP status."""
    if code and code in _BY_CODE:
        return _BY_CODE[code]
    if status is not None and status in _BY_STATUS:
        return _BY_STATUS[status]
    if status is not None and status >= 500:
        return ServerError
    return VlinkBagError


def error_from_body(body: Any, *, status: int | None, url: str | None, fallback: str = "") -> VlinkBagError:
    """Builds the exception for a ``{"error": {"code", "message"}}`` body (or anything else the server sent)."""
    code: str | None = None
    message = fallback
    if isinstance(body, dict) and isinstance(body.get("error"), dict):
        code = body["error"].get("code") if isinstance(body["error"].get("code"), str) else None
        message = str(body["error"].get("message", fallback))
    if not message:
        message = f"HTTP {status}" if status is not None else "error"
    cls = error_class(code, status)
    return cls(message, code=code or (cls.default_code if cls is not VlinkBagError else f"HTTP_{status}"), status=status, url=url)


def error_from_response(status: int, content: bytes, url: str) -> VlinkBagError:
    """Builds the exception for an HTTP error response."""
    import json

    try:
        body = json.loads(content.decode("utf-8")) if content else None
    except (UnicodeDecodeError, ValueError):
        body = None
    text = content[:200].decode("utf-8", "replace").strip() if body is None else ""
    return error_from_body(body, status=status, url=url, fallback=text)
