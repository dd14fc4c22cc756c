"""`shoe2mqtt report` as a user types it: every command docs/numbers.md and docs/deploy.md
show, run by a shell against a journal the journal's own store and archiver wrote (two
tables, two days, the first archived), with only the paths replaced by this test's. The
journal's report and the floor's (DuckDB over the archive) must agree on what both hold."""

from __future__ import annotations

import asyncio
import csv
import io
import json
import os
import re
import shutil
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

import pytest

from daemon.simulator.tables import DEMO_TABLES
from daemon.testing.floor import Pace, write_journal
from rules.config import TableConfig
from rules.games import Game

ROOT: Final = Path(__file__).parents[2]
DOCS: Final = (ROOT / "docs" / "numbers.md", ROOT / "docs" / "deploy.md")
START: Final = datetime(2026, 11, 27, tzinfo=UTC)


def _documented() -> list[str]:
    lines = []
    for doc in DOCS:
        inside = False
        for line in doc.read_text(encoding="utf-8").splitlines():
            if line.startswith("```"):
                inside = not inside
            elif inside and line.startswith("shoe2mqtt report"):
                lines.append(line)
    return lines


@pytest.fixture(scope="module")
def floor(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """`site/etc/shoe2mqtt.toml` naming `site/state` (two days, the first archived), and
    `site/srv/archive/pc-1/` a copy of its archive, as a floor server holds it."""
    site = tmp_path_factory.mktemp("site")
    state = site / "state"
    games = (Game.BLACKJACK, Game.DOUBLE_ATTACK)
    configs = [TableConfig.from_mapping(dict(DEMO_TABLES[g])) for g in games]
    pace = Pace(rounds_per_hour=30, opens=20, hours=1, dealer_minutes=20)
    asyncio.run(write_journal(state, configs, START, 2, pace, keep_days=1))
    (site / "etc").mkdir()
    tables = "".join(_table_toml(DEMO_TABLES[g]) for g in (Game.BLACKJACK, Game.DOUBLE_ATTACK))
    (site / "etc" / "shoe2mqtt.toml").write_text(
        f'[mqtt]\nhost = "127.0.0.1"\n\n[journal]\nstate_directory = "{state}"\nkeep_days = 1\n\n'
        '[numbers]\nshifts = ["06:00", "14:00", "20:30"]\ntimezone = "UTC"\n' + tables
    )
    shutil.copytree(state / "archive", site / "srv" / "archive" / "pc-1")
    return site


def _table_toml(table: dict[str, object]) -> str:
    out = "\n[[table]]\n"
    limits = table["limits"]
    assert isinstance(limits, dict)
    for key, value in table.items():
        if key != "limits":
            out += f"{key} = {json.dumps(value)}\n"
    for kind, bounds in limits.items():
        out += f'[table.limits.{kind}]\nmin = "{bounds["min"]}"\nmax = "{bounds["max"]}"\n'
    port = f"/dev/shoe-{table['id']}"
    return out + f'[table.shoe]\nprotocol = "reference"\ntransport = "serial"\nport = "{port}"\n'


def _shell(line: str, site: Path) -> subprocess.CompletedProcess[str]:
    typed = line.replace("/etc/shoe2mqtt/shoe2mqtt.toml", str(site / "etc" / "shoe2mqtt.toml"))
    typed = typed.replace("/srv/shoe2mqtt/", f"{site}/srv/")
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}:{os.environ['PATH']}"}
    return subprocess.run(  # noqa: S603 - the documented line, as a shell runs it
        ["/bin/sh", "-c", typed], cwd=site, env=env, capture_output=True, text=True,
        timeout=120, check=False,
    )  # fmt: skip


def test_the_doc_shows_the_report_commands() -> None:
    lines = _documented()
    assert len(lines) >= 8
    assert any("--export parquet" in line for line in lines)


