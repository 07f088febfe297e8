#!/usr/bin/env python3
"""Python client read throughput, remote (``RemoteBag`` over loopback) and local (``vlink_bag.open``), against the
official ``mcap`` reader on the same ``.vcap`` file.

  1. msg/s for 64 B frames (goal ≥ 100 000 msg/s over loopback),
  2. MB/s for 1 MiB frames (goal ≥ 300 MB/s over loopback, MB = 10^6 bytes),
  3. local reading: ``.vcap`` ≥ the ``mcap`` reader (``make_reader(f).iter_messages()``) on the same file, and
     ``.vdb`` ≥ 300 000 msg/s at 64 B,
  4. ``to_dataframe(decode=True)`` over loopback ≥ 500 000 msg/s at 64 B,
  5. the LZAV decoders (C extension and pure Python) in MB/s of output on the reference vectors,

each beside: the HTTP transport alone (httpx streaming the same binary response without parsing) and the .vdb bag
of the same frames.

Run with the client's venv (scripts/test-python.sh makes it; `mcap` is installed into that venv on first use):

    clients/python/.venv/bin/python bench/python_read.py [--quick] [--reps N] [--runtime node|bun]

Needs `npm run build`. Bags are cached in bench/tmp/python-<small>-<big>/; results go to bench/results/python.json.
``--smoke`` (tiny bags, one repetition, results to bench/results/smoke/python.json) only checks that the harness works.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import shutil
import socket
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
MB = 1_000_000
MiB = 1024 * 1024


def ensure_packages() -> None:
    """Imports the client, and installs `mcap` into the running venv (never into a system interpreter)."""
    try:
        import vlink_bag  # noqa: F401
    except ImportError:
        sys.exit("vlink_bag is not importable: run with clients/python/.venv/bin/python (scripts/test-python.sh creates it)")
    try:
        import mcap  # noqa: F401
    except ImportError:
        if sys.prefix == sys.base_prefix:
            sys.exit("the mcap package is missing and this is not a virtualenv: run with clients/python/.venv/bin/python")
        print("installing mcap into", sys.prefix, flush=True)
        subprocess.run([sys.executable, "-m", "pip", "install", "-q", "mcap"], check=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def start_server(root: Path, runtime: str) -> tuple[subprocess.Popen[bytes], str]:
    import httpx

    cli = REPO / "packages" / "cli" / "dist" / "bin.js"
    if not cli.exists():
        sys.exit("packages/cli/dist/bin.js missing: run `npm run build` first")
    exe = shutil.which(runtime) or str(REPO / "node_modules" / ".bin" / runtime)
    port = free_port()
    process = subprocess.Popen([exe, str(cli), "serve", str(root), "--host", "127.0.0.1", "--port", str(port), "--quiet"], stdin=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and process.poll() is None:
        try:
            if httpx.get(url + "/v1/health", timeout=1).status_code == 200:
                return process, url
        except httpx.TransportError:
            time.sleep(0.05)
    process.kill()
    sys.exit(f"the {runtime} server did not start")


def timed(reps: int, run: Callable[[], tuple[int, int]]) -> dict[str, Any]:
    """Runs `run` (→ messages, payload bytes) `reps` times after one warm-up; rates per run."""
    run()
    rows = []
    for _ in range(reps):
        t0 = time.perf_counter()
        messages, payload = run()
        seconds = time.perf_counter() - t0
        rows.append({"seconds": seconds, "messages": messages, "payloadBytes": payload})
    med = statistics.median(r["seconds"] for r in rows)
    best = rows[0]
    return {
        "messages": best["messages"],
        "payloadBytes": best["payloadBytes"],
        "medianSeconds": round(med, 4),
        "msgPerS": round(best["messages"] / med),
        "MBPerS": round(best["payloadBytes"] / MB / med, 1),
        "MiBPerS": round(best["payloadBytes"] / MiB / med, 1),
        "bestMsgPerS": round(best["messages"] / min(r["seconds"] for r in rows)),
        "bestMBPerS": round(best["payloadBytes"] / MB / min(r["seconds"] for r in rows), 1),
        "allMsgPerS": [round(r["messages"] / r["seconds"]) for r in rows],
        "allMBPerS": [round(r["payloadBytes"] / MB / r["seconds"], 1) for r in rows],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true", help="100k small frames, 96 big ones, 2 repetitions")
    parser.add_argument("--smoke", action="store_true", help="5k small frames, 8 big ones, 1 repetition; results to bench/results/smoke/")
    parser.add_argument("--reps", type=int, default=None)
    parser.add_argument("--runtime", default="node", choices=["node", "bun"], help="runtime of the server (default node)")
    parser.add_argument("--out", default=None, help="default bench/results/python.json (bench/results/smoke/python.json with --smoke)")
    args = parser.parse_args()
    ensure_packages()

    from mcap.reader import make_reader

    import vlink_bag
    from vlink_bag import Client

    small_n, big_n = (5_000, 8) if args.smoke else (100_000, 96) if args.quick else (300_000, 256)
    reps = args.reps or (1 if args.smoke else 2 if args.quick else 3)
    root = HERE / "tmp" / f"python-{small_n}-{big_n}"
    node = shutil.which("node") or sys.exit("node is not on PATH")
    subprocess.run([node, str(HERE / "python_bags.mjs"), str(root), str(small_n), str(big_n)], check=True)

    load_start = [round(x, 2) for x in os.getloadavg()]
    process, url = start_server(root, args.runtime)
    results: dict[str, Any] = {}
    try:
        with Client(url, timeout=120) as client:

            def remote(bag_id: str) -> Callable[[], tuple[int, int]]:
                bag = client.bag(bag_id)

                def run() -> tuple[int, int]:
                    n = size = 0
                    for m in bag.read_messages():
                        n += 1
                        size += len(m.message)
                    return n, size

                return run

            def transport(bag_id: str) -> Callable[[], tuple[int, int]]:
                """The same binary response through httpx, bytes counted, nothing parsed: the transport's ceiling."""
                path = f"/v1/bags/{bag_id}/messages"

                def run() -> tuple[int, int]:
                    size = 0
                    with client._http.stream("GET", path, params={"format": "binary"}) as response:
                        for chunk in response.iter_bytes():
                            size += len(chunk)
                    return 0, size

                return run

            def local_mcap(name: str) -> Callable[[], tuple[int, int]]:
                path = root / name

                def run() -> tuple[int, int]:
                    n = size = 0
                    with open(path, "rb") as f:
                        for _schema, _channel, message in make_reader(f).iter_messages():
                            n += 1
                            size += len(message.data)
                    return n, size

                return run

            def local(name: str) -> Callable[[], tuple[int, int]]:
                path = root / name

                def run() -> tuple[int, int]:
                    n = size = 0
                    with vlink_bag.open(path) as bag:
                        for m in bag.read_messages():
                            n += 1
                            size += len(m.message)
                    return n, size

                return run

            def dataframe(bag_id: str | None, name: str) -> Callable[[], tuple[int, int]]:
                def run() -> tuple[int, int]:
                    if bag_id is not None:
                        df = client.bag(bag_id).to_dataframe(decode=True)
                    else:
                        with vlink_bag.open(root / name) as bag:
                            df = bag.to_dataframe(decode=True)
                    return len(df), int(df["size"].sum())

                return run

            for label, size_name in (("smallFrames", "small"), ("bigFrames", "big")):
                print(f"{label}: read_messages .vcap …", flush=True)
                section: dict[str, Any] = {"payloadBytes": 64 if size_name == "small" else MiB}
                section["readMessagesVcap"] = timed(reps, remote(f"{size_name}.vcap"))
                print(f"{label}: read_messages .vdb …", flush=True)
                section["readMessagesVdb"] = timed(reps, remote(f"{size_name}.vdb"))
                print(f"{label}: httpx transport only …", flush=True)
                transport_rate = timed(reps, transport(f"{size_name}.vcap"))
                section["httpTransportOnlyVcap"] = {k: transport_rate[k] for k in ("medianSeconds", "MBPerS", "MiBPerS", "bestMBPerS", "allMBPerS")}
                section["httpTransportOnlyVcap"]["responseBytes"] = transport_rate["payloadBytes"]
                print(f"{label}: mcap reader, local file …", flush=True)
                section["mcapPyLocalVcap"] = timed(reps, local_mcap(f"{size_name}.vcap"))
                print(f"{label}: vlink_bag.open, local .vcap and .vdb …", flush=True)
                section["localVcap"] = timed(reps, local(f"{size_name}.vcap"))
                section["localVdb"] = timed(reps, local(f"{size_name}.vdb"))
                if size_name == "small":
                    print(f"{label}: to_dataframe(decode=True), remote and local …", flush=True)
                    section["dataframeRemoteVcap"] = timed(reps, dataframe(f"{size_name}.vcap", ""))
                    section["dataframeRemoteVdb"] = timed(reps, dataframe(f"{size_name}.vdb", ""))
                    section["dataframeLocalVcap"] = timed(reps, dataframe(None, f"{size_name}.vcap"))
                results[label] = section
    finally:
        process.terminate()
        try:
            process.wait(10)
        except subprocess.TimeoutExpired:
            process.kill()

    from importlib.metadata import version

    results["lzav"] = lzav_rates(reps)

    small = results["smallFrames"]
    big = results["bigFrames"]
    report = {
        "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
        "quick": args.quick,
        "reps": reps,
        "python": platform.python_version(),
        "implementation": platform.python_implementation(),
        "platform": platform.platform(),
        "cpus": os.cpu_count(),
        "loadAverage": {"start": load_start, "end": [round(x, 2) for x in os.getloadavg()]},
        "server": {"runtime": args.runtime, "command": "vlink-bag serve (packages/cli/dist/bin.js)"},
        "packages": {"vlink-bag": vlink_bag.__version__, "httpx": version("httpx"), "mcap": version("mcap")},
        "smallFrames": {"frames": small_n, **small},
        "bigFrames": {"frames": big_n, **big},
        "lzav": results["lzav"],
        "goals": {
            "smallMsgPerS": 100_000,
            "bigMBPerS": 300,
            "smallMet": small["readMessagesVcap"]["msgPerS"] >= 100_000,
            "bigMet": big["readMessagesVcap"]["MBPerS"] >= 300,
            "localVcapOverMcap": round(small["localVcap"]["msgPerS"] / small["mcapPyLocalVcap"]["msgPerS"], 2),
            "localVcapOverMcapBig": round(big["localVcap"]["MBPerS"] / big["mcapPyLocalVcap"]["MBPerS"], 2),
            "localVcapMet": small["localVcap"]["msgPerS"] >= small["mcapPyLocalVcap"]["msgPerS"],
            "localVdbOver300k": round(small["localVdb"]["msgPerS"] / 300_000, 2),
            "localVdbMet": small["localVdb"]["msgPerS"] >= 300_000,
            "dataframeRemoteOver500k": round(small["dataframeRemoteVcap"]["msgPerS"] / 500_000, 2),
            "dataframeRemoteMet": small["dataframeRemoteVcap"]["msgPerS"] >= 500_000,
            "lzavCOverPython": results["lzav"].get("cOverPython"),
        },
    }
    out = Path(args.out or HERE / "results" / ("smoke" if args.smoke else "") / "python.json")
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(report, indent=2) + "\n")
    print()
    print(f"64 B frames   read_messages .vcap {small['readMessagesVcap']['msgPerS']:>9,} msg/s   .vdb {small['readMessagesVdb']['msgPerS']:>9,} msg/s   mcap local {small['mcapPyLocalVcap']['msgPerS']:>9,} msg/s   (goal 100,000)")
    print(f"1 MiB frames  read_messages .vcap {big['readMessagesVcap']['MBPerS']:>9} MB/s    .vdb {big['readMessagesVdb']['MBPerS']:>9} MB/s    mcap local {big['mcapPyLocalVcap']['MBPerS']:>9} MB/s    (goal 300)   httpx alone {big['httpTransportOnlyVcap']['MBPerS']} MB/s")
    g = report["goals"]
    print(f"local 64 B    .vcap {small['localVcap']['msgPerS']:>9,} msg/s (× {g['localVcapOverMcap']} the mcap reader)   .vdb {small['localVdb']['msgPerS']:>9,} msg/s (× {g['localVdbOver300k']} of 300k)")
    print(f"to_dataframe(decode=True) over loopback, 64 B: .vcap {small['dataframeRemoteVcap']['msgPerS']:,} msg/s (× {g['dataframeRemoteOver500k']} of 500k), .vdb {small['dataframeRemoteVdb']['msgPerS']:,}; local .vcap {small['dataframeLocalVcap']['msgPerS']:,}")
    print(f"LZAV decode: C {results['lzav'].get('c', {}).get('MBPerS')} MB/s, Python {results['lzav']['python']['MBPerS']} MB/s")
    print("(medians; the same bags' best runs: " f"{small['readMessagesVcap']['bestMsgPerS']:,} msg/s, {big['readMessagesVcap']['bestMBPerS']} MB/s)")
    print(f"written to {out}")


