"""The README's Apollo parity table, row by row: RecordReader on local files and on served bags, RecordWriter, and
the Apollo types (ProtoDesc, Header) that the VLink-native API returns on request."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from google.protobuf import descriptor_pb2

import vlink_bag
from vlink_bag import RecordMessage, RecordReader
from vlink_bag.apollo_types import APOLLO_HEADER_FIELDS, parse_fields, to_file_descriptor_set

from .conftest import Expected

START_NS = 1_773_712_800_123 * 1_000_000


@pytest.fixture()
def reader(any_bag: Any) -> RecordReader:
    return RecordReader(any_bag)  # RecordReader(bag) for served bags; RecordReader(path) is tested below


def test_record_reader_opens_a_path(bag_dir: Path, expected: Expected) -> None:
    for name in ("drive.vdb", "runs/drive.vcap"):
        with RecordReader(str(bag_dir / name)) as reader:
            assert sum(1 for _ in reader.read_messages()) == len(expected.frames)


def test_read_messages_in_absolute_ns(reader: RecordReader, expected: Expected) -> None:
    messages = list(reader.read_messages())
    assert len(messages) == len(expected.frames)
    first = messages[0]
    assert isinstance(first, RecordMessage)
    topic, message, data_type, timestamp = first
    assert (topic, message, timestamp) == (expected.frames[0]["url"], expected.frames[0]["bytes"], START_NS + expected.frames[0]["timestamp"] * 1000)
    window = list(reader.read_messages(START_NS + 300_000_000, START_NS + 300_000_000))
    assert [m.topic for m in window] == [f["url"] for f in expected.frames if f["timestamp"] == 300_000]
    assert list(reader.read_messages(0, 18446744073709551615)) == messages  # Apollo's defaults: everything
    assert list(reader.read_messages(1, START_NS - 1)) == []  # before the recording
    rpc = [m for m in messages if m.topic == "rpc/echo"]
    assert [m.data_type for m in rpc] == ["demo.Vec3", "demo.Pose"] * 2  # the half of "Req|Resp" per action


def test_getters(reader: RecordReader) -> None:
    assert reader.get_channellist() == sorted(reader.get_channellist())
    assert reader.get_channellist() == ["cam/big", "gap/tick", "imu", "log", "odd,url", "pb/pose", "rpc/echo"]
    assert reader.get_messagenumber("imu") == 200
    assert reader.get_messagenumber("nope") == 0
    assert reader.get_messagetype("pb/pose") == "demo.Pose"
    assert reader.get_messagetype("rpc/echo") == "demo.Vec3|demo.Pose"
    reader.reset()
    assert reader.get_messagenumber("log") == 5


def test_protodesc_is_apollos(reader: RecordReader, expected: Expected) -> None:
    desc = reader.get_protodesc("pb/pose")
    fields = parse_fields(desc)
    # ProtoDesc { bytes desc = 1 (a FileDescriptorProto); repeated ProtoDesc dependencies = 2 }
    file = descriptor_pb2.FileDescriptorProto.FromString(next(v for n, _w, v in fields if n == 1))
    assert file.name == "demo/pose.proto" and [m.name for m in file.message_type] == ["Vec3", "Pose"]
    assert to_file_descriptor_set(desc) == expected.fds  # and back, byte for byte
    assert reader.get_protodesc("imu") == b""
    assert reader.bag.get_protodesc("pb/pose") == expected.fds  # the native API: a FileDescriptorSet
    assert reader.bag.get_protodesc("pb/pose", apollo=True) == desc


def test_headerstring_is_apollos(reader: RecordReader) -> None:
    header = {n: v for n, _w, v in parse_fields(reader.get_headerstring())}
    number = APOLLO_HEADER_FIELDS
    assert header[number["major_version"]] == 2 and header[number["minor_version"]] == 1
    assert header[number["message_number"]] == 396
    assert header[number["begin_time"]] == START_NS
    assert header[number["end_time"]] == START_NS + 1_990_000_000
    assert header[number["channel_number"]] == 7
    assert header[number["is_complete"]] == 1
    native = reader.bag.get_headerstring()
    assert isinstance(native, str) and '"messageCount": 396' in native


def test_protodesc_with_dependencies_round_trips() -> None:
    """A type importing a well-known type: the ProtoDesc nests the import, and converts back with imports first."""
    from google.protobuf import timestamp_pb2

    from vlink_bag.apollo_types import fds_to_proto_desc

    dep = descriptor_pb2.FileDescriptorProto()
    timestamp_pb2.DESCRIPTOR.CopyToProto(dep)
    main = descriptor_pb2.FileDescriptorProto(name="ev.proto", package="ev", dependency=["google/protobuf/timestamp.proto"])
    main.message_type.add(name="Event").field.add(name="at", number=1, type=11, type_name=".google.protobuf.Timestamp", label=1)
    fds = descriptor_pb2.FileDescriptorSet(file=[dep, main]).SerializeToString()
    desc = fds_to_proto_desc(fds, "ev.Event")
    fields = parse_fields(desc)
    assert descriptor_pb2.FileDescriptorProto.FromString(fields[0][2]).name == "ev.proto"
    nested = parse_fields(next(v for n, _w, v in fields if n == 2))
    assert descriptor_pb2.FileDescriptorProto.FromString(nested[0][2]).name == "google/protobuf/timestamp.proto"
    assert [f.name for f in descriptor_pb2.FileDescriptorSet.FromString(to_file_descriptor_set(desc)).file] == ["google/protobuf/timestamp.proto", "ev.proto"]
    assert vlink_bag.PayloadDecoder([{"name": "ev.Event", "schemaType": 3, "data": to_file_descriptor_set(desc)}]).message_class("ev.Event") is not None


def test_record_writer_refuses_what_apollo_would_not_take(tmp_path: Path) -> None:
    """Before: a string time raised a bare ValueError from int(), a float was truncated without a word, and a
    write_channel of the wrong types or with bytes that are no descriptor a bare "truncated varint" ValueError."""
    import numpy as np

    from vlink_bag import BadRequest, RecordWriter

    writer = RecordWriter()
    assert writer.open(str(tmp_path / "w.vcap"))
    t0 = 1_700_000_000_000_000_000
    for wrong, message in (("t", "not str"), (1.5e18, "not float"), (True, "not bool")):
        with pytest.raises(BadRequest, match=f"time must be an integer of ns since the epoch, {message}") as error:
            writer.write_message("/a", b"x", wrong)
        assert error.value.code == "INVALID_ARGUMENT"
    with pytest.raises(BadRequest, match="write_channel takes a channel name and a type name"):
        writer.write_channel(5, "T", b"")  # type: ignore[arg-type]
    with pytest.raises(BadRequest, match="proto_desc must be bytes, not int"):
        writer.write_channel("/a", "T", 7)  # type: ignore[arg-type]
    with pytest.raises(BadRequest, match="/a: proto_desc is neither Apollo's ProtoDesc nor a FileDescriptorSet"):
        writer.write_channel("/a", "T", b"\x0a\xff")
    assert writer.write_message("/a", b"x", np.int64(t0))  # numpy's integers are times too
    with pytest.raises(BadRequest, match="before the recording start"):
        writer.write_message("/a", b"y", t0 - 1)
    writer.close()
    bag = vlink_bag.open(tmp_path / "w.vcap")
    assert [m.message for m in bag.read_messages()] == [b"x"]
    with pytest.raises(BadRequest, match="decode takes a Message of read_messages\\(\\), not int"):
        bag.decode(5)  # type: ignore[arg-type]
    with pytest.raises(BadRequest, match="a bag path is a str or os.PathLike, not int"):
        vlink_bag.open(5)  # type: ignore[arg-type]


def test_bag_paths_no_file_can_have_are_refused(tmp_path: Path) -> None:
    """A path with a NUL character (Python's os raised a bare ValueError "embedded null byte", and open() said "no
    such file" for the name with a space), an empty one, bytes; RecordWriter given a path where Apollo's API takes
    segmentation sizes (it raised "invalid literal for int()"). Nothing is created."""
    from vlink_bag import BadRequest, RecordWriter, Writer

    nul = str(tmp_path / "a\0b.vcap")
    for open_it in (vlink_bag.open, RecordReader, Writer, lambda p: RecordWriter().open(p)):
        for path, message in ((nul, "must not contain a NUL character"), ("", "must not be empty"), (b"x.vcap", "not bytes")):
            with pytest.raises(BadRequest, match=message) as error:
                open_it(path)
            assert error.value.code == "INVALID_ARGUMENT"
    for wrong in ("w.vcap", -1, 1.5, None):
        with pytest.raises(BadRequest, match="file_segmentation_size_kb must be an integer ≥ 0"):
            RecordWriter(wrong)  # type: ignore[arg-type]
    with pytest.raises(BadRequest, match="time_sec must be an integer ≥ 0"):
        RecordWriter().set_intervaltime_fileseg("60")  # type: ignore[arg-type]
    assert list(tmp_path.iterdir()) == []
