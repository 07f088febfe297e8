"""The Python reference readers of each foreign format, timed on the files bench/interop.bench.mjs wrote: rosbags'
rosbag1 Reader for ROS 1 .bag, the official `mcap` reader for .mcap, pyulog for .ulg. Each opens the file and
touches every message's payload (pyulog has no raw mode: it parses every sample, as @foxglove/ulog does). Median of
`reps` runs after one warm-up, printed as JSON: {path: {"medianMs", "runsMs", "messagesRead", "reader"}}.

    python bench/interop_python.py <reps> <format>=<path> ...       (run by interop.bench.mjs --python <interpreter>)
"""

from __future__ import annotations

import json
import statistics
import sys
import time
from importlib.metadata import version
from pathlib import Path


def ros1(path: str) -> int:
    from rosbags.rosbag1 import Reader

    n = 0
    with Reader(Path(path)) as reader:
        for _connection, _time, raw in reader.messages():
            n += len(raw) >= 0
    return n


def mcap(path: str) -> int:
    from mcap.reader import make_reader

    n = 0
    with open(path, "rb") as f:
        for _schema, _channel, message in make_reader(f).iter_messages(log_time_order=False):
            n += len(message.data) >= 0
    return n


def ulog(path: str) -> int:
    from pyulog import ULog

    log = ULog(path)
    return sum(len(d.data["timestamp"]) for d in log.data_list)


READERS = {
    "ros1": (ros1, lambda: f"rosbags {version('rosbags')} rosbag1.Reader"),
    "mcap": (mcap, lambda: f"mcap {version('mcap')} make_reader"),
    "ulog": (ulog, lambda: f"pyulog {version('pyulog')} ULog"),
}


def main() -> None:
    reps = int(sys.argv[1])
    out = {}
    for arg in sys.argv[2:]:
        fmt, _, path = arg.partition("=")
        read, name = READERS[fmt]
        read(path)  # warm-up: page cache, imports
        runs, n = [], 0
        for _ in range(reps):
            start = time.perf_counter()
            n = read(path)
            runs.append((time.perf_counter() - start) * 1000)
        out[path] = {"medianMs": statistics.median(runs), "runsMs": runs, "messagesRead": n, "reader": name()}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
