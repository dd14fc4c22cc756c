"""The daemon's own logic outside a broker: what a SIGHUP reload applies, and what it refuses."""

from __future__ import annotations

from typing import TYPE_CHECKING

import structlog

from daemon.configuration.service_config import load_config
from daemon.service import Daemon
from daemon.table.records import ConfigRecord
from daemon.table.service import TableService
from daemon.wire.envelope import Envelopes
from daemon.wire.topics import Topics
from rules.events import PlaceWager
from rules.games import WagerKind

if TYPE_CHECKING:
    from pathlib import Path

CONFIG = """\
[mqtt]
host = "127.0.0.1"

[[table]]
id = "bj-1"
game = "blackjack"
paytable = "A"
[table.limits.blackjack]
min = "10"
max = "1000"
[table.limits.twenty_point_bonus]
min = "5"
max = "100"
[table.shoe]
protocol = "enq"
transport = "serial"
port = "/dev/ttyUSB0"
"""


def _write(tmp_path: Path, text: str, name: str = "other.toml") -> Path:
    path = tmp_path / name
    path.write_text(text, encoding="utf-8")
    return path


def _daemon(tmp_path: Path) -> tuple[Daemon, Path]:
    path = _write(tmp_path, CONFIG, "shoe2mqtt.toml")
    return Daemon(load_config(path, environ={})), path


def test_reload_queues_a_table_s_new_game_settings_in_the_table_s_order(tmp_path: Path) -> None:
    """New settings are journaled and applied by the table's own consumer, after whatever
    it already holds: never in the middle of another event."""
    daemon, path = _daemon(tmp_path)
    path.write_text(CONFIG.replace('paytable = "A"', 'paytable = "B"'), encoding="utf-8")
    daemon.reload()
    item = daemon.tables["bj-1"].queue.get_nowait()
    assert isinstance(item, ConfigRecord)
    assert item.table.paytable_name == "B"
    assert len(daemon.tables["bj-1"].queue) == 0  # applied by the table's consumer, not here


def test_new_settings_wait_for_the_round_in_progress_to_end(tmp_path: Path) -> None:
    a_table = load_config(_write(tmp_path, CONFIG, "shoe2mqtt.toml"), environ={}).tables[0].table
    service = TableService(a_table, Topics(), Envelopes("bj-1"))
    b_table = load_config(
        _write(tmp_path, CONFIG.replace('paytable = "A"', 'paytable = "B"')), environ={}
    )
    service.engine.apply(PlaceWager(1, WagerKind.BLACKJACK, 2500))
    service.apply_body("config", {"table": b_table.tables[0].table.to_mapping()}, "t")
    assert service.take_round_change()  # the round state says so (pending settings)
    assert service.engine.config.paytable_name == "A"  # the round in progress keeps its rules
    service.on_request("void", b"{}")
    assert service.engine.config.paytable_name == "B"  # applied as the round ended


def test_a_reload_with_mistakes_changes_nothing_and_says_why(tmp_path: Path) -> None:
    daemon, path = _daemon(tmp_path)
    path.write_text(CONFIG.replace('max = "1000"', 'max = "1"'), encoding="utf-8")
    with structlog.testing.capture_logs() as logs:
        daemon.reload()
    assert len(daemon.tables["bj-1"].queue) == 0  # nothing for the table to apply
    [refused] = [entry for entry in logs if entry["event"] == "config.reload_refused"]
    assert refused["errors"] == [
        f"{path}:10: table[1].limits.blackjack.max: must not be below the minimum, 10.00; not 1.00"
    ]


def test_reload_names_what_needs_a_restart(tmp_path: Path) -> None:
    daemon, path = _daemon(tmp_path)
    path.write_text(CONFIG.replace("/dev/ttyUSB0", "/dev/ttyUSB1"), encoding="utf-8")
    with structlog.testing.capture_logs() as logs:
        daemon.reload()
    assert any(
        (entry["event"], entry.get("section")) == ("config.reload_needs_restart", "shoe")
        for entry in logs
    )


def test_what_waits_is_judged_against_what_runs_so_a_file_put_back_waits_for_nothing(
    tmp_path: Path,
) -> None:
    """The second reload of a file whose shoe change waits still names it (the daemon still
    runs the old shoe); the first file again names nothing, and the info says so."""
    daemon, path = _daemon(tmp_path)
    first = daemon.info
    path.write_text(CONFIG.replace("/dev/ttyUSB0", "/dev/ttyUSB1"), encoding="utf-8")
    with structlog.testing.capture_logs():
        daemon.reload()
        daemon.reload()
    assert daemon.info.restart_needed == ("table bj-1 shoe",)
    assert daemon.config.tables[0].shoe.transport == _transport_of(CONFIG, tmp_path)
    path.write_text(CONFIG, encoding="utf-8")
    with structlog.testing.capture_logs() as logs:
        daemon.reload()
    assert daemon.info == first
    assert [entry["event"] for entry in logs] == ["config.reloaded"]


def _transport_of(text: str, tmp_path: Path) -> object:
    return load_config(_write(tmp_path, text), environ={}).tables[0].shoe.transport
