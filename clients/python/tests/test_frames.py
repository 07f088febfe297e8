"""The incremental parser of the binary frame layout, without a server."""

from __future__ import annotations

import random
import subprocess
import struct
from collections.abc import Iterator

import pytest

from vlink_bag import Message, StreamError, iter_frames
from vlink_bag.frames import data_type_for, parse_frame


def encode(ts: int, url: str, data: bytes, ser: str = "raw", action: int = 5, schema_type: int = 1, extra: bytes = b"") -> bytes:
    """The server's FrameEncoder, in Python (plus optional unknown trailing header bytes)."""
    u = url.encode()
    s = ser.encode()
    header = struct.pack("<qBBH", ts, action, schema_type, len(u)) + u + struct.pack("<H", len(s)) + s + extra
    return struct.pack("<II", len(header), len(data)) + header + data


FRAMES = [
    (0, "a", b"", "", 0, 0),
    (2**40 + 7, "shm://点云", bytes(range(256)) * 3, "pb.X", 2, 3),
    (-5, "x", b"\x09", "raw", 8, 1),
    (17, "big", random.Random(1).randbytes(300_000), "raw", 5, 1),
    (18, "rpc", b"req", "Req|Resp", 1, 3),
    (19, "rpc", b"resp", "Req|Resp", 4, 3),
    (20, "weird", b"?", "raw", 200, 1),  # an action this client does not know
]
STREAM = b"".join(encode(ts, url, data, ser, action, st) for ts, url, data, ser, action, st in FRAMES)


def check(messages: list[Message], start_us: int = 0) -> None:
    assert len(messages) == len(FRAMES)
    for m, (ts, url, data, ser, action, st) in zip(messages, FRAMES):
        assert (m.timestamp, m.topic, m.message, m.schema_type) == (ts, url, data, st)
        assert m.abs_timestamp == start_us + ts
    assert [m.action for m in messages] == ["Unknown", "C/Resp", "Get", "Pub", "C/Req", "S/Resp", "Unknown"]
    assert [m.data_type for m in messages][-3:] == ["Req", "Resp", "raw"]


def test_whole_buffer() -> None:
    check(list(iter_frames([STREAM], 1_000)), 1_000)


@pytest.mark.parametrize("size", [1, 2, 7, 19, 20, 21, 64, 4096, 65536])
def test_any_chunking(size: int) -> None:
    chunks = [STREAM[i : i + size] for i in range(0, len(STREAM), size)]
    check(list(iter_frames(chunks)))


def test_random_chunking_and_empty_chunks() -> None:
    rng = random.Random(7)
    for _ in range(20):
        chunks, i = [], 0
        while i < len(STREAM):
            n = rng.choice([0, 1, 3, 50, 1000, 70_000])
            chunks.append(STREAM[i : i + n])
            i += n
        check(list(iter_frames(chunks)))


def test_bytearray_and_memoryview_chunks() -> None:
    check(list(iter_frames([bytearray(STREAM[:100]), memoryview(STREAM)[100:]])))


def test_unknown_trailing_header_bytes_are_skipped() -> None:
    data = encode(5, "u", b"payload", "json", extra=b"\x01\x02\x03") + encode(6, "u", b"p2", "json")
    messages = list(iter_frames([data]))
    assert [(m.timestamp, m.topic, m.data_type, m.message) for m in messages] == [(5, "u", "json", b"payload"), (6, "u", "json", b"p2")]


def test_empty_stream() -> None:
    assert list(iter_frames([])) == []
    assert list(iter_frames([b"", b""])) == []


