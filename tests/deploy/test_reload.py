"""A reload as `systemctl reload` makes one, against the daemon as a process on a real mosquitto.

Every change is applied at once, at the end of the round, or named as waiting for a restart,
each with its own log line; the bridge info names the tables that serve and the file their
settings were taken from, with what of it waits (docs/mqtt.md, "Bridge info"); systemd hears
RELOADING=1, then READY=1 with a status line that says the same; and a file with a mistake
fails the reload before the daemon is signalled, as the units' ExecReload= lines run it.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import shlex
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

import pytest

from daemon.cli.exit_codes import ExitCode
from daemon.testing import (
    TABLE_SETTINGS,
    Collector,
    DaemonProcess,
    free_port,
    response_to,
    until,
    write_service_config,
)
from tests.deploy.layout import SYSTEMD, service_section
from tests.deploy.notify_socket import Listener

if TYPE_CHECKING:
    from collections.abc import AsyncIterator, Iterator

    from daemon.testing import Mosquitto, Received

pytestmark = pytest.mark.timeout(120)  # a daemon, and a reload at a time

NODE: Final = "pit-a"
INFO: Final = f"shoe2mqtt/bridge/{NODE}/info"
SHOE2MQTT: Final = Path(sys.executable).parent / "shoe2mqtt"  # as installed in /opt/shoe2mqtt
DONE: Final = ("config.reloaded", "config.reload_refused")


@pytest.fixture
def listener() -> Iterator[Listener]:
    sock = Listener(f"@shoe2mqtt-reload-{os.getpid()}-{id(object())}")
    yield sock
    sock.close()


class Site:
    """The daemon's file as an engineer edits it: the tables, and any sections added."""

    def __init__(self, directory: Path, broker: Mosquitto) -> None:
        self.directory = directory
        self.broker = broker
        self.path = directory / "shoe2mqtt.toml"

    def write(
        self, tables: dict[str, str], *, extra: str = "", edits: dict[str, str] | None = None
    ) -> str:
        """The file for `tables` (id → the shoe's port), `edits` made to what
        write_service_config writes, then `extra`; returns its SHA-256, as sha256sum says."""
        shoes = [({**TABLE_SETTINGS, "id": t}, self.directory / p) for t, p in tables.items()]
        write_service_config(
            self.path, self.broker, node=NODE, state_directory=self.directory / "state",
            tables=shoes,
        )  # fmt: skip
        text = self.path.read_text(encoding="utf-8")
        for old, new in (edits or {}).items():
            assert old in text, old
            text = text.replace(old, new, 1)  # the first: bj-1's, where a table's
        self.path.write_text(text + extra, encoding="utf-8")
        return hashlib.sha256(self.path.read_bytes()).hexdigest()


class DaemonLog:
    """The daemon's JSON Lines, read on from where the last reload's ended; and what it told
    systemd (`listener`), if it was given one."""

    def __init__(self, daemon: DaemonProcess, listener: Listener | None = None) -> None:
        self.daemon = daemon
        self.listener = listener
        self._read = 0

    def lines(self) -> list[dict[str, Any]]:
        """Every JSON line since the last reload began (since the start, before one)."""
        lines = []
        for raw in self.daemon.log.read_text(errors="replace").splitlines()[self._read :]:
            with contextlib.suppress(json.JSONDecodeError):
                lines.append(json.loads(raw))
        return lines

    async def reload(self) -> list[dict[str, Any]]:
        """SIGHUP, and the `config.*` lines of that reload once it is done."""
        self._read = len(self.daemon.log.read_text(errors="replace").splitlines())
        told = len(self._ready())
        self.daemon.send_signal(signal.SIGHUP)
        await until(lambda: any(line.get("event") in DONE for line in self.lines()))
        if self.listener is not None:  # READY=1 follows the log lines, by another socket
            await until(lambda: len(self._ready()) > told)
        return [line for line in self.lines() if str(line.get("event")).startswith("config.")]

    def _ready(self) -> list[dict[str, str]]:
        listener = self.listener
        return [] if listener is None else [m for m in listener.messages() if "READY" in m]


def _is_info(message: Received) -> bool:
    return message.topic == INFO


@contextlib.asynccontextmanager
async def _running(
    site: Site, broker: Mosquitto, listener: Listener
) -> AsyncIterator[tuple[DaemonProcess, Collector]]:
    daemon = DaemonProcess(site.path, site.directory / "daemon.log")
    async with Collector(broker.host, broker.port, identifier="reload-pit") as pit:
        await daemon.start({**os.environ, "NOTIFY_SOCKET": listener.address})
        try:
            await pit.wait(_is_info)
            await until(lambda: any("READY" in m for m in listener.messages()), within=20)
            yield daemon, pit
            daemon.check()
        finally:
            assert await daemon.stop() == 0, daemon.tail()


