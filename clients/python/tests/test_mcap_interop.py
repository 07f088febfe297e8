"""The .mcap and .vcap files the TypeScript writer produces, read by the official MCAP Python reader with CRC
validation and decoded by the official decoders (mcap_ros1, mcap_ros2, mcap_protobuf; JSON by json.loads).

Each case clones a foreign fixture (written by the formats' own Python tools, fixtures/foreign) with the CLI, then
checks every message (topic, log time truncated to the µs, payload SHA-256, order) against the fixture's
expected.json, and the decoded samples listed there against what the official decoders make of our copy."""

from __future__ import annotations

import hashlib
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

from .conftest import CLI, REPO, node_binary

FOREIGN = REPO / "fixtures" / "foreign"
# rosbag2's mcap storage is read in file order (as rosbag2's sequential reader does); rosbags lists it by time.
FILE_ORDER = {"ros2/mcap"}

CASES = [
    ("ros1/plain.bag", ".mcap"),
    ("ros1/bz2.bag", ".vcap"),
    ("mcap/ros1.mcap", ".mcap"),
    ("ros2/sqlite3", ".mcap"),
    ("ros2/mcap", ".vcap"),
    ("mcap/ros2.mcap", ".mcap"),
    ("mcap/protobuf.mcap", ".mcap"),
    ("mcap/protobuf.mcap", ".vcap"),
    ("apollo/sensors.record", ".mcap"),
    ("mcap/json.mcap", ".mcap"),
    ("mcap/json.mcap", ".vcap"),
]


def clone(source: Path, target: Path) -> None:
    if not CLI.exists():
        pytest.skip("the CLI is not built (npm run build)")
    result = subprocess.run(
        [node_binary(), str(CLI), "clone", str(source), str(target), "-q"], capture_output=True, text=True, cwd=REPO, timeout=120
    )
    assert result.returncode == 0, result.stderr


def decoders() -> list[Any]:
    from mcap_protobuf.decoder import DecoderFactory as ProtobufDecoders
    from mcap_ros1.decoder import DecoderFactory as Ros1Decoders
    from mcap_ros2.decoder import DecoderFactory as Ros2Decoders

    return [Ros1Decoders(), Ros2Decoders(), ProtobufDecoders()]


def plain(value: Any) -> Any:
    """A decoded ROS / protobuf / JSON value as dicts, lists and scalars."""
    if hasattr(value, "DESCRIPTOR"):  # protobuf: the JSON mapping expected.json uses
        from google.protobuf.json_format import MessageToDict

        return MessageToDict(value, preserving_proto_field_name=True)
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, dict):
        return {k: plain(v) for k, v in value.items()}
    slots = getattr(value, "__slots__", None)
    if slots:
        fields = {name: plain(getattr(value, name)) for name in slots}
        # genpy's ROS 1 time/duration (secs, nsecs); rosbags, the reference of some fixtures, says sec, nanosec.
        if set(fields) == {"secs", "nsecs"}:
            return {**fields, "sec": fields["secs"], "nanosec": fields["nsecs"]}
        return fields
    return value


def assert_fields(expected: Any, actual: Any, where: str) -> None:
    """Every field the reference tools decoded is in our copy's decoding, equal."""
    if isinstance(expected, dict):
        assert isinstance(actual, dict), f"{where}: {actual!r} is not a message"
        for key, value in expected.items():
            assert key in actual, f"{where}.{key} missing from {sorted(actual)}"
            assert_fields(value, actual[key], f"{where}.{key}")
    elif isinstance(expected, list) and isinstance(actual, (list, tuple, bytes, bytearray)):
        assert len(expected) == len(actual), where
        for i, (e, a) in enumerate(zip(expected, actual)):
            assert_fields(e, a, f"{where}[{i}]")
    else:
        assert expected == actual, f"{where}: {actual!r} != {expected!r}"


@pytest.mark.parametrize(("fixture", "ext"), CASES, ids=[f"{f}->{e}" for f, e in CASES])
def test_official_reader_and_decoders(tmp_path: Path, fixture: str, ext: str) -> None:
    from mcap.reader import make_reader

    expected = json.loads((FOREIGN / f"{fixture}.expected.json").read_text())
    target = tmp_path / (fixture.replace("/", "_").replace(".", "_") + ext)
    clone(FOREIGN / fixture, target)

    factories = decoders()
    with open(target, "rb") as f:
        reader = make_reader(f, validate_crcs=True)
        summary = reader.get_summary()
        assert summary is not None and summary.statistics is not None
        assert summary.statistics.message_count == len(expected["messages"])
        got = []
        decoded: list[Any] = []
        for schema, channel, message in reader.iter_messages(log_time_order=False):
            assert channel.message_encoding != "", channel.topic  # always a declared encoding
            got.append((channel.topic, message.log_time, hashlib.sha256(message.data).hexdigest()))
            if channel.message_encoding == "json":
                decoded.append(json.loads(message.data))
                continue
            decoder = None
            for factory in factories:
                decoder = factory.decoder_for(channel.message_encoding, schema)
                if decoder is not None:
                    break
            if channel.message_encoding in ("ros1", "cdr", "protobuf"):
                assert decoder is not None, f"{channel.topic}: no official decoder for {channel.message_encoding}"
            decoded.append(decoder(message.data) if decoder else None)

        if ext == ".mcap":
            # A copy keeps an MCAP source's attachments (times in ns, exact; CRCs checked) and metadata records.
            attachments = [
                (a.name, a.media_type, a.log_time, a.create_time, hashlib.sha256(a.data).hexdigest())
                for a in reader.iter_attachments()
            ]
            records = {m.name: m.metadata for m in reader.iter_metadata()}
    if ext == ".mcap":
        assert attachments == [
            (a["name"], a["media_type"], int(a["log_time_ns"]), int(a["create_time_ns"]), a["sha256"])
            for a in expected.get("attachments", [])
        ]
        for record in expected.get("metadata", []):
            assert records[record["name"]] == record["metadata"]

    want = [(m["topic"], int(m["log_time_ns"]) // 1000 * 1000, m["sha256"]) for m in expected["messages"]]
    if fixture in FILE_ORDER:
        assert sorted(got) == sorted(want)
    else:
        assert got == want
    position = {key: i for i, key in enumerate(got)}
    checked = 0
    for sample in expected.get("decoded", []):
        index = position[want[sample["index"]]]
        assert got[index][0] == sample["topic"]
        if decoded[index] is None:
            continue
        assert_fields(sample["fields"], plain(decoded[index]), f"{fixture}#{sample['index']} {sample['topic']}")
        checked += 1
    assert checked > 0
