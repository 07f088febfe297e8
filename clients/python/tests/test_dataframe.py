"""to_dataframe and decoding: protobuf through the bag's embedded FileDescriptorSet, JSON, text, raw bytes."""

from __future__ import annotations

import math
from typing import Any

import pandas as pd
import pytest

import vlink_bag

from vlink_bag import Message, PayloadDecoder

from .conftest import Expected


@pytest.fixture()
def bag(any_bag: Any) -> Any:
    """Every test here runs on the server's bags and on the same files read locally."""
    return any_bag


def frames_of(expected: Expected, url: str) -> list[dict[str, Any]]:
    return [f for f in expected.frames if f["url"] == url]


def test_protobuf_columns(bag: Any, expected: Expected) -> None:
    df = bag.to_dataframe(urls=["pb/pose"])
    want = frames_of(expected, "pb/pose")
    assert len(df) == len(want) == 40
    assert list(df.columns[:8]) == ["timestamp", "publish_time", "time", "elapsed", "topic", "action", "data_type", "size"]
    assert {"seq", "x", "y", "frame", "vel.x", "vel.y", "vel.z", "tags", "mode"} <= set(df.columns)
    assert "message" not in df.columns  # every row decoded
    assert df["seq"].dtype == "uint64" or df["seq"].dtype == "int64"
    for (_, row), f in zip(df.iterrows(), want):
        d = f["decoded"]
        assert row["timestamp"] == f["timestamp"]
        assert row["size"] == len(f["bytes"])
        assert row["seq"] == int(d["seq"])
        assert row["x"] == d["x"] and row["y"] == d["y"]
        assert row["frame"] == d["frame"]
        assert (row["vel.x"], row["vel.y"], row["vel.z"]) == (d["vel"]["x"], d["vel"]["y"], d["vel"]["z"])
        assert list(row["tags"]) == d["tags"]
        assert row["mode"] == d["mode"]
    assert df["time"].dt.tz is not None
    assert df["time"].iloc[0] == pd.Timestamp(expected.start_ms * 1000 + want[0]["timestamp"], unit="us", tz="UTC")


def test_json_columns_are_flattened(bag: Any, expected: Expected) -> None:
    df = bag.to_dataframe(urls="imu", start_time=100_000, end_time=199_999)
    want = [f for f in frames_of(expected, "imu") if 100_000 <= f["timestamp"] <= 199_999]
    assert len(df) == len(want) == 10
    assert list(df["seq"]) == [f["decoded"]["seq"] for f in want]
    assert list(df["acc.x"]) == [f["decoded"]["acc"]["x"] for f in want]
    assert list(df["ok"]) == [f["decoded"]["ok"] for f in want]


def test_mixed_urls_text_raw_and_rpc(bag: Any, expected: Expected) -> None:
    df = bag.to_dataframe()
    assert len(df) == len(expected.frames)
    assert list(df["timestamp"]) == [f["timestamp"] for f in expected.frames]
    log = df[df.topic == "log"]
    assert list(log["text"]) == [f["decoded"] for f in frames_of(expected, "log")]
    raw = df[df.topic == "cam/big"]
    assert list(raw["message"]) == [f["bytes"] for f in frames_of(expected, "cam/big")]
    assert df.loc[df.topic == "pb/pose", "message"].isna().all()
    assert "decode_error" not in df.columns  # raw payloads are not decode failures
    rpc = df[df.topic == "rpc/echo"]
    assert list(rpc["action"]) == ["C/Req", "C/Resp"] * 2
    assert list(rpc["data_type"]) == ["demo.Vec3", "demo.Pose"] * 2
    req = rpc.iloc[0]
    assert (req["x"], req["y"], req["z"]) == (0, 1, 2)
    resp = rpc.iloc[1]
    assert (resp["frame"], resp["mode"]) == ("echo", "MODE_AUTO")
    assert math.isnan(resp["z"])


