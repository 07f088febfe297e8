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


_QUEUE_ITEMS = 64  # frames received ahead of the reader; beyond that TCP backpressure reaches the server
_SEEK_ACK_SECONDS = 3.0


class Replay:
    """A replay session on its own WebSocket. Iterate it (``async for m in replay``) to receive the messages at the
    replay's pace; the iteration ends when the replay finishes (the end of the window after ``times`` passes, or
    ``stop()``), and can be resumed after a ``seek()`` or ``play()`` on the same connection.

    Control methods send a command: ``pause()``, ``resume()``, ``step()`` (one message while paused, VLink
    ``pause_to_next``), ``seek(ms)`` (ms since recording start, VLink ``jump``; keeps pause and rate),
    ``set_rate(rate)``, ``stop()``, and ``play(...)`` to start over with other settings. ``seek()`` and ``play()``
    discard what the old position had already sent, so the next message is from the new one; ``seek()`` returns once
    the server has moved (so a following ``step()`` applies to the new position). A command the server refuses (e.g.
    ``step()`` while playing) raises :class:`BadRequest` from the iteration, which can then go on.

    A background task reads the socket: at most 64 messages are buffered ahead of you; past that the server sees
    backpressure (a paced replay then skips frames and counts them in ``dropped``; rate 0 waits).

    Attributes:
        status: the latest status event: ``{"status": "playing"|"paused"|"stopped", "time": ms, "rate", "dropped"}``.
        finished: the ``finished`` event that ended the iteration (``{"interrupted": bool, "dropped": int}``), or None.
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
        self._pump_task: asyncio.Task[None] | None = None
        self._queue: asyncio.Queue[tuple[int, str, Any]] | None = None
        self._start_us = 0
        self._duration_ms = 0.0
        self._epoch = 0  # bumped by seek/play: queued items of older epochs are stale
        self._server_active = False  # the server runs a play whose `finished` has not been received
        self._replaced = 0  # plays replaced by play(): frames are skipped until their `finished` arrives
        self._seek_target_us: int | None = None  # frames are skipped until the status of this position arrives
        self._seek_done: asyncio.Event | None = None
        self._iterating = False  # a play or seek is running for the iterator (its `finished` not consumed)
        self._closed = False
        self.status: dict[str, Any] | None = None
        self.finished: dict[str, Any] | None = None

    @property
    def dropped(self) -> int:
        """Frames the server skipped because this client read too slowly (paced replays only; rate 0 never drops)."""
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

        # The start time for abs_timestamp, and the duration the server clamps seeks to (fresh: a bag may grow).
        loop = asyncio.get_running_loop()
        try:
            info = await loop.run_in_executor(None, self.bag.info)
        except VlinkBagError:
            info = self.bag._cached_info()
        self._start_us = int(info["startTimestamp"]) * 1000
        self._duration_ms = float(info.get("totalDuration", 0))
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
        self._queue = asyncio.Queue(_QUEUE_ITEMS)
        self._seek_done = asyncio.Event()
        self._pump_task = asyncio.ensure_future(self._pump(self._ws, self._queue))
        s = self._settings
        await self.play(rate=s["rate"], urls=s["urls"], start_time=s["start_time"], end_time=s["end_time"], times=s["times"], paused=s["paused"])
        return self

    async def close(self) -> None:
        """Closes the WebSocket (the server ends the session)."""
        self._closed = True
        self._iterating = False
        ws, self._ws = self._ws, None
        task, self._pump_task = self._pump_task, None
        if ws is not None:
            await ws.close()
        if task is not None:
            task.cancel()
            try:
                await task
            except BaseException:  # noqa: BLE001 - cancelled or already failed: nothing left to report
                pass

    async def __aenter__(self) -> Replay:
        return await self.connect()

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    # -- the socket reader ---------------------------------------------------------------------------------------
    async def _pump(self, ws: Any, queue: asyncio.Queue[tuple[int, str, Any]]) -> None:
        from websockets.exceptions import ConnectionClosed, ConnectionClosedOK

        try:
            async for data in ws:
                if isinstance(data, (bytes, bytearray, memoryview)):
                    if self._replaced or self._seek_target_us is not None:
                        continue
                    await queue.put((self._epoch, "frame", data))
                    continue
                event = json.loads(data)
                kind = event.get("event")
                if kind == "status":
                    self.status = event
                    target = self._seek_target_us
                    if target is not None and round(float(event.get("time", -1)) * 1000) == target:
                        self._seek_target_us = None
                        assert self._seek_done is not None
                        self._seek_done.set()
                elif kind == "finished":
                    self._server_active = False
                    if self._replaced:
                        self._replaced -= 1
                        continue
                    await queue.put((self._epoch, "finished", event))
                elif kind == "error":
                    await queue.put((self._epoch, "error", event))
        except ConnectionClosedOK:
            pass
        except ConnectionClosed as error:
            await queue.put((-1, "broken", error))
            return
        except Exception as error:  # noqa: BLE001 - a bad event: report it to the reader
            await queue.put((-1, "broken", error))
            return
        await queue.put((-1, "closed", None))

    # -- controls -----------------------------------------------------------------------------------------------
    async def _send(self, command: dict[str, Any]) -> None:
        if self._ws is None:
            await self.connect()
        from websockets.exceptions import ConnectionClosed

        try:
            await self._ws.send(json.dumps(command))
        except ConnectionClosed as error:
            raise ConnectionFailed(f"the replay connection to {self.url} is closed ({error})", url=self.url) from error

    def _new_epoch(self) -> None:
        """Everything received so far belongs to the old position: drop it."""
        self._epoch += 1
        queue = self._queue
        if queue is not None:
            while not queue.empty():
                item = queue.get_nowait()
                if item[0] < 0:  # keep the end of the connection
                    queue.put_nowait(item)
                    break

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
        if self._ws is None:
            self._settings = {"rate": rate, "urls": urls, "start_time": start_time, "end_time": end_time, "times": times, "paused": paused}
            await self.connect()
            return
        # A running play is replaced: the server ends it with a `finished` event before the new one's frames.
        if self._server_active:
            self._replaced += 1
        self._new_epoch()
        self._server_active = True
        self._iterating = True
        self.finished = None
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
        After a finished replay, a seek starts it again. Returns once the server has moved."""
        if isinstance(ms, bool) or not isinstance(ms, (int, float)) or ms < 0 or ms != ms:
            raise BadRequest(f"seek takes ms ≥ 0, not {ms!r}", code="INVALID_ARGUMENT")
        if self._ws is None:
            await self.connect()
        # The server clamps the target like this (ReplaySession.seek); its first status then reports it.
        duration = self._duration_ms
        target = min(max(0.0, float(ms)), duration)
        if ms > duration:
            target = max(0.0, duration - 100)
        assert self._seek_done is not None
        self._seek_done.clear()
        self._seek_target_us = round(target * 1000)
        self._new_epoch()
        self._server_active = True
        self._iterating = True
        self.finished = None
        await self._send({"op": "seek", "time": float(ms)})
        try:
            await asyncio.wait_for(self._seek_done.wait(), _SEEK_ACK_SECONDS)
        except asyncio.TimeoutError:
            # No status for that position (a bag that grew since): stop discarding rather than wait for ever.
            self._seek_target_us = None

    async def set_rate(self, rate: float) -> None:
        if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0 <= rate <= 10_000:
            raise BadRequest(f"rate must be in [0, 10000], not {rate!r}", code="INVALID_ARGUMENT")
        await self._send({"op": "rate", "rate": float(rate)})

    async def stop(self) -> None:
        """Stops the replay; the iteration ends once the messages already sent are read (``finished["interrupted"]``
        is True). ``play()`` or ``seek()`` start again on the same connection."""
        await self._send({"op": "stop"})

    # -- iteration ----------------------------------------------------------------------------------------------
    def __aiter__(self) -> Replay:
        return self

    async def __anext__(self) -> Message:
        if self._ws is None:
            if self._closed:
                raise StopAsyncIteration
            await self.connect()
        if not self._iterating:
            raise StopAsyncIteration
        queue = self._queue
        assert queue is not None
        while True:
            epoch, kind, value = await queue.get()
            if kind == "frame":
                if epoch == self._epoch:
                    return parse_frame(bytes(value), self._start_us)
            elif kind == "finished":
                if epoch == self._epoch:
                    self.finished = value
                    self._iterating = False
                    raise StopAsyncIteration
            elif kind == "error":
                if epoch == self._epoch:
                    code = value.get("code") or "INTERNAL"
                    cls = error_class(code)
                    if cls is VlinkBagError:
                        cls = ReplayError
                    raise cls(str(value.get("message", "replay error")), code=code, url=self.url)
            else:  # the connection ended: stay ended for later calls too
                queue.put_nowait((epoch, kind, value))
                self._iterating = False
                if kind == "closed" or self._closed:
                    raise StopAsyncIteration
                raise ConnectionFailed(f"the replay connection to {self.url} broke ({value})", url=self.url)

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
