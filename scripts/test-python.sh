#!/usr/bin/env bash
# The Python client's tests (clients/python), run by `npm test` after the JS suites; needs `npm run build` first.
#
#   scripts/test-python.sh [pytest args…]
#
# Creates (or reuses) the virtualenv clients/python/.venv, installs the client into it with the README's extras
# (`./clients/python[notebook]`, plus the `test` extra; again only when the client's files changed), and runs pytest
# on clients/python/tests. The install goes through uv (installed from PyPI into the venv first): a fresh venv took
# 31 s instead of pip's 96 by hand, and 74 s instead of 167 beside the build in CI; pyspark 29 s instead of about
# 150. pip does it when uv cannot be installed. The install builds the C LZAV decoder when a compiler is there; one
# test installs only the [notebook] extra with the README's own `pip install` command, without the extension, into a
# venv of its own and runs the notebook with it.
# Nothing is installed outside that venv. The tests start real servers with `node` (the CLI, or serve() when the CLI
# is not built) and run the example notebook in an ipykernel of this venv.
#
# Environment: PYTHON  interpreter to build the venv with (default: the newest python3.x ≥ 3.10 on PATH)
#              VLINK_PY_REINSTALL=1  reinstall even if the client's files did not change
#              VLINK_PY_SETUP_ONLY=1 make the venv and install, run no test (scripts/test-all.mjs does this before the
#                                    runtime suites: their S3 tests start the venv's moto_server)
#              VLINK_PY_SPARK=1      also install the `spark` extra (pyspark, a ~450 MB download: about 150 s) and make
#                                    the PySpark test fail, not skip, when Spark cannot run (scripts/test-all.mjs sets
#                                    it in CI, and installs the extra in the background while the JS suites run)
#              VLINK_PY_SPARK_ONLY=1 only install the `spark` extra into an existing venv (that background install)
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
CLIENT="$ROOT/clients/python"
VENV="$CLIENT/.venv"
STAMP="$VENV/.vlink-installed"
export PIP_DISABLE_PIP_VERSION_CHECK=1 PIP_NO_INPUT=1 PYTHONDONTWRITEBYTECODE=1

say() { printf 'test-python: %s\n' "$*" >&2; }

ok_python() { # a python ≥ 3.10 that can make venvs
  "$1" -c 'import sys, venv; sys.exit(0 if sys.version_info >= (3, 10) else 1)' >/dev/null 2>&1
}

pick_python() {
  if [ -n "${PYTHON:-}" ]; then
    ok_python "$PYTHON" || { say "PYTHON=$PYTHON is not a Python ≥ 3.10 with the venv module"; exit 1; }
    echo "$PYTHON"; return
  fi
  local candidate
  for candidate in python3 python3.13 python3.12 python3.11 python3.10 python; do
    if command -v "$candidate" >/dev/null 2>&1 && ok_python "$candidate"; then echo "$candidate"; return; fi
  done
  say "no Python ≥ 3.10 found on PATH (set PYTHON=/path/to/python3)"
  exit 1
}

venv_ok() {
  [ -x "$VENV/bin/python" ] && "$VENV/bin/python" -c 'import sys, pip; sys.exit(0 if sys.version_info >= (3, 10) else 1)' >/dev/null 2>&1
}

VPY="$VENV/bin/python"

# The `spark` extra's requirements, read from pyproject.toml (tomllib from Python 3.11, a plain parse before).
spark_requirements() {
  (cd "$CLIENT" && "$VPY" - <<'PY'
import json, pathlib, re
text = pathlib.Path("pyproject.toml").read_text()
try:
    import tomllib
    reqs = tomllib.loads(text)["project"]["optional-dependencies"]["spark"]
except ImportError:
    reqs = json.loads("[" + re.search(r"^spark\s*=\s*\[(.*?)\]", text, re.M | re.S).group(1).strip().rstrip(",") + "]")
print("\n".join(reqs))
PY
  )
}

# Whether uv is in the venv, installed from PyPI at the first call (see above); false when it cannot be had. The
# answer is kept, so a failed install (no network to PyPI) is tried once, not before every install.
have_uv() {
  if [ -z "${uv_state:-}" ]; then
    if [ -x "$VENV/bin/uv" ] || "$VPY" -m pip install -q uv >/dev/null 2>&1; then uv_state=1; else
      uv_state=0
      say "uv could not be installed; installing with pip"
    fi
  fi
  [ "$uv_state" = 1 ]
}

