"""The table every security test plays: blackjack with a hole-card reader, so the dealer's
second card is dealt face down and must stay off every topic and log line until its reveal."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Final

from daemon.table.service import TableService
from daemon.wire.envelope import Envelopes
from daemon.wire.topics import Topics
from drivers import events as shoe
from rules.config import TableConfig

if TYPE_CHECKING:
    from daemon.wire.envelope import Outbound

TABLE: Final = "bj-1"
HOLE: Final = "JD"  # the dealer's hole card in `table_mid_round`: dealt to nobody else
# Seat 1: 9S 4H; seat 3: 8C 5C; dealer: 7S up, the hole card down. Play is at seat 1.
DEAL: Final = ("9S", "8C", "7S", "4H", "5C", HOLE)


def hole_card_table(table_id: str = TABLE) -> dict[str, Any]:
    """The table's settings, as its `[[table]]` in the daemon's file gives them."""
    return {
        "id": table_id,
        "game": "blackjack",
        "decks": 6,
        "seats": 7,
        "paytable": "A",
        "hole_card_reader": True,
        "limits": {
            "blackjack": {"min": "10", "max": "1000"},
            "twenty_point_bonus": {"min": "5", "max": "100"},
        },
    }


CONFIG: Final = TableConfig.from_mapping(hole_card_table())


def _drawn(service: TableService, code: str, seq: int) -> list[Outbound]:
    event = shoe.CardDrawn(code[:-1], code[-1], seq)  # type: ignore[arg-type]
    return service.on_shoe_event(event, seen_at="2026-11-29T14:00:00.000Z")


def table_mid_round(*, hole_unreadable: bool) -> TableService:
    """The table service mid-round: seats 1 and 3 dealt, the hole card face down (or, with
    `hole_unreadable`, unreadable and waiting to be entered by hand)."""
    service = TableService(
        CONFIG,
        Topics("shoe2mqtt"),
        Envelopes(TABLE, clock=lambda: datetime(2026, 11, 29, 14, 0, tzinfo=UTC)),
    )
    for seat in (1, 3):
        for kind, amount in (("blackjack", "25.00"), ("twenty_point_bonus", "5.00")):
            body = {"seat": seat, "kind": kind, "amount": amount}
            service.on_request("wager", json.dumps(body).encode())
    service.on_request("close_betting", b"{}")
    for seq, code in enumerate(DEAL[:-1], start=1):
        _drawn(service, code, seq)
    if hole_unreadable:
        service.on_shoe_event(shoe.CardUnreadable(seq=len(DEAL)), seen_at="now")
        assert service.awaiting_entry == 1
    else:
        _drawn(service, HOLE, len(DEAL))
    round_ = service.engine.public_view()["round"]
    assert round_["stage"] == ("dealing" if hole_unreadable else "playing"), round_
    assert not round_["dealer"]["hole_revealed"]
    return service
