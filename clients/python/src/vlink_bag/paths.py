"""Bag paths as callers pass them: checked once where a bag is opened or created, so a path no file can have is a
:class:`BadRequest` naming the problem, not a bare ``TypeError``/``ValueError`` from ``os`` or a "no such file" for
another name (a NUL character printed as a space)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from .errors import BadRequest


def bag_path(path: Any) -> Path:
    """``path`` as a :class:`~pathlib.Path`: a ``str`` or ``os.PathLike``, not empty, without a NUL character."""
    if not isinstance(path, (str, os.PathLike)):
        raise BadRequest(f"a bag path is a str or os.PathLike, not {type(path).__name__}", code="INVALID_ARGUMENT")
    text = os.fspath(path)
    if not isinstance(text, str):
        raise BadRequest("a bag path is a str, not bytes", code="INVALID_ARGUMENT")
    if not text:
        raise BadRequest("bag path must not be empty", code="INVALID_ARGUMENT")
    if "\0" in text:
        raise BadRequest("bag path must not contain a NUL character", code="INVALID_ARGUMENT")
    return Path(text)
