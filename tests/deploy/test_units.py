"""The systemd units: valid for systemd itself, hardened to the issue's goal, and consistent.

`systemd-analyze verify` checks a unit as the manager would load it, including that ExecStart=
names an executable; so it runs on copies whose /opt/shoe2mqtt points into a real install in a
throwaway root. `systemd-analyze security --offline=yes` rates the unit files as they ship.
"""

from __future__ import annotations

import re
import subprocess
from typing import TYPE_CHECKING

import pytest

from tests.deploy.layout import INSTALLED_UNITS, SYSTEMD, UNITS

if TYPE_CHECKING:
    from pathlib import Path

EXPOSURE_GOAL = 2.0
_EXPOSURE = re.compile(r"Overall exposure level for \S+: (\d+\.\d+)")


def analyze(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(  # noqa: S603 - a fixed tool; the arguments are ours
        ["systemd-analyze", "--no-pager", *args],  # noqa: S607 - from PATH, as engineers run it
        capture_output=True,
        text=True,
        timeout=30,
        check=False,
        cwd=cwd,
    )


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


def test_both_units_ship() -> None:
    assert [unit.name for unit in UNITS] == ["shoe2mqtt.service", "shoe2mqtt@.service"]


@pytest.mark.parametrize("unit", UNITS, ids=lambda unit: unit.name)
def test_systemd_verifies_the_installed_unit(unit: Path, installed: Path, tmp_path: Path) -> None:
    shipped = (installed / INSTALLED_UNITS / unit.name).read_text(encoding="utf-8")
    assert shipped == unit.read_text(encoding="utf-8")
    assert (installed / "opt/shoe2mqtt/bin/shoe2mqtt").is_file()
    copy = tmp_path / unit.name
    copy.write_text(shipped.replace("/opt/shoe2mqtt/", f"{installed}/opt/shoe2mqtt/"))
    result = analyze("verify", copy.name, cwd=tmp_path)
    # verify exits 0 on an unknown key or a bad value and only warns: any output is a failure.
    assert (result.returncode, result.stdout + result.stderr) == (0, "")


def test_verify_is_not_a_rubber_stamp(tmp_path: Path) -> None:
    unit = tmp_path / "broken.service"
    unit.write_text("[Service]\nExecStart=/nonexistent/shoe2mqtt run\nProtectSystme=strict\n")
    result = analyze("verify", unit.name, cwd=tmp_path)
    assert "Unknown key 'ProtectSystme'" in result.stderr
    assert result.returncode != 0


@pytest.mark.parametrize("unit", UNITS, ids=lambda unit: unit.name)
def test_exposure_is_at_most_the_goal(unit: Path) -> None:
    result = analyze("security", "--offline=yes", str(unit))
    match = _EXPOSURE.search(result.stdout)
    assert match, result.stdout + result.stderr
    assert float(match[1]) <= EXPOSURE_GOAL, result.stdout


def test_the_template_is_hardened_exactly_like_the_main_unit() -> None:
    main = service_section(SYSTEMD / "shoe2mqtt.service")
    template = service_section(SYSTEMD / "shoe2mqtt@.service")
    per_instance = {"ExecStart", "StateDirectory", "DeviceAllow", "Environment"}
    assert {k: v for k, v in main.items() if k not in per_instance} == {
        k: v for k, v in template.items() if k not in per_instance
    }
    assert template["ExecStart"] == [
        "/opt/shoe2mqtt/bin/shoe2mqtt run --config /etc/shoe2mqtt/%i.toml"
    ]
    assert template["DeviceAllow"] == ["/dev/shoe2mqtt/%i rw"]
    # Decision D1: the default node name of an instance is `<hostname>-<instance>`.
    assert template["Environment"] == ["SHOE2MQTT_INSTANCE=%i"]


@pytest.mark.parametrize("unit", UNITS, ids=lambda unit: unit.name)
def test_the_journal_is_private_and_the_process_notifies(unit: Path) -> None:
    service = service_section(unit)
    assert service["StateDirectoryMode"] == ["0700"]  # unrevealed cards
    assert service["User"] == ["shoe2mqtt"]
    assert service["Type"] == ["notify"]
    assert service["NotifyAccess"] == ["main"]  # the daemon sends, nothing it starts may
    assert service["Restart"] == ["on-failure"]
    assert float(service["WatchdogSec"][0]) > 0
    assert service["CapabilityBoundingSet"] == [""]