def lzav_rates(reps: int) -> dict[str, Any]:
    """MB/s of decompressed output over every reference vector (fixtures/lzav), per implementation."""
    from vlink_bag import lzav
    from vlink_bag.lzav import _pure

    vectors = []
    manifest = json.loads((REPO / "fixtures" / "lzav" / "manifest.json").read_text())
    for v in manifest["vectors"]:
        for ext in ("lzav", "lzavhi"):
            vectors.append(((REPO / "fixtures" / "lzav" / f"{v['name']}.{ext}").read_bytes(), v["raw_size"]))
    out: dict[str, Any] = {"vectors": len(vectors), "rawBytes": sum(n for _d, n in vectors)}

    def rate(decode: Callable[[bytes, int], bytes], rounds: int) -> dict[str, Any]:
        def run() -> tuple[int, int]:
            total = 0
            for _ in range(rounds):
                for data, n in vectors:
                    total += len(decode(data, n))
            return 0, total

        return {k: v for k, v in timed(reps, run).items() if k in ("medianSeconds", "MBPerS", "bestMBPerS")}

    out["python"] = rate(_pure.decode, 2)
    if lzav.IMPLEMENTATION == "c":
        out["c"] = rate(lzav.decompress, 40)
        out["cOverPython"] = round(out["c"]["MBPerS"] / out["python"]["MBPerS"], 1)
    return out


if __name__ == "__main__":
    main()
