"""The pieces every codec shares: sequence verdicts, counters, the event vocabulary."""

from __future__ import annotations

import pytest

from drivers.codecs.sequence import SequencePolicy, SequenceVerdict
from drivers.events import RANKS, SUITS, CardDrawn


def _verdicts(policy: SequencePolicy, seqs: list[int]) -> list[str]:
    """Each number judged against the one before it, as a receiver that took every frame."""
    last: int | None = None
    verdicts = []
    for seq in seqs:
        verdicts.append(policy.judge(last, seq).value)
        last = seq
    return verdicts


@pytest.mark.parametrize(
    ("modulus", "seqs", "verdicts"),
    [
        (256, [7, 8, 8, 9], ["first", "next", "duplicate", "next"]),
        (256, [255, 0, 1], ["first", "next", "next"]),
        (65536, [65535, 0], ["first", "next"]),
        (256, [7, 9, 8, 8], ["first", "gap", "gap", "duplicate"]),
    ],
)
def test_sequence_verdicts(modulus: int, seqs: list[int], verdicts: list[str]) -> None:
    policy = SequencePolicy(modulus, reports_gaps=True)
    assert _verdicts(policy, seqs) == verdicts
    assert policy.successor(seqs[-1]) == (seqs[-1] + 1) % modulus


def test_a_receiver_holding_nothing_judges_any_number_first() -> None:
    assert SequencePolicy(256, reports_gaps=True).judge(None, 200) is SequenceVerdict.FIRST


def test_card_codes_are_the_rules_core_text_codes() -> None:
    assert CardDrawn(rank="10", suit="S", seq=0).code == "10S"
    assert CardDrawn(rank="Q", suit="H", seq=0).code == "QH"
    assert len(RANKS) == 13
    assert set(SUITS) == {"S", "H", "D", "C"}


def test_a_numbering_not_known_to_count_by_one_sees_duplicates_but_no_gaps() -> None:
    policy = SequencePolicy(256, reports_gaps=False)
    assert _verdicts(policy, [7, 9, 9, 3]) == [
        "first",
        "next",
        "duplicate",
        "next",
    ]
    assert not policy.is_gap(7, 200)
    assert SequencePolicy(256, reports_gaps=True).is_gap(7, 200)
