"""The display's model, fed exactly what the daemon publishes for the example rounds."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

import pytest
import structlog

from daemon.display.model import PitModel
from daemon.display.table_model import HISTORY, ROUND_NOTICES, ROUND_SETTLEMENTS
from daemon.display.views import NOTICE_TEXT
from daemon.display.wording import money, settlement_text
from daemon.table.service import TableService
from daemon.table.state import MAX_ROUND_NOTICES
from daemon.wire.availability import Availability, availability_payload
from daemon.wire.envelope import Envelopes
from daemon.wire.topics import Topics
from rules.config import TableConfig
from tests.display.rounds import (
    BASE,
    example,
    expected_settlements,
    played,
    unreadable_card_fault_and_gap,
)

if TYPE_CHECKING:
    from daemon.wire.envelope import Outbound


def _online(model: PitModel, table: str, node: str = "pc-a") -> None:
    model.broker_connected()
    model.apply(f"{BASE}/bridge/{node}/state", b"online")
    model.apply(f"{BASE}/{table}/availability", availability_payload("online", node))


def _fed(messages: list[Outbound], table: str) -> PitModel:
    model = PitModel(BASE)
    _online(model, table)
    for message in messages:
        model.apply(message.topic, message.payload)
    return model


def test_the_issues_example_line_is_what_the_pit_reads() -> None:
    """The payout line: "seat 3 — 20 point bonus, suited 20, 9 to 1: pay $225.00"."""
    settled = {
        "seat": 3,
        "hand": None,
        "wager": "twenty_point_bonus",
        "outcome": "suited_20",
        "result": "win",
        "odds": "9 to 1",
        "stake": "25.00",
        "won": "225.00",
    }
    assert settlement_text(settled) == "seat 3 — 20 point bonus, suited 20, 9 to 1: pay $225.00"
    assert settlement_text(settled | {"result": "lose", "odds": None, "won": "0.00"}) == (
        "seat 3 — 20 point bonus, suited 20: collect $25.00"
    )
    assert money("1250.00") == "$1,250.00"
    assert money("-5.00") == "-$5.00"


@pytest.mark.parametrize(
    "name",
    [
        "blackjack-queen-of-hearts.jsonl",
        "double-attack-three-eights.jsonl",
        "triple-attack-dealer-22.jsonl",
    ],
)
def test_every_settlement_in_the_rules_order_with_its_amount(name: str) -> None:
    messages = played(name)
    table = json.loads(messages[0].payload)["table"]
    view = _fed(messages, table).view(table)
    expected = [settlement_text(s) for s in expected_settlements(name)]
    assert [s["text"] for s in view["settlements"]] == expected
    assert view["live"] is True
    # The retained snapshot alone (a page opened after the round) shows the same.
    last_snapshot = [m for m in messages if m.topic.endswith("/round")][-1]
    late = _fed([last_snapshot], table).view(table)
    assert [s["text"] for s in late["settlements"]] == expected
    # And the settlement messages alone, without a snapshot, too.
    only_settlements = [m for m in messages if m.topic.endswith("/settlement")]
    assert [s["text"] for s in _fed(only_settlements, table).view(table)["settlements"]] == (
        expected
    )


def test_a_floorperson_notice_stands_out_in_words() -> None:
    view = _fed(played("blackjack-queen-of-hearts.jsonl"), "bj-1").view("bj-1")
    [alert] = [a for a in view["alerts"] if a["class"] == "floor"]
    assert alert["label"] == "FLOORPERSON"
    assert "queen of hearts pair" in alert["text"]
    [flagged] = [s for s in view["settlements"] if s["floorperson"]]
    assert flagged["text"] == (
        "seat 1 — 20 point bonus, queen of hearts pair, 125 to 1: pay $1,250.00"
    )


def test_repeats_change_nothing() -> None:
    """QoS 1 may deliver a message twice; the display counts it once."""
    messages = played("triple-attack-dealer-22.jsonl")
    once = _fed(messages, "ta-1")
    twice = _fed(messages + messages, "ta-1")
    assert twice.view("ta-1") == once.view("ta-1")


def test_the_hole_card_is_in_no_view_before_its_reveal() -> None:
    """The round's hole card (QC, unique in it) is face down until `hole_card_revealed`."""
    messages = played("triple-attack-dealer-22.jsonl")
    model = PitModel(BASE)
    _online(model, "ta-1")
    revealed = False
    for message in messages:
        model.apply(message.topic, message.payload)
        revealed = revealed or message.topic.endswith("/event/hole_card_revealed")
        shown = json.dumps([model.view("ta-1"), model.history("ta-1")])
        assert revealed or "QC" not in shown, message.topic
    assert revealed
    assert "QC" in json.dumps(model.view("ta-1"))  # and shown once it is face up


