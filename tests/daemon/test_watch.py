"""The live view's model: what a display knows is exactly what the topics told it."""

from __future__ import annotations

import io
import json

from rich.console import Console

from daemon.cli.watch import render
from daemon.display.model import PitModel
from daemon.wire.availability import Availability, availability_payload
from tests.daemon.tables import drawn, make_service, request
from tests.display.rounds import seven_seats_of_triple_attack


def _screen(pit: PitModel) -> str:
    console = Console(file=io.StringIO(), width=120, color_system=None)
    console.print(render(pit))
    out = console.file.getvalue()  # type: ignore[attr-defined]
    assert isinstance(out, str)
    return out


def _round() -> PitModel:
    service = make_service("blackjack", readable_ids=False)
    messages = request(service, "wager", seat=3, kind="blackjack", amount="25")
    messages += request(service, "wager", seat=3, kind="twenty_point_bonus", amount="10")
    messages += request(service, "close_betting")
    messages += drawn(service, "KD 7S KH QC")
    pit = PitModel("casino")
    pit.broker_connected()
    pit.apply("casino/bridge/pc-a/state", b"online")
    pit.apply("casino/bj1/availability", availability_payload("online", "pc-a"))
    for message in messages:
        pit.apply(message.topic, message.payload)
    return pit


def test_the_view_shows_seats_revealed_cards_and_settlements() -> None:
    screen = _screen(_round())
    assert "OFFLINE" not in screen
    assert "bj1" in screen
    assert "KD KH (20)" in screen
    assert "any_20" in screen
    assert "40.00" in screen
    assert "7S ▒▒" in screen  # the hole card is a face-down card on the display too
    assert "QC" not in screen


def test_a_resent_message_is_counted_once() -> None:
    service = make_service("blackjack", readable_ids=False)
    request(service, "wager", seat=1, kind="blackjack", amount="25")
    request(service, "wager", seat=1, kind="twenty_point_bonus", amount="10")
    request(service, "close_betting")
    settled = [m for m in drawn(service, "KD 7S KH QC") if m.topic.endswith("/settlement")]
    pit = PitModel("casino")
    assert pit.apply(settled[0].topic, settled[0].payload) is True
    assert pit.apply(settled[0].topic, settled[0].payload) is False
    assert len(pit.tables["bj1"].settlements) == 1


def test_a_display_for_one_table_ignores_the_others() -> None:
    pit = PitModel("casino", only_table="ta1")
    for message in drawn(make_service("blackjack"), "KD"):
        pit.apply(message.topic, message.payload)
    assert pit.tables == {}


def test_garbage_on_a_topic_does_not_break_the_view() -> None:
    pit = PitModel("casino")
    assert pit.apply("casino/bj1/settlement", b"\xff not json") is False
    assert pit.apply("elsewhere/bj1/settlement", b"{}") is False
    assert "waiting for tables" in _screen(pit)


def test_a_table_is_offline_when_its_daemon_dies_or_stops_it() -> None:
    """The liveness rule (docs/mqtt.md): the table's availability and its node's state."""
    pit = _round()
    pit.apply("casino/bridge/pc-a/state", b"offline")  # the will of a killed daemon
    assert "OFFLINE: daemon pc-a is gone" in _screen(pit)
    pit.apply("casino/bridge/pc-a/state", b"online")
    assert "OFFLINE" not in _screen(pit)
    pit.apply("casino/bj1/availability", availability_payload("offline", "pc-a"))
    assert "OFFLINE: daemon pc-a stopped it" in _screen(pit)
    pit.apply("casino/bj1/availability", availability_payload("online", "pc-b"))
    assert "OFFLINE: daemon pc-b is gone" in _screen(pit)  # pc-b never said online


def test_a_table_two_daemons_claim_is_contested_never_live_nor_offline() -> None:
    """daemon/table/claims.py: both serve it; the title names them, and never says OFFLINE."""
    pit = _round()
    pit.apply("casino/bridge/pc-b/state", b"online")
    conflict = Availability("conflict", "pc-b", ("pc-a",)).payload()
    pit.apply("casino/bj1/availability", conflict)
    screen = _screen(pit)
    assert "CONTESTED: claimed by two daemons at once: pc-a and pc-b" in screen
    assert "OFFLINE" not in screen
    pit.apply("casino/bridge/pc-b/state", b"offline")  # one gone: still contested by pc-a
    assert "CONTESTED" in _screen(pit)
    pit.apply("casino/bj1/availability", availability_payload("online", "pc-a"))
    assert "CONTESTED" not in _screen(pit)


def test_watch_shows_every_settlement_of_the_round_in_the_rules_order() -> None:
    """A defect: `KEEP = 8` dropped the last settlements of a seven-seat round."""
    messages = seven_seats_of_triple_attack(seed=5)
    pit = PitModel("shoe2mqtt")
    for message in messages:
        pit.apply(message.topic, message.payload)
    settled = [json.loads(m.payload) for m in messages if m.topic.endswith("/settlement")]
    assert len(settled) == 21
    rows = [line.strip("│ ").split() for line in _screen(pit).splitlines()]
    shown = [
        (int(row[0]), row[1])
        for row in rows
        if len(row) >= 5 and row[1].endswith("_attack") and not row[2].endswith(",")
    ]
    assert shown == [(s["seat"], s["wager"]) for s in settled]


def test_a_journal_that_cannot_be_written_stands_out() -> None:
    """`<table>/journal`: the pit sees that the table waits for its disk."""
    pit = _round()
    failing = {"state": "failing", "reason": "the disk is full", "since": "…", "node": "pc-a"}
    pit.apply("casino/bj1/journal", json.dumps(failing).encode())
    assert "JOURNAL: the disk is full: the table waits for it" in " ".join(_screen(pit).split())
    pit.apply("casino/bj1/journal", json.dumps({"state": "ok", "node": "pc-a"}).encode())
    assert "JOURNAL" not in _screen(pit)


def test_a_notice_outside_any_round_is_shown() -> None:
    """A card dealt before any wager opened a round is held with a table notice; the view
    shows it, rather than a table that looks idle (a new user's run beside watch)."""
    service = make_service("blackjack", readable_ids=False)
    pit = PitModel("casino")
    pit.broker_connected()
    for message in drawn(service, "KD"):
        pit.apply(message.topic, message.payload)
    assert "card_before_round" in _screen(pit)
