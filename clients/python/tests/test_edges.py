"""Edge cases of windows and url filters, read locally, through the server (sync and async) and with the CLI: float
windows whose ends sit exactly on a message (1.001 s is 1000999.99… µs as a binary product), urls with a comma or
surrounding whitespace (which the server's ``urls=`` parameter splits and trims), and JSON pages with a publish-time
window."""

from __future__ import annotations

import asyncio
import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

import vlink_bag
from vlink_bag import AsyncClient, Client
from vlink_bag.remote import needs_local_filter

from .conftest import CLI, REPO, Expected, Server, node_binary, start_server

START_MS = 1_773_712_800_123
ODD_URLS = ["a,b", "a", "b", " padded ", "tail\t", "\u00a0nbsp"]


@pytest.fixture(scope="module")
def edges(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """``edges.vcap``: url ``tick`` at every whole ms from 0 to 2.1 s, url ``fine`` at the µs of :func:`fine_us`, and
    one message on each of ``ODD_URLS``."""
    root = tmp_path_factory.mktemp("edges")
    fine = set(fine_us())
    with vlink_bag.Writer(root / "edges.vcap", start_time=START_MS, timezone=0) as w:
        for ms in range(0, 2101):
            w.write("tick", ms.to_bytes(4, "little"), timestamp=ms * 1000, ser="raw")
            for us in range(ms * 1000, ms * 1000 + 1000):
                if us in fine:
                    w.write("fine", b"f", timestamp=us, ser="raw")
            if ms % 300 == 150 and ms // 300 < len(ODD_URLS):
                w.write(ODD_URLS[ms // 300], b"odd", timestamp=ms * 1000 + 1, ser="raw")
    return root


@pytest.fixture(scope="module")
def edges_server(edges: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    running = start_server(edges, tmp_path_factory.mktemp("logs"))
    yield running
    running.stop()


def cli_cat(path: Path, *args: str) -> list[dict[str, Any]]:
    if not CLI.exists():
        pytest.fail(f"{CLI.relative_to(REPO)} missing: run `npm run build` first")
    out = subprocess.run([node_binary(), str(CLI), "cat", str(path), "--json", "-q", *args], capture_output=True, text=True, check=True, timeout=60)
    return [json.loads(line) for line in out.stdout.splitlines() if line.strip()]


def fine_us() -> list[int]:
    """µs whose ms value as a float (``1.001`` for 1001 µs) times 1000 is not the whole µs."""
    return [us for us in range(1000, 3000) if (us / 1000) * 1000 != us][:30]


def boundary_seconds() -> list[float]:
    """Whole-ms times of `tick` whose float product with 10⁶ is not the whole µs (both directions)."""
    out = []
    for ms in range(1, 2100):
        s = ms / 1000
        if s * 1_000_000 != ms * 1000:
            out.append(s)
    return out


def test_float_windows_keep_the_messages_on_their_ends(edges: Path, edges_server: Server) -> None:
    seconds = boundary_seconds()
    assert 1.001 in seconds and 2.007 in seconds and len(seconds) > 50  # the cases of the report are among them
    cases: list[tuple[dict[str, Any], list[int]]] = []
    for s in seconds[:40] + [1.001, 2.007]:
        us = round(s * 1000) * 1000
        cases.append(({"urls": "tick", "start_s": s, "end_s": s}, [us]))
        cases.append(({"urls": "tick", "start_time": s, "end_time": s, "unit": "s"}, [us]))
    for us in fine_us():
        cases.append(({"urls": "fine", "start_time": us / 1000, "end_time": us / 1000, "unit": "ms"}, [us]))
    assert 1001 in fine_us()  # unit="ms", 1.001: the report's case
    cases.append(({"urls": "tick", "start_s": 0.5, "end_s": 1.001}, [ms * 1000 for ms in range(500, 1002)]))
    cases.append(({"urls": "tick", "start_s": 2.007, "end_s": 2.01}, [ms * 1000 for ms in range(2007, 2011)]))
    with vlink_bag.open(edges / "edges.vcap") as local, Client(edges_server.url) as client:
        remote = client.bag("edges.vcap")
        for kwargs, want in cases:
            for bag in (local, remote):
                got = [m.timestamp for m in bag.read_messages(**kwargs)]
                assert got == want, (bag, kwargs)
                assert list(bag.to_dataframe(**kwargs)["timestamp"]) == want, (bag, kwargs)
            assert [m.timestamp for m in remote.page(limit=1000, **kwargs).messages] == want, kwargs
    # The CLI's -b/-e (seconds, as typed) select the same messages.
    for begin, end in (("1.001", "1.001"), ("0.5", "1.001"), ("2.007", "2.010")):
        with vlink_bag.open(edges / "edges.vcap") as local:
            mine = [m.timestamp for m in local.read_messages(urls="tick", start_s=float(begin), end_s=float(end))]
        assert len(cli_cat(edges / "edges.vcap", "-u", "tick", "-b", begin, "-e", end)) == len(mine) > 0, (begin, end)


def local_view(edges: Path, url: str) -> list[tuple[int, str]]:
    with vlink_bag.open(edges / "edges.vcap") as local:
        return [(m.timestamp, m.topic) for m in local.read_messages(urls=[url])]


class Transport(httpx.HTTPTransport):
    """Records the requests' URLs; ``old=True`` drops their ``url=`` parameters on the way, as a server from before
    that parameter ignores it."""

    def __init__(self, old: bool = False) -> None:
        super().__init__()
        self.old = old
        self.seen: list[httpx.URL] = []

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if self.old:
            request.url = request.url.copy_remove_param("url")
        self.seen.append(request.url)
        return super().handle_request(request)


@pytest.mark.parametrize("old_server", [False, True], ids=["url-param", "server-before-url-param"])
@pytest.mark.parametrize("url", ODD_URLS)
def test_urls_with_commas_or_spaces_read_the_same_everywhere(edges: Path, edges_server: Server, url: str, old_server: bool) -> None:
    want = local_view(edges, url)
    assert len(want) == 1 and want[0][1] == url
    transport = Transport(old=old_server)
    with Client(edges_server.url, transport=transport) as client:
        bag = client.bag("edges.vcap")
        first = bag.page(urls=[url], limit=1)
        odd = needs_local_filter(url)  # "a" and "b" are plain: there to check that "a,b" does not bring them
        sent = transport.seen[-1].params
        if odd and old_server:  # every url comes back, one per page: the wanted one is not on the first page
            assert first.messages == [] and first.next is not None
        else:  # the server filters exactly: the first page of one message is that url's message
            assert [(m.timestamp, m.topic) for m in first.messages] == want
        if odd:
            assert sent.get_list("url") == ([] if old_server else [url]) and "urls" not in sent
        else:
            assert sent.get_list("urls") == [url] and "url" not in sent
        assert [(m.timestamp, m.topic) for m in bag.read_messages(urls=[url])] == want
        assert list(bag.to_dataframe(urls=[url])["timestamp"]) == [t for t, _ in want]
        assert [(m.timestamp, m.topic) for m in bag.page(urls=[url], limit=10_000).messages] == want
        # Paging one message at a time: the cursor goes on filtering for the same url on every page.
        paged = [(m.timestamp, m.topic) for page in bag.iter_pages(urls=[url], limit=200) for m in page.messages]
        assert paged == want
        both = [(m.timestamp, m.topic) for page in bag.iter_pages(urls=[url, "b"], limit=500) for m in page.messages]
        assert both == (want if url == "b" else sorted(want + local_view(edges, "b")))
        assert [t["url"] for t in bag.timing(urls=[url])] == [url]
        density = bag.density(buckets=4, urls=[url])
        assert [u["url"] for u in density["urls"]] == [url] and density["total"] == 1

    async def run() -> tuple[Any, ...]:
        async with AsyncClient(edges_server.url) as client:
            bag = await client.bag("edges.vcap")
            messages = [(m.timestamp, m.topic) async for m in bag.read_messages(urls=[url])]
            page = await bag.page(urls=[url], limit=10_000)
            pages = [(m.timestamp, m.topic) async for p in bag.iter_pages(urls=[url], limit=200) for m in p.messages]
            density = await bag.density(buckets=4, urls=[url])
            timing = await bag.timing(urls=[url])
            return messages, [(m.timestamp, m.topic) for m in page.messages], pages, density, timing

    messages, page, pages, density, timing = asyncio.run(run())
    assert messages == page == pages == want
    assert ([u["url"] for u in density["urls"]], density["total"]) == ([url], 1)
    assert [t["url"] for t in timing] == [url]


def test_async_density_filters_like_the_sync_one(server: Server) -> None:
    async def run() -> dict[str, Any]:
        async with AsyncClient(server.url) as client:
            bag = await client.bag("drive.vdb")
            return await bag.density(buckets=10, urls=["odd,url"])

    got = asyncio.run(run())
    with Client(server.url) as client:
        want = client.bag("drive.vdb").density(buckets=10, urls=["odd,url"])
    assert got == want
    assert [u["url"] for u in got["urls"]] == ["odd,url"] and got["total"] == 3


def test_page_takes_a_publish_time_window(bag: Any, server: Server, expected: Expected) -> None:
    any_bag = bag  # through the server: pages are a server route
    pose = [f for f in expected.frames if f["url"] == "pb/pose"]
    begin, end = pose[3]["publishTime"], pose[6]["publishTime"]
    want = [m.timestamp for m in any_bag.read_messages(begin, end, time_base="publish")]
    assert want and want != [m.timestamp for m in any_bag.read_messages(begin, end)]
    page = any_bag.page(begin, end, time_base="publish", limit=2)
    got = [m.timestamp for p in any_bag.iter_pages(begin, end, time_base="publish", limit=2) for m in p.messages]
    assert got == want
    assert [m.timestamp for m in page.messages] == want[:2]
    with pytest.raises(vlink_bag.BadRequest, match="time_base"):
        any_bag.page(time_base="sample")

    async def run() -> list[int]:
        async with AsyncClient(server.url) as client:
            bag = await client.bag(any_bag.id)
            return [m.timestamp async for p in bag.iter_pages(begin, end, time_base="publish", limit=3) for m in p.messages]

    assert asyncio.run(run()) == want
