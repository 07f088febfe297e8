"""The one LZAV error: a :class:`~vlink_bag.errors.CorruptBag` with code ``CORRUPT_DATA``, as the TypeScript decoder's
``BagError('CORRUPT_DATA', 'lzav: …')``."""

from __future__ import annotations

from ..errors import CorruptBag

__all__ = ["LzavError"]


class LzavError(CorruptBag):
    default_code = "CORRUPT_DATA"

    def __init__(self, message: str, **kwargs: object) -> None:
        super().__init__(message if message.startswith("lzav: ") else f"lzav: {message}", **kwargs)  # type: ignore[arg-type]
