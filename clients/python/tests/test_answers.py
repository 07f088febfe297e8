"""What the client does with answers that are not what the API defines (redirects, HTML, JSON of another shape,
streams cut short), with tokens and credentials, and that the async client behaves like the sync one. Mostly mocked
servers (httpx transports and a raw socket server), plus the real server where the answer is a real one."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import struct
import threading
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

import vlink_bag
from vlink_bag import AsyncClient, BadRequest, BadResponse, Client, ConnectionFailed, NotFound, StreamError, VlinkBagError

from .conftest import TOKEN, Server, start_server

INFO = {"startTimestamp": 1_773_712_800_123, "totalDuration": 2000, "timezone": 0, "messageCount": 2, "urls": [{"url": "imu", "ser": "raw", "count": 2}]}
FRAME_HEADERS = {"content-type": "application/vnd.vlink.frames", "x-vlink-frame-layout": "1"}


def frame(ts: int, url: bytes = b"imu", payload: bytes = b"abc") -> bytes:
    ser = b"raw"
    header = struct.pack("<qBBH", ts, 5, 1, len(url)) + url + struct.pack("<H", len(ser)) + ser
    return struct.pack("<II", len(header), len(payload)) + header + payload


Handler = Callable[[httpx.Request], httpx.Response]


def with_info(handler: Handler) -> Handler:
    """``handler`` for every route but the info, which is a good one."""

    def route(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/info"):
            return httpx.Response(200, json=INFO)
        return handler(request)

    return route


def run_async(handler: Handler, action: Callable[[AsyncClient], Any], **options: Any) -> Any:
    async def main() -> Any:
        async def async_handler(request: httpx.Request) -> httpx.Response:
            return handler(request)

        async with AsyncClient("http://mock", transport=httpx.MockTransport(async_handler), **options) as client:
            return await action(client)

    return asyncio.run(main())


async def async_messages(client: AsyncClient) -> list[Any]:
    bag = await client.bag("x.vcap")
    return [m async for m in bag.read_messages()]


async def async_dataframe(client: AsyncClient) -> Any:
    bag = await client.bag("x.vcap")
    return await bag.to_dataframe(decode=False)


# -- redirects and non-frame answers on the message stream -----------------------------------------------------------
SSO = "https://sso.example.com/login?next=%2Fbags"


@pytest.mark.parametrize("body", [b"", b"<html><body>Please log in</body></html>" * 40])
def test_a_redirect_on_the_message_stream_is_an_error_naming_it(body: bytes) -> None:
    handler = with_info(lambda request: httpx.Response(302, content=body, headers={"location": SSO, "content-type": "text/html"}))
    reads: list[Callable[[], Any]] = []
    with Client("http://mock", transport=httpx.MockTransport(handler)) as client:
        bag = client.bag("x.vcap")
        reads = [lambda: list(bag.read_messages()), lambda: bag.to_dataframe(decode=False), lambda: bag.to_dataframe(urls="imu")]
        for read in reads:
            with pytest.raises(BadResponse) as error:
                read()
            assert error.value.status == 302 and error.value.code == "BAD_RESPONSE"
            assert "302" in str(error.value) and SSO in str(error.value) and "/v1/bags/x.vcap/" in str(error.value)
        with pytest.raises(BadResponse, match="sso.example.com"):
            bag.page()  # the JSON routes name it too
    for action in (async_messages, async_dataframe):
        with pytest.raises(BadResponse) as error:
            run_async(handler, action)
        assert error.value.status == 302 and SSO in str(error.value)


@pytest.mark.parametrize(
    ("headers", "words"),
    [
        ({"content-type": "text/html; charset=utf-8"}, "text/html"),
        ({}, "no content-type"),
        ({"content-type": "application/vnd.vlink.frames", "x-vlink-frame-layout": "2"}, "layout '2'"),
    ],
)
def test_a_body_that_is_not_the_frame_stream_is_not_parsed_as_frames(headers: dict[str, str], words: str) -> None:
    html = b"<!doctype html><html><head><title>Sign in</title></head><body>" + b"x" * 4000 + b"</body></html>"
    handler = with_info(lambda request: httpx.Response(200, content=html, headers=headers))
    with Client("http://mock", transport=httpx.MockTransport(handler)) as client:
        bag = client.bag("x.vcap")
        for read in (lambda: list(bag.read_messages()), lambda: bag.to_dataframe(decode=False)):
            with pytest.raises(BadResponse, match=words):
                read()
    with pytest.raises(BadResponse, match=words):
        run_async(handler, async_messages)


def test_the_frame_stream_headers_of_the_real_server_are_accepted(server: Server) -> None:
    with Client(server.url) as client:
        response = client._http.get("/v1/bags/drive.vdb/messages", params={"format": "binary", "urls": "log"})
        assert response.headers["content-type"] == "application/vnd.vlink.frames"
        assert response.headers["x-vlink-frame-layout"] == "1"


# -- JSON of another shape --------------------------------------------------------------------------------------------
BODIES = {
    "list": (200, b"[]", "application/json"),
    "null": (200, b"null", "application/json"),
    "object": (200, b"{}", "application/json"),
    "html": (200, b"<html>proxy login</html>", "text/html"),
    "empty": (200, b"", "application/json"),
    "redirect": (302, b"", "text/plain"),
}


def shaped(kind: str, *, good_info: bool) -> Handler:
    status, body, content_type = BODIES[kind]

    def handler(request: httpx.Request) -> httpx.Response:
        if good_info and request.url.path.endswith("/info"):
            return httpx.Response(200, json=INFO)
        return httpx.Response(status, content=body, headers={"content-type": content_type, "location": "http://elsewhere/"})

    return handler


SYNC_CALLS: dict[str, Callable[[Client], Any]] = {
    "health": lambda c: c.health(),
    "bags": lambda c: c.bags(),
    "bag": lambda c: c.bag("x.vcap"),
    "openapi": lambda c: c.openapi(),
    "upload": lambda c: c.upload(b"bytes", "x.vcap"),
    "query": lambda c: c.query("SELECT 1"),
}
BAG_CALLS: dict[str, Callable[[Any], Any]] = {
    "schemas": lambda b: b.schemas(),
    "timing": lambda b: b.timing(),
    "density": lambda b: b.density(),
    "page": lambda b: b.page(),
    "to_dataframe": lambda b: b.to_dataframe(),
}
# What an empty object (or a list) is a valid answer for.
OBJECT_IS_FINE = {"health", "openapi", "upload"}
LIST_IS_FINE = {"timing"}  # the timing route's first version answered a plain list


@pytest.mark.parametrize("kind", list(BODIES))
def test_answers_of_another_shape_are_bad_response(kind: str) -> None:
    def check(name: str, call: Callable[[], Any]) -> None:
        try:
            call()
        except VlinkBagError as error:
            assert isinstance(error, BadResponse), (name, error)
            assert error.status == BODIES[kind][0] and error.url and error.url.startswith("http://mock/v1/"), (name, error)
            assert "/v1/" in error.message, (name, error)
        except BaseException as error:  # noqa: BLE001 - the point: nothing but VlinkBagError
            pytest.fail(f"{name} with a {kind} answer raised {type(error).__name__}: {error!r}")
        else:
            assert (kind == "object" and name in OBJECT_IS_FINE) or (kind == "list" and name in LIST_IS_FINE), f"{name} accepted a {kind} answer"

    with Client("http://mock", transport=httpx.MockTransport(shaped(kind, good_info=False))) as client:
        for name, call in SYNC_CALLS.items():
            check(name, lambda: call(client))
    with Client("http://mock", transport=httpx.MockTransport(shaped(kind, good_info=True))) as client:
        bag = client.bag("x.vcap")
        for name, bag_call in BAG_CALLS.items():
            check(name, lambda: bag_call(bag))

    async def every_async_call(client: AsyncClient) -> None:
        for name in ("health", "bags", "bag", "openapi", "upload", "query"):
            call = {"bag": lambda: client.bag("x.vcap"), "upload": lambda: client.upload(b"bytes", "x.vcap"), "query": lambda: client.query("SELECT 1")}.get(name, getattr(client, name))
            try:
                await call()
            except VlinkBagError as error:
                assert isinstance(error, BadResponse) and error.url, (name, error)
            except BaseException as error:  # noqa: BLE001
                pytest.fail(f"async {name} with a {kind} answer raised {type(error).__name__}: {error!r}")
            else:
                assert kind == "object" and name in OBJECT_IS_FINE, f"async {name} accepted a {kind} answer"

    run_async(shaped(kind, good_info=False), every_async_call)


def test_an_info_without_its_fields_fails_at_bag_not_at_the_first_read() -> None:
    for info in ({"messageCount": 3, "urls": []}, {**INFO, "startTimestamp": "soon"}, {**INFO, "urls": [{"ser": "raw"}]}, {**INFO, "urls": None}):
        handler = lambda request, info=info: httpx.Response(200, json=info)  # noqa: E731
        with Client("http://mock", transport=httpx.MockTransport(handler)) as client:
            with pytest.raises(BadResponse, match="/info") as error:
                client.bag("x.vcap")
            assert error.value.status == 200


def test_page_messages_of_another_shape() -> None:
    for body in ({"messages": [{"url": "imu"}]}, {"messages": [{"url": 5, "timestamp": 1}]}, {"messages": [{"url": "imu", "timestamp": None}]}, {"messages": [], "next": 5}):
        handler = with_info(lambda request, body=body: httpx.Response(200, json=body))
        with Client("http://mock", transport=httpx.MockTransport(handler)) as client:
            with pytest.raises(BadResponse, match="/messages"):
                client.bag("x.vcap").page()


# -- tokens and credentials --------------------------------------------------------------------------------------------
def test_a_token_read_from_a_file_is_stripped(token_server: Server, tmp_path: Path) -> None:
    (tmp_path / "token.txt").write_text(TOKEN + "\n")
    token = (tmp_path / "token.txt").read_text()  # the usual way: with its newline
    with Client(token_server.url, token=token) as client:
        assert len(client.bags()) == 3
        assert client.token == TOKEN and client._headers["authorization"] == f"Bearer {TOKEN}"
        assert TOKEN not in repr(client)
    with Client(token_server.url, token="  \n") as client, pytest.raises(vlink_bag.Unauthorized):
        client.bags()  # only whitespace: no token at all

    async def run() -> int:
        async with AsyncClient(token_server.url, token=f" {TOKEN}\r\n") as client:
            return len(await client.bags())

    assert asyncio.run(run()) == 3


@pytest.mark.parametrize("token", ["s3cr3t token", "s3cr3t\ttoken", "s3cr3t\x00token", "s3cr3t\x7ftoken", "s3cr3tétoken", "s3cr3t\ntoken"])
def test_a_token_with_inner_whitespace_or_controls_is_refused_without_showing_it(token: str) -> None:
    for make in (lambda: Client("http://mock", token=token), lambda: AsyncClient("http://mock", token=token)):
        with pytest.raises(BadRequest) as error:
            make()
        assert "s3cr3t" not in str(error.value) and "token" in str(error.value).lower()
        assert "position 6" in str(error.value)
    with pytest.raises(BadRequest, match="token must be a string"):
        Client("http://mock", token=b"bytes")  # type: ignore[arg-type]


def test_transport_errors_never_show_the_token_or_password() -> None:
    secret = "Sup3rS3cret"

    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError(f"cannot send header {request.headers.get('authorization')!r} to {request.url}")

    def illegal(request: httpx.Request) -> httpx.Response:
        raise httpx.LocalProtocolError(f"Illegal header value {request.headers.get('authorization')!r}")

    with Client("http://alice:pw-" + secret + "@mock:1", token=secret, transport=httpx.MockTransport(refuse)) as client:
        assert secret not in repr(client) and "alice:***@mock:1" in repr(client)
        with pytest.raises(ConnectionFailed) as error:
            client.bags()
        assert secret not in str(error.value) and secret not in repr(error.value) and secret not in (error.value.url or "")
        assert "***" in str(error.value)
    with Client("http://mock", token=secret, transport=httpx.MockTransport(illegal)) as client:
        with pytest.raises(BadRequest) as bad:
            client.health()
        assert secret not in str(bad.value) and "could not be sent" in str(bad.value)


def test_a_password_in_the_base_url_is_masked_in_errors(server: Server) -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        with Client(f"http://alice:hunter2@127.0.0.1:{port}", timeout=2) as client:
            assert repr(client) == f"Client('http://alice:***@127.0.0.1:{port}')"
            with pytest.raises(ConnectionFailed) as refused:
                client.health()
    assert "hunter2" not in str(refused.value) and "hunter2" not in (refused.value.url or "")
    assert f"http://alice:***@127.0.0.1:{port}/v1/health" in str(refused.value)
    # A real answer (404) through a URL with credentials: the error's url is masked too.
    with Client(server.url.replace("http://", "http://alice:hunter2@"), timeout=5) as client:
        with pytest.raises(NotFound) as missing:
            client.bag("nope.vdb")
        bag = client.bag("drive.vdb")
        assert "hunter2" not in repr(bag)
    assert "hunter2" not in str(missing.value) and "alice:***@" in (missing.value.url or "")


# -- the async client is the sync one ----------------------------------------------------------------------------------
class RawServer:
    """A socket server answering each request with ``respond(path) -> bytes`` and then closing the connection."""

    def __init__(self, respond: Callable[[str], bytes]) -> None:
        self.respond = respond
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(16)
        self.url = f"http://127.0.0.1:{self.sock.getsockname()[1]}"
        self.thread = threading.Thread(target=self.serve, daemon=True)
        self.thread.start()

    def serve(self) -> None:
        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                request = b""
                while b"\r\n\r\n" not in request:
                    chunk = conn.recv(65536)
                    if not chunk:
                        break
                    request += chunk
                path = request.split(b" ", 2)[1].decode() if request.count(b" ") >= 2 else "/"
                conn.sendall(self.respond(path))
                conn.shutdown(socket.SHUT_RDWR)

    def close(self) -> None:
        self.sock.close()


def http_answer(body: bytes, headers: dict[str, str], length: int | None = None) -> bytes:
    head = "HTTP/1.1 200 OK\r\n" + "".join(f"{k}: {v}\r\n" for k, v in headers.items())
    head += f"content-length: {len(body) if length is None else length}\r\nconnection: close\r\n\r\n"
    return head.encode() + body


def test_a_stream_cut_inside_a_frame_is_stream_error_sync_and_async() -> None:
    body = frame(0) + frame(1000)

    def respond(path: str) -> bytes:
        if path.split("?")[0].endswith("/info"):
            return http_answer(json.dumps(INFO).encode(), {"content-type": "application/json"})
        return http_answer(body[:-5], FRAME_HEADERS, length=len(body) + 100)  # promises more than it sends

    server = RawServer(respond)
    try:
        with Client(server.url) as client:
            stream = client.bag("x.vcap").read_messages()
            assert next(stream).timestamp == 0
            with pytest.raises(StreamError) as sync_error:
                list(stream)

        async def run() -> list[int]:
            async with AsyncClient(server.url) as client:
                bag = await client.bag("x.vcap")
                return [m.timestamp async for m in bag.read_messages()]

        with pytest.raises(StreamError) as async_error:
            asyncio.run(run())
    finally:
        server.close()
    for error in (sync_error.value, async_error.value):
        assert error.code == "STREAM_ERROR" and error.url == f"{server.url}/v1/bags/x.vcap/messages"


def test_async_parity_on_a_real_server(server: Server) -> None:
    async def run() -> dict[str, Any]:
        async with AsyncClient(server.url) as client:
            bag = await client.bag("drive.vdb")
            out: dict[str, Any] = {"tiny": await bag.timing(factor=1e-7, urls=["imu"]), "big": await bag.timing(factor=1e20, urls=["gap/tick"])}
            for name, call in (("factor", lambda: bag.timing(factor="x")), ("limit", lambda: bag.page(limit=0)), ("buckets", lambda: bag.density(buckets=0))):
                with pytest.raises(BadRequest, match=name):
                    await call()
            async with bag.replay(rate=0, urls=["log"]) as player:  # the async bag's info() is a coroutine
                out["replay"] = [m.timestamp async for m in player]
            return out

    got = asyncio.run(run())
    with Client(server.url) as client:
        bag = client.bag("drive.vdb")
        assert got["tiny"] == bag.timing(factor=1e-7, urls=["imu"]) and got["tiny"][0]["count"] > 0
        assert got["big"] == bag.timing(factor=1e20, urls=["gap/tick"]) and got["big"][0]["gaps"] == []
        for name, call in (("factor", lambda: bag.timing(factor="x")), ("limit", lambda: bag.page(limit=0)), ("buckets", lambda: bag.density(buckets=0))):
            with pytest.raises(BadRequest, match=name):
                call()
        assert got["replay"] == [m.timestamp for m in bag.read_messages(urls=["log"])]


def test_a_timeout_names_its_reason() -> None:
    def slow(request: httpx.Request) -> httpx.Response:
        raise httpx.ReadTimeout("")

    with Client("http://mock", transport=httpx.MockTransport(slow)) as client, pytest.raises(ConnectionFailed) as sync_error:
        client.health()
    with pytest.raises(ConnectionFailed) as async_error:
        run_async(slow, lambda client: client.health())
    for error in (sync_error.value, async_error.value):
        assert str(error).startswith("CONNECTION_FAILED: timed out to http://mock/v1/health: ReadTimeout")


class SlowChunks(httpx.AsyncByteStream):
    def __init__(self, data: bytes, size: int, deadline: float) -> None:
        self.data, self.size, self.deadline = data, size, deadline

    async def __aiter__(self) -> AsyncIterator[bytes]:
        started = time.monotonic()
        for at in range(0, len(self.data), self.size):
            if time.monotonic() - started > self.deadline:
                raise AssertionError(f"the client took over {self.deadline} s for {at} bytes: reassembly is not linear")
            yield self.data[at : at + self.size]


def test_async_reading_of_a_big_message_is_linear() -> None:
    big = os.urandom(16 * 1024 * 1024)
    body = frame(5, payload=b"small") + frame(7, payload=big) + frame(9, payload=b"after")

    async def handler(request: httpx.Request) -> httpx.Response:
        if request.url.path.endswith("/info"):
            return httpx.Response(200, json=INFO)
        return httpx.Response(200, stream=SlowChunks(body, 1024, deadline=20.0), headers=FRAME_HEADERS)

    async def run() -> list[tuple[int, int]]:
        async with AsyncClient("http://mock", transport=httpx.MockTransport(handler)) as client:
            bag = await client.bag("x.vcap")
            out = []
            async for m in bag.read_messages():
                out.append((m.timestamp, len(m.message)))
                if m.timestamp == 7:
                    assert m.message == big
            return out

    started = time.monotonic()
    assert asyncio.run(run()) == [(5, 5), (7, len(big)), (9, 5)]
    assert time.monotonic() - started < 20


class Chunked(httpx.AsyncByteStream):
    def __init__(self, chunks: list[bytes]) -> None:
        self.chunks = chunks

    async def __aiter__(self) -> AsyncIterator[bytes]:
        for chunk in self.chunks:
            yield chunk


@pytest.mark.parametrize("seed", range(6))
def test_async_reassembly_of_randomly_cut_streams(seed: int) -> None:
    """Frames of every size (empty to 200 KiB payloads) cut into chunks of every size (1 byte to 100 KB) read back
    exactly, in order; a stream cut inside a frame is a StreamError."""
    import random

    rng = random.Random(seed)
    frames = [(i * 10, f"u{rng.randrange(3)}".encode(), os.urandom(rng.choice([0, 1, 7, 100, 5000, 70_000, 200_000]))) for i in range(60)]
    body = b"".join(frame(ts, url, payload) for ts, url, payload in frames)
    cuts = sorted(rng.sample(range(1, len(body)), 400))
    chunks = [body[a:b] for a, b in zip([0, *cuts], [*cuts, len(body)])]
    chunks += [b""] * 3

    def run(chunks: list[bytes]) -> list[tuple[int, bytes, bytes]]:
        async def handler(request: httpx.Request) -> httpx.Response:
            if request.url.path.endswith("/info"):
                return httpx.Response(200, json=INFO)
            return httpx.Response(200, stream=Chunked(chunks), headers=FRAME_HEADERS)

        async def main() -> list[tuple[int, bytes, bytes]]:
            async with AsyncClient("http://mock", transport=httpx.MockTransport(handler)) as client:
                bag = await client.bag("x.vcap")
                return [(m.timestamp, m.topic.encode(), m.message) async for m in bag.read_messages()]

        return asyncio.run(main())

    assert run(chunks) == frames
    with pytest.raises(StreamError, match="inside a frame"):
        run([body[: len(body) - 3]])


def test_async_upload_streams_the_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import vlink_bag.aio

    monkeypatch.setattr(vlink_bag.aio, "UPLOAD_CHUNK", 64 * 1024)
    path = tmp_path / "big.vcap"
    path.write_bytes(os.urandom(1024 * 1024 + 17))
    seen: dict[str, Any] = {"chunks": []}

    class Recording(httpx.AsyncBaseTransport):  # httpx.MockTransport reads the whole body before its handler
        async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
            seen["length"] = request.headers.get("content-length")
            async for chunk in request.stream:  # type: ignore[union-attr]
                seen["chunks"].append(len(chunk))
            return httpx.Response(201, json={"id": "big.vcap", "size": sum(seen["chunks"])})

    async def run() -> dict[str, Any]:
        async with AsyncClient("http://mock", transport=Recording()) as client:
            return await client.upload(path, "big.vcap")

    assert asyncio.run(run()) == {"id": "big.vcap", "size": path.stat().st_size}
    assert seen["length"] == str(path.stat().st_size)
    assert len(seen["chunks"]) == 17 and max(seen["chunks"]) <= 64 * 1024


def test_async_upload_to_a_real_server(tmp_path: Path) -> None:
    root = tmp_path / "root"  # a server of its own: the session's bag folder keeps its three bags for other tests
    root.mkdir()
    token_server = start_server(root, tmp_path, token=TOKEN)
    try:
        upload_to(token_server, tmp_path)
    finally:
        token_server.stop()


def upload_to(token_server: Server, tmp_path: Path) -> None:
    path = tmp_path / "result.vcap"
    with vlink_bag.Writer(path, start_time=1_773_712_800_123, timezone=0) as w:
        for i in range(50):
            w.write("result/score", {"i": i}, timestamp=i * 1000)

    async def run() -> dict[str, Any]:
        async with AsyncClient(token_server.url, token=TOKEN) as client:
            with pytest.raises(NotFound, match="no such file"):
                await client.upload(tmp_path / "missing.vcap", "results/missing.vcap")
            with pytest.raises(BadRequest):
                await client.upload(path, "")
            return await client.upload(path, "results/async/result.vcap")

    summary = asyncio.run(run())
    assert summary == {"id": "results/async/result.vcap", "format": "vcap", "size": path.stat().st_size, "messageCount": 50}
    assert (token_server.root / "results" / "async" / "result.vcap").read_bytes() == path.read_bytes()
    with Client(token_server.url, token=TOKEN) as client, pytest.raises(NotFound, match="no such file"):
        client.upload(tmp_path / "missing.vcap", "results/missing.vcap")


# -- base URLs ---------------------------------------------------------------------------------------------------------
def test_an_upper_case_scheme_works_for_rest_and_replay(server: Server) -> None:
    upper = server.url.replace("http://", "HTTP://")
    with Client(upper) as client:
        bag = client.bag("drive.vdb")
        want = [m.timestamp for m in bag.read_messages(urls=["log"])]

        async def replay() -> list[int]:
            async with bag.replay(rate=0, urls=["log"]) as player:
                return [m.timestamp async for m in player]

        assert asyncio.run(replay()) == want and len(want) == 5
        assert client.base_url == server.url
    for bad in ("ftp://host/bags", "ws://host:1", "", "http://"):
        with pytest.raises(BadRequest, match="base_url"):
            Client(bad)
