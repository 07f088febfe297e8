"""Every accepted time type selects the same window, locally and through the server."""

from __future__ import annotations

import datetime as dt
import warnings
from typing import Any

import numpy as np
import pandas as pd
import pytest

from vlink_bag import BadRequest, EmptyWindowWarning

from .conftest import Expected

START_MS = 1_773_712_800_123


@pytest.fixture()
def bag(any_bag: Any) -> Any:
    return any_bag


def window_of(bag: Any, *args: Any, **kwargs: Any) -> list[int]:
    return [m.timestamp for m in bag.read_messages(*args, urls="imu", **kwargs)]


def test_every_time_type_means_the_same_window(bag: Any, expected: Expected) -> None:
    want = [t for t, _u, _d in expected.select(["imu"], 1_450_000, 1_650_000)]
    assert want == list(range(1_450_000, 1_650_001, 10_000))
    start = dt.datetime.fromtimestamp(START_MS / 1000, tz=dt.timezone.utc)
    cases: list[tuple[Any, Any, dict[str, Any]]] = [
        (1_450_000, 1_650_000, {}),  # int µs since start
        (np.int64(1_450_000), np.int64(1_650_000), {}),  # numpy integers (values taken from df.timestamp)
        (np.uint32(1_450_000), np.int32(1_650_000), {}),
        (1.45, 1.65, {"unit": "s"}),  # floats in seconds, named
        (np.float64(1450.0), 1650.0, {"unit": "ms"}),
        (None, None, {"start_s": 1.45, "end_s": 1.65}),
        (dt.timedelta(seconds=1.45), dt.timedelta(seconds=1.65), {}),  # relative
        (pd.Timedelta("1.45s"), pd.Timedelta(milliseconds=1650), {}),
        (np.timedelta64(1450, "ms"), np.timedelta64(1_650_000, "us"), {}),
        (start + dt.timedelta(seconds=1.45), start + dt.timedelta(seconds=1.65), {}),  # absolute
        (pd.Timestamp(start) + pd.Timedelta("1.45s"), pd.Timestamp(start) + pd.Timedelta("1.65s"), {}),
        (np.datetime64((START_MS + 1450) * 1000, "us"), np.datetime64((START_MS + 1650) * 1_000_000, "ns"), {}),
        ((START_MS + 1450) * 1_000_000, (START_MS + 1650) * 1_000_000, {}),  # Apollo's absolute ns
    ]
    for start_time, end_time, extra in cases:
        if start_time is None:
            got = window_of(bag, **extra)
        else:
            got = window_of(bag, start_time, end_time, **extra)
        assert got == want, (start_time, end_time, extra)


def test_times_from_a_dataframe_select_their_rows(bag: Any) -> None:
    df = bag.to_dataframe(urls="imu")
    row = df.iloc[17]
    for value in (row["timestamp"], row["time"], row["elapsed"], row["time"].to_pydatetime(), row["elapsed"].to_pytimedelta()):
        got = [m.timestamp for m in bag.read_messages(value, value, urls="imu")]
        assert got == [int(row["timestamp"])], value


def test_naive_datetimes_are_in_the_recordings_timezone(bag: Any) -> None:
    naive = dt.datetime(2026, 3, 17, 2, 0, 1, 123000)  # the recording is UTC: 1 s after its start
    assert window_of(bag, naive, naive + dt.timedelta(milliseconds=20)) == [1_000_000, 1_010_000, 1_020_000]


def test_a_window_outside_the_recording_warns_once(bag: Any) -> None:
    with pytest.warns(EmptyWindowWarning, match="unit='s'"):
        assert window_of(bag, 1.45, 1.65) == []  # seconds passed as µs: outside? no: 1-2 µs, inside but empty
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert window_of(bag, 1.45, 1.65) == []  # once per bag


def test_bad_times(bag: Any) -> None:
    for bad in ("1.45", True, float("nan"), -5, dt.date(2026, 3, 17), pd.NaT):
        with pytest.raises(BadRequest):
            window_of(bag, bad)
    with pytest.raises(BadRequest):
        window_of(bag, 1.0, unit="fortnight")
    with pytest.raises(BadRequest):
        window_of(bag, 5, start_s=1.0)
