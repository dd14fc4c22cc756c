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


def service_section(unit: Path) -> dict[str, list[str]]:
    """Key → values of [Service], comments dropped (systemd allows a key more than once)."""
    section: dict[str, list[str]] = {}
    current = None
    for raw in unit.read_text(encoding="utf-8").splitlines():
        line = raw.strip()
        if line.startswith("["):
            current = line
        elif current == "[Service]" and line and not line.startswith("#"):
            key, _, value = line.partition("=")
            section.setdefault(key, []).append(value)
    return section
