"""Publish times and counters by cause (issue #23), read through the server and locally, from .vdb and .vcap: pb/pose
frames were written with a publish time 1.5 ms before their log time, every other frame without one (= its log
time); the recording counted two application causes."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import vlink_bag
from vlink_bag.dataframe import Columns
from vlink_bag.frames import frames_to_columns, iter_frames

from .conftest import Expected


def test_publish_times(any_bag: Any, expected: Expected) -> None:
    got = [(m.topic, m.timestamp, m.publish_time) for m in any_bag.read_messages()]
    want = [(f["url"], f["timestamp"], f["publishTime"]) for f in expected.frames]
    assert got == want
    pose = [(t, p) for url, t, p in got if url == "pb/pose"]
    assert len(pose) == 40 and all(p == t - 1_500 for t, p in pose)


def test_dataframe_publish_time_column(any_bag: Any, expected: Expected) -> None:
    df = any_bag.to_dataframe(decode=False)
    want = [(f["url"], f["timestamp"], f["publishTime"]) for f in expected.frames]
    assert list(zip(df["topic"], df["timestamp"], df["publish_time"])) == want
    assert str(df["publish_time"].dtype) == "int64"
    pose = df[df["topic"] == "pb/pose"]
    assert len(pose) == 40 and ((pose["timestamp"] - pose["publish_time"]) == 1_500).all()


@pytest.mark.parametrize("native", [True, False])
def test_binary_frames_version_2_to_columns(native: bool) -> None:
    # The DataFrame path (no Message per frame) reads the publish time too, with and without the C extension.
    def frame(ts: int, publish: int | None, url: bytes = b"u") -> bytes:
        ser = b"s"
        header = ts.to_bytes(8, "little", signed=True) + bytes([5, 1]) + len(url).to_bytes(2, "little") + url
        header += len(ser).to_bytes(2, "little") + ser
        if publish is not None:
            header += publish.to_bytes(8, "little", signed=True)
        return len(header).to_bytes(4, "little") + (2).to_bytes(4, "little") + header + b"xy"

    body = frame(1_000, None) + frame(2_000, -500) + frame(3_000, None, b"v") + frame(4_000, 3_990)
    columns = frames_to_columns(body, Columns(), native=native)
    assert [int(t) for t in columns.timestamps] == [1_000, 2_000, 3_000, 4_000]
    assert [int(p) for p in columns.publish_times] == [1_000, -500, 3_000, 3_990]
    assert [columns.kinds[int(k)][0] for k in columns.keys] == ["u", "u", "v", "u"]
    plain = frames_to_columns(frame(1_000, None) + frame(2_000, None), Columns(), native=native)
    assert plain.publish_times is None or [int(p) for p in plain.publish_times] == [1_000, 2_000]


def test_publish_time_window(any_bag: Any, expected: Expected) -> None:
    # pb/pose was sampled 1.5 ms before it was logged: a publish window picks other frames than the same log window.
    frames = expected.frames
    pose = [f["timestamp"] for f in frames if f["url"] == "pb/pose"]
    begin, end = pose[5] - 1_000, pose[10] - 1_000  # pose 5 is in the log window only, pose 10 in the publish one
    by_publish = [(f["url"], f["timestamp"]) for f in frames if begin <= f["publishTime"] <= end]
    by_log = [(f["url"], f["timestamp"]) for f in frames if begin <= f["timestamp"] <= end]
    assert by_publish != by_log
    got = [(m.topic, m.timestamp) for m in any_bag.read_messages(begin, end, time_base="publish")]
    assert got == by_publish
    assert [(m.topic, m.timestamp) for m in any_bag.read_messages(begin, end)] == by_log
    df = any_bag.to_dataframe(start_time=begin, end_time=end, decode=False, time_base="publish")
    assert list(zip(df["topic"], df["timestamp"])) == by_publish
    with pytest.raises(vlink_bag.BadRequest, match="time_base"):
        list(any_bag.read_messages(time_base="wall"))


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