def test_a_table_is_live_only_while_its_daemon_and_the_display_are_connected() -> None:
    model = _fed(played("double-attack-three-eights.jsonl"), "da-1")
    assert model.view("da-1")["live"] is True
    model.apply(f"{BASE}/bridge/pc-a/state", b"offline")  # the daemon's will
    view = model.view("da-1")
    assert (view["live"], view["availability"]) == (False, "daemon pc-a is gone")
    assert view["alerts"][0] == {
        "class": "offline",
        "label": "OFFLINE",
        "text": "daemon pc-a is gone",
    }
    model.apply(f"{BASE}/bridge/pc-a/state", b"online")
    model.broker_lost()
    assert model.view("da-1")["availability"] == "the display has lost the broker"
    model.broker_connected()  # availability is learnt again from the retained messages
    assert model.view("da-1")["live"] is False
    model.apply(f"{BASE}/bridge/pc-a/state", b"online")
    model.apply(f"{BASE}/da-1/availability", availability_payload("online", "pc-a"))
    assert model.view("da-1")["live"] is True


def test_a_table_two_daemons_claim_is_contested_with_both_named() -> None:
    model = _fed(played("double-attack-three-eights.jsonl"), "da-1")
    model.apply(f"{BASE}/bridge/pc-b/state", b"online")
    model.apply(f"{BASE}/da-1/availability", Availability("conflict", "pc-a", ("pc-b",)).payload())
    view = model.view("da-1")
    assert (view["live"], view["contested"]) == (False, ["pc-a", "pc-b"])
    assert view["alerts"][0] == {
        "class": "contested",
        "label": "CONTESTED",
        "text": "claimed by two daemons at once: pc-a and pc-b",
    }
    assert all(alert["label"] != "OFFLINE" for alert in view["alerts"])
    for node in ("pc-a", "pc-b"):  # both gone: nobody serves it
        model.apply(f"{BASE}/bridge/{node}/state", b"offline")
    view = model.view("da-1")
    assert (view["contested"], view["alerts"][0]["label"]) == (None, "OFFLINE")
    assert view["availability"] == "daemons pc-a and pc-b are gone"


def test_finished_rounds_go_to_the_history_newest_first() -> None:
    first = played("blackjack-queen-of-hearts.jsonl")
    model = _fed(first, "bj-1")
    rounds = json.loads([m for m in first if m.topic.endswith("/round")][-1].payload)
    next_round = {**rounds, "id": "f" * 32, "seq": 10_000, "round": {**rounds["round"]}}
    next_round["round"]["id"] = rounds["round"]["id"] + 1
    next_round["settlements"], next_round["notices"] = [], []
    model.apply(f"{BASE}/bj-1/round", json.dumps(next_round).encode())
    view = model.view("bj-1")
    assert (view["settlements"], view["history"]) == ([], 1)
    [past] = model.history("bj-1")
    assert past["round"] == rounds["round"]["id"]
    assert [s["text"] for s in past["settlements"]] == [
        settlement_text(s) for s in expected_settlements("blackjack-queen-of-hearts.jsonl")
    ]
    assert HISTORY >= 5


def test_changes_are_versioned_per_table() -> None:
    model = PitModel(BASE)
    _online(model, "bj-1")
    seen = model.version
    for message in played("double-attack-three-eights.jsonl")[:3]:
        model.apply(message.topic, message.payload)
    assert model.changed_since(seen) == ["da-1"]
    assert model.changed_since(model.version) == []


def test_a_daemons_bridge_info_is_no_table() -> None:
    """`bridge/<node>/info` sits beside the bridge state; the pit shows no table "bridge"."""
    model = _fed(played("double-attack-three-eights.jsonl"), "da-1")
    info = b'{"version":"0.1.0","node":"pc-a","tables":["da-1"],"started":null}'
    assert model.apply(f"{BASE}/bridge/pc-a/info", info) is False
    assert list(model.tables) == ["da-1"]
    assert model.view("da-1")["live"] is True


def test_garbage_changes_nothing() -> None:
    model = PitModel(BASE)
    assert model.apply(f"{BASE}/bj-1/round", b"\xff not json") is False
    assert model.apply("elsewhere/bj-1/round", b"{}") is False
    assert model.apply(f"{BASE}/bj-1/request/wager", b"{}") is False


def test_what_a_person_must_act_on_stands_out_in_words() -> None:
    """An unreadable card awaiting entry, a reader fault, a round flagged for review and
    holding its cards for the dealer."""
    messages = unreadable_card_fault_and_gap("triple-attack-dealer-22.jsonl", 12)  # mid-deal
    model = _fed(messages, "ta-1")
    alerts = {a["label"]: a["text"] for a in model.view("ta-1")["alerts"]}
    assert alerts["ENTER CARD"] == "1 unreadable card is waiting: enter at the dealer console"
    assert alerts["READER FAULT"] == "jam (code 3)"
    assert alerts["REVIEW"] == "this round: frames lost"
    assert alerts["HOLD"] == (
        "cards wait for the dealer console (frames lost): no card held yet; "
        "enter any missed card, then confirm, or void the round"
    )
    assert all(a["class"] in {"entry", "fault", "review"} for a in model.view("ta-1")["alerts"])


