"""docs/deploy.md's `jq` recipes, run with jq on the log of a real daemon.

The daemon runs as systemd runs it (a process, JSON Lines on stdout) with two tables: bj-1
reads an emulated shoe and plays a round, bj-2's reader is not plugged in, so the log holds
settlements, a reader that connected and one that keeps retrying. Each recipe the document
shows is taken from it as written (the table, round and device it names are this run's),
run by jq, and held to what it promises.
"""

from __future__ import annotations

import json
import random
import re
import subprocess
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from daemon.testing import (
    BURN,
    TABLE_SETTINGS,
    Collector,
    ConsoleSimulator,
    DaemonProcess,
    table_config,
    write_service_config,
)
from drivers.emulator import EmulatedShoe, EmulatorSettings

if TYPE_CHECKING:
    from collections.abc import Callable

    from daemon.testing import Mosquitto

DEPLOY = Path(__file__).parents[2] / "docs" / "deploy.md"
JQ = "/usr/bin/jq"
# The names the document's recipes use, and this run's in their place.
DOC_ROUND = "42"
DOC_DEVICE = "/dev/shoe2mqtt/A10KZ3XY"

Line = dict[str, Any]


def recipes() -> list[tuple[str, str]]:
    """(jq options, program) of every `journalctl ... | jq` line of the "Logs" section."""
    text = DEPLOY.read_text(encoding="utf-8")
    section = text[text.index("## 6. Logs") : text.index("## 7.")]
    return re.findall(r"journalctl [^|\n]*\| jq (-\w+) '([^'\n]+)'", section)


def _problems(lines: list[Line], _: list[Line], __: Line) -> None:
    assert lines
    assert all(line["level"] in {"warning", "error"} for line in lines)
    assert any(line["event"] == "reader.retrying" and line["table"] == "bj-2" for line in lines)


def _one_table(lines: list[Line], everything: list[Line], _: Line) -> None:
    assert lines == [line for line in everything if line.get("table") == "bj-1"]
    events = {line["event"] for line in lines}
    # The reader's own lines (logged by the driver) as well as the table's.
    assert {"reader.connected", "table.settled", "journal.replayed"} <= events
    reader = next(line for line in lines if line["event"] == "reader.connected")
    assert reader["logger"] == "drivers.reader"


def _one_round(lines: list[Line], _: list[Line], played: Line) -> None:
    assert lines
    assert all((line["table"], line["round"]) == ("bj-1", played["round"]) for line in lines)
    assert any(line["event"] == "table.settled" for line in lines)


def _every_reader(lines: list[Line], _: list[Line], __: Line) -> None:
    assert all(line["event"].startswith("reader.") for line in lines)
    assert {(line["table"], line["event"]) for line in lines} >= {
        ("bj-1", "reader.connected"),
        ("bj-2", "reader.retrying"),
    }
    assert all(line["endpoint"] for line in lines)
    retries = [line["retry_in"] for line in lines if line["event"] == "reader.retrying"]
    assert retries
    assert all(round(delay, 2) == delay for delay in retries)  # rounded, not 16 digits


def _one_device(lines: list[Line], _: list[Line], played: Line) -> None:
    assert lines
    assert {(line["table"], line["endpoint"]) for line in lines} == {("bj-1", played["device"])}


def _settlements(rows: list[Line], everything: list[Line], _: Line) -> None:
    settled = [line for line in everything if line["event"] == "table.settled"]
    assert [row["tsv"] for row in rows] == [
        "\t".join(
            str(line[key])
            for key in ("timestamp", "table", "round", "seat", "wager", "outcome", "won")
        )
        for line in settled
    ]


# What each recipe promises, by its jq program as the document writes it.
PROMISES: dict[str, Callable[[list[Line], list[Line], Line], None]] = {
    'select(.level == "warning" or .level == "error")': _problems,
    'select(.table == "bj-1")': _one_table,
    'select(.table == "bj-1" and .round == 42)': _one_round,
    'select(.event | startswith("reader."))': _every_reader,
    'select(.endpoint == "/dev/shoe2mqtt/A10KZ3XY")': _one_device,
    'select(.event == "table.settled") | [.timestamp, .table, .round, .seat, .wager, '
    ".outcome, .won] | @tsv": _settlements,
}


@pytest.fixture
async def daemon_log(tmp_path: Path, mosquitto: Mosquitto) -> tuple[Path, Line]:
    """The log of a daemon that played a round at bj-1 while bj-2's reader stayed away, and
    what the run was (the round played, bj-1's device)."""
    rng = random.Random(17)  # noqa: S311 - a test's players, not a secret
    async with (
        EmulatedShoe(EmulatorSettings(protocol="reference", seed=17)) as shoe,
        Collector(mosquitto.host, mosquitto.port, identifier="log-recipes") as collector,
    ):
        config = write_service_config(
            tmp_path / "shoe2mqtt.toml", mosquitto, node="pit-a",
            state_directory=tmp_path / "state", reconnect=(0.05, 0.5),
            tables=[(TABLE_SETTINGS, shoe.path),
                    ({**TABLE_SETTINGS, "id": "bj-2"}, tmp_path / "bj-2-not-plugged-in")],
        )  # fmt: skip
        daemon = DaemonProcess(config, tmp_path / "daemon.log")
        mark = collector.mark()
        await daemon.start()
        try:
            await collector.wait_online(mark)
            dealer = ConsoleSimulator(table_config(), shoe, collector, rng)
            await dealer.resync()
            await dealer.step(BURN)
            await dealer.play_round(lambda: None)
            played = {"round": dealer.round_id, "device": shoe.path}
        finally:
            assert await daemon.stop() == 0, daemon.tail()
    return daemon.log, played


def test_the_documents_recipes_are_the_ones_tested() -> None:
    assert [program for _, program in recipes()] == list(PROMISES)


def test_each_recipe_finds_what_it_promises(daemon_log: tuple[Path, Line]) -> None:
    log, played = daemon_log
    # What makes `journalctl -o cat | jq` work at all: every line is one JSON object.
    everything = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert everything
    assert all(isinstance(line, dict) for line in everything)
    for options, program in recipes():
        this_run = program.replace(DOC_ROUND, str(played["round"])).replace(
            DOC_DEVICE, str(played["device"])
        )
        printed = subprocess.run(  # noqa: S603 - jq with the document's own program
            [JQ, options, this_run, str(log)], capture_output=True, text=True, check=True
        ).stdout.splitlines()
        found = (
            [{"tsv": row} for row in printed] if options == "-r" else list(map(json.loads, printed))
        )
        PROMISES[program](found, everything, played)
