"""The request a dealer console sends for a table event is the one docs/mqtt.md shows, and
the table service applies exactly that event."""

from __future__ import annotations

import pytest

from daemon.wire.console import console_request
from rules.cards import Card
from rules.events import (
    DealCard,
    PlaceWager,
    PlayerAction,
    Shuffle,
    TableEvent,
    VoidRound,
    WithdrawWager,
)
from rules.games import Action, WagerKind
from tests.daemon.tables import bodies, make_service, request, response

# The request table of docs/mqtt.md, written out by hand: the oracle.
DOCUMENTED: list[tuple[TableEvent, str, dict[str, object]]] = [
    (
        PlaceWager(3, WagerKind.TWENTY_POINT_BONUS, 2500),
        "wager",
        {"seat": 3, "kind": "twenty_point_bonus", "amount": "25.00"},
    ),
    (
        WithdrawWager(3, WagerKind.TWENTY_POINT_BONUS),
        "withdraw",
        {"seat": 3, "kind": "twenty_point_bonus"},
    ),
    (PlayerAction(Action.STAND, 3, 1), "action", {"seat": 3, "action": "stand", "hand": 1}),
    (VoidRound("misdeal"), "void", {"reason": "misdeal"}),
    (Shuffle(), "shuffle", {}),
]


@pytest.mark.parametrize(("event", "command", "body"), DOCUMENTED)
def test_each_event_becomes_the_documented_request(
    event: TableEvent, command: str, body: dict[str, object]
) -> None:
    assert console_request(event) == (command, body)


def test_the_table_accepts_the_wager_the_console_asked_for() -> None:
    command, body = console_request(PlaceWager(1, WagerKind.BLACKJACK, 2500))
    out = request(make_service(), command, **body)
    [accepted] = bodies(out, "/event/wager_accepted")
    assert (accepted["seat"], accepted["wager"], accepted["amount"]) == (1, "blackjack", "25.00")
    assert response(out)["status"] == "ok"


def test_a_card_is_dealt_by_the_shoe_not_requested() -> None:
    with pytest.raises(TypeError, match="comes from the shoe"):
        console_request(DealCard(Card.parse("QH")))