@pytest.mark.parametrize("cut", [1, 8, 19, 25, len(STREAM) // 2, len(STREAM) - 1])
def test_truncated_stream_raises(cut: int) -> None:
    with pytest.raises(StreamError) as info:
        list(iter_frames([STREAM[:cut]], source="http://x/messages"))
    assert info.value.code == "STREAM_ERROR"
    assert "http://x/messages" in str(info.value)


def test_malformed_headers_raise() -> None:
    with pytest.raises(StreamError, match="too short"):
        list(iter_frames([struct.pack("<II", 3, 0) + b"\x00" * 30]))
    bad_url_len = struct.pack("<II", 14, 0) + struct.pack("<qBBH", 0, 5, 1, 500) + b"\x00\x00"
    with pytest.raises(StreamError, match="url"):
        list(iter_frames([bad_url_len]))
    not_utf8 = encode(0, "u", b"")
    not_utf8 = not_utf8[:20] + b"\xff" + not_utf8[21:]
    with pytest.raises(StreamError, match="UTF-8"):
        list(iter_frames([not_utf8]))


def test_parse_frame() -> None:
    m = parse_frame(encode(7, "u", b"abc", "t"), 100)
    assert (m.timestamp, m.abs_timestamp, m.topic, m.message, m.data_type) == (7, 107, "u", b"abc", "t")
    with pytest.raises(StreamError):
        parse_frame(encode(7, "u", b"abc") * 2)


def test_message_is_a_4_tuple_for_apollo_code() -> None:
    m = Message("t", b"d", "ty", 5, 1005, "Pub", 1)
    topic, data, data_type, ts = m
    assert (topic, data, data_type, ts) == ("t", b"d", "ty", 5)
    assert len(m) == 4 and m[1] == b"d" and m[-1] == 5
    assert m == Message("t", b"d", "ty", 5, 1005, "Pub", 1)
    assert m != Message("t", b"d", "ty", 6, 1006, "Pub", 1)
    assert m.size == 1


@pytest.mark.parametrize(
    ("ser", "action", "want"),
    [("A|B", 1, "A"), ("A|B", 2, "B"), ("A|B", 3, "A"), ("A|B", 4, "B"), ("A|B", 5, "A|B"), ("A", 1, "A"), ("", 2, "")],
)
def test_data_type_for_rpc(ser: str, action: int, want: str) -> None:
    assert data_type_for(ser, action) == want


def test_memory_stays_bounded_by_the_largest_frame() -> None:
    """100 MiB streamed in 64 KiB chunks (1 MiB payloads and small frames): peak allocations stay a few MiB."""
    import tracemalloc

    big = encode(0, "shm://big", bytes(1024 * 1024))
    smalls = b"".join(encode(i, "dds://imu", bytes(64)) for i in range(200))
    block = big + smalls  # 1 MiB + ~20 KiB, repeated
    chunk = 64 * 1024

    def stream() -> Iterator[bytes]:
        for _ in range(100):
            for i in range(0, len(block), chunk):
                yield block[i : i + chunk]

    tracemalloc.start()
    try:
        count = total = 0
        for m in iter_frames(stream()):
            count += 1
            total += len(m.message)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert count == 100 * 201
    assert total == 100 * (1024 * 1024 + 200 * 64)
    assert peak < 8 * 1024 * 1024, f"peak {peak / 1e6:.1f} MB"


def test_frames_to_columns_native_and_python_agree() -> None:
    """The C splitter and the Python loop give the same columns, and refuse the same truncated bodies."""
    import numpy as np

    from vlink_bag import lzav
    from vlink_bag.dataframe import Columns
    from vlink_bag.frames import frames_to_columns

    if lzav.IMPLEMENTATION != "c":
        pytest.skip("the C extension is not built here")
    body = b"".join(
        encode(ts, url, data, ser, 5, 3 if ser.startswith("demo") else 1)
        for ts, url, data, ser in [(0, "a", b"x", "raw"), (5, "b", b"", "demo.P"), (7, "a", b"yz" * 500, "raw"), (9, "c,d", b"\x00", "json")]
    )
    native = frames_to_columns(body, Columns())
    python = frames_to_columns(body, Columns(), native=False)
    assert native.kinds == python.kinds == [("a", "Pub", "raw", 1), ("b", "Pub", "demo.P", 3), ("c,d", "Pub", "json", 1)]
    assert list(np.asarray(native.timestamps)) == python.timestamps == [0, 5, 7, 9]
    assert list(np.asarray(native.keys)) == python.keys == [0, 1, 0, 2]
    assert native.payloads == python.payloads == [b"x", b"", b"yz" * 500, b"\x00"]
    for cut in (3, 25, len(body) - 1):
        for use_native in (True, False):
            with pytest.raises(StreamError):
                frames_to_columns(body[:cut], Columns(), native=use_native)


@pytest.mark.parametrize("bag_id", ["drive.vdb", "runs/drive.vcap"])
def test_the_cli_binary_output_parses_to_every_frame(bag_dir, expected, bag_id: str) -> None:
    """``vlink-bag cat --format binary`` writes the server's layout: this parser reads it back, frame for frame."""
    from .conftest import CLI, node_binary

    result = subprocess.run(
        [node_binary(), str(CLI), "cat", str(bag_dir / bag_id), "--format", "binary", "-q"], capture_output=True, timeout=60
    )
    assert result.returncode == 0, result.stderr.decode(errors="replace")
    # Chunks of an awkward size: frames and headers straddle them.
    chunks = (result.stdout[i : i + 1000] for i in range(0, len(result.stdout), 1000))
    got = [(m.timestamp, m.topic, m.message) for m in iter_frames(chunks)]
    assert got == expected.select()
