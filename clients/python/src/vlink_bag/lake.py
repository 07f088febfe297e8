"""SQL over a fleet's lake (a catalog folder and a Parquet export, see the fleet guide): locally with DuckDB
(:func:`query`, the ``lake`` extra) or on a ``vlink-bag serve --catalog … --export …`` server (``Client.query``).

Both give a pandas DataFrame with the same views as ``vlink-bag query``: ``bags`` and ``urls`` over
``<catalog>/bags.parquet`` and ``urls.parquet``, ``messages`` over ``<export>/messages/**/*.parquet`` (hive partitions
``url`` and ``date`` as text, ``union_by_name`` so each url's ``data`` struct merges). TIMESTAMP columns are
timezone-aware UTC.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import BadRequest, NotFound, VlinkBagError

if TYPE_CHECKING:
    import pandas as pd

__all__ = ["query", "lake_views_sql", "frame_from_answer"]

_TIMESTAMP_TYPES = {"TIMESTAMP", "TIMESTAMP WITH TIME ZONE", "TIMESTAMP_S", "TIMESTAMP_MS", "TIMESTAMP_NS"}


def _sql_string(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def lake_views_sql(catalog: str | os.PathLike[str] | None = None, export: str | os.PathLike[str] | None = None) -> list[str]:
    """The ``CREATE VIEW`` statements of a lake (what ``vlink-bag query`` creates), for your own DuckDB connection.
    Raises :class:`NotFound` naming a folder or file that is missing."""
    statements: list[str] = []
    if catalog is not None:
        folder = Path(catalog)
        if not folder.is_dir():
            raise NotFound(f"the catalog folder does not exist: {folder}", code="NOT_FOUND")
        for view, file in (("bags", "bags.parquet"), ("urls", "urls.parquet")):
            path = folder / file
            if not path.is_file():
                raise NotFound(f"the catalog folder {folder} has no {file} (write it with vlink-bag index)", code="NOT_FOUND")
            statements.append(f"CREATE VIEW {view} AS SELECT * FROM read_parquet({_sql_string(str(path.resolve()))})")
    if export is not None:
        folder = Path(export)
        if not folder.is_dir():
            raise NotFound(f"the export folder does not exist: {folder}", code="NOT_FOUND")
        messages = folder / "messages"
        if not any(messages.rglob("*.parquet")):
            raise NotFound(f"the export folder {folder} has no Parquet files under messages/ (write them with vlink-bag export)", code="NOT_FOUND")
        glob = _sql_string(str(messages.resolve() / "**" / "*.parquet"))
        statements.append(
            f"CREATE VIEW messages AS SELECT * FROM read_parquet({glob}, hive_partitioning = true, union_by_name = true, "
            "hive_types = {'url': VARCHAR, 'date': VARCHAR})"
        )
    return statements


def query(sql: str, catalog: str | os.PathLike[str] | None = None, export: str | os.PathLike[str] | None = None) -> pd.DataFrame:
    """Runs ``sql`` with DuckDB (``pip install 'vlink-bag[lake]'``) over the lake's views and returns a DataFrame.

    >>> df = vlink_bag.query("SELECT url, avg(rate_hz) AS rate FROM urls GROUP BY url", catalog="fleet/catalog")

    Bad SQL raises :class:`BadRequest` (code ``QUERY_ERROR``) with DuckDB's message. Unlike the server, the local
    DuckDB is not locked down: it is your own process.
    """
    try:
        import duckdb
    except ImportError as error:
        raise VlinkBagError("vlink_bag.query needs DuckDB: pip install 'vlink-bag[lake]'", code="DRIVER_MISSING") from error
    views = lake_views_sql(catalog, export)
    with duckdb.connect(":memory:") as connection:
        for statement in views:
            connection.execute(statement)
        try:
            relation = connection.execute(sql)
            types = [str(column[1]) for column in relation.description or []]
            frame = relation.df()
        except duckdb.Error as error:
            raise BadRequest(str(error), code="QUERY_ERROR") from error
    for i, kind in enumerate(types):
        if kind.upper() in _TIMESTAMP_TYPES:
            column = frame.iloc[:, i]
            frame.isetitem(i, column.dt.tz_localize("UTC") if column.dt.tz is None else column.dt.tz_convert("UTC"))
    frame.attrs["types"] = [t.upper() for t in types]
    return frame


def frame_from_answer(answer: dict[str, Any]) -> pd.DataFrame:
    """The JSON answer of ``POST /v1/query`` as a DataFrame: TIMESTAMP columns parsed (UTC), the DuckDB types in
    ``df.attrs["types"]`` and whether rows were left out in ``df.attrs["truncated"]``."""
    import pandas as pd

    columns = answer["columns"]
    names = [column["name"] for column in columns]
    frame = pd.DataFrame.from_records([tuple(row) for row in answer["rows"]], columns=names) if answer["rows"] else pd.DataFrame(columns=names)
    for i, column in enumerate(columns):
        if str(column["type"]).upper() in _TIMESTAMP_TYPES:
            frame.isetitem(i, pd.to_datetime(frame.iloc[:, i], utc=True, format="ISO8601"))
    frame.attrs["types"] = [column["type"] for column in columns]
    frame.attrs["truncated"] = bool(answer.get("truncated", False))
    return frame