def _restarts(lines: list[dict[str, Any]]) -> list[dict[str, Any]]:
    keys = ("section", "table", "change", "settings")
    return [
        {k: line[k] for k in keys if k in line}
        for line in lines
        if line["event"] == "config.reload_needs_restart"
    ]


def _last_status(listener: Listener) -> str:
    ready = [m for m in listener.messages() if "READY" in m]
    return ready[-1]["STATUS"]


TWO = {"bj-1": "shoe-1", "bj-2": "shoe-2"}


@dataclass
class Reloading:
    """A running daemon, the engineer's file, and everything that tells what runs."""

    site: Site
    pit: Collector
    log: DaemonLog
    listener: Listener

    async def info_after(self, mark: int) -> dict[str, Any]:
        info: dict[str, Any] = (await self.pit.wait(_is_info, after=mark)).body
        return info


async def test_each_change_is_applied_or_waits_for_a_restart_and_says_so(
    tmp_path: Path, mosquitto: Mosquitto, listener: Listener
) -> None:
    site = Site(tmp_path, mosquitto)
    first = site.write(TWO)
    async with _running(site, mosquitto, listener) as (daemon, pit):
        steps = Reloading(site, pit, DaemonLog(daemon, listener), listener)
        started = await steps.info_after(0)
        assert (started["config_sha256"], started["restart_needed"]) == (first, [])
        await _a_table_removed(steps)
        await _what_applies_at_once(steps)
        waiting = await _what_waits_for_a_restart(steps, tmp_path)
        mark = pit.mark()
        await _a_file_with_a_mistake(steps, waiting)
        # The first file again: nothing waits, and the info says so with its hash.
        site.write(TWO)
        assert _restarts(await steps.log.reload()) == []
        assert await steps.info_after(mark) == started  # the refusal published nothing


async def _a_table_removed(steps: Reloading) -> None:
    """A table removed: it serves on until a restart, and everything says so."""
    mark, removed = steps.pit.mark(), steps.site.write({"bj-1": "shoe-1"})
    lines = await steps.log.reload()
    assert _restarts(lines) == [{"section": "table", "table": "bj-2", "change": "removed"}]
    info = await steps.info_after(mark)
    assert (info["tables"], info["config_sha256"]) == (["bj-1", "bj-2"], removed)
    assert info["restart_needed"] == ["table bj-2 removed"]
    assert _last_status(steps.listener).endswith("; restart needed for: table bj-2 removed")
    told = [m for m in steps.listener.messages() if "RELOADING" in m or "READY" in m]
    assert [("RELOADING" in m, "READY" in m) for m in told[-2:]] == [(True, False), (False, True)]


async def _what_applies_at_once(steps: Reloading) -> None:
    """[requests], [timing] and [logging] at once; a game's settings at the round's end."""
    mark = steps.pit.mark()
    applied = steps.site.write(
        TWO,
        edits={'level = "info"': 'level = "debug"', 'paytable = "B"': 'paytable = "A"'},
        extra="[requests]\nrate = 1\nburst = 1\nqueue = 5\n"
        "[timing]\ndeclaration_wait = 10\nshoe_silence = 60\n",
    )
    lines = await steps.log.reload()
    assert [(line["event"], line.get("section")) for line in lines] == [
        ("config.reload_applied", "logging"),
        ("config.reload_applied", "requests"),
        ("config.reload_applied", "timing"),
        ("config.reload_queued", "table"),  # bj-1's paytable: between rounds, at once
        ("config.reloaded", None),
    ]
    requests = next(line for line in lines if line.get("section") == "requests")
    assert (requests["rate"], requests["burst"], requests["queue"]) == (1.0, 1, 5)
    info = await steps.info_after(mark)
    assert (info["config_sha256"], info["restart_needed"]) == (applied, [])
    assert "restart needed" not in _last_status(steps.listener)
    await _only_one_request_a_second(steps.pit)


