"""WebSocket replay (``WS /v1/bags/{id}/replay``) as an async iterator with VLink's controls."""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any

from .errors import BadRequest, ConnectionFailed, ReplayError, VlinkBagError, error_class, error_from_response
from .frames import Message, parse_frame

if TYPE_CHECKING:  # pragma: no cover
    from .client import RemoteBag

__all__ = ["Replay"]

# A replay frame is one WebSocket message: allow the biggest payloads a bag may hold.
MAX_MESSAGE_BYTES = 2**31


def _ms(us: float | None) -> float | None:
    return None if us is None else us / 1000.0


class Replay:
    """A replay session on its own WebSocket. Iterate it (``async for m in replay``) to receive the messages at the
    replay's pace; the iteration ends when the replay finishes (the end of the window after ``times`` passes, or
    ``stop()``). Frames the server had already sent before a ``seek`` are skipped, so the next message is from the
    new position.

    Control methods send a command and return at once: ``pause()``, ``resume()``, ``step()`` (one message while
    paused, VLink ``pause_to_next``), ``seek(ms)`` (ms since recording start, VLink ``jump``; keeps pause and rate),
    ``set_rate(rate)``, ``stop()``, and ``play(...)`` to start over with other settings. A command the server refuses
    (e.g. ``step()`` while playing) raises :class:`BadRequest` from the iteration.

    Attributes:
        status: the last status event: ``{"status": "playing"|"paused"|"stopped", "time": ms, "rate", "dropped"}``.
        finished: the ``finished`` event that ended the iteration (``{"interrupted": bool, "dropped": int}``), or None.
        dropped: frames the server skipped because this client read too slowly (paced replays only; rate 0 never
            drops).
    """

    def __init__(
        self,
        bag: RemoteBag,
        *,
        rate: float = 1.0,
        urls: list[str] | None = None,
        start_time: float = 0,
        end_time: float | None = None,
        times: int = 1,
        paused: bool = False,
        open_timeout: float | None = 10.0,
    ) -> None:
        self.bag = bag
        self.url = bag.client.base_url.replace("http://", "ws://", 1).replace("https://", "wss://", 1) + bag._path + "/replay"
        self._settings: dict[str, Any] = {"rate": rate, "urls": urls, "start_time": start_time, "end_time": end_time, "times": times, "paused": paused}
        self._open_timeout = open_timeout
        self._ws: Any = None
        self._start_us = 0
        self._active = False  # a play is running (its `finished` event has not arrived)
        self._swallow_finished = 0  # `finished` events of plays replaced by play(): not the end of the iteration
        self._skipping = False  # after a seek: drop frames until the server's status for the new position
        self._closed = False
        self.status: dict[str, Any] | None = None
        self.finished: dict[str, Any] | None = None

    @property
    def dropped(self) -> int:
        event = self.finished or self.status or {}
        return int(event.get("dropped", 0))

    # -- connection ---------------------------------------------------------------------------------------------
    async def connect(self) -> Replay:
        """Opens the WebSocket and starts the replay with the settings given to ``RemoteBag.replay`` (iterating or
        ``async with`` do this for you)."""
        if self._ws is not None:
            return self
        if self._closed:
            raise VlinkBagError("this replay is closed", code="CLOSED", url=self.url)
        from websockets.asyncio.client import connect
        from websockets.exceptions import InvalidHandshake, InvalidStatus

        self._start_us = self.bag.start_timestamp_us
        headers = {k: v for k, v in self.bag.client._headers.items() if k.lower() in ("authorization", "user-agent")}
        try:
            self._ws = await connect(
                self.url,
                additional_headers=headers,
                max_size=MAX_MESSAGE_BYTES,
                compression=None,
                open_timeout=self._open_timeout,
                ping_interval=None,
                user_agent_header=None,
            )
        except InvalidStatus as error:
            response = error.response
            raise error_from_response(response.status_code, bytes(response.body or b""), self.url) from error
        except InvalidHandshake as error:
            raise ConnectionFailed(f"WebSocket handshake with {self.url} failed: {error}", url=self.url) from error
        except (OSError, asyncio.TimeoutError) as error:
            raise ConnectionFailed(f"cannot connect to {self.url}: {error or type(error).__name__}", url=self.url) from error
        s = self._settings
        await self.play(rate=s["rate"], urls=s["urls"], start_time=s["start_time"], end_time=s["end_time"], times=s["times"], paused=s["paused"])
        return self

    async def close(self) -> None:
        """Closes the WebSocket (the server ends the session)."""
        self._closed = True
        ws, self._ws = self._ws, None
        if ws is not None:
            await ws.close()

    async def __aenter__(self) -> Replay:
        return await self.connect()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- controls -----------------------------------------------------------------------------------------------
    async def _send(self, command: dict[str, Any]) -> None:
        if self._ws is None:
            await self.connect()
        from websockets.exceptions import ConnectionClosed

        try:
            await self._ws.send(json.dumps(command))
        except ConnectionClosed as error:
            raise ConnectionFailed(f"the replay connection to {self.url} is closed ({error})", url=self.url) from error

    async def play(
        self,
        rate: float = 1.0,
        urls: list[str] | None = None,
        start_time: float = 0,
        end_time: float | None = None,
        times: int = 1,
        paused: bool = False,
    ) -> None:
        """Starts (or restarts) the replay: ``rate`` (0 = as fast as you read), ``urls`` (None = all),
        ``start_time``/``end_time`` in µs since recording start, ``times`` passes (≤ 0 = loop until stopped),
        ``paused``."""
        if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0 <= rate <= 10_000:
            raise BadRequest(f"rate must be in [0, 10000], not {rate!r}", code="INVALID_ARGUMENT")
        if start_time is None or start_time < 0 or (end_time is not None and end_time < start_time):
            raise BadRequest(f"bad window [{start_time}, {end_time}] (µs since recording start)", code="INVALID_ARGUMENT")
        command: dict[str, Any] = {"op": "play", "rate": float(rate), "begin": _ms(start_time), "times": int(times), "paused": bool(paused)}
        if end_time is not None and end_time < 2**53:
            command["end"] = _ms(end_time)
        if urls is not None:
            command["urls"] = [urls] if isinstance(urls, str) else list(urls)
        if self._active:
            self._swallow_finished += 1
        self._active = True
        self.finished = None
        self._skipping = False
        await self._send(command)

    async def pause(self) -> None:
        await self._send({"op": "pause"})

    async def resume(self) -> None:
        await self._send({"op": "resume"})

    async def step(self) -> None:
        """While paused: send exactly one more message."""
        await self._send({"op": "step"})

    async def seek(self, ms: float) -> None:
        """Continue from ``ms`` (milliseconds since recording start, clamped to the recording); keeps pause and rate.
        After a finished replay, a seek starts it again (paused if it was)."""
        if isinstance(ms, bool) or not isinstance(ms, (int, float)) or ms < 0:
            raise BadRequest(f"seek takes ms ≥ 0, not {ms!r}", code="INVALID_ARGUMENT")
        self._skipping = True
        self._active = True
        self.finished = None
        await self._send({"op": "seek", "time": float(ms)})

    async def set_rate(self, rate: float) -> None:
        if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0 <= rate <= 10_000:
            raise BadRequest(f"rate must be in [0, 10000], not {rate!r}", code="INVALID_ARGUMENT")
        await self._send({"op": "rate", "rate": float(rate)})

    async def stop(self) -> None:
        """Stops the replay; the iteration ends (``finished["interrupted"]`` is True). ``play()`` or ``seek()``
        start again on the same connection."""
        await self._send({"op": "stop"})

    # -- iteration ----------------------------------------------------------------------------------------------
    def __aiter__(self) -> Replay:
        return self

    async def __anext__(self) -> Message:
        if self._ws is None:
            if self._closed:
                raise StopAsyncIteration
            await self.connect()
        if not self._active:
            raise StopAsyncIteration
        from websockets.exceptions import ConnectionClosed, ConnectionClosedOK

        ws = self._ws
        while True:
            try:
                data = await ws.recv()
            except ConnectionClosedOK:
                self._active = False
                raise StopAsyncIteration from None
            except ConnectionClosed as error:
                self._active = False
                if self._closed:
                    raise StopAsyncIteration from None
                raise ConnectionFailed(f"the replay connection to {self.url} broke ({error})", url=self.url) from error
            if isinstance(data, (bytes, bytearray, memoryview)):
                if self._skipping:
                    continue
                return parse_frame(bytes(data), self._start_us)
            event = json.loads(data)
            kind = event.get("event")
            if kind == "status":
                self.status = event
                self._skipping = False
            elif kind == "finished":
                if self._swallow_finished > 0:
                    self._swallow_finished -= 1
                    continue
                self.finished = event
                self._active = False
                raise StopAsyncIteration
            elif kind == "error":
                code = event.get("code") or "INTERNAL"
                cls = error_class(code)
                if cls is VlinkBagError:
                    cls = ReplayError
                raise cls(str(event.get("message", "replay error")), code=code, url=self.url)

    async def collect(self, limit: int | None = None) -> list[Message]:
        """Reads messages until the replay finishes (or ``limit`` messages)."""
        out: list[Message] = []
        async for message in self:
            out.append(message)
            if limit is not None and len(out) >= limit:
                break
        return out

    def __repr__(self) -> str:
        state = self.status.get("status") if self.status else "new"
        return f"Replay({self.bag.id!r}, {state})"
