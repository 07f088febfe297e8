"""Writer/RecordWriter: files written here are read back by this client, by the TypeScript reader (which also runs
its check()), by `vlink-bag check` and by the official mcap reader."""

from __future__ import annotations

import base64
import datetime as dt
import json
import subprocess
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from google.protobuf import descriptor_pb2, timestamp_pb2

import vlink_bag
from vlink_bag import BadRequest, Conflict, RecordReader, RecordWriter, Writer
from vlink_bag.errors import CorruptBag
from vlink_bag.header_crc import header_crc

from .conftest import CLI, REPO, node_binary, require_built

READ_BAG = Path(__file__).resolve().parent / "fixtures" / "read_bag.mjs"
START_MS = 1_773_712_800_123


def ts_read(path: Path) -> dict[str, Any]:
    require_built()
    result = subprocess.run([node_binary(), str(READ_BAG), str(path)], capture_output=True, cwd=REPO, timeout=120)
    assert result.returncode == 0, result.stderr.decode()
    data = json.loads(result.stdout)
    for f in data["frames"]:
        f["bytes"] = base64.b64decode(f["data"])
    return data


def cli_check(path: Path) -> None:
    if not CLI.exists():
        pytest.skip("packages/cli is not built")
    result = subprocess.run([node_binary(), str(CLI), "check", str(path)], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


def write_sample(path: Path, **options: Any) -> list[tuple[int, str, bytes, str, str]]:
    """Writes every kind of payload and time; returns (µs, url, bytes, ser, action) in writing order."""
    stamp = timestamp_pb2.Timestamp(seconds=12, nanos=5)
    out = []
    with Writer(path, start_time=START_MS, timezone=480, tag="py", process="pytest", **options) as w:
        out.append((w.write("imu", {"seq": 0, "acc": {"x": 0.5}}, timestamp=0), "imu", b'{"seq":0,"acc":{"x":0.5}}', "json", "Pub"))
        out.append((w.write("imu", {"seq": 1, "acc": {"x": 1.5}}, timestamp=dt.timedelta(milliseconds=10)), "imu", b'{"seq":1,"acc":{"x":1.5}}', "json", "Pub"))
        out.append((w.write("pb/stamp", stamp, timestamp=pd.Timedelta(milliseconds=20)), "pb/stamp", stamp.SerializeToString(), "google.protobuf.Timestamp", "Pub"))
        absolute = dt.datetime.fromtimestamp((START_MS + 30) / 1000, tz=dt.timezone.utc)
        out.append((w.write("raw", b"\x00\x01\x02", timestamp=absolute, ser="raw"), "raw", b"\x00\x01\x02", "raw", "Pub"))
        out.append((w.write("log", "line one", timestamp=40_000, action="Sub"), "log", b"line one", "text", "Sub"))
        rpc_ser = "google.protobuf.Timestamp|google.protobuf.Timestamp"
        out.append((w.write("rpc", stamp.SerializeToString(), timestamp=50_000, ser=rpc_ser, schema_type="protobuf", action="C/Req"), "rpc", stamp.SerializeToString(), rpc_ser, "C/Req"))
        out.append((w.write("rpc", b"", timestamp=50_500, ser=rpc_ser, schema_type="protobuf", action="C/Resp"), "rpc", b"", rpc_ser, "C/Resp"))
        out.append((w.write("big", bytes(range(256)) * 4096, timestamp=1.25, unit="s"), "big", bytes(range(256)) * 4096, "", "Pub"))
    return out


@pytest.mark.parametrize("compress", ["none", "zstd"])
def test_written_vcap_reads_everywhere(tmp_path: Path, compress: str) -> None:
    path = tmp_path / "out" / "w.vcap"
    written = write_sample(path, compress=compress, chunk_size=64 * 1024)
    # This client.
    with vlink_bag.open(path) as bag:
        got = [(m.timestamp, m.topic, m.message, m.action) for m in bag.read_messages()]
        info = bag.info()
    assert got == [(t, u, d, a) for t, u, d, _s, a in written]
    assert info["timezone"] == 480 and info["startTimestamp"] == START_MS and info["tagName"] == "py"
    assert info["compressionType"] == ("zstd" if compress == "zstd" else "None")
    # The TypeScript reader sees the same frames and its check() passes.
    ts = ts_read(path)
    assert ts["check"] is True
    assert [(f["timestamp"], f["url"], f["bytes"], f["ser"]) for f in ts["frames"]] == [(t, u, d, s) for t, u, d, s, _a in written]
    assert {k: v for k, v in ts["info"].items() if k not in ("path", "fileSize")} == {k: v for k, v in info.items() if k not in ("path", "fileSize")}
    schema = next(s for s in ts["schemas"] if s["name"] == "google.protobuf.Timestamp")
    fds = descriptor_pb2.FileDescriptorSet.FromString(base64.b64decode(schema["data"]))
    assert [f.name for f in fds.file] == ["google/protobuf/timestamp.proto"]
    cli_check(path)
    # The official mcap reader.
    from mcap.reader import make_reader

    with open(path, "rb") as f:
        reader = make_reader(f)
        assert reader.get_header().profile == "vlink"
        rows = [(c.topic, m.log_time, m.publish_time, m.sequence, bytes(m.data), c.metadata["action"]) for _s, c, m in reader.iter_messages(log_time_order=False)]
        header = next(m for m in reader.iter_metadata() if m.name == "VLinkHeader").metadata
    assert [(u, lt, d, a) for u, lt, _p, _q, d, a in rows] == [(u, START_MS * 1_000_000 + t * 1000, d, a) for t, u, d, _s, a in written]
    assert all(lt == p for _u, lt, p, _q, _d, _a in rows)
    assert [q for u, *_x, q, _d, _a in [(r[0], r[1], r[3], r[4], r[5]) for r in rows] if u == "imu"] == [1, 2]
    assert header["start_timestamp"] == str(START_MS) and header["timezone"] == "480" and header["version"] == "2.1.0"
    assert header["header_crc32"] == header_crc(header)


def test_header_crc_matches_the_typescript_one_and_a_garbled_start_is_refused(tmp_path: Path) -> None:
    # The vector of packages/backend-mcap/src/vcap/header-crc.test.ts (format reference §5.6).
    entries = {
        "tag": "drive-1", "version": "2.1.0", "compress": "zstd", "process": "proc",
        "date": "2026/03/17 10:00:00:123", "timezone": "480", "start_timestamp": "1773712800123",
    }
    assert header_crc(entries) == "3237806072"
    # Keys in code point order, as the TypeScript writer sorts them (UTF-16 order would differ here).
    assert header_crc({"\U00010000": "b", "\ue000": "a", "tag": "x"}) == "1232498351"
    path = tmp_path / "g.vcap"
    write_sample(path, compress="zstd")
    data = bytearray(path.read_bytes())
    at = data.index(b"start_timestamp") + len(b"start_timestamp")
    length = int.from_bytes(data[at:at + 4], "little")
    last = at + 4 + length - 1
    data[last] = ord("0") if data[last] == ord("9") else data[last] + 1  # one garbled digit of the start
    path.write_bytes(bytes(data))
    with pytest.raises(CorruptBag) as caught:
        vlink_bag.open(path)
    assert caught.value.code == "CORRUPT_FILE" and "header_crc32" in str(caught.value)


def test_split_recording_vcapx(tmp_path: Path) -> None:
    path = tmp_path / "split.vcapx"
    with Writer(path, start_time=START_MS, timezone=0, segment_size=1000) as w:
        for i in range(30):
            w.write("a", bytes([i]) * 100, timestamp=i * 1000, ser="raw")
    segments = sorted(p.name for p in tmp_path.glob("split.*.vcap"))
    assert len(segments) == 3  # 30 × 100 B with ≤ 1000 B per segment
    manifest = json.loads(path.read_text())
    assert list(manifest) == ["VLinkHeader", "VLinkUrls", "VLinkFiles"]
    assert manifest["VLinkHeader"]["complete"] is True and manifest["VLinkHeader"]["count"] == 30
    assert manifest["VLinkFiles"] == ["split.1.vcap", "split.2.vcap", "split.3.vcap"]
    assert list(manifest["VLinkUrls"][0]) == ["index", "url", "type", "action", "ser", "encoding", "count", "size", "loss", "freq"]
    ts = ts_read(path)
    assert ts["check"] is True
    assert [(f["timestamp"], f["bytes"]) for f in ts["frames"]] == [(i * 1000, bytes([i]) * 100) for i in range(30)]
    with vlink_bag.open(path) as bag:
        assert [(m.timestamp, m.message) for m in bag.read_messages(start_time=9_000, end_time=21_000)] == [(i * 1000, bytes([i]) * 100) for i in range(9, 22)]
        assert bag.info()["splitCount"] == 3
    cli_check(path)


def test_segments_by_interval(tmp_path: Path) -> None:
    path = tmp_path / "t.vcapx"
    with Writer(path, start_time=START_MS, segment_interval=dt.timedelta(seconds=1)) as w:
        for i in range(5):
            w.write("a", b"x", timestamp=i * 600_000, ser="raw")
    assert json.loads(path.read_text())["VLinkFiles"] == ["t.1.vcap", "t.2.vcap", "t.3.vcap"]
    assert json.loads(path.read_text())["VLinkHeader"]["split_by_time"] == 1000
    assert [f["timestamp"] for f in ts_read(path)["frames"]] == [i * 600_000 for i in range(5)]


def test_writer_refuses_bad_input(tmp_path: Path) -> None:
    with pytest.raises(BadRequest):
        Writer(tmp_path / "x.vdb")
    with pytest.raises(BadRequest):
        Writer(tmp_path / "x.vcap", segment_size=10)
    with Writer(tmp_path / "x.vcap", start_time=START_MS) as w:
        w.write("a", b"1", timestamp=0, ser="raw")
        with pytest.raises(Conflict):
            w.write("a", b"1", timestamp=1, ser="other")
        with pytest.raises(BadRequest):
            w.write("a", b"1", timestamp=dt.datetime.fromtimestamp(START_MS / 1000 - 5, tz=dt.timezone.utc), ser="raw")
        with pytest.raises(BadRequest):
            w.write("", b"1", timestamp=0)
        with pytest.raises(BadRequest):
            w.write("a", object(), timestamp=0)  # type: ignore[arg-type]
        # Before: a label no family has was taken for "unknown" without a word, and a time past 2^64 ns raised
        # struct.error out of the record encoder.
        with pytest.raises(BadRequest, match="schema_type must be a family number") as bad_family:
            w.write("b", b"1", timestamp=0, schema_type="protobuff")
        assert bad_family.value.code == "INVALID_ARGUMENT"
        with pytest.raises(BadRequest, match=r"past the largest exact time \(2\^53 − 1 µs\)"):
            w.write("b", b"1", timestamp=2**53)
        with pytest.raises(BadRequest, match="past the largest exact time"):
            w.write("b", b"1", timestamp=2**70)
        w.write("b", b"1", timestamp=2**53 - 1, ser="raw")
        # Numbers outside the families are VLink's resolve_type's to guess from the ser (as the TypeScript writer
        # does); they were stored as they came.
        w.write("c", b"1", timestamp=1, ser="raw", schema_type=99)
        w.write("d", b"1", timestamp=2, schema_type="CDR")
    families = {f["url"]: f["schemaType"] for f in ts_read(tmp_path / "x.vcap")["frames"]}
    assert families == {"a": 1, "b": 1, "c": 1, "d": 5}
    assert [m.timestamp for m in vlink_bag.open(tmp_path / "x.vcap").read_messages()] == [0, 2**53 - 1, 1, 2]


def test_apollo_record_writer_and_reader(tmp_path: Path) -> None:
    """Apollo's RecordWriter calls (absolute ns, ProtoDesc) → a .vcap → Apollo's RecordReader calls."""
    from vlink_bag.apollo_types import fds_to_proto_desc
    from vlink_bag.writer import descriptor_set_of

    name, fds = descriptor_set_of(timestamp_pb2.Timestamp)
    proto_desc = fds_to_proto_desc(fds, name)
    t0 = START_MS * 1_000_000
    path = tmp_path / "apollo.vcap"
    writer = RecordWriter()
    assert writer.open(str(path))
    assert writer.write_channel("/apollo/stamp", name, proto_desc)
    assert writer.write_message("/apollo/stamp", timestamp_pb2.Timestamp(seconds=1).SerializeToString(), t0 + 1_000)
    assert writer.write_message("/apollo/stamp", timestamp_pb2.Timestamp(seconds=2), t0 + 2_000_000, raw=False)
    assert writer.get_messagenumber("/apollo/stamp") == 2 and writer.get_messagetype("/apollo/stamp") == name
    writer.close()
    reader = RecordReader(str(path))
    messages = list(reader.read_messages())
    assert [(m.topic, m.data_type, m.timestamp) for m in messages] == [("/apollo/stamp", name, t0 + 1_000), ("/apollo/stamp", name, t0 + 2_000_000)]
    assert timestamp_pb2.Timestamp.FromString(messages[1].message).seconds == 2
    assert [m.timestamp for m in reader.read_messages(start_time=t0 + 1_001)] == [t0 + 2_000_000]
    assert reader.get_channellist() == ["/apollo/stamp"]
    assert reader.get_protodesc("/apollo/stamp") == proto_desc
    assert ts_read(path)["check"] is True
    reader.close()


def test_json_payloads_refuse_nan_and_infinity(tmp_path: Path) -> None:
    """JSON has no NaN/Infinity: Python's json would write bare words every other tool reads as text, not objects."""
    import numpy as np

    path = tmp_path / "nan.vcap"
    with Writer(path, start_time=START_MS, timezone=0) as w:
        for data, where, shown in (
            ({"x": float("nan"), "y": 2.0}, "data['x']", "nan"),
            ({"x": 1.0, "v": [0.0, {"y": float("-inf")}]}, "data['v'][1]['y']", "-inf"),
            ([1, np.float64("inf")], "data[1]", "inf"),
        ):
            with pytest.raises(BadRequest) as error:
                w.write("sensor", data, timestamp=1_000)
            assert error.value.code == "INVALID_ARGUMENT"
            assert where in str(error.value) and shown in str(error.value) and "'sensor'" in str(error.value)
        with pytest.raises(BadRequest, match="not JSON-serializable"):
            w.write("sensor", {"when": {1, 2}}, timestamp=1_000)
        # Integers past 2^63 are fine: the TypeScript decoder keeps integers past 2^53 exact (as decimal strings).
        w.write("sensor", {"x": 1.5, "y": None, "id": 2**63 + 5}, timestamp=2_000)
    with vlink_bag.open(path) as bag:
        assert [bag.decode(m) for m in bag.read_messages()] == [{"x": 1.5, "y": None, "id": 2**63 + 5}]
    frames = ts_read(path)["frames"]
    assert [f["bytes"] for f in frames] == [b'{"x":1.5,"y":null,"id":9223372036854775813}']
    if CLI.exists():
        out = subprocess.run([node_binary(), str(CLI), "cat", "--decode", "-q", str(path)], capture_output=True, text=True, cwd=REPO, timeout=60)
        decoded = json.loads(out.stdout.splitlines()[0])["decoded"]
        assert isinstance(decoded, dict) and decoded["x"] == 1.5  # an object, not the payload as a string
