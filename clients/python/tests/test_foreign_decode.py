"""Foreign MCAP files read locally: JSON channels (jsonschema) and ROS 2 CDR channels (ros2msg) decode into columns;
a payload that does not decode names its own type's problem, not another url's."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import vlink_bag
from vlink_bag import Message, PayloadDecoder

T0 = 1_700_000_000_000_000_000


def test_json_channels_decode(tmp_path: Path) -> None:
    from mcap.writer import Writer

    path = tmp_path / "json.mcap"
    with open(path, "wb") as f:
        w = Writer(f)
        w.start(profile="", library="test")
        schema = w.register_schema("demo.State", "jsonschema", json.dumps({"type": "object"}).encode())
        ch = w.register_channel("/state", "json", schema)
        for i in range(3):
            w.add_message(ch, log_time=T0 + i * 1_000_000, publish_time=T0 + i * 1_000_000, data=json.dumps({"i": i, "pos": {"x": i / 2}}).encode())
        w.finish()
    with vlink_bag.open(path) as bag:
        df = bag.to_dataframe()
        assert bag.info()["storageType"] == "mcap"
    assert list(df["timestamp"]) == [0, 1000, 2000]  # the start is the first message
    assert list(df["i"]) == [0, 1, 2] and list(df["pos.x"]) == [0.0, 0.5, 1.0]
    assert "message" not in df.columns
    assert list(df["data_type"]) == ["demo.State"] * 3


def test_ros2_cdr_channels_decode(tmp_path: Path) -> None:
    pytest.importorskip("mcap_ros2")
    from mcap_ros2.writer import Writer

    path = tmp_path / "ros2.mcap"
    with open(path, "wb") as f:
        w = Writer(f)
        schema = w.register_msgdef("demo_msgs/msg/Pose2D", "float64 x\nfloat64 y\nstring frame\nint32[] ids")
        for i in range(4):
            w.write_message("/pose", schema, {"x": i * 1.5, "y": -i, "frame": f"map{i}", "ids": list(range(i))}, log_time=T0 + i * 10_000_000)
        w.finish()
    with vlink_bag.open(path) as bag:
        df = bag.to_dataframe()
        first = next(iter(bag.read_messages()))
        assert first.schema_type == 5  # CDR
        assert bag.decode(first) is not None and getattr(bag.decode(first), "frame", None) == "map0"
    assert list(df["x"]) == [0.0, 1.5, 3.0, 4.5] and list(df["frame"]) == ["map0", "map1", "map2", "map3"]
    assert list(df["ids"]) == [[], [0], [0, 1], [0, 1, 2]]
    assert list(df["timestamp"]) == [0, 10_000, 20_000, 30_000]


def test_a_decode_error_names_only_its_own_type(tmp_path: Path) -> None:
    decoder = PayloadDecoder([{"name": "other.Broken", "schemaType": 3, "data": b"\xff\xff\xff"}])
    _kind, _value, error = decoder.decode(Message("a", b"\x08\x01", "demo.Missing", 0, 0, "Pub", 3))
    assert error == "no descriptor embedded for demo.Missing"
    _kind, _value, error = decoder.decode(Message("b", b"\x08\x01", "other.Broken", 0, 0, "Pub", 3))
    assert error is not None and "other.Broken is not a FileDescriptorSet" in error


def _as_fixture_json(value: object) -> object:
    """A decoded CBOR value as the fixture's expected file writes it (fixtures/foreign/generator): bytes as lists of
    numbers, integers past 2^53 as text."""
    if isinstance(value, dict):
        return {k: _as_fixture_json(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_as_fixture_json(v) for v in value]
    if isinstance(value, bytes):
        return list(value)
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) > 2**53:
        return str(value)
    return value


def test_cbor_channels_decode_as_cbor2_reads_them() -> None:
    pytest.importorskip("cbor2")
    fixture = Path(__file__).resolve().parents[3] / "fixtures" / "foreign" / "mcap" / "cbor.mcap"
    expected = json.loads(fixture.with_name("cbor.mcap.expected.json").read_text())
    with vlink_bag.open(fixture) as bag:
        assert {u["url"]: u.get("encoding") for u in bag.info()["urls"]} == {"/cbor/state": "cbor", "/cbor/extra": "cbor"}
        messages = list(bag.read_messages())
        decoded = [bag.decode(m) for m in messages]
        df = bag.to_dataframe("/cbor/state")
    assert [m.topic for m in messages] == [m["topic"] for m in expected["messages"]]
    for want in expected["decoded"]:
        assert _as_fixture_json(decoded[want["index"]]) == want["fields"]
    # Flattened into columns like JSON: nested maps joined with ".".
    assert list(df["i"]) == list(range(20)) and "pose.x" in df.columns and "message" not in df.columns
    # Hostile bytes stay bytes with a reason; decode never raises.
    decoder = PayloadDecoder([], [{"url": "/c", "encoding": "cbor"}])
    for bad in (b"\xa1", b"\x5b\xff\xff\xff\xff\xff\xff\xff\xff", b"\x81" * 200_000):
        kind, value, error = decoder.decode(Message("/c", bad, "", 0, 0))
        assert kind is None and value is None and error is not None and error.startswith("cbor decode failed")
