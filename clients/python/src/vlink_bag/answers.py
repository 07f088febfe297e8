"""What the client accepts as a server's answer, shared by the sync and the async client: the status and headers of a
response, and the shape of each route's JSON. Anything else is a :class:`~vlink_bag.errors.BadResponse` naming the
route and the status (never a ``KeyError``/``TypeError``/``JSONDecodeError`` from deep inside the client)."""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import urlsplit, urlunsplit

import httpx

from .errors import BadRequest, BadResponse, VlinkBagError, error_from_response

__all__ = [
    "FRAMES_CONTENT_TYPE",
    "ShapeError",
    "mask_url",
    "check_status",
    "check_frames",
    "parse_json",
    "json_kind",
    "obj",
    "objects",
    "text",
    "number",
    "info_shape",
    "schemas_shape",
    "bags_shape",
]

#: The binary frame stream's media type (``BINARY_FRAMES_CONTENT_TYPE`` of ``@vlink/bag-decode``).
FRAMES_CONTENT_TYPE = "application/vnd.vlink.frames"
#: The frame layout this client parses (the server's ``x-vlink-frame-layout`` header).
FRAME_LAYOUT = "1"


class ShapeError(ValueError):
    """A JSON answer that lacks what the API defines (turned into :class:`BadResponse` with the route)."""


def mask_url(url: str) -> str:
    """``url`` with the password of a ``user:password@`` part replaced by ``***`` (for repr, messages and ``.url``)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return url
    if parts.password is None and "@" not in parts.netloc:
        return url
    userinfo, _, hostport = parts.netloc.rpartition("@")
    user = userinfo.split(":", 1)[0]
    masked = f"{user}:***@{hostport}" if ":" in userinfo else f"{user}@{hostport}"
    return urlunsplit((parts.scheme, masked, parts.path, parts.query, parts.fragment))


def websocket_url(base_url: str, path: str) -> str:
    """The ws:// or wss:// URL of `path` on an http(s) server, whatever the case of its scheme (`HTTP://…`)."""
    scheme, _, rest = base_url.partition("://")
    ws_scheme = {"http": "ws", "https": "wss"}.get(scheme.lower())
    if ws_scheme is None:
        raise BadRequest(f"a replay needs an http:// or https:// server URL, not {mask_url(base_url)!r}", code="INVALID_ARGUMENT")
    return f"{ws_scheme}://{rest}{path}"


def scrub(text: str, secrets: Sequence[str]) -> str:
    """`text` with every secret (a token, a password of the base URL) replaced by `***`."""
    for secret in secrets:
        text = text.replace(secret, "***")
    return text


def json_kind(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, dict):
        return "an object"
    return type(value).__name__


def _where(response: httpx.Response) -> str:
    return mask_url(str(response.url))


def _describe(response: httpx.Response) -> str:
    kind = response.headers.get("content-type") or "no content-type"
    return f"{response.status_code} {response.reason_phrase or ''}".strip() + f", {kind}"


def check_status(response: httpx.Response, route: str, *, exact: int | None = None) -> None:
    """Raises the server's error for a 4xx/5xx answer (its body must have been read), and :class:`BadResponse` for
    any other answer that is not a success (``exact``: the one status the route answers with, e.g. 200 for a
    stream): a redirect names its ``Location`` (an SSO proxy whose session expired answers 302; httpx does not follow
    redirects, and a redirected request would lose its token anyway)."""
    status = response.status_code
    if status >= 400:
        raise error_from_response(status, response.content, _where(response))
    if (exact is not None and status != exact) or not 200 <= status < 300:
        location = response.headers.get("location")
        extra = f" to {mask_url(location)}" if location else ""
        hint = " (a proxy or login page in front of the server? the client does not follow redirects)" if 300 <= status < 400 else ""
        raise BadResponse(
            f"the server answered {route} with {_describe(response)}{extra} instead of the expected answer{hint}",
            status=status,
            url=_where(response),
        )


