"""What the console page is sent (daemon/dealer_console/view.py): the pit's words, each doubt
with what to do, and never a face-down card."""

from __future__ import annotations

import json

from daemon.dealer_console.contract import Contract
from daemon.dealer_console.view import ALERT_ADVICE, setup, state
from daemon.display.model import PitModel
from rules.config import TableConfig
from tests.console.table import blackjack

SNAPSHOT = {
    "seq": 30,
    "game": "blackjack",
    "round": {
        "id": 4,
        "stage": "dealing",
        "betting_open": False,
        "turn": None,
        "dealer": {"cards": ["7S", None], "total": 7, "hole_revealed": False},
        "seats": [{"seat": 1, "wagers": {"blackjack": "25.00"}, "hands": []}],
    },
    "review": ["sequence_gap"],
    "awaiting_card_entry": 1,
    "doubt": "card_before_round",
    "cards_held": 2,
    "awaiting": None,
    "settlements": [],
    "notices": [],
}


def test_every_doubt_says_what_to_do_and_the_hole_card_stays_a_null() -> None:
    model = PitModel(only_table="bj-1")
    model.broker_connected()
    model.apply("shoe2mqtt/bj-1/round", json.dumps(SNAPSHOT).encode())
    contract = Contract("c")
    contract.heard(SNAPSHOT)
    contract.request("action", {"seat": 1, "action": "hit"}, "ann")
    now = state(model, "bj-1", contract, linked=True)
    assert now["table"] is not None
    alerts = now["table"]["alerts"]
    assert {a["label"] for a in alerts} == {"OFFLINE", "ENTER CARD", "REVIEW"}
    assert all(a["advice"] == ALERT_ADVICE[a["label"]] for a in alerts)
    assert now["doubt"]["text"] == "the table holds 2 cards: a card came before any wager"
    assert now["doubt"]["advice"].startswith("a card came before any wager: if it was dealt")
    assert now["table"]["round"]["dealer"]["cards"] == ["7S", None]
    assert now["wagers"] == {"1": {"blackjack": "25.00"}}
    [waiting] = now["unanswered"]
    assert waiting["what"] == "seat 1 hit"
    assert not waiting["may_again"]  # not before a status
    assert now["seen"] == 30


def test_the_setup_says_each_wager_s_limits_and_window() -> None:
    said = setup(TableConfig.from_mapping(blackjack("bj-1")), (500, 2500, 10000), "ann")
    assert said["chip_names"] == ["$5", "$25", "$100"]
    bonus = said["wagers"][1]
    assert (bonus["name"], bonus["limits"], bonus["requires"]) == (
        "20 point bonus", "$5 to $100", "blackjack",
    )  # fmt: skip
    assert bonus["window"] == (
        "from the round's start, until No more bets before the players' first cards"
    )
    assert said["actions"] == ["hit", "stand", "double", "split", "surrender"]
