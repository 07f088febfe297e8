"""Opening a replay's WebSocket, every failure as the client's own error (no token or password in it)."""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

from .answers import scrub
from .errors import BadRequest, ConnectionFailed, error_from_response


async def open_websocket(
    url: str, shown_url: str, headers: dict[str, str], open_timeout: float | None, secrets: Sequence[str], max_size: int
) -> Any:
    """Connects to `url` (`shown_url` is what messages show of it: a password masked)."""
    from websockets.asyncio.client import connect
    from websockets.exceptions import InvalidHandshake, InvalidStatus, InvalidURI

    try:
        return await connect(
            url,
            additional_headers=headers,
            max_size=max_size,
            compression=None,
            open_timeout=open_timeout,
            ping_interval=None,
            user_agent_header=None,
        )
    except InvalidStatus as error:
        response = error.response
        raise error_from_response(response.status_code, bytes(response.body or b""), shown_url) from error
    except InvalidURI:
        raise BadRequest(f"{shown_url} is not a WebSocket URL websockets accepts", code="INVALID_ARGUMENT", url=shown_url) from None
    except InvalidHandshake as error:
        raise ConnectionFailed(f"WebSocket handshake with {shown_url} failed: {scrub(str(error), secrets)}", url=shown_url) from error
    except (OSError, asyncio.TimeoutError) as error:
        reason = scrub(str(error), secrets) or type(error).__name__
        raise ConnectionFailed(f"cannot connect to {shown_url}: {reason}", url=shown_url) from error
