"""Damaged local files raise CorruptBag while they are read, as the server and the CLI refuse them: a flipped bit in a
.vcap/.mcap payload (the chunk CRC), a .vdb whose row pages are damaged after its header opened fine."""

from __future__ import annotations

import sqlite3
import subprocess
from pathlib import Path

import pytest

import vlink_bag
from vlink_bag import CorruptBag

from .conftest import CLI, REPO, node_binary

START_MS = 1_773_712_800_123


def payload(i: int) -> bytes:
    return i.to_bytes(4, "little") + b"PAYLOAD!"


def flip_payload(path: Path, i: int, out: Path) -> None:
    data = bytearray(path.read_bytes())
    at = data.find(payload(i))
    assert at > 0 and data.count(payload(i)) == 1
    data[at + 5] ^= 0x01
    out.write_bytes(bytes(data))


def write_payloads(path: Path, compress: str = "none") -> None:
    with vlink_bag.Writer(path, start_time=START_MS, timezone=0, compress=compress) as w:
        for i in range(300):
            w.write("u", payload(i), timestamp=i * 1000, ser="raw")


def test_a_flipped_payload_bit_is_a_chunk_crc_mismatch(tmp_path: Path) -> None:
    good = tmp_path / "good.vcap"
    write_payloads(good)  # chunks uncompressed: the payloads are there to flip
    bad = tmp_path / "bad.vcap"
    flip_payload(good, 123, bad)
    with vlink_bag.open(bad) as bag:
        assert bag.info()["messageCount"] == 300  # opens: the summary is intact
        with pytest.raises(CorruptBag) as error:
            list(bag.read_messages())
        assert error.value.code == "CORRUPT_FILE"
        assert "chunk CRC mismatch" in str(error.value) and error.value.url == str(bad)
        with pytest.raises(CorruptBag, match="chunk CRC mismatch"):
            bag.to_dataframe()
    # The CLI refuses the same file with the same words.
    if not CLI.exists():
        pytest.fail(f"{CLI.relative_to(REPO)} missing: run `npm run build` first")
    cat = subprocess.run([node_binary(), str(CLI), "cat", str(bad), "-q"], capture_output=True, text=True, timeout=60)
    assert cat.returncode != 0 and "chunk CRC mismatch" in cat.stderr
    # validate_crcs=False (the TypeScript reader's validateCrcs option) reads it as it is.
    with vlink_bag.open(bad, validate_crcs=False) as bag:
        changed = [m.timestamp for m in bag.read_messages() if m.message != payload(m.timestamp // 1000)]
        assert changed == [123_000]


def test_a_zstd_chunk_is_checked_after_decompression(tmp_path: Path) -> None:
    from mcap.reader import make_reader

    good = tmp_path / "z.vcap"
    write_payloads(good, "zstd")
    with open(good, "rb") as f:
        (index,) = make_reader(f).get_summary().chunk_indexes
    assert index.compression == "zstd"
    data = bytearray(good.read_bytes())
    data[index.chunk_start_offset + 1 + 8 + 8 + 8 + 8] ^= 0xFF  # the CRC field (after opcode, length, times, size)
    bad = tmp_path / "zbad.vcap"
    bad.write_bytes(bytes(data))
    with vlink_bag.open(bad) as bag, pytest.raises(CorruptBag, match="chunk CRC mismatch"):
        list(bag.read_messages())
    with vlink_bag.open(bad, validate_crcs=False) as bag:
        assert [m.message for m in bag.read_messages()] == [payload(i) for i in range(300)]


def write_plain_mcap(path: Path) -> None:
    """A foreign MCAP file (the mcap library's writer) without chunk indexes or statistics: read in one pass."""
    from mcap.writer import CompressionType, IndexType, Writer

    with open(path, "wb") as f:
        w = Writer(f, index_types=IndexType.NONE, use_statistics=False, use_summary_offsets=False, chunk_size=1024, compression=CompressionType.NONE)
        w.start(profile="", library="test")
        channel = w.register_channel(topic="t", message_encoding="", schema_id=0)
        for i in range(200):
            w.add_message(channel_id=channel, log_time=10**15 + i * 10**6, publish_time=10**15 + i * 10**6, data=payload(i), sequence=i)
        w.finish()


def test_a_chunk_without_index_is_checked_too(tmp_path: Path) -> None:
    """A foreign MCAP file without chunk indexes or statistics is read in one pass: its chunks are checked as well."""
    good = tmp_path / "plain.mcap"
    write_plain_mcap(good)
    with vlink_bag.open(good) as bag:
        assert len(list(bag.read_messages())) == 200
    bad = tmp_path / "bad.mcap"
    flip_payload(good, 77, bad)
    with vlink_bag.open(bad) as bag, pytest.raises(CorruptBag, match="chunk CRC mismatch"):
        list(bag.read_messages())
    with vlink_bag.open(bad, validate_crcs=False) as bag:
        assert len(list(bag.read_messages())) == 200


def damage_row_pages(source: Path, out: Path) -> None:
    """A copy of a .vdb with one page of its VLinkDatas table made unreadable (its b-tree page type byte), so the
    header and url table open and a read fails."""
    data = bytearray(source.read_bytes())
    page_size = int.from_bytes(data[16:18], "big")
    page_size = 65536 if page_size == 1 else page_size
    with sqlite3.connect(f"file:{source}?mode=ro", uri=True) as db:
        root = db.execute("SELECT rootpage FROM sqlite_master WHERE name = 'VLinkDatas'").fetchone()[0]
    at = (root - 1) * page_size
    victim = int.from_bytes(data[at + 8 : at + 12], "big") if data[at] == 0x05 else root  # interior: its right child
    data[(victim - 1) * page_size] = 0xFF
    out.write_bytes(bytes(data))


def test_a_damaged_vdb_page_is_corrupt_bag_mid_read(bag_dir: Path, tmp_path: Path) -> None:
    damaged = tmp_path / "damaged.vdb"
    damage_row_pages(bag_dir / "drive.vdb", damaged)
    with vlink_bag.open(damaged) as bag:
        assert bag.info()["messageCount"] == 396  # the header opens
        for read in (lambda: list(bag.read_messages()), bag.to_dataframe, lambda: list(bag.read_messages(urls=["imu"], start_s=1.5))):
            with pytest.raises(CorruptBag) as error:
                read()
            assert error.value.code == "CORRUPT_FILE"
            assert error.value.url == str(damaged)
            assert "database disk image is malformed" in str(error.value) and "reading the messages" in str(error.value)


def refused_on_read(path: Path, match: str) -> None:
    """Opening works (what the damage spares is intact), reading the messages is a ``CORRUPT_FILE`` :class:`CorruptBag`."""
    with vlink_bag.open(path) as bag, pytest.raises(CorruptBag, match=match) as error:
        list(bag.read_messages())
    assert error.value.code == "CORRUPT_FILE"


def chunk_offsets(path: Path) -> list[tuple[int, int]]:
    """(offset, length) of the top-level chunk records of an MCAP file, in file order."""
    data = path.read_bytes()
    out: list[tuple[int, int]] = []
    at = 8
    while at + 9 <= len(data) and data[at] != 0x0F:  # up to DataEnd
        length = 9 + int.from_bytes(data[at + 1 : at + 9], "little")
        if data[at] == 0x06:
            out.append((at, length))
        at += length
    return out


def test_a_chunk_copied_over_another_of_its_length_is_refused_not_read_in_its_place(tmp_path: Path) -> None:
    """Found by hand (as in the TypeScript reader): frames of one size make chunks of one length, so a copy sits where
    the index points and its CRC is its own; it used to be read in the other's place, its frames twice."""
    good = tmp_path / "fixed.vcap"
    with vlink_bag.Writer(good, start_time=START_MS, timezone=0, chunk_size=1000) as w:
        for i in range(100):
            w.write("u", bytes([i]) * 64, timestamp=i * 1000, ser="raw")
    chunks = chunk_offsets(good)
    (source, length), (target, other) = chunks[1], chunks[3]
    assert length == other
    data = bytearray(good.read_bytes())
    data[target : target + length] = data[source : source + length]
    bad = tmp_path / "copied.vcap"
    bad.write_bytes(bytes(data))
    refused_on_read(bad, "not the one its index describes")


def test_a_chunk_repeated_in_a_file_read_by_a_scan_is_refused(tmp_path: Path) -> None:
    good = tmp_path / "plain.mcap"
    write_plain_mcap(good)
    chunks = chunk_offsets(good)
    at, length = chunks[1]
    data = good.read_bytes()
    after = chunks[2][0]
    bad = tmp_path / "repeated.mcap"
    bad.write_bytes(data[:after] + data[at : at + length] + data[after:])  # a second copy of chunk 1 before chunk 2
    refused_on_read(bad, f"chunk at offset {after} repeats the chunk at offset {at}")


def vdb_by_hand(path: Path, times: list[int]) -> None:
    """A .vdb in VLink's layout (format reference §2), one url, its rows at `times` (µs) in that order."""
    with sqlite3.connect(path) as db:
        db.executescript(
            "PRAGMA page_size = 4096;"
            "CREATE TABLE VLinkHeader(major INTEGER, minor INTEGER, patch INTEGER, count INTEGER, duration INTEGER, accuracy TEXT, compress TEXT, process TEXT, date TEXT, tag TEXT, complete INTEGER, timezone INTEGER, start_timestamp INTEGER);"
            "CREATE TABLE VLinkSchemas(ser TEXT, encoding TEXT, data BLOB);"
            "CREATE TABLE VLinkUrls(id INTEGER, url TEXT, type TEXT, ser TEXT, encoding TEXT, count INTEGER, loss REAL, size INTEGER, freq REAL);"
            "CREATE TABLE VLinkDatas(elapsed INTEGER, url INTEGER, action TEXT, data BLOB);"
        )
        db.execute(
            "INSERT INTO VLinkHeader VALUES (2, 1, 0, ?, ?, 'MicroSecond', 'None', 'p', '2026/03/17 10:00:00:123', 'Empty', 1, 0, ?)",
            (len(times), max(times), START_MS),
        )
        db.execute("INSERT INTO VLinkUrls VALUES (0, 'dds://u', 'Event', 'raw', 'raw', ?, 0, ?, 0)", (len(times), 16 * len(times)))
        db.executemany("INSERT INTO VLinkDatas VALUES (?, 0, 'Pub', ?)", [(t, t.to_bytes(16, "little")) for t in times])
        db.execute("CREATE INDEX idx_elapsed_url ON VLinkDatas(elapsed, url)")


def test_a_damaged_elapsed_index_is_corrupt_bag_not_frames_twice(tmp_path: Path) -> None:
    """Rows out of time order make the reader go through the elapsed index, which SQLite trusts: an index page copied
    over another used to give its rows twice."""
    times = [i * 1000 for i in range(3000)]
    times[10], times[11] = times[11], times[10]  # not in time order: read through the index
    good = tmp_path / "good.vdb"
    vdb_by_hand(good, times)
    with vlink_bag.open(good) as bag:
        assert [m.timestamp for m in bag.read_messages()] == sorted(times)
    with sqlite3.connect(good) as db:
        root = db.execute("SELECT rootpage FROM sqlite_master WHERE name = 'idx_elapsed_url'").fetchone()[0]
    data = bytearray(good.read_bytes())
    size = int.from_bytes(data[16:18], "big")
    assert data[(root - 1) * size] == 0x02, "an index of more than one page"
    leaves = [p for p in range(2, len(data) // size + 1) if p != root and data[(p - 1) * size] == 0x0A]
    a, b = leaves[0], leaves[1]
    data[(b - 1) * size : b * size] = data[(a - 1) * size : a * size]
    bad = tmp_path / "bad.vdb"
    bad.write_bytes(bytes(data))
    refused_on_read(bad, "elapsed index is out of order")


def test_a_url_row_without_a_url_is_corrupt_bag_at_open(tmp_path: Path) -> None:
    path = tmp_path / "nourl.vdb"
    vdb_by_hand(path, [i * 1000 for i in range(10)])
    with sqlite3.connect(path) as db:
        db.execute("UPDATE VLinkUrls SET url = NULL")
    with pytest.raises(CorruptBag, match=r"a VLinkUrls row \(id 0\) holds no url"):
        vlink_bag.open(path)


def test_a_closed_vdb_with_rows_and_no_url_is_corrupt_bag_at_open(tmp_path: Path) -> None:
    path = tmp_path / "nourls.vdb"
    vdb_by_hand(path, [i * 1000 for i in range(10)])
    with sqlite3.connect(path) as db:
        db.execute("DELETE FROM VLinkUrls")
    with pytest.raises(CorruptBag, match="the header counts 10 messages, but VLinkUrls names no url"):
        vlink_bag.open(path)


def test_a_closed_vdb_with_another_appended_is_corrupt_bag_at_open(tmp_path: Path) -> None:
    """SQLite does not read bytes after the last page: `cat a.vdb b.vdb` used to read as `a.vdb` alone."""
    first, second = tmp_path / "a.vdb", tmp_path / "b.vdb"
    vdb_by_hand(first, [i * 1000 for i in range(10)])
    vdb_by_hand(second, [i * 1000 for i in range(20)])
    both = tmp_path / "both.vdb"
    both.write_bytes(first.read_bytes() + second.read_bytes())
    with vlink_bag.open(first) as bag:
        assert len(list(bag.read_messages())) == 10
    with pytest.raises(CorruptBag, match=f"{second.stat().st_size} bytes follow the database's last page"):
        vlink_bag.open(both)


def test_a_segment_file_copied_over_another_is_corrupt_bag(tmp_path: Path) -> None:
    path = tmp_path / "split.vcapx"
    with vlink_bag.Writer(path, start_time=START_MS, timezone=0, segment_size=4000) as w:
        for i in range(1000):
            w.write("u", payload(i), timestamp=i * 1000, ser="raw")
    segments = sorted(tmp_path.glob("split.*.vcap"))
    assert len(segments) >= 3
    segments[1].write_bytes(segments[0].read_bytes())
    with pytest.raises(CorruptBag, match=f'segment "{segments[1].name}" repeats "{segments[0].name}"'):
        vlink_bag.open(path)
