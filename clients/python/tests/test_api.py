"""Health, listing, info, schemas, timing, and how errors map to exceptions."""

from __future__ import annotations

import pickle
import socket
from typing import Any

import httpx
import pytest

from vlink_bag import (
    BadRequest,
    Client,
    ConnectionFailed,
    CorruptBag,
    NotFound,
    NotSupported,
    StreamError,
    Unauthorized,
    UnsupportedFormat,
    VlinkBagError,
)

from .conftest import TOKEN, Expected, Server


def test_health(client: Client) -> None:
    health = client.health()
    assert health["ok"] is True
    assert isinstance(health["version"], str)


def test_bags_lists_every_bag_with_errors_for_broken_ones(client: Client) -> None:
    bags = {b["id"]: b for b in client.bags()}
    assert sorted(bags) == ["bad.vdb", "drive.vdb", "runs/drive.vcap"]
    assert bags["drive.vdb"]["messageCount"] == 396
    assert bags["runs/drive.vcap"]["format"] == "vcap"
    assert bags["bad.vdb"]["messageCount"] is None
    assert bags["bad.vdb"]["error"]["code"] == "CORRUPT_FILE"


def test_info(client: Client, expected: Expected) -> None:
    bag = client.bag("runs/drive.vcap")  # an id with a slash travels as one path segment
    info = bag.info()
    assert info["path"] == "runs/drive.vcap"
    assert info["format"] == "vcap"
    assert info["messageCount"] == len(expected.frames)
    assert info["startTimestamp"] == expected.start_ms
    assert info["totalDuration"] == 1990
    assert {u["url"] for u in info["urls"]} == {f["url"] for f in expected.frames}
    assert repr(bag).startswith("RemoteBag('runs/drive.vcap'")


def test_schemas_are_bytes(bag: Any, expected: Expected) -> None:
    schemas = {s["name"]: s for s in bag.schemas()}
    assert set(schemas) == {"demo.Pose", "demo.Vec3"}
    assert schemas["demo.Pose"]["data"] == expected.fds
    assert schemas["demo.Pose"]["schemaType"] == 3


def test_timing_finds_the_gap(bag: Any) -> None:
    timing = {t["url"]: t for t in bag.timing()}
    tick = timing["gap/tick"]
    assert tick["gaps"] == [{"startUs": 505_000, "lengthUs": 110_000}]
    assert tick["intervalUs"]["p50"] == 10_000
    assert timing["imu"]["gaps"] == []
    assert timing["imu"]["rateHz"] == pytest.approx(100)
    # With a factor above 11 the 110 ms interval (11 × the 10 ms period) is no gap.
    assert {t["url"]: t for t in bag.timing(factor=12)}["gap/tick"]["gaps"] == []
    with pytest.raises(BadRequest):
        bag.timing(factor=0)
    assert [t["url"] for t in bag.timing(urls=["imu", "gap/tick"])] == ["gap/tick", "imu"]
    assert [t["url"] for t in bag.timing(urls="odd,url")] == ["odd,url"]
    assert timing["odd,url"]["count"] == 3


@pytest.mark.parametrize(
    ("bag_id", "cls", "code", "status"),
    [
        ("nope.vdb", NotFound, "NOT_FOUND", 404),
        ("../outside.vdb", NotFound, "NOT_FOUND", 404),
        ("bad.vdb", CorruptBag, "CORRUPT_FILE", 422),
        ("notes.txt", UnsupportedFormat, "UNSUPPORTED_FORMAT", 415),
    ],
)
def test_bag_errors_carry_the_server_code(client: Client, bag_id: str, cls: type, code: str, status: int) -> None:
    with pytest.raises(cls) as info:
        client.bag(bag_id)
    error = info.value
    assert isinstance(error, VlinkBagError)
    assert (error.code, error.status) == (code, status)
    assert error.url and error.url.startswith(client.base_url)
    assert code in str(error)
    assert "/tmp" not in str(error)  # server paths are not disclosed


def test_errors_are_python_exceptions_too(client: Client) -> None:
    with pytest.raises(LookupError):
        client.bag("nope.vdb")
    with pytest.raises(ValueError):
        client.bag("drive.vdb").page(cursor="garbage")


def test_unknown_route(client: Client) -> None:
    with pytest.raises(NotFound) as info:
        client._json("/v1/nothing-here")
    assert info.value.code == "ROUTE_NOT_FOUND"


def test_bad_parameter_is_named(client: Client) -> None:
    with pytest.raises(BadRequest, match="limit"):
        client._json("/v1/bags/drive.vdb/messages", {"limit": "many"})


