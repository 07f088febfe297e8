"""Saving results back to the server (Client.upload → PUT /v1/bags/{id}) and the asyncio client (every route)."""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import vlink_bag
from vlink_bag import AsyncClient, BadRequest, Client, Conflict, CorruptBag, Unauthorized

from .conftest import TOKEN, Expected, Server


def test_a_notebook_saves_a_bag_back(token_server: Server, tmp_path: Path) -> None:
    path = tmp_path / "result.vcap"
    with vlink_bag.Writer(path, start_time=1_773_712_800_123, timezone=60) as w:
        for i in range(20):
            w.write("result/score", {"i": i, "score": i * 1.5}, timestamp=i * 1000)
    with Client(token_server.url, token=TOKEN) as client:
        summary = client.upload(path, "results/py/result.vcap")
        assert summary == {"id": "results/py/result.vcap", "format": "vcap", "size": path.stat().st_size, "messageCount": 20}
        assert (token_server.root / "results" / "py" / "result.vcap").read_bytes() == path.read_bytes()
        remote = client.bag("results/py/result.vcap").to_dataframe()
        with vlink_bag.open(path) as local:
            pd.testing.assert_frame_equal(remote, local.to_dataframe())
        with pytest.raises(Conflict) as again:
            client.upload(path.read_bytes(), "results/py/result.vcap")
        assert again.value.code == "ALREADY_EXISTS" and again.value.status == 409
        with pytest.raises(CorruptBag):
            client.upload(b"not a bag", "results/py/junk.vcap")
        with pytest.raises(BadRequest):
            client.upload(path, "../escape.vcap")
    with Client(token_server.url) as anonymous, pytest.raises(Unauthorized):
        anonymous.upload(path, "results/py/anon.vcap")


def test_async_client_covers_every_route(server: Server, expected: Expected) -> None:
    async def main() -> dict[str, Any]:
        async with AsyncClient(server.url) as client:
            out: dict[str, Any] = {"health": await client.health(), "bags": await client.bags(), "openapi": await client.openapi()}
            bag = await client.bag("runs/drive.vcap")
            out["info"] = await bag.info()
            out["schemas"] = await bag.schemas()
            out["messages"] = [m async for m in bag.read_messages(start_time=0.3, end_time=0.9, unit="s", urls=["cam/big", "gap/tick"])]
            out["page"] = await bag.page(limit=7)
            out["timing"] = await bag.timing(factor=3, urls=["gap/tick"])
            out["density"] = await bag.density(buckets=10)
            out["df"] = await bag.to_dataframe(urls="pb/pose")
            out["channels"] = bag.get_channellist()
            return out

    got = asyncio.run(main())
    assert got["health"]["ok"] is True
    assert "runs/drive.vcap" in {b["id"] for b in got["bags"]}
    assert "/v1/bags/{id}/density" in got["openapi"]["paths"]
    with Client(server.url) as client:
        bag = client.bag("runs/drive.vcap")
        assert got["info"] == bag.info()
        assert got["schemas"] == bag.schemas()
        assert got["messages"] == list(bag.read_messages(300_000, 900_000, urls=["cam/big", "gap/tick"]))
        assert [m.message for m in got["messages"] if m.topic == "cam/big"] == [f["bytes"] for f in expected.frames if f["url"] == "cam/big"]
        assert got["page"] == bag.page(limit=7)
        assert got["timing"] == bag.timing(factor=3, urls=["gap/tick"])
        assert got["timing"][0]["gaps"] == [{"startUs": 505_000, "lengthUs": 110_000}]
        assert got["density"] == bag.density(buckets=10)
        pd.testing.assert_frame_equal(got["df"], bag.to_dataframe(urls="pb/pose"))
        assert got["channels"] == bag.get_channellist()
