"""Replay command ids: every control sends an id and returns the server's answer, the status event that echoes it once
the command has taken effect, instead of guessing from the reported time."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest

from vlink_bag import BadRequest, Client, ConnectionFailed
from vlink_bag.replay import Replay

from .conftest import Expected


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 60))


def spy(player: Replay) -> list[dict[str, Any]]:
    """Records the commands the player sends."""
    sent: list[dict[str, Any]] = []
    send = player._send

    async def recording(command: dict[str, Any]) -> None:
        sent.append(command)
        await send(command)

    player._send = recording  # type: ignore[method-assign]
    return sent


def test_every_control_sends_an_id_and_returns_its_answer(bag: Any, expected: Expected) -> None:
    imu = [f["timestamp"] for f in expected.frames if f["url"] == "imu"]

    async def main() -> None:
        async with bag.replay(rate=1.0, urls=["imu"], paused=True) as player:
            sent = spy(player)
            stepped = await player.step()
            assert stepped["status"] == "paused" and stepped["time"] == imu[0] / 1000  # the step's message is out
            assert (await asyncio.wait_for(player.__anext__(), 5)).timestamp == imu[0]
            resumed = await player.resume()
            assert resumed["status"] == "playing"
            paused = await player.pause()
            assert paused["status"] == "paused"
            rated = await player.set_rate(0)
            assert (rated["status"], rated["rate"]) == ("paused", 0)
            moved = await player.seek(1000)
            assert (moved["status"], moved["time"]) == ("paused", 1000)
            restarted = await player.play(rate=0, urls=["imu"], start_time=1_500_000, paused=True)
            assert (restarted["status"], restarted["time"]) == ("paused", 1500)
            stopped = await player.stop()
            assert stopped["status"] == "stopped"
            ops = [c["op"] for c in sent]
            assert ops == ["step", "resume", "pause", "rate", "seek", "play", "stop"]
            ids = [c["id"] for c in sent]
            assert len(set(ids)) == len(ids) and all(isinstance(i, int) for i in ids)
            assert [a["id"] for a in (stepped, resumed, paused, rated, moved, restarted, stopped)] == ids

    run(main())


def test_seek_needs_no_duration_the_server_says_where_it_went(bag: Any) -> None:
    duration = bag.info()["totalDuration"]

    async def main() -> None:
        async with bag.replay(rate=0, urls=["imu"], paused=True) as player:
            # Past the end: the server clamps (to 100 ms before it); the answer reports where it went.
            moved = await player.seek(10**9)
            assert moved["time"] == max(0, duration - 100)
            await player.resume()
            rest = [m async for m in player]
            assert rest and all(m.timestamp >= moved["time"] * 1000 for m in rest)

    run(main())


def test_pause_is_answered_while_nobody_reads(bag: Any, expected: Expected) -> None:
    imu = [f["timestamp"] for f in expected.frames if f["url"] == "imu"]

    async def main() -> None:
        async with bag.replay(rate=1.0, urls=["imu"]) as player:
            await asyncio.sleep(0.9)  # ~90 messages are due, more than the 64 buffered: the reader is backed up
            answer = await asyncio.wait_for(player.pause(), 10)
            assert answer["status"] == "paused"
            got = []
            while True:
                try:
                    got.append((await asyncio.wait_for(player.__anext__(), 0.3)).timestamp)
                except asyncio.TimeoutError:
                    break
            assert len(got) > 64 and got == imu[: len(got)], "in order, none lost"
            assert got[-1] == round(answer["time"] * 1000), "nothing after the message the answer reports"
            await player.resume()
            assert [m.timestamp async for m in player] == imu[len(got) :]

    run(main())


def test_refused_control_raises_from_the_control_and_the_iteration_goes_on(bag: Any) -> None:
    async def main() -> None:
        async with bag.replay(rate=0.5, urls=["log"]) as player:
            with pytest.raises(BadRequest, match="paused") as info:
                await player.step()
            assert info.value.code == "INVALID_ARGUMENT"
            await player.set_rate(0)
            assert len([m async for m in player]) == 5

    run(main())


def test_closing_fails_a_control_still_waiting(bag: Any) -> None:
    async def main() -> None:
        # Paused inside the 0.1 s gap at a thousandth of real time: the next message is due in ~100 s, and a resume
        # is answered only when it is.
        async with bag.replay(rate=0.001, urls=["gap/tick"], paused=True) as player:
            await player.seek(510)
            waiting = asyncio.ensure_future(player.resume())
            await asyncio.sleep(0.3)
            assert not waiting.done()
            await player.close()
            with pytest.raises(ConnectionFailed):
                await waiting

    run(main())


def test_a_server_that_does_not_echo_ids_fails_the_connect_instead_of_hanging(client: Client) -> None:
    from websockets.asyncio.server import serve

    from vlink_bag import RemoteBag

    async def old_server(ws: Any) -> None:
        await ws.send(json.dumps({"event": "status", "status": "stopped", "time": 0, "rate": 1, "dropped": 0}))
        async for text in ws:
            if json.loads(text).get("op") == "play":
                await ws.send(json.dumps({"event": "status", "status": "playing", "time": 0, "rate": 1, "dropped": 0}))

    async def main() -> None:
        async with serve(old_server, "127.0.0.1", 0) as server:
            port = server.sockets[0].getsockname()[1]
            with Client(f"http://127.0.0.1:{port}") as old:
                bag = RemoteBag(old, "drive.vdb")
                bag._info = {"startTimestamp": 0, "urls": []}
                with pytest.raises(ConnectionFailed, match="did not answer"):
                    await bag.replay(open_timeout=0.5).connect()

    run(main())