# `pip install ARGS…` into the venv, through uv where it can be had. uv compiles the bytecode as pip does (pytest and
# the notebook kernel import thousands of modules, and PYTHONDONTWRITEBYTECODE=1 would leave them to be compiled
# again in every process).
install_requirements() {
  if have_uv; then
    "$VENV/bin/uv" pip install -q --python "$VPY" --compile-bytecode "$@"
  else
    "$VPY" -m pip install -q "$@"
  fi
}

install_spark() {
  if "$VPY" -c 'import pyspark' >/dev/null 2>&1; then return; fi
  local started=$SECONDS
  say "installing the spark extra ($(spark_requirements | tr '\n' ' ')) into $VENV"
  local reqs=() req
  while IFS= read -r req; do reqs+=("$req"); done < <(spark_requirements)
  install_requirements "${reqs[@]}"
  say "spark extra installed in $((SECONDS - started)) s"
}

if [ "${VLINK_PY_SPARK_ONLY:-0}" = 1 ]; then
  venv_ok || { say "VLINK_PY_SPARK_ONLY=1 needs the venv $VENV (run without it first)"; exit 1; }
  install_spark
  exit 0
fi

if ! venv_ok; then
  PY="$(pick_python)"
  say "creating $VENV with $("$PY" -c 'import sys; print(sys.executable, sys.version.split()[0])')"
  rm -rf "$VENV"
  if ! "$PY" -m venv "$VENV" >/dev/null 2>&1; then
    rm -rf "$VENV"
    # Debian/Ubuntu ship venv without ensurepip (package python3-venv); virtualenv does not need it.
    if "$PY" -m virtualenv --version >/dev/null 2>&1; then
      "$PY" -m virtualenv -q "$VENV"
    else
      say "cannot create a virtualenv with $PY: install your distribution's venv support (Debian: python3-venv) or virtualenv"
      exit 1
    fi
  fi
fi

# What is installed must be what the tree holds: the stamp is a hash of pyproject.toml and every source file.
WANT="$(cd "$CLIENT" && "$VPY" -c 'import hashlib, pathlib; h = hashlib.sha256(); [h.update(p.as_posix().encode() + p.read_bytes()) for p in [pathlib.Path("pyproject.toml"), pathlib.Path("setup.py"), *sorted(pathlib.Path("src").rglob("*.py")), *sorted(pathlib.Path("src").rglob("*.c"))]]; print(h.hexdigest())')"
if [ "${VLINK_PY_REINSTALL:-0}" = 1 ] || [ ! -f "$STAMP" ] || [ "$(cat "$STAMP")" != "$WANT" ] || ! "$VPY" -c 'import vlink_bag, pytest, nbclient, ipykernel, pandas, google.protobuf, matplotlib, mcap, pyarrow, polars, mcap_ros2, mcap_ros1, mcap_protobuf, moto.server' >/dev/null 2>&1; then
  # Extras that name their own package ([notebook] includes [pandas]) need pip >= 21.2 (when pip installs them).
  if ! "$VPY" -c 'import sys, pip; sys.exit(0 if tuple(int(x) for x in pip.__version__.split(".")[:2]) >= (21, 3) else 1)' >/dev/null 2>&1; then
    "$VPY" -m pip install -q --upgrade pip
  fi
  # The README's extras (from the repository root), plus the test extra.
  say "installing ./clients/python[notebook,test] into $VENV"
  started=$SECONDS
  if have_uv; then
    # An installed copy of the same version is kept by default, and uv caches the wheel it built from this folder;
    # the client's sources changed, so it is rebuilt and replaced (not its dependencies).
    (cd "$ROOT" && install_requirements --reinstall-package vlink-bag './clients/python[notebook,test]')
  else
    (cd "$ROOT" && install_requirements './clients/python[notebook,test]')
    # pip keeps an installed copy of the same version; the client's sources changed, so replace it (not its deps).
    (cd "$ROOT" && install_requirements --no-deps --force-reinstall './clients/python')
  fi
  say "installed in $((SECONDS - started)) s"
  echo "$WANT" >"$STAMP"
fi

if [ "${VLINK_PY_SPARK:-0}" = 1 ]; then
  install_spark
  export VLINK_REQUIRE_SPARK=1
fi

if [ "${VLINK_PY_SETUP_ONLY:-0}" = 1 ]; then
  say "installed; VLINK_PY_SETUP_ONLY=1, so no test run"
  exit 0
fi

cd "$ROOT"
set +e
"$VPY" -m pytest -q -p no:cacheprovider "$CLIENT/tests" "$@"
status=$?
set -e
if [ "$status" -eq 5 ]; then
  say "pytest collected no tests: that is a failure"
  exit 1
fi
exit "$status"
