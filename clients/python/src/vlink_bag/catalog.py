"""The catalog ``vlink-bag index`` writes: ``bags.parquet`` (one row per bag) and ``urls.parquet`` (one per bag × url).

Read with pyarrow into pandas DataFrames; the columns and their types are the lake's layout (packages/lake/src/layout.ts):
times are UTC timestamps (microseconds), durations and gaps integers in µs (``*_us``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["Catalog", "catalog", "BAGS_FILE", "URLS_FILE"]

BAGS_FILE = "bags.parquet"
URLS_FILE = "urls.parquet"


@dataclass(frozen=True)
class Catalog:
    """The two tables of a catalog; unpacks as ``bags, urls = vlink_bag.catalog(path)``."""

    bags: pd.DataFrame
    urls: pd.DataFrame

    def __iter__(self) -> Iterator[pd.DataFrame]:
        yield self.bags
        yield self.urls


def catalog(path: str | Path) -> Catalog:
    """Reads the catalog folder ``path`` (as written by ``vlink-bag index <dirs|s3://…> -o path``).

    Timestamp columns come back as timezone-aware UTC ``datetime64`` columns (the files store UTC instants), counts as
    ``int64``; nullable integers (``max_gap_us`` of a url with one message) as pandas' ``Int64``.
    """
    folder = Path(path)
    missing = [name for name in (BAGS_FILE, URLS_FILE) if not (folder / name).is_file()]
    if missing:
        raise FileNotFoundError(f"{folder}: not a catalog ({', '.join(missing)} missing): run `vlink-bag index … -o {folder}`")
    return Catalog(_read(folder / BAGS_FILE), _read(folder / URLS_FILE))


def _read(file: Path) -> pd.DataFrame:
    try:
        import pyarrow as pa
        import pyarrow.parquet as pq
    except ImportError as error:  # pragma: no cover - exercised only without the extra
        raise ImportError("reading a catalog needs pyarrow and pandas: pip install 'vlink-bag[arrow,pandas]'") from error
    import pandas as pd

    table = pq.read_table(file)

    def mapper(kind: Any) -> Any:
        # Integers with nulls stay integers (pandas' nullable Int64) rather than becoming floats.
        return pd.Int64Dtype() if pa.types.is_int64(kind) else None

    frame = table.to_pandas(types_mapper=mapper)
    for field in table.schema:
        if pa.types.is_timestamp(field.type) and field.type.tz is None:
            frame[field.name] = frame[field.name].dt.tz_localize("UTC")
    return frame