@pytest.mark.timeout(300)  # nine processes, each importing the daemon: slow on a loaded machine
def test_every_documented_report_runs_as_typed(floor: Path) -> None:
    lines = _documented()
    # The Parquet export must exist before the report that reads it: the doc's own order.
    for line in lines:
        done = _shell(line, floor)
        assert done.returncode == 0, (line, done.stderr)
        assert done.stdout.strip() or ">" in line, line
    days = list(csv.DictReader(io.StringIO((floor / "days.csv").read_text())))
    assert {row["table"] for row in days} == {"bj-1", "da-1"}
    assert {row["day"] for row in days} == {"2026-11-27", "2026-11-28"}
    dealers = json.loads((floor / "dealers.json").read_text())
    assert {group["dealer"] for group in dealers} == {"ana", "ben", "carla"}
    assert (floor / "numbers.png").read_bytes().startswith(b"\x89PNG")
    assert (floor / "srv" / "parquet" / "rounds" / "table=bj-1" / "day=2026-11-27").is_dir()


def test_the_floor_and_the_journal_agree_on_the_archived_day(floor: Path) -> None:
    config = str(floor / "etc" / "shoe2mqtt.toml")
    journal = _report(["--config", config, "--by", "day", "--to", "2026-11-27"], floor)
    archive = _report(["--archive", str(floor / "srv" / "archive" / "pc-1"), "--by", "day"], floor)
    assert journal == archive
    assert [g["rounds"] for g in journal] == [30, 30]
    assert all(w["handle_cents"] > 0 for g in journal for w in g["wagers"])


def _report(options: list[str], cwd: Path) -> list[dict[str, Any]]:
    done = subprocess.run(  # noqa: S603 - our own command
        [sys.executable, "-m", "daemon.cli", "report", *options, "--format", "json"],
        cwd=cwd, capture_output=True, text=True, timeout=120, check=True,
    )  # fmt: skip
    groups: list[dict[str, Any]] = json.loads(done.stdout)
    for group in groups:  # the shoe still open at the archive's end is the journal's alone
        group.pop("shoes")
        group.pop("penetration")
    return groups


def test_a_wrong_option_is_a_usage_error(floor: Path) -> None:
    done = subprocess.run(  # noqa: S603 - our own command
        [sys.executable, "-m", "daemon.cli", "report", "--config",
         str(floor / "etc" / "shoe2mqtt.toml"), "--posted", "bj-1"],
        cwd=floor, capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 2
    assert re.search(r"--posted 'bj-1': say ID=PAYTABLE", done.stderr)


@pytest.mark.timeout(300)  # four processes, each importing the daemon
def test_the_surveillance_stands_in_the_report_as_the_journal_ends(floor: Path) -> None:
    """Each table's shoe in play and its seats' sessions, in the group of its last round, in
    text, CSV and JSON alike; a report that stops short of the journal's end has none."""
    config = floor / "etc" / "shoe2mqtt.toml"
    typed = f"shoe2mqtt report --config {config} --by day"
    text = _shell(typed, floor).stdout
    rows = list(csv.DictReader(io.StringIO(_shell(f"{typed} --format csv", floor).stdout)))
    groups = json.loads(_shell(f"{typed} --format json", floor).stdout)
    earlier = _shell(f"{typed} --to 2026-11-27 --format json", floor).stdout
    watched = {(g["table"], g["day"]): g["sections"].get("surveillance") for g in groups}
    assert set(watched) == {(t, d) for t in ("bj-1", "da-1") for d in ("2026-11-27", "2026-11-28")}
    shoes = {"bj-1": 6 * 52, "da-1": 8 * 48}  # the demo tables' shoes: cards in each
    for table in ("bj-1", "da-1"):
        assert watched[table, "2026-11-27"] is None
        lines = watched[table, "2026-11-28"]
        head = re.fullmatch(r"table (\S+): shoe \d+, (\d+) cards seen, (\d+) left", lines[0])
        assert head is not None, lines[0]
        assert head[1] == table
        assert int(head[2]) + int(head[3]) == shoes[table]
        seats = [re.match(r"  seat (\d+): (\d+) rounds over (\d+) shoes: ", x) for x in lines[1:]]
        assert all(seats), lines
        assert "\n".join(["surveillance:", *(f"  {x}" for x in lines)]) in text
        [row] = {r["sections"] for r in rows if (r["table"], r["day"]) == (table, "2026-11-28")}
        assert row == "surveillance: " + " | ".join(x.strip() for x in lines)
    assert "surveillance" not in earlier
