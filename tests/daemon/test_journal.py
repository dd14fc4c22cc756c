"""The journal: inbound events before they are applied, outbound messages until acknowledged."""

from __future__ import annotations

import hashlib
import json
import re
import sqlite3
import stat
from typing import TYPE_CHECKING, Any

from hypothesis import given
from hypothesis import strategies as st

from daemon.journal import Checkpoint, Journal, prepare_state_directory
from daemon.journal.chain import body_text, link_hash
from daemon.wire.topics import has_envelope
from tests.daemon.journals import JSON_VALUES
from tests.daemon.pit import BASE, play, read_example, running_pit, shoe_script

if TYPE_CHECKING:
    from pathlib import Path

    from daemon.testing import Mosquitto


@given(st.dictionaries(st.text(), JSON_VALUES, max_size=6), st.text(), st.integers(1, 2**40))
def test_an_events_text_and_hash_are_as_the_journal_format_writes_them(
    body: dict[str, Any], table: str, n: int
) -> None:
    """The text stored and hashed is `json.dumps`', compact, keys sorted, ASCII; the hash
    is SHA-256 over the hash before and the event's fields (the encoders are made once, not
    at each event: no journal's text or chain may change)."""
    text = body_text(body)
    assert text == json.dumps(body, separators=(",", ":"), sort_keys=True)
    fields = json.dumps([table, n, "shoe", "2026-12-03T22:00:00.000Z", text], separators=(",", ":"))
    expected = hashlib.sha256(f"{'0' * 64}\n{fields}".encode()).hexdigest()
    assert link_hash("0" * 64, table, n, "shoe", "2026-12-03T22:00:00.000Z", text) == expected


async def test_the_journal_and_its_directory_are_for_the_service_alone(tmp_path: Path) -> None:
    directory = tmp_path / "state"
    directory.mkdir(mode=0o755)
    path = prepare_state_directory(directory)
    journal = Journal(path)
    await journal.open()
    await journal.append_event("bj-1", "shoe", body_text({"event": "NewShoe"}), "t")
    await journal.close()
    assert stat.S_IMODE(directory.stat().st_mode) == 0o700
    for file in directory.iterdir():
        assert stat.S_IMODE(file.stat().st_mode) == 0o600, file


async def test_what_rides_along_is_committed_with_the_next_event(tmp_path: Path) -> None:
    """Events are numbered per table; the watermark and a checkpoint noted after an event are
    written by the next commit (no fsync of their own), and start-up reads from there."""
    path = prepare_state_directory(tmp_path)
    journal = Journal(path)
    await journal.open()
    assert await journal.append_event("bj-1", "request", body_text({"command": "wager"}), "t1") == 1
    assert await journal.append_event("da-1", "shoe", body_text({"event": "NewShoe"}), "t2") == 1
    journal.note_delivered("bj-1", 7)
    journal.note_checkpoint(Checkpoint("bj-1", 1, 8, "t1", open_round=False, state={"s": 1}))
    with sqlite3.connect(path) as db:  # noted, not yet committed
        assert db.execute(
            "SELECT delivered_seq FROM tables WHERE table_id = 'bj-1'"
        ).fetchone() == (0,)
    assert await journal.append_event("bj-1", "shoe", body_text({"event": "NewShoe"}), "t3") == 2
    await journal.close()
    reopened = Journal(path)
    history = await reopened.history("bj-1")
    await reopened.close()
    assert history.table.delivered_seq == 7
    assert history.checkpoint == Checkpoint("bj-1", 1, 8, "t1", open_round=False, state={"s": 1})
    assert [(e.n, e.kind, e.at) for e in history.events] == [(2, "shoe", "t3")]


def _published(pit_messages: list[Any], table: str) -> list[dict[str, Any]]:
    return [
        json.loads(m.payload)
        for m in pit_messages
        if m.topic.startswith(f"{BASE}/{table}/")
        and "/request/" not in m.topic
        and has_envelope(m.topic)
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
    assert snapshot["as_of"] > before["as_of"]


async def test_an_event_journaled_but_never_applied_is_applied_after_a_crash(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    """The crash window between the commit and the apply: the event is there, nothing it
    caused went out. After the restart it is applied and what it causes is published."""
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
    journal = Journal(state / "journal.sqlite3")
    await journal.open()
    await journal.append_event("bj-1", "request", body_text(request), "2026-11-29T14:00:00.000Z")
    await journal.close()
    async with running_pit(table, "7C", mosquitto, state_directory=state) as pit:
        response = await pit.wait_for("response/wager")
        snapshot = await pit.wait_for("round", lambda body: body["round"] is not None)
    assert (response["transaction"], response["status"]) == ("lost", "ok")
    assert response["ts"] == "2026-11-29T14:00:00.000Z"  # the event's journaled time
    assert snapshot["round"]["seats"][0]["wagers"] == {"blackjack": "25.00"}


async def test_a_restart_sends_again_what_the_broker_may_not_have_with_the_same_ids(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    """Delivery is a watermark riding along with commits: a crash can leave it behind what
    the broker acknowledged. Everything past it is made again by the replay and sent again,
    byte for byte what was sent the first time (decision D4)."""
    table, events, _ = read_example("blackjack-queen-of-hearts.jsonl")
    state = tmp_path / "state"
    async with running_pit(table, shoe_script(events), mosquitto, state_directory=state) as pit:
        await play(pit, events[:12])
        first = _published(pit.messages, "bj-1")
    last = first[-1]["seq"]
    with sqlite3.connect(state / "journal.sqlite3") as db:  # as a crash could leave it
        (delivered,) = db.execute("SELECT delivered_seq FROM tables").fetchone()
        assert last - 2 <= delivered <= last  # the last PUBACKs may come after the stop
        db.execute("UPDATE tables SET delivered_seq = ?", (last - 20,))
    async with running_pit(table, "5C", mosquitto, state_directory=state) as pit:
        await pit.wait_for("round", lambda body: body["as_of"] > last)
        again = _published([m for m in pit.messages if not m.retain], "bj-1")
    resent = [body for body in again if body["seq"] <= last]
    assert resent == [body for body in first if body["seq"] > last - 20]
    assert len(resent) == 20


async def test_systemd_hears_ready_only_once_the_broker_is_connected(
    tmp_path: Path, mosquitto: Mosquitto
) -> None:
    """While it starts, systemd hears what the daemon does and gives it more time
    (EXTEND_TIMEOUT_USEC); READY=1 after the journal is replayed and the broker connected;
    then STOPPING=1."""
    import socket

    from daemon.system.notify import Notifier

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
    starting = received[: ready[0]]
    assert any(
        "EXTEND_TIMEOUT_USEC=30000000" in m and "STATUS=opening the journal" in m for m in starting
    ), starting
    assert "broker connected" in received[ready[0]]
    # The shoe's link comes up beside the broker's: at READY=1 its state may be any.
    assert re.search(r"1 table, readers 1 [a-z]+;", received[ready[0]])
    assert any("STOPPING=1" in m for m in received[ready[0] :])
