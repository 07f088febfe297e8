"""Time arguments: every ``start_time``/``end_time`` of the client goes through :func:`to_relative_us`.

Accepted, for a bag whose recording started at ``start_us`` (µs since the Unix epoch):

* ``int`` and numpy integers: **µs since recording start** (the bag's own time base). An integer ≥ 10¹⁷ cannot be
  that (3 000 years); it is Apollo's **absolute nanoseconds** since the epoch (what ``RecordReader`` takes and what
  ``Message.abs_timestamp_ns`` gives). Apollo's "to the end" (``2**64 - 1``) and anything ≥ 2**53 µs as an end is open.
* ``float`` and numpy floats: in ``unit`` (default ``"us"``; ``"s"``, ``"ms"``, ``"ns"`` too). ``start_s=`` /
  ``end_s=`` keyword arguments are seconds whatever ``unit`` says.
* ``datetime``/``pd.Timestamp``/``np.datetime64``: **absolute** instants. A naive ``datetime``/``Timestamp`` is read in
  the recording's timezone (the one its ``time`` column shows); a naive ``np.datetime64`` is UTC, as numpy means it.
* ``timedelta``/``pd.Timedelta``/``np.timedelta64``: **relative** to recording start.

Window starts round up and ends round down to whole µs, so both ends stay inclusive on the stored µs. A float is
taken as the decimal number it prints as (``1.001`` s is 1 001 000 µs, although ``1.001 * 1e6`` is 1000999.99…), so
a window's ends are what was typed, as ``vlink-bag cat -b 1.001 -e 1.001`` takes them.
"""

from __future__ import annotations

import datetime as dt
import math
from fractions import Fraction
from numbers import Integral, Rational, Real
from typing import Any

from .errors import BadRequest

__all__ = ["to_relative_us", "window", "UNITS", "APOLLO_NS_MIN", "OPEN_END_US", "recording_tz"]

UNITS = {"us": 1, "µs": 1, "ms": 1_000, "s": 1_000_000, "ns": 0.001}
#: The same factors as exact fractions (what conversions use: ``0.001`` is not exact in binary).
_EXACT_UNITS = {"us": Fraction(1), "µs": Fraction(1), "ms": Fraction(1_000), "s": Fraction(1_000_000), "ns": Fraction(1, 1000)}
#: Integers at or above this are absolute ns (Apollo), not µs since start.
APOLLO_NS_MIN = 10**17
#: An end at or beyond this (µs) means "to the end" (Apollo's default end is 2**64 - 1).
OPEN_END_US = 2**53
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


def recording_tz(minutes_east: int | float | None) -> dt.timezone:
    """The recording's timezone from its header (``timezone``: minutes east of UTC)."""
    minutes = int(minutes_east or 0)
    return dt.timezone.utc if minutes == 0 else dt.timezone(dt.timedelta(minutes=minutes))


def _bad(name: str, value: Any, why: str) -> BadRequest:
    return BadRequest(f"{name}: {why}, not {value!r}", code="INVALID_ARGUMENT")


def _round(us: Fraction, *, up: bool) -> int:
    return math.ceil(us) if up else math.floor(us)


def _exact(number: Real) -> Fraction:
    """A float as the decimal it prints as (its shortest repr: ``1.001`` → 1001/1000, not the binary double just
    below it); exact rationals (``Fraction``) as they are."""
    if isinstance(number, Rational):
        return Fraction(number.numerator, number.denominator)
    return Fraction(str(float(number)) if type(number).__module__ != "numpy" else str(number))


