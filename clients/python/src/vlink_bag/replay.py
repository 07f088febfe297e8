"""WebSocket replay (``WS /v1/bags/{id}/replay``) as an async iterator with VLink's controls."""

from __future__ import annotations

import asyncio
import json
from typing import TYPE_CHECKING, Any

from .errors import BadRequest, ConnectionFailed, ReplayError, VlinkBagError, error_class
from .answers import mask_url, websocket_url
from .websocket import open_websocket
from .frames import Message, parse_frame

if TYPE_CHECKING:  # pragma: no cover
    from .client import RemoteBag

__all__ = ["Replay"]

# A replay frame is one WebSocket message: allow the biggest payloads a bag may hold.
MAX_MESSAGE_BYTES = 2**31


def _ms(us: float | None) -> float | None:
    return None if us is None else us / 1000.0


_QUEUE_ITEMS = 64  # frames received ahead of the reader; beyond that TCP backpressure reaches the server


class Replay:
    """A replay session on its own WebSocket. Iterate it (``async for m in replay``) to receive the messages at the
    replay's pace; the iteration ends when the replay finishes (the end of the window after ``times`` passes, or
    ``stop()``), and can be resumed after a ``seek()`` or ``play()`` on the same connection.

    Control methods send a command: ``pause()``, ``resume()``, ``step()`` (one message while paused, VLink
    ``pause_to_next``), ``seek(ms)`` (ms since recording start, VLink ``jump``; keeps pause and rate),
    ``set_rate(rate)``, ``stop()``, and ``play(...)`` to start over with other settings. Each sends an id with its
    command and returns the server's answer, the status event that echoes that id once the command has taken effect
    (see each method). ``seek()`` and ``play()`` discard everything the old position sent before that answer, so the
    next message is from the new one. A command the server refuses (e.g. ``step()`` while playing) raises
    :class:`BadRequest` from the control method; the replay goes on.

    A background task reads the socket: at most 64 messages are buffered ahead of you; past that the server sees
    backpressure (a paced replay then skips frames and counts them in ``dropped``; rate 0 waits). While a control
    waits for its answer the task reads on regardless, since the answer may come behind messages nobody reads yet.

    Attributes:
        status: the latest status event: ``{"status": "playing"|"paused"|"stopped", "time": ms, "rate", "dropped"}``
            (and ``"id"`` when it answers one of this client's commands).
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
        self._connect_url = websocket_url(bag.client.base_url, bag._path + "/replay")
        #: The WebSocket URL as messages show it (a password in it masked).
        self.url = mask_url(self._connect_url)
        self._settings: dict[str, Any] = {"rate": rate, "urls": urls, "start_time": start_time, "end_time": end_time, "times": times, "paused": paused}
        self._open_timeout = open_timeout
        self._ws: Any = None
        self._pump_task: asyncio.Task[None] | None = None
        self._queue: asyncio.Queue[tuple[int, str, Any]] | None = None
        self._start_us = 0
        self._epoch = 0  # bumped by seek/play: queued items of older epochs are stale
        self._last_id = 0  # command ids: this connection's count of commands sent
        self._answers: dict[int, asyncio.Future[dict[str, Any]]] = {}  # commands waiting for their answer, by id
        self._moving: int | None = None  # id of a seek/play: what arrives before its answer is the old position's
        self._room: asyncio.Event | None = None  # set when the queue has room again (or a command waits)
        self._iterating = False  # a play or seek is running for the iterator (its `finished` not consumed)
        self._closed = False
        self.status: dict[str, Any] | None = None
        self.finished: dict[str, Any] | None = None
        self._finished_seen = asyncio.Event()  # set when the current play's `finished` event has arrived

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
        # The start time for abs_timestamp (fresh: a bag may grow).
        loop = asyncio.get_running_loop()
        try:
            # An AsyncRemoteBag's info() is a coroutine; a RemoteBag's blocks, so it runs in a thread.
            info = await self.bag.info() if asyncio.iscoroutinefunction(self.bag.info) else await loop.run_in_executor(None, self.bag.info)
        except VlinkBagError:
            info = self.bag._cached_info()
        self._start_us = int(info["startTimestamp"]) * 1000
        headers = {k: v for k, v in self.bag.client._headers.items() if k.lower() in ("authorization", "user-agent")}
        secrets = getattr(self.bag.client, "_secrets", ())
        self._ws = await open_websocket(self._connect_url, self.url, headers, self._open_timeout, secrets, MAX_MESSAGE_BYTES)
        self._queue = asyncio.Queue()
        self._room = asyncio.Event()
        self._pump_task = asyncio.ensure_future(self._pump(self._ws, self._queue))
        s = self._settings
        play = self.play(rate=s["rate"], urls=s["urls"], start_time=s["start_time"], end_time=s["end_time"], times=s["times"], paused=s["paused"])
        try:
            # The first answer comes as soon as the replay starts; none at all means a server without command ids.
            await asyncio.wait_for(play, self._open_timeout)
        except asyncio.TimeoutError:
            await self.close()
            raise ConnectionFailed(
                f"{self.url} did not answer the replay's play command within {self._open_timeout} s"
                " (a server too old to echo replay command ids?)",
                url=self.url,
            ) from None
        return self

    async def close(self) -> None:
        """Closes the WebSocket (the server ends the session)."""
        self._closed = True
        self._iterating = False
        self._fail_answers(ConnectionFailed(f"the replay connection to {self.url} was closed", url=self.url))
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
                    if self._moving is None:
                        await self._put(queue, (self._epoch, "frame", data))
                    continue
                event = json.loads(data)
                kind = event.get("event")
                answered = event.get("id")
                if answered is not None and answered == self._moving:
                    self._moving = None  # from here on, everything is the new position's
                future = self._answers.pop(answered, None) if isinstance(answered, int) else None
                if kind == "status":
                    self.status = event
                elif kind == "finished":
                    if self._moving is None:  # else it ends the play that a seek or play is leaving
                        # Known at once (stop() waits for it), not only once the iterator reaches it.
                        self.finished = event
                        self._finished_seen.set()
                        await self._put(queue, (self._epoch, "finished", event))
                elif kind == "error" and (future is None or future.done()):  # no caller waits for it: the iteration
                    await self._put(queue, (self._epoch, "error", event))
                if future is not None and not future.done():
                    future.set_result(event)
        except ConnectionClosedOK:
            pass
        except ConnectionClosed as error:
            self._fail_answers(ConnectionFailed(f"the replay connection to {self.url} broke ({error})", url=self.url))
            queue.put_nowait((-1, "broken", error))
            return
        except Exception as error:  # noqa: BLE001 - a bad event: report it to the reader
            self._fail_answers(ConnectionFailed(f"the replay connection to {self.url} broke ({error})", url=self.url))
            queue.put_nowait((-1, "broken", error))
            return
        self._fail_answers(ConnectionFailed(f"the replay connection to {self.url} is closed", url=self.url))
        queue.put_nowait((-1, "closed", None))

    async def _put(self, queue: asyncio.Queue[tuple[int, str, Any]], item: tuple[int, str, Any]) -> None:
        """Queues for the iteration; with the queue full, stops reading the socket (TCP backpressure reaches the
        server) unless a command waits for its answer."""
        room = self._room
        assert room is not None
        while queue.qsize() >= _QUEUE_ITEMS and not self._answers:
            room.clear()
            await room.wait()
        queue.put_nowait(item)

    def _fail_answers(self, error: VlinkBagError) -> None:
        answers, self._answers = self._answers, {}
        for future in answers.values():
            if not future.done():
                future.set_exception(error)

    def _error(self, event: dict[str, Any]) -> VlinkBagError:
        code = event.get("code") or "INTERNAL"
        cls = error_class(code)
        if cls is VlinkBagError:
            cls = ReplayError
        return cls(str(event.get("message", "replay error")), code=code, url=self.url)

    # -- controls -----------------------------------------------------------------------------------------------
    async def _send(self, command: dict[str, Any]) -> None:
        if self._ws is None:
            await self.connect()
        from websockets.exceptions import ConnectionClosed

        try:
            await self._ws.send(json.dumps(command))
        except ConnectionClosed as error:
            raise ConnectionFailed(f"the replay connection to {self.url} is closed ({error})", url=self.url) from error

    async def _command(self, command: dict[str, Any], *, moving: bool = False) -> dict[str, Any]:
        """Sends ``command`` with a new id and returns the status event that answers it; its error event raises.
        ``moving`` (seek, play): what arrives before the answer is the old position's and is dropped."""
        if self._ws is None:
            await self.connect()
        self._last_id += 1
        command_id = self._last_id
        answer: asyncio.Future[dict[str, Any]] = asyncio.get_running_loop().create_future()
        self._answers[command_id] = answer
        if moving:
            self._moving = command_id
        assert self._room is not None
        self._room.set()  # a full queue must not keep the answer from being read
        try:
            await self._send({**command, "id": command_id})
            event = await answer
        finally:
            self._answers.pop(command_id, None)
            if self._moving == command_id:  # not answered (refused, cancelled, connection lost)
                self._moving = None
        if event.get("event") == "error":
            raise self._error(event)
        return event

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
        if self._room is not None:
            self._room.set()

    async def play(
        self,
        rate: float = 1.0,
        urls: list[str] | None = None,
        start_time: float = 0,
        end_time: float | None = None,
        times: int = 1,
        paused: bool = False,
    ) -> dict[str, Any]:
        """Starts (or restarts) the replay: ``rate`` (0 = as fast as you read), ``urls`` (None = all),
        ``start_time``/``end_time`` in µs since recording start, ``times`` passes (≤ 0 = loop until stopped),
        ``paused``. Returns once the new replay has started (the status answering it, before its first message)."""
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
            assert self.status is not None
            return self.status
        # A running play is replaced: its `finished` comes before the new play's answer and is dropped with its frames.
        self._new_epoch()
        self._iterating = True
        self.finished = None
        self._finished_seen.clear()
        return await self._command(command, moving=True)

    async def pause(self) -> dict[str, Any]:
        """Returns once the replay is paused: no message follows the ones already received until a resume, step,
        seek or play."""
        return await self._command({"op": "pause"})

    async def resume(self) -> dict[str, Any]:
        """Returns once the replay plays again (a paced replay reports that when its next message is due)."""
        return await self._command({"op": "resume"})

    async def step(self) -> dict[str, Any]:
        """While paused: send exactly one more message. Returns once it has been received (the iteration yields it
        after what was already buffered) and the replay is paused again."""
        return await self._command({"op": "step"})

    async def seek(self, ms: float) -> dict[str, Any]:
        """Continue from ``ms`` (milliseconds since recording start, clamped to the recording); keeps pause and rate.
        After a finished replay, a seek starts it again. Returns the status at the new position once the server has
        moved: every message after it is from there."""
        if isinstance(ms, bool) or not isinstance(ms, (int, float)) or ms < 0 or ms != ms:
            raise BadRequest(f"seek takes ms ≥ 0, not {ms!r}", code="INVALID_ARGUMENT")
        if self._ws is None:
            await self.connect()
        self._new_epoch()
        self._iterating = True
        self.finished = None
        self._finished_seen.clear()
        return await self._command({"op": "seek", "time": float(ms)}, moving=True)

    async def set_rate(self, rate: float) -> dict[str, Any]:
        """Changes the speed; the replay continues from where it is (nothing is sent twice)."""
        if isinstance(rate, bool) or not isinstance(rate, (int, float)) or not 0 <= rate <= 10_000:
            raise BadRequest(f"rate must be in [0, 10000], not {rate!r}", code="INVALID_ARGUMENT")
        return await self._command({"op": "rate", "rate": float(rate)})

    async def stop(self) -> dict[str, Any]:
        """Stops the replay and returns once it has stopped; the iteration ends once the messages already sent are
        read; ``finished`` is set when this returns (``finished["interrupted"]`` is True for a replay it cut short).
        ``play()`` or ``seek()`` start again on the same connection."""
        answer = await self._command({"op": "stop"})
        if self._iterating and self.finished is None:
            try:
                await asyncio.wait_for(self._finished_seen.wait(), timeout=self._open_timeout or 10.0)
            except asyncio.TimeoutError:
                pass  # a server that sends no `finished` for a stop: the status answer is all there is
        return answer

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
        assert queue is not None and self._room is not None
        while True:
            epoch, kind, value = await queue.get()
            self._room.set()
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
                    raise self._error(value)
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
