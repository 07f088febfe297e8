"""The server's analyses computed locally, with the same rules: per-url timing (``packages/core/src/analysis/
timing.ts``) and the density of messages per time bucket (``packages/http-api/src/density/density.ts``)."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import Any

from ..errors import BadRequest
from ..frames import Message

__all__ = ["analyze_timing", "url_timing", "density", "MAX_BUCKETS"]

MAX_BUCKETS = 5000


def _rank(ordered: list[float], p: float) -> float:
    return ordered[max(0, math.ceil(p * len(ordered)) - 1)]


def _num(value: float) -> float | int:
    return int(value) if float(value).is_integer() else value


def url_timing(url: str, timestamps: list[int], factor: float, action: str | None = None) -> dict[str, Any]:
    """One stream's timing; a stream is a url AND an action (an RPC url's requests and responses are two)."""
    times = sorted(timestamps)
    count = len(times)
    if count < 2:
        return {"url": url, "action": action, "count": count, "rateHz": 0, "intervalUs": None, "gaps": []}
    intervals = [times[i] - times[i - 1] for i in range(1, count)]
    ordered = sorted(intervals)
    span = times[-1] - times[0]
    positive = [v for v in ordered if v > 0]
    period = _rank(positive, 0.5) if positive else 0
    gaps = [{"startUs": times[i], "lengthUs": v} for i, v in enumerate(intervals) if period > 0 and v > factor * period]
    return {
        "url": url,
        "action": action,
        "count": count,
        "rateHz": _num((count - 1) / (span / 1e6)) if span > 0 else 0,
        "intervalUs": {"min": ordered[0], "p50": _rank(ordered, 0.5), "p99": _rank(ordered, 0.99), "max": ordered[-1]},
        "gaps": gaps,
    }


def analyze_timing(messages: Iterable[Message], factor: float, urls: list[str] | None) -> list[dict[str, Any]]:
    if isinstance(factor, bool) or not isinstance(factor, (int, float)) or not math.isfinite(factor) or factor <= 0:
        raise BadRequest(f"factor must be a positive number, not {factor!r}", code="INVALID_ARGUMENT")
    by_stream: dict[tuple[str, str], list[int]] = {}
    for m in messages:
        by_stream.setdefault((m.topic, m.action), []).append(m.timestamp)
    seen = {url for url, _ in by_stream}
    out = [url_timing(url, [], factor) for url in urls or () if url not in seen]
    out += [url_timing(url, times, factor, action) for (url, action), times in by_stream.items()]
    return sorted(out, key=lambda t: (t["url"], t["action"] or ""))


def density(bag: Any, buckets: int, begin_us: int, end_us: int | None, urls: Any) -> dict[str, Any]:
    from ..bagbase import url_list

    if isinstance(buckets, bool) or not isinstance(buckets, int) or not 1 <= buckets <= MAX_BUCKETS:
        raise BadRequest(f"buckets must be an integer in [1, {MAX_BUCKETS}], not {buckets!r}", code="INVALID_ARGUMENT")
    wanted = url_list(urls)
    begin_ms = begin_us / 1000
    end_ms = max(begin_ms, float(bag._cached_info()["totalDuration"])) if end_us is None else end_us / 1000
    span = max(1, round(end_ms * 1000) - round(begin_ms * 1000))
    scale = buckets / span
    last = buckets - 1
    counts: dict[str, list[int]] = {u: [0] * buckets for u in wanted or ()}
    total = 0
    window_end = None if end_us is None and end_ms * 1000 >= bag.duration_us else round(end_ms * 1000)
    for m in bag.read_messages(begin_us, window_end, wanted):
        row = counts.get(m.topic)
        if row is None:
            row = counts[m.topic] = [0] * buckets
        row[max(0, min(math.floor((m.timestamp - round(begin_ms * 1000)) * scale), last))] += 1
        total += 1
    return {
        "beginMs": _num(begin_ms),
        "endMs": _num(end_ms),
        "buckets": buckets,
        "bucketMs": _num(span / 1000 / buckets),
        "total": total,
        "urls": [{"url": u, "count": sum(counts[u]), "max": max(counts[u]), "counts": counts[u]} for u in sorted(counts)],
    }
