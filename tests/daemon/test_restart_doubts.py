"""What a restart cannot know, the daemon must not guess: the recovery review's findings,
and what each shoe protocol lets a restarted daemon know (docs/durability.md)."""

from __future__ import annotations

import json

from daemon.table.records import event_body
from daemon.table.service import TableService
from daemon.wire.envelope import Envelopes
from daemon.wire.requests import request_record
from daemon.wire.topics import Topics
from drivers.events import CardDrawn, SequenceGap
from tests.rules.tables import make_config

WAGER = b'{"transaction": "w1", "seat": 1, "kind": "blackjack", "amount": "25.00"}'
# A burn card's journal record: the shoe's frame 7, before a restart.
BURNED_AT_7 = {
    "event": "CardDrawn",
    "rank": "9",
    "suit": "C",
    "seq": 7,
    "burned": True,
    "origin": "dealt",
}


def _service() -> TableService:
    return TableService(make_config("blackjack"), Topics(), Envelopes("bj1"))


def test_a_wager_refused_for_a_full_outbox_is_refused_again_in_replay() -> None:
    """The outbox is not table state: the refusal is journaled with the request."""
    record = request_record("wager", WAGER)
    record["outbox_full"] = True
    for service in (_service(), _service()):  # live, then a replay of the same journal
        out = service.apply_body("request", record, "t")
        assert json.loads(out[-1].payload)["error"]["code"] == "outbox_full"
        assert not service.engine.round_open


def test_a_restart_with_a_burn_due_holds_the_cards_of_a_shoe_that_keeps_nothing() -> None:
    """The burn may have gone by unheard: the engine, counting burns, would take the round's
    first card for it. The ENQ family keeps nothing, so the cards wait for the dealer."""
    service = TableService(make_config("blackjack"), Topics(), Envelopes("bj1"), protocol="enq")
    service.apply_body("shoe", {"event": "NewShoe"}, "t")  # then killed; the burn goes by
    out = service.apply_body("start", {"protocol": "enq"}, "t")
    assert "daemon_restarted" in [json.loads(m.payload).get("kind") for m in out]
    assert service.doubt == "daemon_restarted"
    service.apply_body("request", request_record("wager", WAGER), "t")
    card = {
        "event": "CardDrawn",
        "rank": "10",
        "suit": "H",
        "seq": 5,
        "burned": False,
        "origin": "dealt",
    }
    service.apply_body("shoe", card, "t")
    assert service.cards_held == 1
    assert service.engine.burns_due == 1  # not eaten as the burn


def test_a_restart_with_a_burn_due_is_nothing_for_a_shoe_that_keeps_its_frames() -> None:
    service = _service()
    service.apply_body("shoe", {"event": "NewShoe", "seq": 4}, "t")
    started = service.apply_body("start", {}, "t")  # the retained state and snapshot only
    assert [m.topic.rsplit("/", 1)[-1] for m in started] == ["state", "round"]
    assert service.doubt is None


def test_a_sequence_jump_across_a_restart_holds_the_round() -> None:
    service = _service()
    service.apply_body("shoe", BURNED_AT_7, "t")
    service.apply_body("request", request_record("wager", WAGER), "t")
    service.apply_body("start", {}, "t")  # the reference shoe kept what it dealt: no flag
    assert service.review == []
    jumped = CardDrawn("10", "H", seq=11)
    intake = service.judge(jumped)  # judged before anything is journaled (decision D3)
    assert intake.gap == SequenceGap(expected=8, got=11)
    service.apply_body("shoe", event_body(intake.gap), "t")
    service.apply_body("shoe", event_body(jumped), "t")
    assert service.review == ["sequence_gap"]
    assert service.cards_held == 1


def test_the_next_sequence_number_after_a_restart_raises_nothing() -> None:
    service = _service()
    service.apply_body("shoe", BURNED_AT_7, "t")
    service.apply_body("start", {}, "t")
    service.apply_body("request", request_record("wager", WAGER), "t")
    assert service.judge(CardDrawn("10", "H", seq=8)).gap is None
    service.apply_body("shoe", {**BURNED_AT_7, "seq": 8, "burned": False}, "t")
    assert service.review == []


def test_a_frame_the_journal_holds_is_a_repeat_after_a_restart() -> None:
    """Decision D3: committed, then the daemon died before its acknowledgement went out."""
    service = _service()
    service.apply_body("shoe", BURNED_AT_7, "t")
    service.apply_body("start", {}, "t")
    intake = service.judge(CardDrawn("9", "C", seq=7, burned=True))
    assert (intake.take, intake.acknowledge, intake.gap) == (False, 7, None)
