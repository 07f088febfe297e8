"""The same bags read locally (vlink_bag.open) and through the server give identical info, messages and DataFrames;
a bag written by the Python Writer with a timezone keeps it in the `time` column both ways."""

from __future__ import annotations

import datetime as dt
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import vlink_bag
from vlink_bag import Client

from .conftest import BAG_IDS, Server, start_server


@pytest.mark.parametrize("bag_id", BAG_IDS)
def test_identical_info_messages_and_dataframes(client: Client, bag_dir: Path, bag_id: str) -> None:
    remote = client.bag(bag_id)
    with vlink_bag.open(bag_dir / bag_id) as local:
        assert {k: v for k, v in local.info().items() if k != "path"} == {k: v for k, v in remote.info().items() if k != "path"}
        assert local.schemas() == remote.schemas()
        assert list(local.read_messages()) == list(remote.read_messages())
        for decode in (True, False):
            pd.testing.assert_frame_equal(local.to_dataframe(decode=decode), remote.to_dataframe(decode=decode))
        window = {"urls": ["imu", "pb/pose", "rpc/echo"], "start_time": 100_000, "end_time": 1_400_000}
        pd.testing.assert_frame_equal(local.to_dataframe(**window), remote.to_dataframe(**window))
        assert local.timing(factor=3) == remote.timing(factor=3)
        assert local.density(buckets=20) == remote.density(buckets=20)
        assert local.density(buckets=7, start_time=100_000, end_time=900_000, urls=["imu"]) == remote.density(buckets=7, start_time=100_000, end_time=900_000, urls=["imu"])


@pytest.fixture(scope="module")
def written(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("written")
    with vlink_bag.Writer(root / "tz.vcap", start_time=1_773_712_800_123, timezone=480) as w:
        for i in range(50):
            w.write("imu", {"i": i, "v": i / 4}, timestamp=i * 20_000)
        w.write("note", "done", timestamp=1_000_000)
    return root


@pytest.fixture(scope="module")
def written_server(written: Path, tmp_path_factory: pytest.TempPathFactory) -> Any:
    running = start_server(written, tmp_path_factory.mktemp("logs"))
    yield running
    running.stop()


def test_time_column_in_the_recordings_timezone(written: Path, written_server: Server) -> None:
    with Client(written_server.url) as client, vlink_bag.open(written / "tz.vcap") as local:
        remote = client.bag("tz.vcap")
        local_df, remote_df = local.to_dataframe(), remote.to_dataframe()
        pd.testing.assert_frame_equal(local_df, remote_df)
    assert str(local_df["time"].dt.tz) == "UTC+08:00"
    assert local_df["time"].iloc[0] == pd.Timestamp("2026-03-17 10:00:00.123", tz=dt.timezone(dt.timedelta(hours=8)))
    assert local_df["elapsed"].iloc[3] == pd.Timedelta(milliseconds=60)
    assert list(local_df["i"].iloc[:3]) == [0, 1, 2] and local_df["text"].iloc[-1] == "done"
    assert local.timezone == dt.timezone(dt.timedelta(hours=8))
    assert local.start_time.isoformat() == "2026-03-17T10:00:00.123000+08:00"


def test_arrow_and_polars(written: Path) -> None:
    with vlink_bag.open(written / "tz.vcap") as bag:
        table = bag.to_arrow(urls="imu")
        frame = bag.to_polars(urls="imu", end_time=40_000)
    assert table.num_rows == 50 and table.column("i").to_pylist()[:3] == [0, 1, 2]
    assert str(table.schema.field("time").type) == "timestamp[us, tz=+08:00]"
    assert frame.height == 3 and frame["v"].to_list() == [0.0, 0.25, 0.5]
