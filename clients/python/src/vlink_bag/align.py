"""Offline alignment (``bag.align(...)``): the bag's urls on one timeline, decoded into columns, as a pandas DataFrame.

The alignment itself is the TypeScript library's (``@vlink/bag-align``), so local and remote bags give the same table:
a remote bag asks the server (``GET /v1/bags/{id}/align?format=parquet``), a local bag runs the ``vlink-bag align``
CLI (``VLINK_BAG_CLI``, else ``vlink-bag`` on PATH). Both read the Parquet with pyarrow; the JSON description of the
columns, parameters and counts is in ``df.attrs["align"]``."""

from __future__ import annotations

import io
import json
import math
import os
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

from .errors import BadRequest, NotFound, VlinkBagError

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["align_query", "parquet_dataframe", "run_cli_align", "MATCH_POLICIES", "MISSING_POLICIES"]

MATCH_POLICIES = ("nearest", "previous", "linear")
MISSING_POLICIES = ("drop", "ffill", "null")
DESCRIPTION_KEY = b"vlink.align"


def _bad(message: str) -> BadRequest:
    return BadRequest(message, code="INVALID_ARGUMENT")


def align_query(
    base: str | float,
    *,
    time_base: str = "log",
    match: Mapping[str, str] | None = None,
    default_match: str = "nearest",
    tolerance_us: float | None = None,
    missing: str = "null",
) -> dict[str, Any]:
    """Checks the arguments of :meth:`BagBase.align` and returns them as the CLI and the server take them:
    ``base`` (a url, or a rate like ``"30hz"``), ``timeBase``, ``match`` (``url=policy`` items), ``defaultMatch``,
    ``toleranceUs`` and ``missing``."""
    if isinstance(base, bool):
        raise _bad(f"base must be a url or a rate in Hz, not {base!r}")
    if isinstance(base, (int, float)):
        if not math.isfinite(base) or base <= 0:
            raise _bad(f"a base rate must be a positive number of Hz, not {base!r}")
        base_text = f"{float(base)!r}hz"
    elif isinstance(base, str) and base:
        base_text = base
    else:
        raise _bad(f"base must be a url or a rate in Hz, not {base!r}")
    if time_base not in ("log", "publish"):
        raise _bad(f"time_base must be 'log' or 'publish', not {time_base!r}")
    if default_match not in MATCH_POLICIES:
        raise _bad(f"default_match must be one of {', '.join(MATCH_POLICIES)}, not {default_match!r}")
    if missing not in MISSING_POLICIES:
        raise _bad(f"missing must be one of {', '.join(MISSING_POLICIES)}, not {missing!r}")
    items: list[str] = []
    for url, policy in (match or {}).items():
        if not isinstance(url, str) or not url or "," in url:
            raise _bad(f"a matched url must be a non-empty string without a comma, not {url!r}")
        if policy not in MATCH_POLICIES:
            raise _bad(f"the policy of {url} must be one of {', '.join(MATCH_POLICIES)}, not {policy!r}")
        items.append(f"{url}={policy}")
    query: dict[str, Any] = {"base": base_text, "timeBase": time_base, "match": items, "defaultMatch": default_match, "missing": missing}
    if tolerance_us is not None:
        if isinstance(tolerance_us, bool) or not isinstance(tolerance_us, (int, float)) or not tolerance_us >= 0 or not math.isfinite(tolerance_us):
            raise _bad(f"tolerance_us must be a number ≥ 0, not {tolerance_us!r}")
        query["toleranceUs"] = float(tolerance_us)
    return query


def check_urls(info: dict[str, Any], query: dict[str, Any]) -> None:
    """NotFound for a base url or a matched url the bag does not have (what the server answers with 404)."""
    known = {u["url"] for u in info.get("urls", [])}
    base = query["base"]
    wanted = [] if base.lower().endswith("hz") and _is_rate(base) else [base]
    wanted += [item.rsplit("=", 1)[0] for item in query["match"]]
    for url in wanted:
        if url not in known:
            raise NotFound(f"the url {url} is not in the bag", code="NOT_FOUND")


def _is_rate(text: str) -> bool:
    try:
        float(text[:-2])
        return True
    except ValueError:
        return False


def parquet_dataframe(data: bytes) -> pd.DataFrame:
    """The aligned Parquet as a DataFrame (time columns tz-aware UTC), with the description in ``attrs["align"]``."""
    try:
        import pyarrow.parquet as pq
    except ImportError as error:  # pragma: no cover
        raise ImportError("align needs pyarrow: pip install 'vlink-bag[arrow]'") from error
    table = pq.read_table(io.BytesIO(data))
    metadata = table.schema.metadata or {}
    frame = table.to_pandas()
    if DESCRIPTION_KEY in metadata:
        frame.attrs["align"] = json.loads(metadata[DESCRIPTION_KEY])
    return frame


def cli_command() -> list[str]:
    """How to run the CLI: ``VLINK_BAG_CLI`` (a command line, e.g. ``node /path/to/bin.js``), else ``vlink-bag``."""
    configured = os.environ.get("VLINK_BAG_CLI")
    if configured:
        return shlex.split(configured)
    found = shutil.which("vlink-bag")
    if not found:
        raise VlinkBagError(
            "aligning a local bag runs the vlink-bag CLI (npm package @vlink/bag-cli): put it on PATH or set "
            "VLINK_BAG_CLI; or align through a server (client.bag(id).align(...))",
            code="NOT_SUPPORTED",
        )
    return [found]


def run_cli_align(path: Path, query: dict[str, Any]) -> bytes:
    """Runs ``vlink-bag align`` on a local bag into a temporary Parquet file and returns its bytes."""
    with tempfile.TemporaryDirectory(prefix="vlink-align-") as tmp:
        out = Path(tmp) / "aligned.parquet"
        args = [*cli_command(), "align", str(path), "--base", query["base"], "--time-base", query["timeBase"]]
        args += ["--default-match", query["defaultMatch"], "--missing", query["missing"], "--format", "parquet"]
        for item in query["match"]:
            args += ["--match", item]
        if "toleranceUs" in query:
            args += ["--tolerance", f"{query['toleranceUs']!r}us"]
        args += ["-o", str(out), "--quiet"]
        done = subprocess.run(args, capture_output=True, stdin=subprocess.DEVNULL, check=False)
        if done.returncode != 0:
            message = done.stderr.decode("utf-8", "replace").strip() or f"vlink-bag align exited with {done.returncode}"
            raise VlinkBagError(message, code="ALIGN_FAILED")
        return out.read_bytes()
