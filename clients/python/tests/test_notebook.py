"""Runs examples/analyse.ipynb in a real ipykernel of this interpreter against the test server."""

from __future__ import annotations

import json
import os
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
    isolate_kernel(tmp_path, monkeypatch)
    return "python3"


def isolate_kernel(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Kernels found under, and writing into, the test's own folder, which pytest removes."""
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    monkeypatch.setenv("JUPYTER_RUNTIME_DIR", str(tmp_path / "runtime"))
    monkeypatch.setenv("JUPYTER_PLATFORM_DIRS", "1")
    monkeypatch.setenv("MPLBACKEND", "Agg")
    monkeypatch.setenv("MPLCONFIGDIR", str(tmp_path / "mpl"))
    # The notebook saves its gaps under tempfile.mkdtemp(), as a user's would: here inside the test's own folder
    # (every CI run left one folder per notebook run in /tmp).
    (tmp_path / "tmp").mkdir(exist_ok=True)
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))


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
    monkeypatch.setenv("VLINK_BAG_FILE", str(server.root / "drive.vdb"))
    monkeypatch.setenv("VLINK_BAG_TOPIC", "gap/tick")
    nb = run_notebook(kernel_env, tmp_path)
    every, text = outputs(nb)
    assert not [o for o in every if o.get("output_type") == "error"]
    assert not [o for o in every if o.get("name") == "stderr" and "Error" in o.get("text", "")]
    assert "OK: 141 messages on gap/tick" in text
    assert "gaps: 1" in text
    assert "gap at 0.505 s lasting 110 ms" in text
    assert "runs/drive.vcap" in text  # the bag listing
    assert "local == remote: True (141 rows, time zone UTC)" in text
    assert "saved 1 gap(s) to gaps.vcap" in text
    assert any("image/png" in o.get("data", {}) for o in every), "the rate plot is displayed"


def test_notebook_defaults(server: Server, kernel_env: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a bag or url chosen it takes the biggest readable bag and its busiest url (imu, 200 messages)."""
    monkeypatch.setenv("VLINK_BAG_URL", server.url)
    monkeypatch.delenv("VLINK_BAG_ID", raising=False)
    monkeypatch.delenv("VLINK_BAG_TOPIC", raising=False)
    monkeypatch.delenv("VLINK_BAG_FILE", raising=False)
    every, text = outputs(run_notebook(kernel_env, tmp_path))
    assert not [o for o in every if o.get("output_type") == "error"]
    assert "OK: 200 messages on imu" in text
    assert "gaps: 0" in text
    assert "VLINK_BAG_FILE not set: skipped" in text and "saved 0 gap(s)" in text


def test_notebook_runs_with_only_the_notebook_extra(server: Server, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The README's install command in a fresh virtualenv (`pip install './clients/python[notebook]'`, nothing else,
    and without the C extension, so the pure-Python LZAV decoder is what gets installed), whose Python then runs the
    notebook's kernel. nbclient drives it from this test's environment; the kernel has only what the extra brings."""
    import subprocess
    import venv

    from .conftest import REPO

    env_dir = tmp_path / "nb-venv"
    venv.EnvBuilder(with_pip=True).create(env_dir)
    python = env_dir / "bin" / "python"
    install_env = {**os.environ, "VLINK_BAG_NO_EXTENSION": "1", "PIP_DISABLE_PIP_VERSION_CHECK": "1"}
    result = subprocess.run([str(python), "-m", "pip", "install", "-q", "./clients/python[notebook]"], cwd=REPO, env=install_env, capture_output=True, text=True, timeout=900)
    assert result.returncode == 0, result.stdout + result.stderr
    probe = subprocess.run([str(python), "-c", "import vlink_bag.lzav as l, importlib.util as u; print(l.IMPLEMENTATION, u.find_spec('pytest') is None, u.find_spec('nbclient') is None)"], capture_output=True, text=True, timeout=120)
    assert probe.stdout.split() == ["python", "True", "True"], probe.stdout + probe.stderr
    spec = tmp_path / "jupyter" / "kernels" / "notebook-extra"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({"argv": [str(python), "-m", "ipykernel_launcher", "-f", "{connection_file}"], "display_name": "only [notebook]", "language": "python"}))
    isolate_kernel(tmp_path, monkeypatch)
    monkeypatch.setenv("VLINK_BAG_URL", server.url)
    monkeypatch.setenv("VLINK_BAG_ID", "runs/drive.vcap")
    monkeypatch.setenv("VLINK_BAG_TOPIC", "gap/tick")
    monkeypatch.setenv("VLINK_BAG_FILE", str(server.root / "drive.vdb"))
    every, text = outputs(run_notebook("notebook-extra", tmp_path))
    assert not [o for o in every if o.get("output_type") == "error"], text
    assert "OK: 141 messages on gap/tick" in text and "gap at 0.505 s lasting 110 ms" in text
    assert "local == remote: True" in text
