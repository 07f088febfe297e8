"""read_messages, paging and the Apollo-style getters against a real server, for .vdb and .vcap."""

from __future__ import annotations

import gc
from typing import Any

import pytest

from vlink_bag import BadRequest, EmptyWindowWarning, Message

from .conftest import Expected


@pytest.fixture()
def bag(any_bag: Any) -> Any:
    """Every test here runs on the server's bags and on the same files read locally, unless it asks for
    ``remote_bag`` (pages and cursors are a server feature)."""
    return any_bag


def triples(messages: Any) -> list[tuple[int, str, bytes]]:
    return [(m.timestamp, m.topic, m.message) for m in messages]


def test_read_all_byte_for_byte(bag: Any, expected: Expected) -> None:
    messages = list(bag.read_messages())
    assert len(messages) == len(expected.frames) == bag.info()["messageCount"]
    for got, want in zip(messages, expected.frames):
        assert isinstance(got, Message)
        assert got.timestamp == want["timestamp"]
        assert got.topic == want["url"]
        assert got.message == want["bytes"]
        assert type(got.message) is bytes
        assert got.schema_type == want["schemaType"]
        assert got.abs_timestamp == expected.start_ms * 1000 + want["timestamp"]
    sizes = {m.topic: [] for m in messages}
    for m in messages:
        sizes[m.topic].append(len(m.message))
    assert sizes["cam/big"] == [1024 * 1024 + 7, 0, 200_000]


def test_message_fields_and_tuple_unpacking(bag: Any) -> None:
    by_url: dict[str, list[Message]] = {}
    for m in bag.read_messages():
        by_url.setdefault(m.topic, []).append(m)
    pose = by_url["pb/pose"][0]
    assert (pose.data_type, pose.action, pose.schema_type) == ("demo.Pose", "Pub", 3)
    topic, data, data_type, timestamp = pose  # Apollo's (channel, data, data_type, timestamp)
    assert (topic, data, data_type, timestamp) == (pose.topic, pose.message, pose.data_type, pose.timestamp)
    assert pose.channel_name == pose.url == "pb/pose"
    req, resp = by_url["rpc/echo"][:2]
    assert (req.action, req.data_type) == ("C/Req", "demo.Vec3")
    assert (resp.action, resp.data_type) == ("C/Resp", "demo.Pose")
    assert by_url["imu"][0].data_type == "json"
    assert "pb/pose" in repr(pose)


@pytest.mark.parametrize(
    "urls",
    [["imu"], ["pb/pose", "gap/tick"], "log", ["odd,url"], ["odd,url", "imu"], ["no/such/url"]],
)
def test_url_filters(bag: Any, expected: Expected, urls: Any) -> None:
    wanted = [urls] if isinstance(urls, str) else urls
    assert triples(bag.read_messages(urls=urls)) == expected.select(wanted)


def test_empty_url_list_reads_nothing(bag: Any) -> None:
    assert list(bag.read_messages(urls=[])) == []


@pytest.mark.parametrize(
    ("start", "end"),
    [
        (300_000, 300_000),  # inclusive at both ends: the three frames at 300 ms
        (505_000, 615_000),  # the gap's edges
        (1_000_000, None),
        (0, 99_999),
        (1_234, 5_678),  # µs that are not whole ms
        (10_000_000, None),  # past the end
    ],
)
def test_time_windows(bag: Any, expected: Expected, start: int, end: int | None) -> None:
    if start > 2_000_000:
        with pytest.warns(EmptyWindowWarning, match="outside the recording"):
            got = triples(bag.read_messages(start_time=start, end_time=end))
    else:
        got = triples(bag.read_messages(start_time=start, end_time=end))
    assert got == expected.select(None, start, end)
    if start == 300_000:
        assert [u for _, u, _ in got].count("cam/big") == 2
    if end is None and start < 2_000_000:
        assert got


def test_apollo_open_end(bag: Any, expected: Expected) -> None:
    assert len(list(bag.read_messages(0, 18446744073709551615))) == len(expected.frames)


def test_window_and_urls_together(bag: Any, expected: Expected) -> None:
    got = triples(bag.read_messages(start_time=400_000, end_time=800_000, urls=["gap/tick", "cam/big"]))
    assert got == expected.select(["gap/tick", "cam/big"], 400_000, 800_000)
    ticks = [t for t, u, _ in got if u == "gap/tick"]
    assert 505_000 in ticks and 615_000 in ticks and not any(505_000 < t < 615_000 for t in ticks)


@pytest.mark.parametrize(("start", "end"), [(-1, None), (10, 5), ("0", None), (float("nan"), None)])
def test_bad_windows_raise_bad_request(bag: Any, start: Any, end: Any) -> None:
    with pytest.raises(BadRequest) as info:
        list(bag.read_messages(start_time=start, end_time=end))
    assert info.value.code == "INVALID_ARGUMENT"