def test_a_journal_that_cannot_be_written_stands_out_until_it_can() -> None:
    """The daemon's `<table>/journal` state, as the pit sees it."""
    model = _fed(played("triple-attack-dealer-22.jsonl")[:5], "ta-1")
    failing = {"state": "failing", "reason": "the disk is full", "since": "t", "node": "pc-a"}
    assert model.apply(f"{BASE}/ta-1/journal", json.dumps(failing).encode())
    alerts = {a["label"]: a["text"] for a in model.view("ta-1")["alerts"]}
    assert alerts["JOURNAL"].startswith("the disk is full: the table waits")
    assert model.apply(f"{BASE}/ta-1/journal", b'{"state": "ok", "node": "pc-a"}')
    assert "JOURNAL" not in {a["label"] for a in model.view("ta-1")["alerts"]}


def test_a_card_waiting_for_the_console_and_a_card_held_for_a_doubt_stand_out() -> None:
    """The pit sees why a table's round stopped: a card waits for a declaration from the
    dealer console (docs/mqtt.md, the console's contract), or is held for a supervisor."""
    from tests.daemon.tables import drawn, make_service, request

    def table() -> TableService:
        service = make_service(id="bj-1")
        service.topics = Topics(BASE)
        return service

    service = table()
    request(service, "wager", seat=2, kind="blackjack", amount="25")
    waiting = drawn(service, "10C")  # "No more bets" not yet called
    [alert] = [a for a in _fed(waiting, "bj-1").alerts("bj-1") if a["label"] == "WAITING"]
    assert alert["text"] == "a card waits for no more bets from the dealer console"
    held = drawn(table(), "10C")  # no round open at all: a doubt
    [alert] = [a for a in _fed(held, "bj-1").alerts("bj-1") if a["label"] == "HOLD"]
    assert "a card came before any wager" in alert["text"]
    assert "1 card held" in alert["text"]


def _wager(seat: int) -> bytes:
    return json.dumps({"transaction": f"w{seat}", "seat": seat, "kind": "blackjack",
                       "amount": "25.00"}).encode()  # fmt: skip


def test_a_round_full_of_refused_wagers_keeps_what_the_daemon_keeps() -> None:
    """Wagers at seats the table has not: each a notice of its own. The display keeps the
    latest `ROUND_NOTICES`, which are the daemon's own snapshot's (its MAX_ROUND_NOTICES),
    and each later round it remembers keeps no more."""
    assert ROUND_NOTICES == MAX_ROUND_NOTICES
    table, _, _ = example("blackjack-queen-of-hearts.jsonl")
    settings = {k: v for k, v in table.items() if k not in {"type", "format"}}
    config = TableConfig.from_mapping(settings)
    service = TableService(config, Topics(BASE), Envelopes(config.table_id))
    with structlog.testing.capture_logs():
        messages = service.on_request("wager", _wager(1))
        for seat in range(100, 1100):
            messages += service.on_request("wager", _wager(seat))
        daemon_keeps = service.snapshot()
    model = _fed(messages, "bj-1")
    shown = [n["text"] for n in model.view("bj-1")["notices"]]
    assert shown == [n["message"] for n in json.loads(daemon_keeps.payload)["notices"]]
    assert shown[0] == "seat 1050 blackjack: this table has seats 1 to 7"
    assert len(shown) == ROUND_NOTICES
    model.apply(daemon_keeps.topic, daemon_keeps.payload)  # the snapshot after them: the same
    assert [n["text"] for n in model.view("bj-1")["notices"]] == shown
    # Finished rounds keep no more than the round did.
    for round_id in range(2, 2 + HISTORY + 3):
        body = json.loads(daemon_keeps.payload)
        body["id"], body["round"]["id"] = f"{round_id:032x}", round_id
        model.apply(daemon_keeps.topic, json.dumps(body).encode())
    assert len(model.history("bj-1")) == HISTORY
    assert all(len(past["notices"]) == ROUND_NOTICES for past in model.history("bj-1"))


def test_a_view_is_bounded_whatever_the_broker_sends() -> None:
    """Settlements past any round's count, and a notice of a page of text."""
    model = _fed(played("double-attack-three-eights.jsonl")[:3], "da-1")
    round_id = model.tables["da-1"].round_id
    for n in range(ROUND_SETTLEMENTS + 50):
        settled = {"id": f"s{n}", "round": round_id, "seat": n, "hand": None, "wager": "x"}
        model.apply(f"{BASE}/da-1/settlement", json.dumps(settled).encode())
    notice = {"id": "n", "round": round_id, "kind": "x", "message": "y" * 10_000}
    model.apply(f"{BASE}/da-1/notice/x", json.dumps(notice).encode())
    view = model.view("da-1")
    assert [s["seat"] for s in view["settlements"]] == list(range(ROUND_SETTLEMENTS))
    shown = [n["text"] for n in view["notices"] + view["table_notices"]]
    assert shown == ["y" * (NOTICE_TEXT - 1) + "…"]
