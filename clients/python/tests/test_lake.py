"""SQL over a lake: vlink_bag.query (local DuckDB) and Client.query / AsyncClient.query (POST /v1/query of a server
started with --catalog/--export), over a fleet of 30 bags generated in the lake layout by the lake package's test
fixture (packages/lake/src/testing/query-fixture.ts). Every expected figure is computed here from its formulas."""

from __future__ import annotations

import asyncio
import subprocess
from collections.abc import Iterator
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("duckdb")
pd = pytest.importorskip("pandas")

import vlink_bag  # noqa: E402
from vlink_bag import AsyncClient, BadRequest, Client, NotFound  # noqa: E402

from .conftest import REPO, Server, node_binary, start_server  # noqa: E402

BAGS = 30
TOKEN = "lake-secret"
FIXTURE = REPO / "packages" / "lake" / "dist-test" / "testing" / "query-fixture.js"
START = datetime(2026, 12, 1, tzinfo=timezone.utc)


def bag_id(i: int) -> str:
    return f"fleet/v{i % 5}/run-{i}.vcap"


def per_bag() -> list[tuple[str, int]]:
    return sorted((bag_id(i), (50 + i % 11) + (20 + i % 7)) for i in range(BAGS))


def lidar_gaps() -> list[tuple[str, datetime]]:
    """Bags with i % 3 == 0 have one 350 ms lidar gap, ending at message i % 5 + 1."""
    out = []
    for i in range(BAGS):
        if i % 3 == 0:
            k = i % 5 + 1
            out.append((bag_id(i), START + timedelta(hours=i, microseconds=k * 100_000 + 250_000)))
    return sorted(out)


