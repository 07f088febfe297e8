"""A minimal HTTP/1.1 GET over a plain socket, for the binary message stream only.

httpx (through h11) copies every body byte about three times on its way to the caller, which caps a loopback stream
of big payloads well below what the server sends. This reader takes the body straight from the socket: a chunk is one
``recv`` into a new bytes object, and a big payload is assembled from its pieces with a single join.

It handles exactly what the server's stream needs: ``http://`` without a proxy, ``Connection: close`` (one
connection per stream), chunked or Content-Length bodies. Anything else (https, proxies, custom transports) goes
through httpx.
"""

from __future__ import annotations

import socket
import urllib.request
from collections.abc import Iterator, Mapping
from urllib.parse import urlsplit

from .errors import ConnectionFailed, StreamError, VlinkBagError, error_from_response

__all__ = ["RawResponse", "usable_for", "open_stream"]

_READ_BYTES = 256 * 1024
_MAX_HEADER_BYTES = 64 * 1024
_MAX_ERROR_BODY = 1024 * 1024


def usable_for(url: str) -> bool:
    """True for a plain ``http://`` URL that no proxy setting applies to."""
    parts = urlsplit(url)
    if parts.scheme != "http" or not parts.hostname:
        return False
    proxies = urllib.request.getproxies()
    if not any(k in proxies for k in ("http", "all")):
        return True
    return bool(urllib.request.proxy_bypass(parts.hostname))


class RawResponse:
    """The body of one response, read incrementally from its socket."""

    def __init__(self, sock: socket.socket, url: str, status: int, headers: Mapping[str, str], pending: bytes) -> None:
        self._sock = sock
        self.url = url
        self.status = status
        self.headers = headers
        self._pending = pending  # bytes received past the header, not yet consumed
        te = headers.get("transfer-encoding", "").lower()
        self._chunked = "chunked" in te
        length = headers.get("content-length")
        self._remaining: int | None = None if self._chunked or length is None else int(length)
        self._chunk_left = 0  # bytes left in the current chunk
        self._eof = False

    # -- raw socket bytes ---------------------------------------------------------------------------------------
    def _recv(self, n: int) -> bytes:
        if self._pending:
            data = self._pending[:n]
            self._pending = self._pending[n:]
            return data
        try:
            return self._sock.recv(n)
        except TimeoutError as error:
            raise ConnectionFailed(f"timed out reading {self.url}", url=self.url) from error
        except OSError as error:
            raise ConnectionFailed(f"the connection broke while reading {self.url}: {error}", url=self.url) from error

    def _line(self) -> bytes:
        data = b""
        while True:
            at = data.find(b"\r\n")
            if at >= 0:
                self._pending = data[at + 2 :] + self._pending
                return data[:at]
            if len(data) > _MAX_HEADER_BYTES:
                raise StreamError("malformed chunked encoding (line too long)", url=self.url)
            more = self._recv(64)
            if not more:
                raise StreamError("the stream ended early (inside chunked encoding)", url=self.url)
            data += more

    # -- body bytes ---------------------------------------------------------------------------------------------
    def read(self, n: int = _READ_BYTES) -> bytes:
        """Up to ``n`` body bytes (at least one), or b"" at the end of the body."""
        if self._eof:
            return b""
        if self._chunked:
            if self._chunk_left == 0:
                line = self._line()
                if not line:  # the CRLF closing the previous chunk's data
                    line = self._line()
                try:
                    size = int(line.split(b";", 1)[0].strip(), 16)
                except ValueError:
                    raise StreamError(f"malformed chunk size {line[:40]!r}", url=self.url) from None
                if size == 0:
                    while self._line():  # trailers, up to the empty line
                        pass
                    self._eof = True
                    return b""
                self._chunk_left = size
            data = self._recv(min(n, self._chunk_left))
            if not data:
                raise StreamError("the server ended the message stream early (inside a chunk)", url=self.url)
            self._chunk_left -= len(data)
            return data
        if self._remaining is not None:
            if self._remaining == 0:
                self._eof = True
                return b""
            data = self._recv(min(n, self._remaining))
            if not data:
                raise StreamError("the server ended the message stream early (Content-Length not reached)", url=self.url)
            self._remaining -= len(data)
            return data
        data = self._recv(n)
        if not data:
            self._eof = True
        return data

    def chunks(self) -> Iterator[bytes]:
        while True:
            data = self.read()
            if not data:
                return
            yield data

    def read_exact(self, n: int) -> list[bytes]:
        """Exactly ``n`` body bytes, as the pieces they arrived in; StreamError if the body ends first."""
        pieces = []
        while n > 0:
            data = self.read(n)
            if not data:
                raise StreamError("the stream ended inside a frame", url=self.url)
            pieces.append(data)
            n -= len(data)
        return pieces

    def close(self) -> None:
        try:
            self._sock.close()
        except OSError:
            pass


def open_stream(url: str, headers: Mapping[str, str], connect_timeout: float | None, read_timeout: float | None) -> RawResponse:
    """Sends ``GET url`` and reads the response header. Raises the mapped error for a status ≥ 400."""
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = parts.port or 80
    target = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    try:
        sock = socket.create_connection((host, port), timeout=connect_timeout)
    except TimeoutError as error:
        raise ConnectionFailed(f"timed out connecting to {url}", url=url) from error
    except OSError as error:
        raise ConnectionFailed(f"cannot connect to {url}: {error}", url=url) from error
    try:
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.settimeout(read_timeout)
        host_header = f"[{host}]" if ":" in host else host
        if parts.port:
            host_header += f":{parts.port}"
        lines = [f"GET {target} HTTP/1.1", f"Host: {host_header}", "Connection: close", "Accept-Encoding: identity"]
        lines += [f"{k}: {v}" for k, v in headers.items() if k.lower() not in ("host", "connection", "accept-encoding")]
        sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
        data = b""
        while True:
            end = data.find(b"\r\n\r\n")
            if end >= 0:
                break
            if len(data) > _MAX_HEADER_BYTES:
                raise ConnectionFailed(f"{url} answered with an oversized header", url=url)
            more = sock.recv(65536)
            if not more:
                raise ConnectionFailed(f"{url} closed the connection before answering", url=url)
            data += more
        head = data[:end].decode("latin-1").split("\r\n")
        status_line = head[0].split(" ", 2)
        if len(status_line) < 2 or not status_line[0].startswith("HTTP/1."):
            raise ConnectionFailed(f"{url} did not answer HTTP/1.x ({head[0][:60]!r})", url=url)
        status = int(status_line[1])
        fields: dict[str, str] = {}
        for line in head[1:]:
            name, _, value = line.partition(":")
            key = name.strip().lower()
            fields[key] = f"{fields[key]}, {value.strip()}" if key in fields else value.strip()
        response = RawResponse(sock, url, status, fields, data[end + 4 :])
        if status >= 400:
            body = b""
            while len(body) < _MAX_ERROR_BODY:
                more = response.read()
                if not more:
                    break
                body += more
            raise error_from_response(status, body, url)
        if status != 200:
            raise ConnectionFailed(f"{url} answered {status} to a message stream", url=url)
        return response
    except VlinkBagError:
        sock.close()
        raise
    except TimeoutError as error:
        sock.close()
        raise ConnectionFailed(f"timed out waiting for {url}", url=url) from error
    except OSError as error:
        sock.close()
        raise ConnectionFailed(f"the connection to {url} broke: {error}", url=url) from error
    except BaseException:
        sock.close()
        raise