def test_decode_false_keeps_bytes(bag: Any, expected: Expected) -> None:
    df = bag.to_dataframe(urls=["pb/pose", "imu"], decode=False)
    assert list(df.columns) == ["timestamp", "publish_time", "time", "elapsed", "topic", "action", "data_type", "size", "message"]
    assert list(df["message"]) == [f["bytes"] for f in expected.frames if f["url"] in ("pb/pose", "imu")]


def test_empty_window(bag: Any) -> None:
    with pytest.warns(vlink_bag.EmptyWindowWarning, match="outside the recording"):
        df = bag.to_dataframe(urls=["imu"], start_time=5_000_000)
    assert len(df) == 0
    assert list(df.columns) == ["timestamp", "publish_time", "time", "elapsed", "topic", "action", "data_type", "size"]


def test_message_class_and_decode(bag: Any) -> None:
    first = next(iter(bag.read_messages(urls=["pb/pose"], start_time=52_000)))
    Pose = bag.message_class("demo.Pose")
    pose = Pose.FromString(first.message)
    assert (pose.seq, pose.frame, list(pose.tags), pose.vel.x) == (1_000_000_000_001, "map1", [1], 1.0)
    assert bag.decode(first) == pose
    assert bag.message_class("demo.Nope") is None
    imu = next(iter(bag.read_messages(urls=["imu"])))
    assert bag.decode(imu) == {"seq": 0, "acc": {"x": 0, "y": 0, "z": 9.81}, "ok": True}
    raw = next(iter(bag.read_messages(urls=["gap/tick"])))
    assert bag.decode(raw) == raw.message


def test_missing_descriptor_is_reported() -> None:
    decoder = PayloadDecoder([])
    message = Message("pb", b"\x08\x01", "demo.Pose", 0, 0, "Pub", 3)
    assert decoder.decode(message) == (None, None, "no descriptor embedded for demo.Pose")
    fields, error = decoder.fields(message)
    assert fields is None and error is not None and "demo.Pose" in error


def test_broken_payload_and_schema_are_reported(expected: Expected) -> None:
    decoder = PayloadDecoder([{"name": "demo.Pose", "schemaType": 3, "data": expected.fds}, {"name": "junk", "schemaType": 3, "data": b"\xff\xff\xff"}])
    kind, value, error = decoder.decode(Message("pb", b"\xff\xff\xff\xff", "demo.Pose", 0, 0, "Pub", 3))
    assert kind is None and error is not None and error.startswith("protobuf decode failed")
    kind, value, _ = decoder.decode(Message("pb", b"\x08\x05", "demo.Pose", 0, 0, "Pub", 3))
    assert kind == "protobuf" and value.seq == 5
    assert decoder.decode(Message("j", b"not json", "json", 0, 0, "Pub", 1))[:2] == ("text", "not json")
    assert decoder.decode(Message("j", b"[1, 2]", "json", 0, 0, "Pub", 1))[:2] == ("json", [1, 2])
    assert decoder.fields(Message("j", b"[1, 2]", "json", 0, 0, "Pub", 1))[0] == {"value": [1, 2]}
    assert decoder.decode(Message("t", b"\xff", "text", 0, 0, "Pub", 1)) == (None, None, "payload is not UTF-8")