@pytest.fixture(scope="module")
def lake(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    if not FIXTURE.exists():
        pytest.fail(f"{FIXTURE.relative_to(REPO)} missing: run `npm run build` first")
    root = tmp_path_factory.mktemp("lake")
    script = f"const m = await import({FIXTURE.as_uri()!r}); await m.writeFleet({str(root)!r}, {BAGS});"
    subprocess.run([node_binary(), "--input-type=module", "-e", script], check=True, cwd=REPO, timeout=120)
    return {"catalog": root / "catalog", "export": root / "export"}


@pytest.fixture(scope="module")
def lake_server(lake: dict[str, Path], tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    extra = ["--catalog", str(lake["catalog"]), "--export", str(lake["export"])]
    running = start_server(lake["catalog"], tmp_path_factory.mktemp("logs"), token=TOKEN, use_cli=True, extra_args=extra)
    try:
        yield running
    finally:
        running.stop()


PER_BAG_SQL = "SELECT bag_id, count(*) AS n FROM messages GROUP BY bag_id ORDER BY bag_id"
GAPS_SQL = """SELECT bag_id, log_time FROM (
  SELECT bag_id, log_time, epoch_us(log_time) - epoch_us(lag(log_time) OVER (PARTITION BY bag_id ORDER BY log_time)) AS gap
  FROM messages WHERE url = '/lidar') WHERE gap > 200000 ORDER BY bag_id"""


def test_local_query_counts_gaps_and_types(lake: dict[str, Path]) -> None:
    df = vlink_bag.query(PER_BAG_SQL, catalog=lake["catalog"], export=lake["export"])
    assert list(df.columns) == ["bag_id", "n"]
    assert [(b, int(n)) for b, n in df.itertuples(index=False)] == per_bag()
    gaps = vlink_bag.query(GAPS_SQL, export=lake["export"])
    assert str(gaps["log_time"].dt.tz) == "UTC"
    assert [(b, t.to_pydatetime()) for b, t in gaps.itertuples(index=False)] == lidar_gaps()
    assert gaps.attrs["types"] == ["VARCHAR", "TIMESTAMP"]
    catalog = vlink_bag.query("SELECT bag_id, message_count FROM bags ORDER BY bag_id", catalog=lake["catalog"])
    assert [(b, int(n)) for b, n in catalog.itertuples(index=False)] == per_bag()
    data = vlink_bag.query("SELECT data.points, data.ax FROM messages WHERE url = '/lidar' AND bag_id = 'fleet/v1/run-1.vcap' ORDER BY log_time LIMIT 2", export=lake["export"])
    assert data["points"].tolist() == [1000, 1001]  # the lidar struct's field; the imu's fields are null there
    assert data["ax"].isna().all()


def test_local_errors(lake: dict[str, Path], tmp_path: Path) -> None:
    with pytest.raises(BadRequest) as bad:
        vlink_bag.query("SELEC 1", catalog=lake["catalog"])
    assert bad.value.code == "QUERY_ERROR"
    assert "syntax error" in str(bad.value)
    with pytest.raises(BadRequest, match="messages does not exist"):
        vlink_bag.query("SELECT * FROM messages", catalog=lake["catalog"])
    with pytest.raises(NotFound, match="the catalog folder does not exist"):
        vlink_bag.query("SELECT 1", catalog=tmp_path / "nope")
    with pytest.raises(NotFound, match="has no Parquet files under messages/"):
        vlink_bag.query("SELECT 1", export=tmp_path)


def test_remote_query_matches_local(lake_server: Server, lake: dict[str, Path]) -> None:
    with Client(lake_server.url, token=TOKEN) as client:
        df = client.query(PER_BAG_SQL)
        assert [(b, int(n)) for b, n in df.itertuples(index=False)] == per_bag()
        assert df.attrs == {"types": ["VARCHAR", "BIGINT"], "truncated": False}
        gaps = client.query(GAPS_SQL)
        assert [(b, t.to_pydatetime()) for b, t in gaps.itertuples(index=False)] == lidar_gaps()
        local = vlink_bag.query(GAPS_SQL, export=lake["export"])
        pd.testing.assert_series_equal(gaps["log_time"], local["log_time"].astype(gaps["log_time"].dtype), check_names=True)
        cut = client.query("SELECT seq FROM messages", limit=5)
        assert len(cut) == 5 and cut.attrs["truncated"] is True
        with pytest.raises(BadRequest) as bad:
            client.query("SELECT * FROM read_csv('/etc/passwd')")
        assert bad.value.code == "QUERY_ERROR"
        assert "Permission Error" in str(bad.value)
    with Client(lake_server.url) as anonymous, pytest.raises(vlink_bag.Unauthorized):
        anonymous.query("SELECT 1")


def test_async_query(lake_server: Server) -> None:
    async def run() -> list[tuple[str, int]]:
        async with AsyncClient(lake_server.url, token=TOKEN) as client:
            df = await client.query(PER_BAG_SQL)
            with pytest.raises(BadRequest):
                await client.query("SELEC 1")
            return [(b, int(n)) for b, n in df.itertuples(index=False)]

    assert asyncio.run(run()) == per_bag()


def test_server_without_lake_has_no_query_route(client: Client) -> None:
    with pytest.raises(NotFound):
        client.query("SELECT 1")


TYPED_SQL = [
    "SELECT x FROM (VALUES (1::BIGINT), (9007199254740993::BIGINT)) t(x) ORDER BY x",  # ints past 2^53 come as text
    "SELECT 9223372036854775807::BIGINT AS big, -9223372036854775807::BIGINT AS neg, 18446744073709551615::UBIGINT AS u, "
    "7::INTEGER AS i, 3::SMALLINT AS s, 2::TINYINT AS t, 5::UINTEGER AS ui, 9::USMALLINT AS us",
    "SELECT 'nan'::DOUBLE AS n, 'inf'::DOUBLE AS i, '-inf'::FLOAT AS f, 1.5::DOUBLE AS ok, 12.345::DECIMAL(10,3) AS d",
    "SELECT DATE '2026-12-04' AS day, DATE '1500-01-01' AS old, INTERVAL 90 MINUTE AS iv, "
    "INTERVAL '1 year 2 months 3 days 04:05:06.5' AS long_iv, -INTERVAL 90 MINUTE AS neg_iv, '\\x00\\xff'::BLOB AS b, "
    "TIME '01:02:03.25' AS t, true AS yes",
    "SELECT x::BIGINT AS a, x::UBIGINT AS u, x::INTEGER AS i, x::DOUBLE AS d, x::BOOLEAN AS flag, "
    "CASE WHEN x IS NULL THEN NULL ELSE DATE '2026-12-04' END AS day, CASE WHEN x IS NULL THEN NULL ELSE '\\x01'::BLOB END AS b "
    "FROM (VALUES (1), (NULL)) t(x) ORDER BY x NULLS LAST",
    "SELECT epoch_ns(log_time) AS ns, seq, url FROM messages WHERE url = '/lidar' ORDER BY log_time LIMIT 3",
    "SELECT x, 'a' AS s FROM (VALUES (1::BIGINT)) t(x) WHERE x > 5",  # no rows: the dtypes still follow the types
]


def test_remote_query_values_and_dtypes_match_local(lake_server: Server, lake: dict[str, Path]) -> None:
    with Client(lake_server.url, token=TOKEN) as client:
        for sql in TYPED_SQL:
            remote = client.query(sql)
            local = vlink_bag.query(sql, catalog=lake["catalog"], export=lake["export"])
            assert remote.attrs["types"] == local.attrs["types"], sql
            for i, kind in enumerate(local.attrs["types"]):
                if kind == "BLOB":  # bytes here; the local DuckDB gives bytearray (and <NA> for NULL): same bytes
                    assert all(isinstance(v, bytes) or v is None for v in remote.iloc[:, i])
                    assert [None if v is None else bytes(v) for v in remote.iloc[:, i]] == [None if v is pd.NA or v is None else bytes(v) for v in local.iloc[:, i]]
                    remote.isetitem(i, local.iloc[:, i])
            pd.testing.assert_frame_equal(remote, local, check_exact=True, obj=sql)
        big = client.query("SELECT x FROM (VALUES (1::BIGINT), (9007199254740993::BIGINT)) t(x) ORDER BY x")
        assert str(big["x"].dtype) == "int64" and big["x"].sum() == 9007199254740994
        # HUGEINT past 64 bits: exact Python ints (the local DuckDB conversion gives float64 there, and loses digits).
        huge = client.query("SELECT 170141183460469231731687303715884105727::HUGEINT AS h, 5::HUGEINT AS small")
        assert huge["h"].tolist() == [2**127 - 1] and str(huge["h"].dtype) == "object"
        assert huge["small"].tolist() == [5] and str(huge["small"].dtype) == "int64"

    async def run() -> Any:
        async with AsyncClient(lake_server.url, token=TOKEN) as client:
            return await client.query(TYPED_SQL[3])

    got, want = asyncio.run(run()), vlink_bag.query(TYPED_SQL[3], catalog=lake["catalog"])
    assert got["b"].tolist() == [b"\x00\xff"]
    pd.testing.assert_frame_equal(got.drop(columns="b"), want.drop(columns="b"), check_exact=True)
