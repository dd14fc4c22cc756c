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

from tests.deploy.layout import INSTALLED_UNITS, SYSTEMD, UNITS, service_section

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


DAEMON_UNITS = [SYSTEMD / "shoe2mqtt.service", SYSTEMD / "shoe2mqtt@.service"]
DISPLAY_UNIT = SYSTEMD / "shoe2mqtt-display.service"
CONSOLE_UNIT = SYSTEMD / "shoe2mqtt-console.service"


def test_the_daemons_units_the_displays_and_the_consoles_ship() -> None:
    assert sorted([*DAEMON_UNITS, DISPLAY_UNIT, CONSOLE_UNIT]) == UNITS


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
    per_instance = {"ExecStart", "ExecReload", "StateDirectory", "DeviceAllow", "Environment"}
    assert {k: v for k, v in main.items() if k not in per_instance} == {
        k: v for k, v in template.items() if k not in per_instance
    }
    assert template["ExecStart"] == [
        "/opt/shoe2mqtt/bin/shoe2mqtt run --config /etc/shoe2mqtt/%i.toml"
    ]
    assert template["DeviceAllow"] == ["/dev/shoe2mqtt/%i rw"]
    assert template["ExecReload"] == [
        "/opt/shoe2mqtt/bin/shoe2mqtt check-config --daemon /etc/shoe2mqtt/%i.toml",
        "/bin/kill -HUP $MAINPID",
    ]
    assert main["ExecReload"] == [
        "/opt/shoe2mqtt/bin/shoe2mqtt check-config --daemon /etc/shoe2mqtt/shoe2mqtt.toml",
        "/bin/kill -HUP $MAINPID",
    ]
    # Decision D1: the default node name of an instance is `<hostname>-<instance>`.
    assert template["Environment"] == ["SHOE2MQTT_INSTANCE=%i"]


@pytest.mark.parametrize("unit", DAEMON_UNITS, ids=lambda unit: unit.name)
def test_the_journal_is_private_and_the_process_notifies(unit: Path) -> None:
    service = service_section(unit)
    assert service["StateDirectoryMode"] == ["0700"]  # unrevealed cards
    assert service["User"] == ["shoe2mqtt"]
    assert service["Type"] == ["notify"]
    assert service["NotifyAccess"] == ["main"]  # the daemon sends, nothing it starts may
    assert service["Restart"] == ["on-failure"]
    assert float(service["WatchdogSec"][0]) > 0
    assert service["CapabilityBoundingSet"] == [""]


@pytest.mark.parametrize("unit", DAEMON_UNITS, ids=lambda unit: unit.name)
def test_the_daemon_may_set_its_journal_thread_s_policy_and_nothing_else_of_resources(
    unit: Path,
) -> None:
    """Of @resources, which the filter denies, only `sched_setscheduler` is given back, after
    the denial (systemd applies the lines in order): the journal's thread takes SCHED_BATCH
    (P15); real-time stays refused. A call the filter denies fails with EPERM, never kills."""
    service = service_section(unit)
    filters = service["SystemCallFilter"]
    assert filters[0] == "@system-service"
    assert "@resources" in filters[1].removeprefix("~").split()
    assert filters[1].startswith("~")
    assert filters[2:] == ["sched_setscheduler"]
    assert service["SystemCallErrorNumber"] == ["EPERM"]
    assert service["RestrictRealtime"] == ["yes"]


def test_the_display_is_hardened_like_the_daemon_less_devices_and_state() -> None:
    """The display: its own unit, hardened like the daemon's; it needs no device, no state and
    none of the daemon's files, so it runs as its own user without them."""
    daemon = service_section(SYSTEMD / "shoe2mqtt.service")
    display = service_section(DISPLAY_UNIT)
    the_daemons_own = {
        "ExecStart", "ExecReload", "TimeoutStartSec", "TimeoutStopSec", "KillMode", "User",
        "Group", "StateDirectory", "StateDirectoryMode", "ConfigurationDirectory",
        "ConfigurationDirectoryMode", "DeviceAllow", "RestrictAddressFamilies",
        "SystemCallFilter",
    }  # fmt: skip
    shared = {k: v for k, v in daemon.items() if k not in the_daemons_own}
    assert {k: display[k] for k in shared if k in display} == shared
    # The journal's thread is the daemon's alone (P15).
    assert daemon["SystemCallFilter"] == [*display["SystemCallFilter"], "sched_setscheduler"]
    assert display["ExecStart"] == [
        "/opt/shoe2mqtt/bin/shoe2mqtt display --config /etc/shoe2mqtt/shoe2mqtt.toml"
    ]
    assert display["User"] == display["Group"] == ["shoe2mqtt-display"]
    assert display["PrivateDevices"] == ["yes"]
    assert "DeviceAllow" not in display
    assert "StateDirectory" not in display
    assert display["RestrictAddressFamilies"] == ["AF_UNIX AF_INET AF_INET6"]
    sysusers = (SYSTEMD / "shoe2mqtt.sysusers").read_text(encoding="utf-8")
    assert 'u shoe2mqtt-display - "shoe2mqtt pit display" - -' in sysusers


def test_the_console_is_hardened_as_the_display_under_its_own_user() -> None:
    """The dealer console: the display's unit but for what it runs and as whom; its user can
    read the console's broker password and the dealers' PINs, none of the others'."""
    display = service_section(DISPLAY_UNIT)
    console = service_section(CONSOLE_UNIT)
    own = {"ExecStart", "User", "Group"}
    assert {k: v for k, v in console.items() if k not in own} == {
        k: v for k, v in display.items() if k not in own
    }
    assert console["ExecStart"] == [
        "/opt/shoe2mqtt/bin/shoe2mqtt console --config /etc/shoe2mqtt/shoe2mqtt.toml"
    ]
    assert console["User"] == console["Group"] == ["shoe2mqtt-console"]
    sysusers = (SYSTEMD / "shoe2mqtt.sysusers").read_text(encoding="utf-8")
    assert 'u shoe2mqtt-console - "shoe2mqtt dealer console" - -' in sysusers
