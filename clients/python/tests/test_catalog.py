"""``vlink_bag.catalog()`` on a catalog the CLI writes (``vlink-bag index``) over the test bags: the rows agree with
``vlink-bag info --json`` and with the frames the fixture script wrote, and the types are what engines expect."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import vlink_bag

from .conftest import CLI, REPO, Expected, node_binary


def run_cli(*args: str) -> subprocess.CompletedProcess[str]:
    if not CLI.exists():
        pytest.fail(f"{CLI.relative_to(REPO)} missing: run `npm run build` first")
    return subprocess.run([node_binary(), str(CLI), *args], capture_output=True, text=True, cwd=REPO, timeout=300)


@pytest.fixture(scope="module")
def indexed(bag_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, Any]]:
    out = tmp_path_factory.mktemp("catalog")
    result = run_cli("index", str(bag_dir), "-o", str(out), "--json")
    # bad.vdb is not a bag: it is reported, and the run exits 1, but the others are cataloged.
    assert result.returncode == 1, result.stderr
    return out, json.loads(result.stdout)


def test_the_report_names_the_bag_that_failed(indexed: tuple[Path, dict[str, Any]], bag_dir: Path) -> None:
    _, report = indexed
    assert [f["location"] for f in report["failed"]] == [str((bag_dir / "bad.vdb").resolve())]
    assert report["failed"][0]["code"] in ("CORRUPT_FILE", "UNSUPPORTED_FORMAT")
    assert (report["added"], report["bags"]) == (2, 2)


def test_catalog_rows_equal_info_json(indexed: tuple[Path, dict[str, Any]], bag_dir: Path, expected: Expected) -> None:
    folder, report = indexed
    bags, urls = vlink_bag.catalog(folder)
    assert sorted(bags["bag_id"]) == ["drive.vdb", "runs/drive.vcap"]
    assert len(urls) == report["urls"]
    for _, row in bags.iterrows():
        info = json.loads(run_cli("info", str(bag_dir / row["bag_id"]), "--json").stdout)
        assert row["format"] == info["format"]
        assert row["message_count"] == info["messageCount"] == len(expected.frames)
        assert row["size_bytes"] == info["fileSize"]
        assert row["url_count"] == len(info["urls"])
        start_us = round(info["startTimestamp"] * 1000)
        first = min(s["firstLogUs"] for s in info["streams"])
        last = max(s["lastLogUs"] for s in info["streams"])
        assert row["start_time"] == pd.Timestamp(start_us + first, unit="us", tz="UTC")
        assert row["end_time"] == pd.Timestamp(start_us + last, unit="us", tz="UTC")
        assert row["duration_us"] == last - first
        # the frames the fixture script wrote: first and last timestamps
        stamps = sorted(f["timestamp"] for f in expected.frames)
        assert (first, last) == (stamps[0], stamps[-1])
        assert json.loads(row["tags_json"])["tagName"] == info["tagName"]
        own = urls[urls["bag_id"] == row["bag_id"]]
        for meta in info["urls"]:
            match = own[(own["url"] == meta["url"]) & ((own["action"] == meta["action"]) if "action" in meta else own["action"].isna())]
            assert len(match) == 1, meta
            assert match.iloc[0]["message_count"] == meta["count"]
            assert match.iloc[0]["bytes"] == meta["size"]
            assert match.iloc[0]["ser"] == meta["ser"]


def test_types_are_timestamps_and_integers(indexed: tuple[Path, dict[str, Any]]) -> None:
    bags, urls = vlink_bag.catalog(indexed[0])
    for column in ("start_time", "end_time", "modified", "indexed_at"):
        assert isinstance(bags[column].dtype, pd.DatetimeTZDtype) and str(bags[column].dtype.tz) == "UTC", column
    for column in ("start_time", "end_time"):
        assert isinstance(urls[column].dtype, pd.DatetimeTZDtype), column
    assert str(bags["message_count"].dtype) == "Int64"
    assert str(urls["gap_count"].dtype) == "Int64"
    assert urls["rate_hz"].dtype == "float64"


def test_not_a_catalog(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="not a catalog"):
        vlink_bag.catalog(tmp_path)
