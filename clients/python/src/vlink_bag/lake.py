"""SQL over a fleet's lake (a catalog folder and a Parquet export, see the fleet guide): locally with DuckDB
(:func:`query`, the ``lake`` extra) or on a ``vlink-bag serve --catalog … --export …`` server (``Client.query``).

Both give a pandas DataFrame with the same views as ``vlink-bag query``: ``bags`` and ``urls`` over
``<catalog>/bags.parquet`` and ``urls.parquet``, ``messages`` over ``<export>/messages/**/*.parquet`` (hive partitions
``url`` and ``date`` as text, ``union_by_name`` so each url's ``data`` struct merges). TIMESTAMP columns are
timezone-aware UTC.
"""

from __future__ import annotations

import base64
import binascii
import datetime as dt
import os
import re
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
    """The JSON answer of ``POST /v1/query`` as a DataFrame with the values and dtypes the local :func:`query` gives
    for the same SQL, converted by the DuckDB types the answer carries (``df.attrs["types"]``): integers (which the
    server sends as decimal strings past 2^53) as Python ints in ``int64``/``int32``/…/``uint64`` columns (nullable
    ``Int64``… with NULLs; ``object`` for HUGEINT values past 64 bits), ``"NaN"``/``"Infinity"`` as floats
    (``float32`` for FLOAT), DATE as ``datetime64[us]``, TIME as ``datetime.time``, INTERVAL as
    ``timedelta64[us]`` (a month is 30 days, as DuckDB's own conversion), BLOB (base64) as bytes, TIMESTAMP columns
    in UTC; ``df.attrs["truncated"]`` says whether rows were left out. A value that does not convert leaves its
    column as the server sent it."""
    import pandas as pd

    from .answers import ShapeError, field, objects, obj, same_length, text

    answer = obj(answer)
    columns = objects(field(answer, "columns"), "columns")
    names = [text(field(column, "name", f"columns[{i}]"), f"columns[{i}].name") for i, column in enumerate(columns)]
    types = [text(field(column, "type", f"columns[{i}]"), f"columns[{i}].type") for i, column in enumerate(columns)]
    rows = field(answer, "rows")
    if not isinstance(rows, list):
        raise ShapeError("rows is not a list")
    same_length(rows, len(columns), "rows")
    series = [_column([row[i] for row in rows], kind) for i, kind in enumerate(types)]
    frame = pd.concat(series, axis=1, ignore_index=True) if series else pd.DataFrame(index=range(len(rows)))
    frame.columns = names
    frame.attrs["types"] = types
    frame.attrs["truncated"] = bool(answer.get("truncated", False))
    return frame


#: DuckDB integer types → the numpy dtype the local DuckDB gives them (HUGEINT: int64 where it fits, not float64).
_INT_DTYPES = {
    "TINYINT": "int8", "SMALLINT": "int16", "INTEGER": "int32", "BIGINT": "int64", "HUGEINT": "int64",
    "UTINYINT": "uint8", "USMALLINT": "uint16", "UINTEGER": "uint32", "UBIGINT": "uint64", "UHUGEINT": "uint64",
}  # fmt: skip
_FLOAT_DTYPES = {"FLOAT": "float32", "REAL": "float32", "DOUBLE": "float64"}
_INTERVAL_PART = re.compile(r"^(-?\d+) (year|month|day)s?$")
_INTERVAL_TIME = re.compile(r"^(-?)(\d+):(\d{2}):(\d{2})(?:\.(\d{1,6}))?$")


