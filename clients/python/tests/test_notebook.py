"""Runs examples/analyse.ipynb in a real ipykernel of this interpreter against the test server."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import nbformat
import pytest
from nbclient import NotebookClient

from .conftest import Server

NOTEBOOK = Path(__file__).resolve().parents[1] / "examples" / "analyse.ipynb"


@pytest.fixture()
def kernel_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> str:
    """A `python3` kernelspec running this interpreter, found first (JUPYTER_PATH precedes user and system dirs), so
    a kernel registered elsewhere on the machine cannot be picked instead."""
    spec = tmp_path / "jupyter" / "kernels" / "python3"
    spec.mkdir(parents=True)
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    (spec / "kernel.json").write_text(json.dumps({"argv": argv, "display_name": "Python 3 (vlink-bag tests)", "language": "python"}))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))
    monkeypatch.setenv("JUPYTER_PLATFORM_DIRS", "1")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.setenv("MPLCONFIGDIR", str(tmp_path / "mpl"))
    return "python3"


def run_notebook(kernel: str, workdir: Path) -> Any:
    nb = nbformat.read(NOTEBOOK, as_version=4)
    NotebookClient(nb, kernel_name=kernel, timeout=180, resources={"metadata": {"path": str(workdir)}}).execute()
    return nb


def outputs(nb: Any) -> tuple[list[dict[str, Any]], str]:
    every = [o for cell in nb.cells if cell.cell_type == "code" for o in cell.get("outputs", [])]
    text = "".join(o.get("text", "") for o in every if o.get("output_type") == "stream")
    text += "".join(o.get("data", {}).get("text/plain", "") for o in every if "data" in o)
    return every, text


def test_notebook_finds_the_gap(server: Server, kernel_env: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("VLINK_BAG_URL", server.url)
    monkeypatch.setenv("VLINK_BAG_ID", "drive.vdb")
    monkeypatch.setenv("VLINK_BAG_TOPIC", "gap/tick")
    nb = run_notebook(kernel_env, tmp_path)
    every, text = outputs(nb)
    assert not [o for o in every if o.get("output_type") == "error"]
    assert not [o for o in every if o.get("name") == "stderr" and "Error" in o.get("text", "")]
    assert "OK: 141 messages on gap/tick" in text
    assert "gaps: 1" in text
    assert "gap at 0.505 s lasting 110 ms" in text
    assert "runs/drive.vcap" in text  # the bag listing
    assert any("image/png" in o.get("data", {}) for o in every), "the rate plot is displayed"


def test_notebook_defaults(server: Server, kernel_env: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a bag or url chosen it takes the biggest readable bag and its busiest url (imu, 200 messages)."""
    monkeypatch.setenv("VLINK_BAG_URL", server.url)
    monkeypatch.delenv("VLINK_BAG_ID", raising=False)
    monkeypatch.delenv("VLINK_BAG_TOPIC", raising=False)
    every, text = outputs(run_notebook(kernel_env, tmp_path))
    assert not [o for o in every if o.get("output_type") == "error"]
    assert "OK: 200 messages on imu" in text
    assert "gaps: 0" in text