@pytest.mark.parametrize("limit", [3, 37, 1000])
def test_pages_follow_the_cursor(remote_bag: Any, expected: Expected, limit: int) -> None:
    bag = remote_bag
    pages = list(bag.iter_pages(limit=limit))
    assert all(len(p.messages) <= limit for p in pages)
    assert pages[-1].next is None
    assert all(p.next for p in pages[:-1])
    got = [m for p in pages for m in p.messages]
    assert triples(got) == expected.select()
    assert got == list(bag.read_messages())  # same Message objects as the binary stream, field by field


def test_pages_with_window_and_urls(remote_bag: Any, expected: Expected) -> None:
    bag = remote_bag
    pages = list(bag.iter_pages(start_time=100_000, end_time=1_300_000, urls=["imu", "rpc/echo"], limit=25))
    assert len(pages) > 2
    assert triples(m for p in pages for m in p.messages) == expected.select(["imu", "rpc/echo"], 100_000, 1_300_000)
    rpc = [m for p in pages for m in p.messages if m.topic == "rpc/echo"]
    assert [m.data_type for m in rpc] == ["demo.Vec3", "demo.Pose", "demo.Vec3"]  # the last response is at 1.3005 s


def test_a_cursor_resumes_from_a_new_client(remote_bag: Any, server: Any) -> None:
    bag = remote_bag
    from vlink_bag import Client

    first = bag.page(limit=10)
    with Client(server.url) as other:
        second = other.bag(bag.id).page(cursor=first.next, limit=10)
    assert triples(first.messages + second.messages) == triples(list(bag.read_messages())[:20])


def test_bad_cursor(remote_bag: Any, client: Any) -> None:
    bag = remote_bag
    with pytest.raises(BadRequest, match="cursor"):
        bag.page(cursor="not-a-token")
    token = client.bag("drive.vdb").page(limit=5).next
    if bag.id != "drive.vdb":
        with pytest.raises(BadRequest, match="another bag"):
            bag.page(cursor=token)
    with pytest.raises(BadRequest):
        bag.page(limit=0)


def test_leaving_a_stream_early_frees_the_connection(bag: Any) -> None:
    for _ in range(30):  # more than any connection pool: each abandoned stream must be closed
        stream = bag.read_messages()
        assert next(stream).timestamp == 0
        stream.close()
    for _ in range(5):
        for m in bag.read_messages():
            break
        gc.collect()
    assert bag.info()["messageCount"] > 0


def test_apollo_getters(bag: Any, expected: Expected) -> None:
    assert bag.get_channellist() == sorted({f["url"] for f in expected.frames})  # sorted, as Apollo's
    assert bag.get_messagenumber("imu") == 200
    assert bag.get_messagenumber("rpc/echo") == 4
    assert bag.get_messagenumber("nope") == 0
    assert bag.get_messagetype("pb/pose") == "demo.Pose"
    assert bag.get_messagetype("rpc/echo") == "demo.Vec3|demo.Pose"
    assert bag.get_messagetype("nope") == ""
    assert bag.get_protodesc("pb/pose") == expected.fds
    assert bag.get_protodesc("rpc/echo") == expected.fds
    assert bag.get_protodesc("imu") == b""
    header = bag.get_header()
    assert header["startTimestamp"] == expected.start_ms
    assert "urls" not in header
    assert '"messageCount": 396' in bag.get_headerstring()
    assert bag.start_timestamp_us == expected.start_ms * 1000
    assert bag.duration_us == 1_990_000
    bag.reset()
    assert bag.get_messagenumber("log") == 5


def test_protodesc_is_a_file_descriptor_set(bag: Any) -> None:
    from google.protobuf import descriptor_pb2

    fds = descriptor_pb2.FileDescriptorSet.FromString(bag.get_protodesc("pb/pose"))
    assert [f.name for f in fds.file] == ["demo/pose.proto"]
    assert [m.name for m in fds.file[0].message_type] == ["Vec3", "Pose"]


def test_errors_while_streaming(server: Any) -> None:
    import socket

    from vlink_bag import Client, ConnectionFailed, NotFound, RemoteBag

    with Client(server.url) as client:
        ghost = RemoteBag(client, "ghost.vdb")
        ghost._info = {"startTimestamp": 0, "urls": []}
        with pytest.raises(NotFound) as info:
            list(ghost.read_messages())
        assert info.value.status == 404 and "ghost.vdb" in str(info.value)
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        dead = f"http://127.0.0.1:{s.getsockname()[1]}"
        with Client(dead, timeout=2) as client:
            ghost = RemoteBag(client, "x.vdb")
            ghost._info = {"startTimestamp": 0, "urls": []}
            with pytest.raises(ConnectionFailed) as failed:
                list(ghost.read_messages())
    assert dead + "/v1/bags/x.vdb/messages" in str(failed.value)