def test_errors_pickle(client: Client) -> None:
    with pytest.raises(NotFound) as info:
        client.bag("nope.vdb")
    again = pickle.loads(pickle.dumps(info.value))
    assert type(again) is NotFound
    assert (again.code, again.status, again.url, again.message) == (info.value.code, 404, info.value.url, info.value.message)


def test_connection_refused_names_the_url() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]  # bound, never listening: connections are refused
        with Client(f"http://127.0.0.1:{port}", timeout=2) as client:
            with pytest.raises(ConnectionFailed) as info:
                client.health()
    assert info.value.code == "CONNECTION_FAILED"
    assert f"http://127.0.0.1:{port}/v1/health" in str(info.value)
    assert isinstance(info.value, ConnectionError)


def test_base_url_without_scheme_and_with_trailing_slash(server: Server) -> None:
    with Client(server.url.removeprefix("http://") + "/") as client:
        assert client.health()["ok"] is True


def test_not_supported_maps_from_status() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(501, json={"error": {"code": "NOT_SUPPORTED", "message": "timing analysis is not available"}})

    with Client("http://test", transport=httpx.MockTransport(handler)) as client:
        with pytest.raises(NotSupported, match="timing"):
            client.health()


def test_non_json_error_body() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(502, text="Bad Gateway from the proxy")

    with Client("http://test", transport=httpx.MockTransport(handler)) as client:
        with pytest.raises(VlinkBagError) as info:
            client.health()
    assert info.value.status == 502
    assert "Bad Gateway" in str(info.value)


class Chunks(httpx.SyncByteStream):
    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks

    def __iter__(self) -> Any:
        yield from self.chunks


def test_a_stream_cut_short_raises_stream_error() -> None:
    import struct

    frame = struct.pack("<II", 14 + 1 + 3, 10) + struct.pack("<qBBH", 5, 5, 1, 1) + b"u" + struct.pack("<H", 3) + b"raw" + b"0123456789"

    def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/info"):
            return httpx.Response(200, json={"startTimestamp": 1000, "urls": [], "messageCount": 2, "totalDuration": 0})
        return httpx.Response(200, stream=Chunks([frame, frame[:9], frame[9:-4]]), headers={"content-type": "application/vnd.vlink.frames"})

    with Client("http://test", transport=httpx.MockTransport(handler)) as client:
        stream = client.bag("x.vdb").read_messages()
        first = next(stream)
        assert (first.timestamp, first.abs_timestamp, first.message) == (5, 1_000_005, b"0123456789")
        with pytest.raises(StreamError) as info:
            next(stream)
    assert info.value.code == "STREAM_ERROR"
    assert "http://test/v1/bags/x.vdb/messages" in str(info.value)


def test_openapi(client: Client) -> None:
    doc = client.openapi()
    assert doc["openapi"].startswith("3.1")
    assert "/v1/bags/{id}/messages" in doc["paths"]


class TestAuth:
    def test_health_needs_no_token(self, token_server: Server) -> None:
        with Client(token_server.url) as client:
            assert client.health()["ok"] is True

    @pytest.mark.parametrize("token", [None, "wrong", TOKEN + "x", ""])
    def test_missing_or_wrong_token(self, token_server: Server, token: str | None) -> None:
        with Client(token_server.url, token=token) as client:
            with pytest.raises(Unauthorized) as info:
                client.bags()
            assert (info.value.code, info.value.status) == ("UNAUTHORIZED", 401)
            with pytest.raises(Unauthorized):
                list(client.bag("drive.vdb").read_messages()) if token is not None else client.bag("drive.vdb")
            assert isinstance(info.value, PermissionError)

    def test_the_right_token(self, token_server: Server, expected: Expected) -> None:
        with Client(token_server.url, token=TOKEN) as client:
            assert len(client.bags()) == 3
            bag = client.bag("drive.vdb")
            assert [(m.timestamp, m.topic, m.message) for m in bag.read_messages(urls=["cam/big"])] == expected.select(["cam/big"])
            assert len(bag.page(limit=5).messages) == 5
            assert "token" not in repr(client) or "***" in repr(client)


def test_the_serve_fallback_works_too(bag_dir: Any, tmp_path: Any) -> None:
    """When packages/cli is not built the fixture runs serve() from @vlink/bag-server: keep that path working."""
    from .conftest import start_server

    fallback = start_server(bag_dir, tmp_path, token=TOKEN, use_cli=False)
    try:
        with Client(fallback.url, token=TOKEN) as client:
            assert len(client.bags()) == 3
            assert len(list(client.bag("drive.vdb").read_messages(urls=["log"]))) == 5
        with Client(fallback.url) as anonymous, pytest.raises(Unauthorized):
            anonymous.bags()
    finally:
        fallback.stop()
