"""Where the deployment files are, where an install puts them, and running the scripts."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
SYSTEMD = REPO / "systemd"
UDEV = REPO / "udev"
UNITS = sorted(SYSTEMD.glob("*.service"))
INSTALLED_UNITS = Path("usr/local/lib/systemd/system")


def run_script(name: str, destdir: Path, *args: str) -> subprocess.CompletedProcess[str]:
    """Run scripts/<name> with DESTDIR set, failing the test with its output if it fails."""
    result = subprocess.run(  # noqa: S603 - our own scripts, our own arguments
        [str(REPO / "scripts" / name), *args],
        env={**os.environ, "DESTDIR": str(destdir)},
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode == 0, f"scripts/{name} failed:\n{result.stdout}\n{result.stderr}"
    return result
