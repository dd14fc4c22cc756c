"""The version of shoe2mqtt that runs: what `--version`, `bridge/<node>/info` and the
metrics all say, read once from the installed package's metadata."""

from __future__ import annotations

import functools
from importlib.metadata import PackageNotFoundError, version


@functools.cache
def installed_version() -> str:
    """The version of the installed shoe2mqtt package, as its metadata says."""
    try:
        return version("shoe2mqtt")
    except PackageNotFoundError:  # run from a checkout that was never installed
        return "unknown (not installed)"
