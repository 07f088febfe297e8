"""Builds the optional C LZAV decoder (src/vlink_bag/lzav/_lzav_c.c). Everything else is in pyproject.toml.

``optional=True``: without a working C compiler the build only warns and the package falls back to its pure-Python
decoder (vlink_bag.lzav.IMPLEMENTATION says which is in use). VLINK_BAG_NO_EXTENSION=1 skips the extension on purpose.
"""

import os

from setuptools import Extension, setup

extensions = []
if os.environ.get("VLINK_BAG_NO_EXTENSION", "") not in ("1", "true"):
    extensions.append(
        Extension(
            "vlink_bag.lzav._lzav_c",
            sources=["src/vlink_bag/lzav/_lzav_c.c"],
            optional=True,
            extra_compile_args=["-O3"] if os.name != "nt" else [],
        )
    )

setup(ext_modules=extensions)
