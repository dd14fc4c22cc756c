"""What a table makes of a restart of the daemon between two cards, judged by the shoe's own
protocol (docs/protocol.md §1.4, §2.2; docs/rules.md, decision 13).

The reference protocol's shoe keeps what it dealt while the daemon was away and numbers its
frames up by one: the first frame after the restart says whether anything is missing, and
only a jump holds the round. An ENQ-family shoe keeps nothing and its number is not known to
count by one: a restart with a round open may have lost a card, whatever the number says,
so the round is held for the dealer.

The protocol is the one the journaled `start` event names (decision D4): a replay that
builds its table service without knowing the table's shoe (`journal show`, the recovery
harness) judges exactly as the live daemon did.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pytest

from drivers.events import CardDrawn
from tests.daemon.tables import SEEN, make_service, request, take

if TYPE_CHECKING:
    from daemon.table.service import TableService


def _restart_between_two_cards(protocol: str, before: int, after: int) -> TableService:
    """A burn card, a wager and "No more bets", a restart, the first card dealt after it."""
    service = make_service()  # the protocol comes with the start event, as journaled (D4)
    take(service, CardDrawn("9", "C", seq=before, burned=True))
    request(service, "wager", seat=1, kind="blackjack", amount="25.00")
    request(service, "close_betting")
    service.apply_body("start", {"protocol": protocol}, SEEN)
    take(service, CardDrawn("10", "H", seq=after))
    return service


@pytest.mark.parametrize(("before", "after"), [(7, 11), (0x31, 0x30), (200, 3), (7, 8)])
def test_an_enq_round_open_at_a_restart_is_held_whatever_the_number(
    before: int, after: int
) -> None:
    service = _restart_between_two_cards("enq", before, after)
    assert service.review == ["daemon_restarted"]
    assert (service.doubt, service.cards_held) == ("daemon_restarted", 1)


@pytest.mark.parametrize(("before", "after"), [(7, 11), (255, 0), (65535, 1)])
def test_a_reference_round_is_held_for_a_jump_in_the_number(before: int, after: int) -> None:
    service = _restart_between_two_cards("reference", before, after)
    assert service.review == ["sequence_gap"]
    assert (service.doubt, service.cards_held) == ("sequence_gap", 1)


@pytest.mark.parametrize(("before", "after"), [(7, 8), (65535, 0)])
def test_a_reference_round_going_on_with_the_next_number_needs_no_review(
    before: int, after: int
) -> None:
    service = _restart_between_two_cards("reference", before, after)
    assert (service.review, service.doubt, service.cards_held) == ([], None, 0)
