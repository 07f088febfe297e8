"""Reading bag files without a server: ``.vdb``/``.vdbx`` (sqlite3 + LZAV), ``.vcap``/``.vcapx``/``.mcap`` (the
official ``mcap`` library)."""

from .bag import FORMATS, LocalBag, open_bag

__all__ = ["LocalBag", "open_bag", "FORMATS"]
