"""A journal replays under the contract it was written under (decision D4): a table whose
starts say contract 2 waits for the console's declarations as it did when it was played."""

from __future__ import annotations

import json

import pytest

from tests.daemon.tables import SEEN, drawn, make_service


def _wager_then_a_card(contract: int) -> tuple[int, list[str]]:
    """A start under `contract`, a wager (the round opens, betting open), then a card from
    the shoe before "no more bets": the cards held, and the topics published."""
    service = make_service()
    service.apply_body("start", {"protocol": "reference", "contract": contract}, SEEN)
    wager = {
        "command": "wager",
        "payload": json.dumps({"seat": 1, "kind": "blackjack", "amount": "25"}),
    }
    service.apply_body("request", wager, SEEN)
    out = drawn(service, "AS")
    return service.cards_held, [m.topic.split("/", 2)[2] for m in out if m.seq]


@pytest.mark.parametrize("contract", [2, 3, 4])
def test_a_card_before_no_more_bets_waits_under_every_contract_with_declarations(
    contract: int,
) -> None:
    held, topics = _wager_then_a_card(contract)
    assert held == 1
    assert "event/card_dealt" not in topics


def test_under_contract_1_a_card_is_placed_as_it_comes() -> None:
    held, _topics = _wager_then_a_card(1)
    assert held == 0
