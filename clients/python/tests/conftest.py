"""Fixtures: bags written by the TypeScript writer, and real servers on free loopback ports.

The server is the CLI (``node packages/cli/dist/bin.js serve <dir> --host 127.0.0.1 --port <p>``) when it is built,
else a small node script calling ``@vlink/bag-server``'s ``serve()``. Both need ``npm run build`` to have run.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import pytest

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
CLI = REPO / "packages" / "cli" / "dist" / "bin.js"
SERVER_MODULE = REPO / "packages" / "http-api" / "dist" / "index.js"
BAG_MODULE = REPO / "packages" / "bag" / "dist" / "index.js"
MAKE_BAGS = HERE / "fixtures" / "make_bags.mjs"

# Runs serve() directly when the CLI is not built: argv = root host port [token].
SERVE_SCRIPT = """
const [root, host, port, token] = process.argv.slice(1);
const { serve } = await import(process.env.VLINK_SERVER_MODULE);
const server = await serve({ root, host, port: Number(port), ...(token ? { token } : {}) });
console.log(`listening ${server.url}`);
const stop = async () => { await server.close(); process.exit(0); };
process.on('SIGTERM', stop);
process.on('SIGINT', stop);
"""


def node_binary() -> str:
    node = os.environ.get("VLINK_NODE") or shutil.which("node")
    if not node:
        pytest.fail("node is not on PATH: the Python tests serve bags with the TypeScript server (set VLINK_NODE)")
    return node


def require_built() -> None:
    missing = [p for p in (BAG_MODULE, SERVER_MODULE) if not p.exists()]
    if missing:
        pytest.fail(f"{', '.join(str(p.relative_to(REPO)) for p in missing)} missing: run `npm run build` first")


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Server:
    url: str
    root: Path
    token: str | None
    process: subprocess.Popen[bytes]
    log: Path
    command: list[str] = field(default_factory=list)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(10)


def start_server(root: Path, log_dir: Path, token: str | None = None, use_cli: bool | None = None, extra_args: list[str] | None = None) -> Server:
    """Starts a server on a free port and waits until /v1/health answers. Retries on another port if the chosen one
    was taken in the meantime. ``extra_args`` (CLI flags such as ``--catalog``) need the CLI."""
    node = node_binary()
    require_built()
    use_cli = CLI.exists() if use_cli is None else use_cli
    if extra_args and not use_cli:
        pytest.fail(f"{' '.join(extra_args)} needs the CLI built ({CLI.relative_to(REPO)})")
    last_error = ""
    for attempt in range(4):
        port = free_port()
        if use_cli:
            command = [node, str(CLI), "serve", str(root), "--host", "127.0.0.1", "--port", str(port)]
            if token:
                command += ["--token", token]
            command += extra_args or []
        else:
            command = [node, "--input-type=module", "-e", SERVE_SCRIPT, str(root), "127.0.0.1", str(port), *([token] if token else [])]
        log = log_dir / f"server-{port}.log"
        env = {**os.environ, "VLINK_SERVER_MODULE": SERVER_MODULE.as_uri()}
        env.pop("VLINK_BAG_TOKEN", None)  # the CLI reads --token from it: only pass what the test means
        with open(log, "wb") as out:
            process = subprocess.Popen(command, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env=env, cwd=REPO)
        url = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if process.poll() is not None:
                break
            try:
                if httpx.get(url + "/v1/health", timeout=1).status_code == 200:
                    return Server(url, root, token, process, log, command)
            except httpx.TransportError:
                pass
            time.sleep(0.05)
        if process.poll() is None:
            process.kill()
            process.wait(10)
        last_error = log.read_text(errors="replace")
        if "EADDRINUSE" not in last_error and "address already in use" not in last_error.lower():
            break
    pytest.fail(f"the server did not start ({' '.join(command)}):\n{last_error}")


@dataclass
class Expected:
    """What make_bags.mjs wrote (every frame, in reading order)."""

    start_ms: int
    fds: bytes
    frames: list[dict[str, Any]]

    def select(self, urls: list[str] | None = None, start: int | None = None, end: int | None = None) -> list[tuple[int, str, bytes]]:
        out = []
        for f in self.frames:
            if urls is not None and f["url"] not in urls:
                continue
            if start is not None and f["timestamp"] < start:
                continue
            if end is not None and f["timestamp"] > end:
                continue
            out.append((f["timestamp"], f["url"], f["bytes"]))
        return out


@pytest.fixture(scope="session")
def bag_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    node = node_binary()
    require_built()
    root = tmp_path_factory.mktemp("bags")
    result = subprocess.run([node, str(MAKE_BAGS), str(root)], capture_output=True, text=True, cwd=REPO, timeout=120)
    if result.returncode != 0:
        pytest.fail(f"make_bags.mjs failed:\n{result.stdout}\n{result.stderr}")
    return root


@pytest.fixture(scope="session")
def expected(bag_dir: Path) -> Expected:
    data = json.loads((bag_dir / "expected.json").read_text())
    for f in data["frames"]:
        f["bytes"] = base64.b64decode(f["data"])
    return Expected(data["startMs"], base64.b64decode(data["fds"]), data["frames"])


@pytest.fixture(scope="session")
def server(bag_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    running = start_server(bag_dir, tmp_path_factory.mktemp("logs"))
    yield running
    running.stop()


TOKEN = "s3cret-token"


@pytest.fixture(scope="session")
def token_server(bag_dir: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    running = start_server(bag_dir, tmp_path_factory.mktemp("logs"), token=TOKEN)
    yield running
    running.stop()


@pytest.fixture()
def client(server: Server) -> Iterator[Any]:
    from vlink_bag import Client

    with Client(server.url) as c:
        yield c


BAG_IDS = ["drive.vdb", "runs/drive.vcap"]


@pytest.fixture(params=BAG_IDS)
def bag(request: pytest.FixtureRequest, client: Any) -> Any:
    """A bag read through the server."""
    return client.bag(request.param)


remote_bag = bag


@pytest.fixture(params=[f"{kind}:{bag_id}" for kind in ("remote", "local") for bag_id in BAG_IDS])
def any_bag(request: pytest.FixtureRequest, client: Any, bag_dir: Path) -> Iterator[Any]:
    """The same bags read through the server and read locally (vlink_bag.open): every test using it must pass both
    ways."""
    import vlink_bag

    kind, bag_id = request.param.split(":", 1)
    if kind == "remote":
        yield client.bag(bag_id)
        return
    with vlink_bag.open(bag_dir / bag_id) as local:
        yield local


def pytest_report_header(config: pytest.Config) -> str:
    return f"vlink-bag server: {'CLI ' + str(CLI.relative_to(REPO)) if CLI.exists() else 'serve() from ' + str(SERVER_MODULE.relative_to(REPO))}; python {sys.version.split()[0]}"
