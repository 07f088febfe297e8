"""Publish times and counters by cause (issue #23), read through the server and locally, from .vdb and .vcap: pb/pose
frames were written with a publish time 1.5 ms before their log time, every other frame without one (= its log
time); the recording counted two application causes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from vlink_bag.frames import iter_frames

from .conftest import Expected


def test_publish_times(any_bag: Any, expected: Expected) -> None:
    got = [(m.topic, m.timestamp, m.publish_time) for m in any_bag.read_messages()]
    want = [(f["url"], f["timestamp"], f["publishTime"]) for f in expected.frames]
    assert got == want
    pose = [(t, p) for url, t, p in got if url == "pb/pose"]
    assert len(pose) == 40 and all(p == t - 1_500 for t, p in pose)


def test_json_pages_carry_publish_times(client: Any, expected: Expected) -> None:
    page = client.bag("drive.vdb").page(limit=100)
    want = [(f["timestamp"], f["publishTime"]) for f in expected.frames[:100]]
    assert [(m.timestamp, m.publish_time) for m in page.messages] == want


def test_counters(any_bag: Any, bag_dir: Path) -> None:
    want = json.loads((bag_dir / "expected.json").read_text())["counters"]
    assert any_bag.counters == want
    assert any_bag.info()["counters"] == want


def test_binary_frames_version_2() -> None:
    # A frame without a publish time (version 1 layout) and one with it (8 more header bytes after ser).
    def frame(ts: int, publish: int | None) -> bytes:
        url, ser = b"u", b"s"
        header = ts.to_bytes(8, "little", signed=True) + bytes([5, 1]) + len(url).to_bytes(2, "little") + url
        header += len(ser).to_bytes(2, "little") + ser
        if publish is not None:
            header += publish.to_bytes(8, "little", signed=True)
        payload = b"xy"
        return len(header).to_bytes(4, "little") + len(payload).to_bytes(4, "little") + header + payload

    messages = list(iter_frames([frame(1_000, None) + frame(2_000, -500) + frame(3_000, None)]))
    assert [(m.timestamp, m.publish_time, m.message) for m in messages] == [
        (1_000, 1_000, b"xy"),
        (2_000, -500, b"xy"),
        (3_000, 3_000, b"xy"),
    ]
