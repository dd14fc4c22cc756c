"""The journal: inbound events before they are applied, outbound messages until acknowledged."""

from __future__ import annotations

import json
import sqlite3
import stat
from typing import TYPE_CHECKING, Any

from daemon.envelope import Envelopes
from daemon.journal import Journal, prepare_state_directory
from tests.daemon.pit import BASE, play, read_example, running_pit, shoe_script

if TYPE_CHECKING:
    from pathlib import Path

    from daemon.testing import Mosquitto


async def test_the_journal_and_its_directory_are_for_the_service_alone(tmp_path: Path) -> None:
    directory = tmp_path / "state"
    directory.mkdir(mode=0o755)
    path = prepare_state_directory(directory)
    journal = Journal(path)
    await journal.open()
    await journal.append_event("bj-1", "shoe", {"event": "NewShoe"}, "t")
    await journal.close()
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    for file in directory.iterdir():
        assert stat.S_IMODE(file.stat().st_mode) == 0o600, file


async def test_events_and_messages_survive_a_reopen_in_order(tmp_path: Path) -> None:
    path = prepare_state_directory(tmp_path)
    journal = Journal(path)
    await journal.open()
    first = await journal.append_event("bj-1", "request", {"command": "wager"}, "t1")
    second = await journal.append_event("bj-1", "shoe", {"event": "NewShoe"}, "t2")
    seal = Envelopes("bj-1").seal
    ids = await journal.record_outputs(
        first, "bj-1", 3, [seal("a/x", {"n": 1}), seal("a/y", {"n": 2})]
    )
    await journal.forget_delivered(ids[:1])
    await journal.close()
    reopened = Journal(path)
    events = await reopened.events("bj-1")
    assert [(e.rowid, e.outputs_recorded) for e in events] == [(first, True), (second, False)]
    pending = await reopened.pending()
    assert [(m.rowid, m.topic) for m in pending] == [(ids[1], "a/y")]
    assert await reopened.next_seq("bj-1") == 3
    await reopened.close()


def _published(pit_messages: list[Any], table: str) -> list[dict[str, Any]]:
    return [
        json.loads(m.payload)
        for m in pit_messages
        if m.topic.startswith(f"{BASE}/{table}/") and "/request/" not in m.topic
    ]


async def test_a_restart_mid_round_rebuilds_the_round_and_flags_it(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    table, events, _ = read_example("blackjack-queen-of-hearts.jsonl")
    state = tmp_path / "state"
    async with running_pit(table, shoe_script(events), mosquitto, state_directory=state) as pit:
        await play(pit, events[:16])
        before = pit.of("round")[-1]
    # A new emulated shoe: a reader that restarted (another power-up), so what it held is
    # gone and the round is flagged (the same shoe going on would need no review).
    async with running_pit(table, "5C", mosquitto, state_directory=state) as pit:
        notice = await pit.wait_for("notice/reader_restarted")
        snapshot = await pit.wait_for("round", lambda body: bool(body["review"]))
    assert snapshot["round"] == before["round"]
    assert snapshot["review"] == ["reader_restarted"]
    assert snapshot["doubt"] == "reader_restarted"
    assert notice["round"] == 1
    # The sequence numbers go on where they stopped: a display sees one stream.
    assert snapshot["seq"] > before["seq"]


async def test_an_event_journaled_but_never_applied_is_applied_after_a_crash(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    """The crash window between the two commits: the event is there, its outputs are not."""
    table, _, _ = read_example("blackjack-queen-of-hearts.jsonl")
    state = tmp_path / "state"
    async with running_pit(table, "7C", mosquitto, state_directory=state):
        pass
    request = {
        "command": "wager",
        "payload": json.dumps(
            {"transaction": "lost", "seat": 2, "kind": "blackjack", "amount": "25.00"}
        ),
    }
    with sqlite3.connect(state / "journal.sqlite3") as db:
        db.execute(
            "INSERT INTO events (table_id, kind, body, at) VALUES ('bj-1', 'request', ?, 't')",
            (json.dumps(request),),
        )
    async with running_pit(table, "7C", mosquitto, state_directory=state) as pit:
        response = await pit.wait_for("response/wager")
        snapshot = await pit.wait_for("round", lambda body: body["round"] is not None)
    assert (response["transaction"], response["status"]) == ("lost", "ok")
    assert snapshot["round"]["seats"][0]["wagers"] == {"blackjack": "25.00"}


async def test_systemd_hears_ready_only_once_the_broker_is_connected(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    """READY=1 after the journal is replayed and the broker connected; then STOPPING=1."""
    import socket

    from daemon.notify import Notifier

    address = str(tmp_path / "notify.sock")
    with socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM) as listener:
        listener.bind(address)
        listener.setblocking(False)
        table, _, _ = read_example("triple-attack-dealer-22.jsonl")
        async with running_pit(table, "7C", mosquitto, notifier=Notifier(address)) as pit:
            await pit.wait_for("round")
        received = []
        while True:
            try:
                received.append(listener.recv(4096).decode())
            except BlockingIOError:
                break
    ready = [i for i, m in enumerate(received) if "READY=1" in m]
    assert len(ready) == 1
    assert any("replaying the journal" in m for m in received[: ready[0]])
    assert "broker connected" in received[ready[0]]
    assert "1 table, readers 1 connected" in received[ready[0]]
    assert any("STOPPING=1" in m for m in received[ready[0] :])
