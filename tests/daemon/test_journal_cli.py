"""`shoe2mqtt journal`: an auditor lists the rounds, shows one, and exports it for replay."""

from __future__ import annotations

import argparse
import io
import json
from typing import TYPE_CHECKING, Any

import pytest

from daemon.cli import build_parser
from daemon.cli.journal import journal_command
from daemon.replay import replay
from tests.daemon.pit import play, read_example, running_pit, shoe_script

if TYPE_CHECKING:
    from pathlib import Path

    from daemon.testing import Mosquitto

ENVELOPE = ("schema", "id", "table", "seq", "ts", "review")


def _command(state: Path, *words: str) -> tuple[int, list[Any], str]:
    args = build_parser().parse_args(["journal", "--state-directory", str(state), *words])
    assert isinstance(args, argparse.Namespace)
    out, err = io.StringIO(), io.StringIO()
    code = journal_command(args, out, err)
    lines = out.getvalue().splitlines()
    return (
        code,
        [json.loads(line) for line in lines] if words[0] != "export" else lines,
        err.getvalue(),
    )


@pytest.mark.parametrize(
    "example", ["triple-attack-dealer-22.jsonl", "blackjack-queen-of-hearts.jsonl"]
)
async def test_an_exported_round_replays_to_what_was_published(
    example: str, tmp_path: Path, mosquitto: Mosquitto
) -> None:
    table, events, _ = read_example(example)
    state = tmp_path / "state"
    async with running_pit(table, shoe_script(events), mosquitto, state_directory=state) as pit:
        await play(pit, events)
        published = [{k: v for k, v in s.items() if k not in ENVELOPE} for s in pit.settlements()]

    code, rounds, _ = _command(state, "list")
    assert code == 0
    assert [(r["table"], r["round"], r["settlements"], r["voided"]) for r in rounds] == [
        (table["id"], 1, len(published), False)
    ]
    code, log, _ = _command(state, "export", "1", "--table", table["id"])
    assert code == 0
    replayed = [r for r in replay(log) if r["type"] == "settlement"]
    assert replayed == published
    code, shown, _ = _command(state, "show", "1", "--table", table["id"])
    assert code == 0
    shown_settlements = [
        {k: v for k, v in s.items() if k not in ENVELOPE}
        for s in shown
        if s.get("type") == "settlement"
    ]
    assert shown_settlements == published
    journaled = [s for s in shown if "journal" in s]
    assert [s["kind"] for s in journaled].count("request") == sum(
        1 for e in events if e["type"] in ("wager", "action", "withdraw", "void")
    )


def test_a_missing_journal_or_round_is_an_error(tmp_path: Path) -> None:
    code, _, err = _command(tmp_path, "list")
    assert (code, err) == (2, f"shoe2mqtt journal: no journal at {tmp_path / 'journal.sqlite3'}\n")
