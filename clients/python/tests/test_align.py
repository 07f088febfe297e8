"""bag.align(): the same hand-computed table from a local bag (through the vlink-bag CLI) and through the server; the
CLI's Parquet reads back in pyarrow with the columns its JSON description lists."""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from google.protobuf import wrappers_pb2

import vlink_bag
from vlink_bag import BadRequest, Client, NotFound

from .conftest import CLI, REPO, Server, node_binary, require_built, start_server

START_MS = 1_700_000_000_000


@pytest.fixture(scope="module")
def root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """/cam at 1000, 2000, 3000 µs; /state (JSON) at 900, 1600, 2100, 2900; pb/speed (protobuf DoubleValue) every
    600 µs from 600 with the value t/100."""
    root = tmp_path_factory.mktemp("align")
    with vlink_bag.Writer(root / "episode.vcap", start_time=START_MS) as w:
        messages = [(t, "/cam", {"seq": i + 1}) for i, t in enumerate([1000, 2000, 3000])]
        messages += [(t, "/state", {"x": x, "mode": m}) for t, x, m in [(900, 9, "a"), (1600, 16, "b"), (2100, 21, "c"), (2900, 29, "d")]]
        messages += [(t, "pb/speed", wrappers_pb2.DoubleValue(value=t / 100)) for t in range(600, 3001, 600)]
        for t, url, value in sorted(messages, key=lambda m: m[0]):
            w.write(url, value, timestamp=t)
    return root


@pytest.fixture(scope="module")
def align_server(root: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    running = start_server(root, tmp_path_factory.mktemp("logs"))
    yield running
    running.stop()


@pytest.fixture(autouse=True)
def cli(monkeypatch: pytest.MonkeyPatch) -> None:
    require_built()
    if not CLI.exists():
        pytest.fail(f"{CLI.relative_to(REPO)} missing: run `npm run build` first")
    monkeypatch.setenv("VLINK_BAG_CLI", f"{node_binary()} {CLI}")


def ts(us: int) -> pd.Timestamp:
    return pd.Timestamp(START_MS * 1000 + us, unit="us", tz="UTC")


OPTIONS = {"match": {"/state": "linear", "pb/speed": "linear"}, "tolerance_us": 700}


def test_local_align_equals_the_hand_computed_table(root: Path) -> None:
    with vlink_bag.open(root / "episode.vcap") as bag:
        df = bag.align("/cam", **OPTIONS)
    assert list(df.columns) == ["time", "/cam.seq", "/state#time", "/state.x", "/state.mode", "pb/speed#time", "pb/speed"]
    assert list(df["time"]) == [ts(1000), ts(2000), ts(3000)]
    assert str(df["time"].dtype) == "datetime64[us, UTC]"
    assert list(df["/cam.seq"]) == [1.0, 2.0, 3.0]
    # /state: 1/7 of the way from 900 to 1600, 4/5 from 1600 to 2100, none after 2900 (null); strings from the earlier
    assert df["/state.x"].iloc[:2].tolist() == [10.0, 20.0] and pd.isna(df["/state.x"].iloc[2])
    assert df["/state.mode"].iloc[:2].tolist() == ["a", "b"] and pd.isna(df["/state.mode"].iloc[2])
    # pb/speed (protobuf): between 600 and 1200, between 1800 and 2400, exactly 3000
    assert df["pb/speed"].tolist() == [10.0, 20.0, 30.0]
    assert list(df["pb/speed#time"]) == [ts(1000), ts(2000), ts(3000)]
    description = df.attrs["align"]
    assert description["parameters"]["match"] == {"/state": "linear", "pb/speed": "linear"}
    assert description["rows"] == 3 and description["urls"]["/state"]["missing"] == 1
    assert [c["name"] for c in description["columns"]] == list(df.columns)


@pytest.mark.parametrize("missing,rows", [("null", 3), ("drop", 2), ("ffill", 3)])
def test_local_and_remote_give_the_same_frame(root: Path, align_server: Server, missing: str, rows: int) -> None:
    with vlink_bag.open(root / "episode.vcap") as local, Client(align_server.url) as client:
        local_df = local.align("/cam", missing=missing, **OPTIONS)
        remote_df = client.bag("episode.vcap").align("/cam", missing=missing, **OPTIONS)
    assert len(local_df) == rows
    pd.testing.assert_frame_equal(local_df, remote_df)
    assert {k: v for k, v in local_df.attrs["align"].items() if k != "bag"} == {k: v for k, v in remote_df.attrs["align"].items() if k != "bag"}
    if missing == "ffill":
        assert local_df["/state.x"].tolist() == [10.0, 20.0, 20.0]


def test_fixed_rate_and_publish_time_base(root: Path, align_server: Server) -> None:
    with vlink_bag.open(root / "episode.vcap") as local, Client(align_server.url) as client:
        for bag in (local, client.bag("episode.vcap")):
            df = bag.align(2000, time_base="publish", match={"/state": "previous"})
            # ticks every 500 µs from the first /state sample (900) to its last (2900)
            assert list(df["time"]) == [ts(t) for t in (900, 1400, 1900, 2400, 2900)]
            assert df["/state.x"].tolist() == [9.0, 9.0, 16.0, 21.0, 29.0]


def test_cli_parquet_reads_back_in_pyarrow_with_the_described_columns(root: Path, tmp_path: Path) -> None:
    out = tmp_path / "episode.parquet"
    subprocess.run(
        [node_binary(), str(CLI), "align", str(root / "episode.vcap"), "--base", "/cam", "--match", "/state=nearest", "-o", str(out), "-q"],
        check=True,
    )
    table = pq.read_table(out)
    description = json.loads((tmp_path / "episode.parquet.json").read_text())
    types = {"timestamp": pa.timestamp("us", tz="UTC"), "double": pa.float64(), "string": pa.string()}
    assert [(f.name, f.type) for f in table.schema] == [(c["name"], types[c["type"]]) for c in description["columns"]]
    assert json.loads(table.schema.metadata[b"vlink.align"]) == description
    assert table.column("/state.x").to_pylist() == [9, 21, 29]  # nearest: 900 (100 back), 2100 (100 ahead), 2900
    assert table.column("/state#time").to_pylist() == [ts(900).to_pydatetime(), ts(2100).to_pydatetime(), ts(2900).to_pydatetime()]


def test_bad_arguments_are_typed_errors(root: Path, align_server: Server) -> None:
    with vlink_bag.open(root / "episode.vcap") as local, Client(align_server.url) as client:
        for bag in (local, client.bag("episode.vcap")):
            with pytest.raises(NotFound):
                bag.align("/nope")
            with pytest.raises(NotFound):
                bag.align("/cam", match={"/missing": "nearest"})
            with pytest.raises(BadRequest):
                bag.align("/cam", match={"/state": "cubic"})
            with pytest.raises(BadRequest):
                bag.align("/cam", missing="zero")
            with pytest.raises(BadRequest):
                bag.align(-5)