def check_frames(response: httpx.Response, route: str) -> None:
    """A binary message stream must be a 200 with the frame layout's headers (``content-type:
    application/vnd.vlink.frames``, ``x-vlink-frame-layout: 1``), so an HTML page is never parsed as frames."""
    check_status(response, route, exact=200)
    content_type = (response.headers.get("content-type") or "").split(";", 1)[0].strip().lower()
    layout = response.headers.get("x-vlink-frame-layout")
    if layout is not None and layout.strip() != FRAME_LAYOUT:
        raise BadResponse(
            f"the server answered {route} with frame layout {layout.strip()!r}; this client reads layout {FRAME_LAYOUT} (update it)",
            status=response.status_code,
            url=_where(response),
        )
    if content_type != FRAMES_CONTENT_TYPE and layout is None:
        raise BadResponse(
            f"the server answered {route} with {_describe(response)}, not a binary message stream ({FRAMES_CONTENT_TYPE})",
            status=response.status_code,
            url=_where(response),
        )


def parse_json(response: httpx.Response, route: str, parse: Callable[[Any], Any] | None = None) -> Any:
    """The JSON body of a successful answer, put through ``parse`` (which checks its shape)."""
    try:
        body = response.json()
    except ValueError:
        start = response.content[:60].decode("utf-8", "replace").strip()
        raise BadResponse(
            f"the server answered {route} with something that is not JSON ({_describe(response)}{', starting ' + repr(start) if start else ', empty'})",
            status=response.status_code,
            url=_where(response),
        ) from None
    if parse is None:
        return body
    try:
        return parse(body)
    except VlinkBagError:
        raise
    except (ShapeError, KeyError, TypeError, ValueError, AttributeError, IndexError, binascii.Error) as error:
        reason = str(error) if isinstance(error, ShapeError) else f"{type(error).__name__}: {error}"
        raise BadResponse(
            f"the server's answer to {route} is not what the API defines: {reason}",
            status=response.status_code,
            url=_where(response),
        ) from None


# -- shapes --------------------------------------------------------------------------------------------------------
def obj(value: Any, what: str = "the answer") -> dict[str, Any]:
    if not isinstance(value, dict):
        raise ShapeError(f"{what} is {json_kind(value)}, not an object")
    return value


def field(body: dict[str, Any], key: str, what: str = "the answer") -> Any:
    if key not in body:
        raise ShapeError(f"{what} has no {key!r}")
    return body[key]


def objects(value: Any, what: str) -> list[dict[str, Any]]:
    if not isinstance(value, list):
        raise ShapeError(f"{what} is {json_kind(value)}, not a list")
    for i, item in enumerate(value):
        obj(item, f"{what}[{i}]")
    return value


def text(value: Any, what: str) -> str:
    if not isinstance(value, str):
        raise ShapeError(f"{what} is {json_kind(value)}, not a string")
    return value


def number(value: Any, what: str) -> int | float:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise ShapeError(f"{what} is {json_kind(value)}, not a number")
    return value


def info_shape(body: Any) -> dict[str, Any]:
    """A bag's Info: an object with at least ``startTimestamp`` and ``totalDuration`` (numbers) and ``urls`` (objects
    with a ``url``), which every read uses."""
    info = dict(obj(body, "the info"))
    number(field(info, "startTimestamp", "the info"), "startTimestamp")
    number(field(info, "totalDuration", "the info"), "totalDuration")
    for i, meta in enumerate(objects(field(info, "urls", "the info"), "urls")):
        text(field(meta, "url", f"urls[{i}]"), f"urls[{i}].url")
    return info


def schemas_shape(body: Any) -> list[dict[str, Any]]:
    out = []
    for i, s in enumerate(objects(field(obj(body), "schemas"), "schemas")):
        data = s.get("data") or ""
        out.append({**s, "data": base64.b64decode(text(data, f"schemas[{i}].data"))})
    return out


def bags_shape(body: Any) -> list[dict[str, Any]]:
    return list(objects(field(obj(body), "bags"), "bags"))


def same_length(rows: Sequence[Any], width: int, what: str) -> None:
    for i, row in enumerate(rows):
        if not isinstance(row, list) or len(row) != width:
            raise ShapeError(f"{what}[{i}] is {json_kind(row)}{f' of {len(row)} values' if isinstance(row, list) else ''}, not a list of {width} values")
