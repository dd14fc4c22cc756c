"""What a restart cannot know, the daemon must not guess: the recovery review's two findings."""

from __future__ import annotations

import json

from daemon.envelope import Envelopes
from daemon.table_service import TableService, request_record
from daemon.topics import Topics
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
        out = service.apply_record("request", record, "t")
        assert json.loads(out[-1].payload)["error"]["code"] == "outbox_full"
        assert not service.engine.round_open


def test_a_burn_card_lost_while_the_daemon_was_down_flags_the_round() -> None:
    service = _service()
    service.apply_record("shoe", {"event": "NewShoe"}, "t")  # then killed; the burn goes by
    service.apply_record("start", {}, "t")
    service.apply_record("request", request_record("wager", WAGER), "t")
    card = {
        "event": "CardDrawn",
        "rank": "10",
        "suit": "H",
        "seq": 5,
        "burned": False,
        "origin": "dealt",
    }
    out = service.apply_record("shoe", card, "t")
    assert "sequence_gap" in [json.loads(m.payload).get("kind") for m in out]
    assert service.review == ["sequence_gap"]


def test_a_sequence_jump_across_a_restart_flags_the_round() -> None:
    service = _service()
    service.apply_record("shoe", BURNED_AT_7, "t")
    service.apply_record("request", request_record("wager", WAGER), "t")
    service.apply_record("start", {}, "t")  # the round was open: daemon_restarted
    jumped = {**BURNED_AT_7, "seq": 11, "burned": False}
    service.apply_record("shoe", jumped, "t")
    assert service.review == ["daemon_restarted", "sequence_gap"]


def test_the_next_sequence_number_after_a_restart_raises_nothing() -> None:
    service = _service()
    service.apply_record("shoe", BURNED_AT_7, "t")
    service.apply_record("start", {}, "t")
    service.apply_record("request", request_record("wager", WAGER), "t")
    service.apply_record("shoe", {**BURNED_AT_7, "seq": 8, "burned": False}, "t")
    assert service.review == []