def _ns_to_us(ns: int, *, up: bool) -> int:
    """Exact integer ns → µs (floats would lose the last digits of epoch nanoseconds)."""
    return -(-ns // 1000) if up else ns // 1000


def to_relative_us(value: Any, *, name: str, start_us: int, tz: dt.tzinfo, unit: str = "us", is_start: bool = True) -> int | None:
    """One time argument as µs since recording start (None for None or an open end)."""
    if value is None:
        return None
    if isinstance(value, bool):
        raise _bad(name, value, "a time, not a bool")
    if unit not in UNITS:
        raise BadRequest(f"unit must be one of {sorted(UNITS)}, not {unit!r}", code="INVALID_ARGUMENT")
    type_name = type(value).__module__ + "." + type(value).__name__
    if type_name.endswith("NaTType"):
        raise _bad(name, value, "a time (NaT is none)")
    # pandas/numpy types first: pd.Timestamp is a datetime, pd.Timedelta a timedelta, but both carry ns.
    if type_name == "numpy.datetime64" or type_name == "numpy.timedelta64":
        import numpy as np

        if np.isnat(value):
            raise _bad(name, value, "a time (NaT is none)")
        ns = int(value.astype("datetime64[ns]" if type_name == "numpy.datetime64" else "timedelta64[ns]").astype("int64"))
        return _ns_to_us(ns, up=is_start) - (start_us if type_name == "numpy.datetime64" else 0)
    if isinstance(value, dt.datetime):
        if getattr(value, "tzinfo", None) is None:
            value = value.replace(tzinfo=tz)
        ns_attr = getattr(value, "value", None)  # pd.Timestamp: exact ns since the epoch
        if type_name.startswith("pandas.") and isinstance(ns_attr, int):
            return _ns_to_us(ns_attr, up=is_start) - start_us
        delta = value - _EPOCH
        return (delta // dt.timedelta(microseconds=1)) - start_us
    if isinstance(value, dt.timedelta):
        ns_attr = getattr(value, "value", None)  # pd.Timedelta
        if type_name.startswith("pandas.") and isinstance(ns_attr, int):
            return _ns_to_us(ns_attr, up=is_start)
        return value // dt.timedelta(microseconds=1)
    if isinstance(value, dt.date):
        raise _bad(name, value, "a datetime (a date has no time of day)")
    if isinstance(value, Integral):
        number = int(value)
        if number < 0:
            raise _bad(name, value, "µs since recording start, ≥ 0")
        if number >= APOLLO_NS_MIN and unit == "us":
            if not is_start and number >= 2**63:
                return None
            return _ns_to_us(number, up=is_start) - start_us
        return _round(number * _EXACT_UNITS[unit], up=is_start)
    if isinstance(value, Real):
        number = float(value)
        if not math.isfinite(number):
            if number == math.inf and not is_start:
                return None
            raise _bad(name, value, "a finite time")
        if number < 0:
            raise _bad(name, value, "a time since recording start, ≥ 0")
        return _round(_exact(value) * _EXACT_UNITS[unit], up=is_start)
    raise _bad(name, value, "µs since start (int), seconds (float with unit='s'), a datetime, a timedelta or a pandas/numpy time")


def window(
    start_time: Any,
    end_time: Any,
    *,
    start_us: int,
    tz: dt.tzinfo,
    unit: str = "us",
    start_s: float | None = None,
    end_s: float | None = None,
) -> tuple[int, int | None]:
    """(begin, end) in µs since recording start, inclusive; ``end`` None = to the end. Raises :class:`BadRequest` for
    a window that ends before it starts."""
    if start_s is not None:
        if start_time not in (None, 0):
            raise BadRequest("pass start_time or start_s, not both", code="INVALID_ARGUMENT")
        start_time, start_unit = start_s, "s"
    else:
        start_unit = unit
    if end_s is not None:
        if end_time is not None:
            raise BadRequest("pass end_time or end_s, not both", code="INVALID_ARGUMENT")
        end_time, end_unit = end_s, "s"
    else:
        end_unit = unit
    begin = to_relative_us(start_time, name="start_time", start_us=start_us, tz=tz, unit=start_unit, is_start=True)
    end = to_relative_us(end_time, name="end_time", start_us=start_us, tz=tz, unit=end_unit, is_start=False)
    begin = max(0, begin or 0)
    if end is not None and end >= OPEN_END_US:
        end = None
    if end is not None and end < begin:
        if end < 0 or end == begin - 1:
            return begin, end  # before the recording, or a sub-µs window that rounding emptied: nothing in it
        raise BadRequest(f"end_time {end_time!r} is before start_time {start_time!r}", code="INVALID_ARGUMENT")
    return begin, end
