"""WebSocket replay: content, pacing and the controls (pause, resume, step, seek, rate, stop)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

import pytest

from vlink_bag import BadRequest, Client, NotFound, Unauthorized

from .conftest import TOKEN, Expected, Server


def run(coro: Any) -> Any:
    return asyncio.run(asyncio.wait_for(coro, 60))


def triples(messages: Any) -> list[tuple[int, str, bytes]]:
    return [(m.timestamp, m.topic, m.message) for m in messages]


def test_rate_0_replays_everything_byte_for_byte(bag: Any, expected: Expected) -> None:
    async def main() -> Any:
        async with bag.replay(rate=0) as player:
            return await player.collect(), player

    messages, player = run(main())
    assert triples(messages) == expected.select()
    assert messages == list(bag.read_messages())  # same fields as the HTTP stream (abs_timestamp, action, …)
    assert player.finished == {"event": "finished", "interrupted": False, "dropped": 0}
    assert player.status["status"] == "stopped"
    assert player.dropped == 0


def test_window_and_urls(bag: Any, expected: Expected) -> None:
    async def main() -> Any:
        async with bag.replay(rate=0, urls=["gap/tick", "odd,url"], start_time=400_000, end_time=1_600_000) as player:
            return [m async for m in player]

    assert triples(run(main())) == expected.select(["gap/tick", "odd,url"], 400_000, 1_600_000)


def test_paced_replay_takes_the_recorded_time(bag: Any, expected: Expected) -> None:
    async def main() -> Any:
        t0 = time.perf_counter()
        async with bag.replay(rate=2.0, urls=["imu"], start_time=0, end_time=600_000) as player:
            messages = [(m, time.perf_counter() - t0) async for m in player]
        return messages, time.perf_counter() - t0

    messages, elapsed = run(main())
    assert len(messages) == 61
    # 600 ms of recording at 2× ≈ 0.3 s; the last message cannot arrive before its due time.
    assert messages[-1][1] >= 0.25, messages[-1][1]
    assert elapsed < 5


def test_paused_step_resume_stop(bag: Any, expected: Expected) -> None:
    imu = [f["timestamp"] for f in expected.frames if f["url"] == "imu"]

    async def main() -> None:
        async with bag.replay(rate=1.0, urls=["imu"], paused=True) as player:
            # Paused: nothing arrives until a step.
            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(player.__anext__(), 0.3)
            for want in imu[:3]:
                await player.step()
                m = await asyncio.wait_for(player.__anext__(), 5)
                assert m.timestamp == want
            # One step sends exactly one message, and the replay is paused again.
            with pytest.raises(asyncio.TimeoutError):
                await asyncio.wait_for(player.__anext__(), 0.3)
            assert player.status["status"] == "paused"
            await player.resume()
            m = await asyncio.wait_for(player.__anext__(), 5)
            assert m.timestamp == imu[3]
            await player.pause()
            # Messages sent before the pause took effect still arrive; then nothing while paused.
            late = []
            while True:
                try:
                    late.append(await asyncio.wait_for(player.__anext__(), 0.3))
                except asyncio.TimeoutError:
                    break
            assert len(late) < 100  # what was in flight when the pause arrived (~0 on an idle machine)
            assert [x.timestamp for x in late] == imu[4 : 4 + len(late)]
            assert player.status["status"] == "paused"
            await player.stop()
            assert [x async for x in player] == []
            assert player.finished["interrupted"] is True

    run(main())


def test_seek_while_playing_and_paused(bag: Any, expected: Expected) -> None:
    ticks = [f["timestamp"] for f in expected.frames if f["url"] == "gap/tick"]

    async def main() -> None:
        async with bag.replay(rate=0.5, urls=["gap/tick"]) as player:
            first = await player.__anext__()
            assert first.timestamp == ticks[0]
            t0 = time.perf_counter()
            await player.seek(1000)  # ms
            assert time.perf_counter() - t0 < 2, "seek returns once the server reports the new position"
            m = await asyncio.wait_for(player.__anext__(), 5)
            assert m.timestamp == min(t for t in ticks if t >= 1_000_000)  # frames sent before the seek are skipped
            await player.seek(100)  # backwards, while playing
            m = await asyncio.wait_for(player.__anext__(), 5)
            assert m.timestamp == min(t for t in ticks if t >= 100_000)
            await player.pause()
            await player.seek(510)  # inside the gap: continues at the next message, still paused
            await player.step()  # returns once the message has arrived and the replay is paused again
            assert player.status["status"] == "paused"
            m = await asyncio.wait_for(player.__anext__(), 5)
            assert m.timestamp == 615_000
            await player.set_rate(0)
            await player.resume()
            rest = [m async for m in player]
            assert [m.timestamp for m in rest] == [t for t in ticks if t > 615_000]
            assert player.finished["interrupted"] is False
            # After the end, a seek starts over on the same connection.
            await player.seek(1400)
            again = [m.timestamp async for m in player]
            assert again == [t for t in ticks if t >= 1_400_000]

    run(main())


def test_play_restarts_with_new_settings(bag: Any, expected: Expected) -> None:
    async def main() -> None:
        async with bag.replay(rate=0.1, urls=["imu"]) as player:
            await player.__anext__()
            await player.play(rate=0, urls=["log"])
            got = [m async for m in player]
            # The imu replay is replaced: its `finished` does not end the iteration; what follows is the log replay.
            logs = [m for m in got if m.topic == "log"]
            assert triples(logs) == expected.select(["log"])
            assert player.finished["interrupted"] is False

    run(main())


def test_loops(bag: Any) -> None:
    async def main() -> Any:
        async with bag.replay(rate=0, urls=["log"], times=3) as player:
            return [m.timestamp async for m in player]

    got = run(main())
    assert len(got) == 15 and got[:5] == got[5:10] == got[10:]


def test_refused_commands_raise_and_keep_the_session(bag: Any) -> None:
    async def main() -> None:
        async with bag.replay(rate=0.5, urls=["imu"]) as player:
            await player.__anext__()
            with pytest.raises(BadRequest, match="paused") as info:
                await player.step()  # not paused: the server's answer is an error event
            assert info.value.code == "INVALID_ARGUMENT"
            await player.set_rate(0)
            assert len([m async for m in player]) > 0  # the session goes on
            with pytest.raises(BadRequest):
                await player.set_rate(-1)
            with pytest.raises(BadRequest):
                await player.seek(-5)

    run(main())


def test_unknown_bag_and_auth(client: Client, token_server: Server) -> None:
    from vlink_bag import RemoteBag

    async def main() -> None:
        ghost = RemoteBag(client, "ghost.vdb")
        ghost._info = {"startTimestamp": 0, "urls": []}
        with pytest.raises(NotFound):
            await ghost.replay().connect()
        with Client(token_server.url, token=TOKEN) as ok:
            bag = ok.bag("drive.vdb")
            async with bag.replay(rate=0, urls=["log"]) as player:
                assert len([m async for m in player]) == 5
            # Same server, wrong token: the upgrade is refused with 401.
            wrong = RemoteBag(Client(token_server.url, token="nope"), "drive.vdb")
            wrong._info = bag.info()
            with pytest.raises(Unauthorized):
                await wrong.replay().connect()

    run(main())


def test_iterating_connects_and_closing_ends(bag: Any) -> None:
    async def main() -> None:
        player = bag.replay(rate=0, urls=["log"])
        assert repr(player).endswith("new)")
        first = await player.__anext__()
        assert first.topic == "log"
        await player.close()
        assert [m async for m in player] == []

    run(main())
