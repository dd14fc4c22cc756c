"""`shoe2mqtt journal`: an auditor lists the rounds, shows one as it was published, exports it
for replay, and verifies the chain (the commands the docs show run as processes, as a person
types them)."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from daemon.round_log import replay
from tests.daemon.commands import Done, shoe2mqtt
from tests.daemon.pit import BASE, play, read_example, running_pit, shoe_script

if TYPE_CHECKING:
    from pathlib import Path

    from daemon.testing import Mosquitto


def journal(state: Path, *words: str, process: bool = False) -> Done:
    """`shoe2mqtt journal --state-directory STATE WORDS...`."""
    return shoe2mqtt("journal", "--state-directory", str(state), *words, process=process)


def lines(done: Done) -> list[dict[str, Any]]:
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


async def test_a_round_shown_is_exactly_what_the_pit_received(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    """`journal show` prints every message of the round with the id, seq and ts a subscriber
    recorded, body for body; `export` replays to the same settlements; `list` and `verify`."""
    table, events, _ = read_example("triple-attack-dealer-22.jsonl")
    state = tmp_path / "state"
    async with running_pit(table, shoe_script(events), mosquitto, state_directory=state) as pit:
        await play(pit, events)
        received = [
            (m.topic, m.body) for m in pit.messages if m.topic.startswith(f"{BASE}/{table['id']}/")
        ]
    [listed] = lines(journal(state, "list", process=True))
    assert (listed["table"], listed["round"], listed["settlements"], listed["open"]) == (
        "ta-1",
        1,
        4,
        False,
    )
    shown = lines(journal(state, "show", "1", "--table", "ta-1"))
    published = [(line["topic"], line["message"]) for line in shown if line["type"] == "published"]
    # Every message of the round as the subscriber received it, in the order it came.
    assert published == [item for item in received if item in published]
    settlements = [body for topic, body in received if topic.endswith("/settlement")]
    assert [body for topic, body in published if topic.endswith("/settlement")] == settlements
    assert len(settlements) == 4
    requests = [line for line in shown if line["type"] == "journal" and line["kind"] == "request"]
    commands = ("wager", "close_betting", "action")
    assert len(requests) == sum(1 for e in events if e["type"] in commands)

    exported = journal(state, "export", "1", "--table", "ta-1")
    assert exported.returncode == 0, exported.stderr
    replayed = [r for r in replay(exported.stdout.splitlines()) if r["type"] == "settlement"]
    assert replayed == [
        {k: v for k, v in s.items() if k not in ("schema", "id", "table", "seq", "ts", "review")}
        for s in settlements
    ]
    verified = journal(state, "verify", process=True)
    assert verified.returncode == 0, verified.stderr
    assert verified.stdout.startswith("ta-1: ok: ")


def test_a_missing_journal_or_round_is_an_error(tmp_path: Path) -> None:
    missing = journal(tmp_path, "list")
    assert (missing.returncode, missing.stderr) == (
        2,
        f"shoe2mqtt journal: no journal at {tmp_path / 'journal.sqlite3'}\n",
    )
