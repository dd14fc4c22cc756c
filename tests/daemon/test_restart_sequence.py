"""A jump in the shoe's numbers across a daemon restart is judged by the shoe's own codec.

The reference protocol counts every frame up by one, so a jump means frames went by unheard;
the ENQ family's number is not known to count by one (docs/protocol.md §2.2), so there a
jump proves nothing and must not send a round to review.
"""

from __future__ import annotations

import pytest

from daemon.envelope import Envelopes
from daemon.table_service import TableService
from daemon.topics import Topics
from drivers.events import CardDrawn
from drivers.registry import sequence_policy
from tests.rules.tables import make_config

WAGER = b'{"transaction": "w1", "seat": 1, "kind": "blackjack", "amount": "25.00"}'


def _restart_between_two_cards(protocol: str, before: int, after: int) -> list[str]:
    """The round's review after: a burn card, a wager, a restart, the first card dealt."""
    service = TableService(
        make_config("blackjack"), Topics(), Envelopes("bj1"), sequence=sequence_policy(protocol)
    )
    service.on_shoe_event(CardDrawn("9", "C", seq=before, burned=True), seen_at="t")
    service.on_request("wager", WAGER)
    service.on_start()
    service.on_shoe_event(CardDrawn("10", "H", seq=after), seen_at="t")
    return service.review


@pytest.mark.parametrize(("before", "after"), [(7, 11), (0x31, 0x30), (200, 3)])
def test_an_enq_round_is_not_flagged_for_a_jump_in_the_number(before: int, after: int) -> None:
    assert _restart_between_two_cards("enq", before, after) == ["daemon_restarted"]


@pytest.mark.parametrize(("before", "after"), [(7, 11), (255, 0), (65535, 1)])
def test_a_reference_round_is_flagged_for_a_jump_in_the_number(before: int, after: int) -> None:
    review = _restart_between_two_cards("reference", before, after)
    assert review == ["daemon_restarted", "sequence_gap"]


@pytest.mark.parametrize(
    ("protocol", "before", "after"),
    [("reference", 7, 8), ("reference", 65535, 0), ("enq", 7, 8), ("enq", 255, 0)],
)
def test_the_next_number_is_never_flagged(protocol: str, before: int, after: int) -> None:
    assert _restart_between_two_cards(protocol, before, after) == ["daemon_restarted"]
