"""The plain-socket HTTP/1.1 reader behind read_messages, against canned responses."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest

from vlink_bag import ConnectionFailed, StreamError, Unauthorized
from vlink_bag._rawhttp import open_stream


@pytest.fixture()
def canned() -> Iterator[tuple[list[bytes], list[bytes]]]:
    """A one-connection-at-a-time server: answers each request with the next canned response (sent in pieces)."""
    responses: list[bytes] = []
    requests: list[bytes] = []
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()
    port = listener.getsockname()[1]

    def serve() -> None:
        while True:
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            with conn:
                data = b""
                while b"\r\n\r\n" not in data:
                    more = conn.recv(4096)
                    if not more:
                        break
                    data += more
                requests.append(data)
                body = responses.pop(0) if responses else b"HTTP/1.1 500 Oops\r\nContent-Length: 0\r\n\r\n"
                for i in range(0, len(body), 7):  # tiny pieces: every boundary case of the parser
                    conn.sendall(body[i : i + 7])

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    BASE[0] = f"http://127.0.0.1:{port}"
    yield responses, requests
    listener.close()


BASE = [""]


def url(path: str = "/x?format=binary") -> str:
    return BASE[0] + path


def read_all(response: object) -> bytes:
    return b"".join(response.chunks())  # type: ignore[attr-defined]


def test_chunked_with_extensions_and_trailers(canned: tuple[list[bytes], list[bytes]]) -> None:
    responses, requests = canned
    responses.append(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n6\r\n world\r\n0\r\nX-Trailer: 1\r\n\r\n")
    response = open_stream(url(), {"Authorization": "Bearer t", "user-agent": "ua"}, 5, 5)
    assert response.status == 200
    assert read_all(response) == b"hello world"
    response.close()
    request = requests[0].decode()
    assert request.startswith("GET /x?format=binary HTTP/1.1\r\n")
    assert "Authorization: Bearer t\r\n" in request and "Connection: close\r\n" in request
    assert f"Host: 127.0.0.1:{BASE[0].rsplit(':', 1)[1]}\r\n" in request


def test_read_exact_across_chunks(canned: tuple[list[bytes], list[bytes]]) -> None:
    responses, _ = canned
    responses.append(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n4\r\ndefg\r\n2\r\nhi\r\n0\r\n\r\n")
    response = open_stream(url(), {}, 5, 5)
    assert response.read(2) == b"ab"
    assert b"".join(response.read_exact(6)) == b"cdefgh"
    assert read_all(response) == b"i"
    with pytest.raises(StreamError):
        response.read_exact(1)


def test_content_length_and_until_close(canned: tuple[list[bytes], list[bytes]]) -> None:
    responses, _ = canned
    responses.append(b"HTTP/1.1 200 OK\r\nContent-Length: 4\r\n\r\nabcdEXTRA")
    responses.append(b"HTTP/1.0 200 OK\r\n\r\nuntil the end")
    assert read_all(open_stream(url(), {}, 5, 5)) == b"abcd"
    assert read_all(open_stream(url(), {}, 5, 5)) == b"until the end"


def test_cut_short(canned: tuple[list[bytes], list[bytes]]) -> None:
    responses, _ = canned
    responses.append(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nonly")
    responses.append(b"HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\nonly")
    responses.append(b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n")
    for message in ("inside a chunk", "Content-Length", "chunk size"):
        with pytest.raises(StreamError, match=message):
            read_all(open_stream(url(), {}, 5, 5))


def test_error_statuses(canned: tuple[list[bytes], list[bytes]]) -> None:
    responses, _ = canned
    body = b'{"error":{"code":"UNAUTHORIZED","message":"missing bearer token"}}'
    responses.append(b"HTTP/1.1 401 Unauthorized\r\nContent-Length: %d\r\n\r\n%s" % (len(body), body))
    responses.append(b"HTTP/1.1 302 Found\r\nLocation: /elsewhere\r\nContent-Length: 0\r\n\r\n")
    responses.append(b"SSH-2.0-OpenSSH\r\n\r\n")
    with pytest.raises(Unauthorized, match="missing bearer token") as info:
        open_stream(url(), {}, 5, 5)
    assert info.value.status == 401
    with pytest.raises(ConnectionFailed, match="302"):
        open_stream(url(), {}, 5, 5)
    with pytest.raises(ConnectionFailed, match="HTTP/1"):
        open_stream(url(), {}, 5, 5)


def test_read_timeout(canned: tuple[list[bytes], list[bytes]]) -> None:
    responses, _ = canned
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen()  # accepts (backlog) but never answers
    try:
        with pytest.raises(ConnectionFailed, match="timed out"):
            open_stream(f"http://127.0.0.1:{listener.getsockname()[1]}/x", {}, 2, 0.3)
    finally:
        listener.close()