def test_well_known_types_and_maps_without_embedding_them() -> None:
    """A descriptor importing google/protobuf/timestamp.proto that the bag does not embed, with a map field, a
    repeated message and a field named like a DataFrame column."""
    from google.protobuf import descriptor_pb2

    fdp = descriptor_pb2.FileDescriptorProto(name="wk.proto", package="wk", syntax="proto3", dependency=["google/protobuf/timestamp.proto"])
    item = fdp.message_type.add(name="Item")
    item.field.add(name="id", number=1, type=descriptor_pb2.FieldDescriptorProto.TYPE_INT32, label=1)
    msg = fdp.message_type.add(name="Event")
    msg.field.add(name="at", number=1, type=11, type_name=".google.protobuf.Timestamp", label=1)
    msg.field.add(name="items", number=2, type=11, type_name=".wk.Item", label=3)
    entry = msg.nested_type.add(name="LabelsEntry")
    entry.options.map_entry = True
    entry.field.add(name="key", number=1, type=9, label=1)
    entry.field.add(name="value", number=2, type=9, label=1)
    msg.field.add(name="labels", number=3, type=11, type_name=".wk.Event.LabelsEntry", label=3)
    msg.field.add(name="topic", number=4, type=9, label=1)
    fds = descriptor_pb2.FileDescriptorSet(file=[fdp]).SerializeToString()
    decoder = PayloadDecoder([{"name": "wk.Event", "schemaType": 3, "data": fds}])
    Event = decoder.message_class("wk.Event")
    assert Event is not None
    event = Event(items=[{"id": 1}, {"id": 2}], labels={"a": "b"}, topic="t")
    event.at.seconds = 12
    fields, error = decoder.fields(Message("e", event.SerializeToString(), "wk.Event", 0, 0, "Pub", 3))
    assert error is None
    assert fields == {"at.seconds": 12, "at.nanos": 0, "items": [{"id": 1}, {"id": 2}], "labels": {"a": "b"}, "topic": "t"}


def encode(ts: int, url: str, data: bytes, ser: str, schema_type: int) -> bytes:
    import struct

    u, s = url.encode(), ser.encode()
    header = struct.pack("<qBBH", ts, 5, schema_type, len(u)) + u + struct.pack("<H", len(s)) + s
    return struct.pack("<II", len(header), len(data)) + header + data


def test_clashing_field_names_are_prefixed_and_failures_reported() -> None:
    """A served bag (mocked) whose protobuf has fields named like the DataFrame's columns, and one whose type has no
    embedded descriptor."""
    import base64

    import httpx
    from google.protobuf import descriptor_pb2

    from vlink_bag import Client

    fdp = descriptor_pb2.FileDescriptorProto(name="c.proto", package="c", syntax="proto3")
    m = fdp.message_type.add(name="C")
    for number, name in enumerate(["timestamp", "size", "message", "value"], start=1):
        m.field.add(name=name, number=number, type=3, label=1)
    fds = descriptor_pb2.FileDescriptorSet(file=[fdp]).SerializeToString()
    body = encode(1, "c", bytes([8, 5, 16, 6, 24, 7, 32, 8]), "c.C", 3) + encode(2, "d", b"\x08\x01", "c.Missing", 3)

    def handler(request: httpx.Request) -> httpx.Response:
        path = request.url.path
        if path.endswith("/info"):
            return httpx.Response(200, json={"startTimestamp": 0, "totalDuration": 0, "messageCount": 2, "urls": []})
        if path.endswith("/schemas"):
            return httpx.Response(200, json={"schemas": [{"name": "c.C", "encoding": "protobuf", "schemaType": 3, "data": base64.b64encode(fds).decode()}]})
        return httpx.Response(200, content=body, headers={"content-type": "application/vnd.vlink.frames", "x-vlink-frame-layout": "1"})

    with Client("http://mock", transport=httpx.MockTransport(handler)) as client:
        df = client.bag("c.vdb").to_dataframe()
    assert list(df.columns) == [
        "timestamp", "publish_time", "time", "elapsed", "topic", "action", "data_type", "size",
        "msg.timestamp", "msg.size", "msg.message", "value", "message", "decode_error",
    ]
    assert list(df["timestamp"]) == [1, 2]
    assert df["msg.timestamp"].iloc[0] == 5 and df["msg.size"].iloc[0] == 6 and df["value"].iloc[0] == 8
    assert df["message"].iloc[0] is None and df["message"].iloc[1] == b"\x08\x01"
    assert df["decode_error"].iloc[0] is None
    assert df["decode_error"].iloc[1].startswith("no descriptor embedded for c.Missing")


@pytest.mark.parametrize("urls", [["odd,url"], ["gap/tick"]])
def test_undecodable_rows_keep_their_bytes(bag: Any, expected: Expected, urls: list[str]) -> None:
    df = bag.to_dataframe(urls=urls)
    assert list(df["message"]) == [f["bytes"] for f in expected.frames if f["url"] in urls]