async def _what_waits_for_a_restart(steps: Reloading, directory: Path) -> str:
    """What a running daemon cannot take: named, section by section, setting by setting;
    the hash of the file it was read from."""
    mark = steps.pit.mark()
    edits = {
        f'node = "{NODE}"': f'node = "{NODE}"\nkeepalive = 45',
        'level = "info"': 'level = "debug"',
        "[logging]": "keep_days = 7\n[logging]",  # in [journal], just above
        'port = "' + str(directory / "shoe-1"): 'port = "' + str(directory / "shoe-9"),
    }
    waiting = steps.site.write(
        {**TWO, "bj-3": "shoe-3"},
        edits=edits,
        extra=f"[requests]\nrate = 1\nburst = 1\nqueue = 5\n[metrics]\nenabled = true\n"
        f'port = {free_port()}\n[display]\ntitle = "Pit A"\n',
    )
    lines = await steps.log.reload()
    assert _restarts(lines) == [
        {"section": "mqtt", "settings": ["keepalive"]},
        {"section": "metrics", "settings": ["enabled", "port"]},
        {"section": "journal", "settings": ["keep_days"]},
        {"section": "shoe", "table": "bj-1", "change": "changed", "settings": ["transport"]},
        {"section": "table", "table": "bj-3", "change": "added"},
    ]
    assert [line["event"] for line in lines if line.get("section") == "display"] == [
        "config.reload_not_daemons"
    ]
    info = await steps.info_after(mark)
    assert info["tables"] == ["bj-1", "bj-2"]  # the tables that serve: not bj-3
    assert info["config_sha256"] == waiting
    assert info["restart_needed"] == [
        "mqtt", "metrics", "journal", "table bj-1 shoe", "table bj-3 added",
    ]  # fmt: skip
    return waiting


async def _a_file_with_a_mistake(steps: Reloading, running: str) -> None:
    """Refused, and the settings that ran go on running; nothing is published."""
    path = steps.site.path
    path.write_text(path.read_text(encoding="utf-8") + "[bogus]\n", encoding="utf-8")
    [refused] = await steps.log.reload()
    assert refused["event"] == "config.reload_refused"
    assert refused["running_sha256"] == running
    assert any("bogus: unknown section" in error for error in refused["errors"])
    assert _last_status(steps.listener).endswith(
        f"; reload refused (1 mistake in {path}, the log names them); the earlier settings run"
    )


async def _only_one_request_a_second(pit: Collector) -> None:
    """`[requests] rate = 1, burst = 1` runs: of two requests at once, one is refused."""
    for n in (1, 2):
        await pit.publish("shoe2mqtt/bj-2/request/status", json.dumps({"transaction": f"r{n}"}))
    answers = [await pit.wait(response_to(f"r{n}", "status")) for n in (1, 2)]
    assert [a.body["status"] for a in answers] == ["ok", "error"]
    assert answers[1].body["error"]["code"] == "rate_limited"


def _exec_reload(unit: Path, *, main_pid: int, config: Path) -> int:
    """Run the unit's ExecReload= lines as systemd does: in order, `$MAINPID` replaced, the
    first that fails (without a `-` before it) failing the reload; its exit status, which
    `systemctl reload` reports as the job's failure."""
    for line in service_section(unit)["ExecReload"]:
        argv = [
            str(SHOE2MQTT) if word == "/opt/shoe2mqtt/bin/shoe2mqtt"
            else str(config) if word.startswith("/etc/shoe2mqtt/")
            else word
            for word in shlex.split(line.lstrip("-").replace("$MAINPID", str(main_pid)))
        ]  # fmt: skip
        status = subprocess.run(argv, capture_output=True, timeout=60, check=False).returncode  # noqa: S603 - the unit's own commands
        if status != 0 and not line.startswith("-"):
            return status
    return 0


async def test_a_file_with_a_mistake_fails_the_reload_before_the_daemon_is_signalled(
    tmp_path: Path, mosquitto: Mosquitto, listener: Listener
) -> None:
    site = Site(tmp_path, mosquitto)
    site.write(TWO)
    unit = SYSTEMD / "shoe2mqtt.service"
    async with _running(site, mosquitto, listener) as (daemon, _pit):
        log = DaemonLog(daemon)
        site.path.write_text(site.path.read_text(encoding="utf-8") + "[bogus]\n")
        status = await asyncio.to_thread(_exec_reload, unit, main_pid=daemon.pid, config=site.path)
        assert status == ExitCode.CONFIG  # `systemctl reload` fails: "control process exited"
        site.write(TWO, extra="[requests]\nrate = 5\n")
        status = await asyncio.to_thread(_exec_reload, unit, main_pid=daemon.pid, config=site.path)
        assert status == 0
        await until(lambda: any(line.get("event") in DONE for line in log.lines()))
        done = [line["event"] for line in log.lines() if line.get("event") in DONE]
        # One reload reached the daemon: the good one; the broken file never did.
        assert done == ["config.reloaded"]
