"""What every xdist worker would build alike, built once for the session and shared read-only.

pytest's session and module fixtures are per process: under `-n 4` each worker that draws one
of their tests builds its own (two days of a floor: 6.7 s alone, 20-40 s a build beside the
rest of the suite, four times over). The first worker to ask builds under a lock in the
directory the session's workers share (the parent of each one's base temporary directory,
as pytest-xdist documents); the others wait for it and take what it built.
"""

from __future__ import annotations

import fcntl
import os
import shutil
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

    import pytest


def built_once(
    tmp_path_factory: pytest.TempPathFactory, name: str, build: Callable[[Path], object]
) -> Path:
    """The directory `name` after `build(directory)` ran in it once for the whole session.
    A build that fails leaves no mark: the next worker to ask builds again (and says why)."""
    base = tmp_path_factory.getbasetemp()
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base  # one process: its own
    directory, built = shared / name, shared / f"{name}.built"
    with (shared / f"{name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # released when the file closes
        if not built.exists():
            shutil.rmtree(directory, ignore_errors=True)
            directory.mkdir()
            build(directory)
            built.touch()
    return directory
