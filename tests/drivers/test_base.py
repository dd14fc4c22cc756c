"""The pieces every codec shares: sequence tracking, counters, the event vocabulary."""

from __future__ import annotations

import pytest

from drivers.codecs.sequence import SequencePolicy, SequenceTracker, SequenceVerdict
from drivers.events import RANKS, SUITS, CardDrawn


@pytest.mark.parametrize(
    ("modulus", "seqs", "verdicts"),
    [
        (256, [7, 8, 8, 9], ["first", "next", "duplicate", "next"]),
        (256, [255, 0, 1], ["first", "next", "next"]),
        (65536, [65535, 0], ["first", "next"]),
        (256, [7, 9, 8, 8], ["first", "gap", "gap", "duplicate"]),
    ],
)
def test_sequence_tracker_verdicts(modulus: int, seqs: list[int], verdicts: list[str]) -> None:
    tracker = SequenceTracker(SequencePolicy(modulus, reports_gaps=True))
    assert [tracker.observe(s).value for s in seqs] == verdicts
    assert tracker.last == seqs[-1]
    assert tracker.expected == (seqs[-1] + 1) % modulus


def test_a_new_tracker_expects_nothing() -> None:
    tracker = SequenceTracker(SequencePolicy(256, reports_gaps=True))
    assert (tracker.last, tracker.expected) == (None, None)
    assert tracker.observe(200) is SequenceVerdict.FIRST


def test_card_codes_are_the_rules_core_text_codes() -> None:
    assert CardDrawn(rank="10", suit="S", seq=0).code == "10S"
    assert CardDrawn(rank="Q", suit="H", seq=0).code == "QH"
    assert len(RANKS) == 13
    assert set(SUITS) == {"S", "H", "D", "C"}


def test_a_numbering_not_known_to_count_by_one_sees_duplicates_but_no_gaps() -> None:
    policy = SequencePolicy(256, reports_gaps=False)
    tracker = SequenceTracker(policy)
    assert [tracker.observe(s).value for s in [7, 9, 9, 3]] == [
        "first",
        "next",
        "duplicate",
        "next",
    ]
    assert not policy.is_gap(7, 200)
    assert SequencePolicy(256, reports_gaps=True).is_gap(7, 200)
