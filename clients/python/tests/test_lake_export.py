"""The Parquet export of `vlink-bag export --format parquet` read by Python engines: pyarrow's hive-partitioned
dataset and PySpark in local mode, as a cluster's `spark.read.parquet` does (the `spark` extra: in CI
scripts/test-all.mjs installs it and the test must run; elsewhere it is skipped, by name, when pyspark is absent).

The bags (four formats, protobuf/JSON/CDR urls with embedded schemas, a raw url, odd url characters, crossing
midnight UTC) are written by tests/fixtures/make_export_bags.mjs; the export by the CLI.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from .conftest import CLI, REPO, node_binary, require_built

HERE = Path(__file__).resolve().parent
MAKE_EXPORT_BAGS = HERE / "fixtures" / "make_export_bags.mjs"


def partition(url: str) -> str:
    """The url's folder name: ASCII but A-Za-z0-9-_.~ percent-encoded, the rest as is (packages/lake/src/export/paths.ts)."""
    return "url=" + "".join(c if ord(c) > 127 else quote(c, safe="-_.~") for c in url)


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    node = node_binary()
    require_built()
    if not CLI.exists():
        pytest.fail("packages/cli/dist/bin.js missing: run `npm run build` first")
    root = tmp_path_factory.mktemp("export-bags")
    made = subprocess.run([node, str(MAKE_EXPORT_BAGS), str(root)], capture_output=True, text=True, cwd=REPO, timeout=120)
    if made.returncode != 0:
        pytest.fail(f"make_export_bags.mjs failed:\n{made.stdout}\n{made.stderr}")
    expected = json.loads((root / "expected.json").read_text())
    out = root / "lake"
    result = subprocess.run(
        [node, str(CLI), "export", *expected["bags"], "--format", "parquet", "-o", str(out), "--json"],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=180,
    )
    assert result.returncode == 0, result.stderr
    report = json.loads(result.stdout)
    return {"out": out, "bags": expected["bags"], "frames": expected["frames"], "report": report}


def urls(lake: dict[str, Any]) -> list[str]:
    return sorted({f["url"] for f in lake["frames"]})


def test_pyarrow_dataset_reads_every_message(lake: dict[str, Any]) -> None:
    import pyarrow as pa
    import pyarrow.dataset as ds

    frames = lake["frames"]
    assert lake["report"]["messages"] == len(frames) * len(lake["bags"])
    for url in urls(lake):
        folder = lake["out"] / "messages" / partition(url)
        assert folder.is_dir(), f"{url}: no partition folder {folder.name}"
        dataset = ds.dataset(str(folder), format="parquet", partitioning="hive")
        table = dataset.to_table().sort_by([("bag_id", "ascending"), ("seq", "ascending")])
        # TIMESTAMP(MICROS) as µs since the epoch, exactly
        table = table.append_column("log_us", table.column("log_time").cast(pa.int64()))
        table = table.append_column("pub_us", table.column("publish_time").cast(pa.int64()))
        rows = table.to_pylist()
        want = [f for f in frames if f["url"] == url]
        assert len(rows) == len(want) * len(lake["bags"])
        for bag in lake["bags"]:
            got = [r for r in rows if r["bag_id"] == bag]
            assert [r["seq"] for r in got] == [f["seq"] for f in want]
            for row, frame in zip(got, want):
                assert row["url"] == url
                assert row["log_us"] == frame["log_us"]
                assert row["pub_us"] == frame["pub_us"]
                assert row["payload"] == base64.b64decode(frame["payload"])
                assert row["size"] == len(row["payload"])
                assert row.get("data") == frame["data"], f"{url} #{frame['seq']}"


def test_pyarrow_hive_partitioning_over_the_whole_export(lake: dict[str, Any]) -> None:
    import pyarrow.dataset as ds

    dataset = ds.dataset(str(lake["out"] / "messages"), format="parquet", partitioning="hive")
    table = dataset.to_table(columns=["url", "date", "bag_id", "seq"])
    assert table.num_rows == len(lake["frames"]) * len(lake["bags"])
    counts: dict[str, int] = {}
    for url in table.column("url").to_pylist():
        counts[url] = counts.get(url, 0) + 1
    want = {url: sum(1 for f in lake["frames"] if f["url"] == url) * len(lake["bags"]) for url in urls(lake)}
    assert counts == want
    assert sorted({str(d) for d in table.column("date").to_pylist()}) == ["2026-03-14", "2026-03-15"]


SPARK_SKIP = "pyspark is not installed (pip install './clients/python[spark]'; needs Java 17)"


def spark_required() -> bool:
    """In CI (scripts/test-all.mjs installs the `spark` extra there, VLINK_REQUIRE_SPARK=1) Spark must run: a missing
    pyspark or Java fails the test; elsewhere it is a named skip."""
    ci = os.environ.get("CI", "").strip().lower() not in ("", "0", "false", "no")
    return ci or os.environ.get("VLINK_REQUIRE_SPARK") == "1"


def spark_session() -> Any:
    unavailable = pytest.fail if spark_required() else pytest.skip
    try:
        import pyspark
    except ImportError:
        unavailable(SPARK_SKIP)
    if shutil.which("java") is None:
        unavailable("pyspark needs Java (17+) on PATH")
    from pyspark.sql import SparkSession

    del pyspark
    return (
        SparkSession.builder.master("local[2]")
        .appName("vlink-bag-export-test")
        .config("spark.ui.enabled", "false")
        .config("spark.sql.session.timeZone", "UTC")
        .getOrCreate()
    )


def test_pyspark_reads_the_export(lake: dict[str, Any]) -> None:
    spark = spark_session()
    try:
        messages = str(lake["out"] / "messages")
        frame = spark.read.parquet(messages)
        assert frame.count() == len(lake["frames"]) * len(lake["bags"])
        counts = {row["url"]: row["count"] for row in frame.groupBy("url").count().collect()}
        want = {url: sum(1 for f in lake["frames"] if f["url"] == url) * len(lake["bags"]) for url in urls(lake)}
        assert counts == want
        # One url with its decoded STRUCT: read its folder (with basePath, so url stays a column).
        cdr = "/ros2/thing"
        one = spark.read.option("basePath", messages).parquet(str(lake["out"] / "messages" / partition(cdr)))
        rows = one.select("bag_id", "seq", "data.speed", "data.name", "log_time").orderBy("bag_id", "seq").collect()
        want_rows = [f for f in lake["frames"] if f["url"] == cdr]
        for bag in lake["bags"]:
            got = [r for r in rows if r["bag_id"] == bag]
            assert [r["seq"] for r in got] == [f["seq"] for f in want_rows]
            assert [r["speed"] for r in got] == [f["data"]["speed"] for f in want_rows]
            assert [r["name"] for r in got] == [f["data"]["name"] for f in want_rows]
    finally:
        spark.stop()
