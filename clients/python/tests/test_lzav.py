"""The LZAV decoders (C extension and pure Python) against the reference vectors of fixtures/lzav and against the
TypeScript decoder on streams it compressed and on damaged streams (tests/fixtures/lzav_cases.mjs)."""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any, Callable

import pytest

from vlink_bag import lzav
from vlink_bag.lzav import LzavError, _pure

from .conftest import REPO, node_binary, require_built

VECTORS = REPO / "fixtures" / "lzav"
CASES = Path(__file__).resolve().parent / "fixtures" / "lzav_cases.mjs"


def pure(data: bytes, raw_length: int) -> bytes:
    """The pure decoder behind the same argument checks as lzav.decompress."""
    if not data or raw_length == 0:
        return lzav.decompress(data, raw_length)
    return _pure.decode(data, raw_length)


def c_decoder() -> Callable[[bytes, int], bytes]:
    if lzav.IMPLEMENTATION != "c":
        pytest.skip("the C extension is not built in this environment (the fallback is tested on its own)")
    return lzav.decompress


DECODERS = {"pure": lambda: pure, "c": c_decoder}


def vectors() -> list[tuple[str, bytes, bytes]]:
    manifest = json.loads((VECTORS / "manifest.json").read_text())
    out = []
    for v in manifest["vectors"]:
        raw = (VECTORS / f"{v['name']}.raw").read_bytes()
        assert hashlib.sha256(raw).hexdigest() == v["raw_sha256"]
        for ext in ("lzav", "lzavhi"):
            out.append((f"{v['name']}.{ext}", (VECTORS / f"{v['name']}.{ext}").read_bytes(), raw))
    return out


@pytest.mark.parametrize("which", DECODERS)
def test_reference_vectors(which: str) -> None:
    decode = DECODERS[which]()
    found = vectors()
    assert len(found) == 14
    for name, packed, raw in found:
        assert decode(packed, len(raw)) == raw, name


@pytest.fixture(scope="module")
def ts_cases() -> list[dict[str, Any]]:
    require_built()
    result = subprocess.run([node_binary(), str(CASES)], capture_output=True, cwd=REPO, timeout=120)
    assert result.returncode == 0, result.stderr.decode()
    return list(json.loads(result.stdout))


@pytest.mark.parametrize("which", DECODERS)
def test_same_answers_as_the_typescript_decoder(which: str, ts_cases: list[dict[str, Any]]) -> None:
    decode = DECODERS[which]()
    accepted = rejected = 0
    for case in ts_cases:
        packed = base64.b64decode(case["packed"])
        if case["ok"]:
            assert decode(packed, case["rawLength"]) == base64.b64decode(case["out"]), case["name"]
            accepted += 1
        else:
            with pytest.raises(LzavError) as caught:
                decode(packed, case["rawLength"])
            assert caught.value.code == "CORRUPT_DATA"
            # The same reason, word for word ("lzav: <reason>").
            assert caught.value.message == case["error"], case["name"]
            rejected += 1
    assert accepted > 50 and rejected > 50


def test_frames_and_bad_arguments() -> None:
    raw = (VECTORS / "text-short.raw").read_bytes()
    packed = (VECTORS / "text-short.lzav").read_bytes()
    frame = lzav.FRAME_HEAD + len(raw).to_bytes(4, "big") + packed + lzav.FRAME_FOOT
    assert lzav.is_frame(frame) and not lzav.is_frame(raw)
    assert lzav.unpack_frame(frame) == raw
    with pytest.raises(LzavError, match="claims 0 bytes"):
        lzav.unpack_frame(lzav.FRAME_HEAD + b"\0\0\0\0" + packed + lzav.FRAME_FOOT)
    with pytest.raises(ValueError):
        lzav.decompress(packed, -1)
    assert lzav.decompress(b"", 0) == b""
    with pytest.raises(LzavError, match="unsupported stream format 4"):
        lzav.decompress(b"\x45" + packed[1:], len(raw))


def test_the_pure_decoder_is_used_when_the_extension_is_absent() -> None:
    """Hides the extension module as an install without a C compiler would, in a fresh interpreter."""
    code = """
import importlib.abc, sys
class NoExtension(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name == "vlink_bag.lzav._lzav_c":
            raise ImportError("no C extension here")
        return None
sys.meta_path.insert(0, NoExtension())
from pathlib import Path
from vlink_bag import lzav
assert lzav.IMPLEMENTATION == "python", lzav.IMPLEMENTATION
d = Path(sys.argv[1])
raw = (d / "pointcloud-64k.raw").read_bytes()
assert lzav.decompress((d / "pointcloud-64k.lzavhi").read_bytes(), len(raw)) == raw
print("python ok")
"""
    env = {k: v for k, v in os.environ.items() if k != "VLINK_BAG_PURE_LZAV"}
    result = subprocess.run([sys.executable, "-c", code, str(VECTORS)], capture_output=True, text=True, env=env, timeout=60)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "python ok"
