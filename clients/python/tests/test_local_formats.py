"""Local reading of what the TypeScript writer makes beyond the basic bags (a .vdbx with LZAV-compressed rows, a
.vcapx with zstd chunks, a compressed .vdb) and of the MCAP conformance corpus (foreign files), compared frame by frame
with the TypeScript reader."""

from __future__ import annotations

import base64
import json
import subprocess
from pathlib import Path
from typing import Any

import pytest

import vlink_bag
from vlink_bag import VlinkBagError

from .conftest import REPO, node_binary, require_built

FIXTURES = Path(__file__).resolve().parent / "fixtures"
CORPUS = REPO / "fixtures" / "mcap-conformance"


def ts_read_many(paths: list[Path]) -> list[dict[str, Any]]:
    require_built()
    result = subprocess.run([node_binary(), str(FIXTURES / "read_bag.mjs"), *map(str, paths)], capture_output=True, cwd=REPO, timeout=600)
    assert result.returncode == 0, result.stderr.decode()[-2000:]
    return list(json.loads(result.stdout))


def frames_of(bag: Any) -> list[tuple[int, str, str, int, bytes]]:
    return [(m.timestamp, m.topic, m.action, m.schema_type, m.message) for m in bag.read_messages()]


def ts_frames(read: dict[str, Any]) -> list[tuple[int, str, str, int, bytes]]:
    return [(f["timestamp"], f["url"], vlink_bag.ACTIONS[f["action"]], f["schemaType"], base64.b64decode(f["data"])) for f in read["frames"]]


@pytest.fixture(scope="module")
def split_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("split")
    result = subprocess.run([node_binary(), str(FIXTURES / "make_split.mjs"), str(out)], capture_output=True, text=True, cwd=REPO, timeout=120)
    assert result.returncode == 0, result.stderr
    return out


@pytest.mark.parametrize("pure", [False, True])
def test_split_and_compressed_bags(split_dir: Path, pure: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    names = ["lzav.vdbx", "zstd.vcapx", "lzav.vdb"]
    if pure:  # the same files through the pure-Python LZAV decoder
        from vlink_bag import lzav

        monkeypatch.setattr(lzav, "_c_decode", None)
    reads = ts_read_many([split_dir / n for n in names])
    for name, read in zip(names, reads):
        with vlink_bag.open(split_dir / name) as bag:
            info = bag.info()
            got = frames_of(bag)
        assert got == ts_frames(read), name
        assert len(got) == 300
        assert {k: v for k, v in info.items() if k not in ("path", "fileSize")} == {k: v for k, v in read["info"].items() if k not in ("path", "fileSize")}, name
    assert reads[0]["info"]["splitCount"] > 1 and reads[0]["info"]["compressionType"] == "lzav"


def test_rows_out_of_time_order(split_dir: Path) -> None:
    """A .vdb whose timestamps go backwards is read in (elapsed, rowid) order like the TypeScript reader, windows
    included; an in-order one takes the faster rowid path with the same result."""
    read = ts_read_many([split_dir / "backwards.vdb", split_dir / "lzav.vdb"])
    with vlink_bag.open(split_dir / "backwards.vdb") as bag:
        assert frames_of(bag) == ts_frames(read[0])
        assert bag._file._rowid_ordered() is False
        window = [m.timestamp for m in bag.read_messages(40_000, 60_000)]
        assert window == sorted(t for t, *_ in ts_frames(read[0]) if 40_000 <= t <= 60_000)
    with vlink_bag.open(split_dir / "lzav.vdb") as bag:
        assert bag._file._rowid_ordered() is True
        assert [m.timestamp for m in bag.read_messages(10_500, 20_000, urls="state")] == [t for t, u, *_ in ts_frames(read[1]) if 10_500 <= t <= 20_000 and u == "state"]
        with pytest.warns(vlink_bag.EmptyWindowWarning):
            assert list(bag.read_messages(400_000, None)) == []


def test_the_mcap_conformance_corpus(tmp_path: Path) -> None:
    import shutil

    sources = sorted(CORPUS.rglob("*.mcap"))
    assert len(sources) > 100
    # The TypeScript reader takes foreign MCAP files under the .vcap extension; this client takes both.
    files = []
    for i, source in enumerate(sources):
        files.append(tmp_path / f"{i:03d}-{source.stem}.vcap")
        shutil.copyfile(source, files[-1])
    reads = ts_read_many(files)
    compared = refused = 0
    for path, read in zip(files, reads):
        if "error" in read:
            with pytest.raises(VlinkBagError):
                with vlink_bag.open(path) as bag:
                    frames_of(bag)
            refused += 1
            continue
        with vlink_bag.open(path) as bag:
            assert frames_of(bag) == ts_frames(read), path.name
            info = bag.info()
            assert {k: v for k, v in info.items() if k not in ("path", "fileSize")} == {k: v for k, v in read["info"].items() if k not in ("path", "fileSize")}, path.name
        with vlink_bag.open(sources[files.index(path)]) as original:  # and under its own name
            assert frames_of(original) == ts_frames(read)
        compared += 1
    assert compared > 100, (compared, refused)


def test_damaged_local_files_are_typed_and_say_why(tmp_path: Path) -> None:
    empty = tmp_path / "empty.vcap"
    empty.write_bytes(b"")
    garbage = tmp_path / "garbage.vcap"
    garbage.write_bytes(bytes(range(256)) * 4)
    not_sqlite = tmp_path / "garbage.vdb"
    not_sqlite.write_bytes(bytes(range(256)) * 16)
    for path, reason in [(empty, "the file is empty"), (garbage, "invalid magic"), (not_sqlite, "not a readable .vdb")]:
        with pytest.raises(vlink_bag.CorruptBag) as caught:
            vlink_bag.open(path)
        assert caught.value.code == "CORRUPT_FILE"
        assert reason in str(caught.value), str(caught.value)