def _column(values: list[Any], kind: str) -> pd.Series:
    """One answer column as a Series of its DuckDB type (the raw values when they do not convert)."""
    import pandas as pd

    base = kind.strip().upper()
    try:
        if base in _TIMESTAMP_TYPES:
            if not values:
                return pd.Series([], dtype="datetime64[us, UTC]")
            return pd.Series(pd.to_datetime(pd.Series(values, dtype=object), utc=True, format="ISO8601"))
        if base in _INT_DTYPES:
            return _ints(values, _INT_DTYPES[base])
        if base in _FLOAT_DTYPES or base.startswith("DECIMAL"):
            return pd.Series([float("nan") if v is None else _float(v) for v in values], dtype=_FLOAT_DTYPES.get(base, "float64"))
        if base == "BOOLEAN":
            if not all(v is None or isinstance(v, bool) for v in values):
                raise ValueError("not a boolean")
            return pd.Series(values, dtype="boolean" if None in values else "bool")
        if base == "DATE":
            import numpy as np

            return pd.Series(np.array([np.datetime64("NaT") if v is None else np.datetime64(_iso_date(v), "us") for v in values], dtype="datetime64[us]"))
        if base == "TIME":
            return pd.Series([None if v is None else _time(v) for v in values], dtype=object)
        if base == "INTERVAL":
            import numpy as np

            return pd.Series(np.array([np.timedelta64("NaT") if v is None else np.timedelta64(_interval_us(v), "us") for v in values], dtype="timedelta64[us]"))
        if base == "BLOB":
            return pd.Series([None if v is None else base64.b64decode(_str(v), validate=True) for v in values], dtype=object)
    except (ValueError, TypeError, OverflowError, binascii.Error):
        pass  # a value of another form (a DATE 'infinity', a BC date): the column stays as the server sent it
    if not values:
        return pd.Series([], dtype=object)
    return pd.Series(values) if all(not isinstance(v, (list, dict)) for v in values) else pd.Series(values, dtype=object)


def _str(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError("not a string")
    return value


def _ints(values: list[Any], dtype: str) -> pd.Series:
    import numpy as np
    import pandas as pd

    ints: list[int | None] = []
    for v in values:
        if v is None:
            ints.append(None)
        elif isinstance(v, bool):
            raise TypeError("a boolean")
        elif isinstance(v, int):
            ints.append(v)
        elif isinstance(v, str) and v.strip().lstrip("+-").isdigit():
            ints.append(int(v))
        elif isinstance(v, float) and v.is_integer():
            ints.append(int(v))
        else:
            raise ValueError(f"{v!r} is not an integer")
    limits = np.iinfo(dtype)
    if not all(v is None or limits.min <= v <= limits.max for v in ints):
        return pd.Series(ints, dtype=object)  # past 64 bits (HUGEINT): Python ints, exact
    if None in ints:
        return pd.Series(ints, dtype=("UInt" + dtype[4:]) if dtype.startswith("u") else ("Int" + dtype[3:]))
    return pd.Series(ints, dtype=dtype)


def _float(value: Any) -> float:
    """A DOUBLE as the server sends it: a number, or DuckDB's text for the non-finite ones (``NaN``, ``Infinity``)."""
    if isinstance(value, bool):
        raise TypeError("a boolean")
    if isinstance(value, (int, float)):
        return float(value)
    if isinstance(value, str) and value.strip().lower().lstrip("+-") in ("nan", "inf", "infinity"):
        return float(value.strip().lower().replace("infinity", "inf"))
    raise ValueError(f"{value!r} is not a number")


def _iso_date(value: Any) -> str:
    text = _str(value)
    if not re.fullmatch(r"\d{4,}-\d{2}-\d{2}", text):
        raise ValueError(f"{text!r} is not a date")
    return text


def _time(value: Any) -> dt.time:
    match = _INTERVAL_TIME.match(_str(value))
    if match is None or match.group(1):
        raise ValueError(f"{value!r} is not a time")
    _sign, hours, minutes, seconds, fraction = match.groups()
    return dt.time(int(hours), int(minutes), int(seconds), int((fraction or "").ljust(6, "0")))


def _interval_us(value: Any) -> int:
    """DuckDB's interval text (``1 year 2 months 3 days 04:05:06.5``) in µs; months count 30 days, as DuckDB's own
    conversion to ``timedelta64`` does."""
    text = _str(value).strip()
    months = days = micros = 0
    tokens = text.split(" ")
    i = 0
    while i < len(tokens):
        if i + 1 < len(tokens) and (part := _INTERVAL_PART.match(f"{tokens[i]} {tokens[i + 1]}")):
            n, unit = int(part.group(1)), part.group(2)
            if unit == "year":
                months += 12 * n
            elif unit == "month":
                months += n
            else:
                days += n
            i += 2
            continue
        time_part = _INTERVAL_TIME.match(tokens[i])
        if time_part is None or i != len(tokens) - 1:
            raise ValueError(f"{text!r} is not an interval")
        sign, hours, minutes, seconds, fraction = time_part.groups()
        micros = ((int(hours) * 60 + int(minutes)) * 60 + int(seconds)) * 1_000_000 + int((fraction or "").ljust(6, "0"))
        micros = -micros if sign else micros
        i += 1
    return (months * 30 + days) * 86_400_000_000 + micros
