"""The census of a shoe, held against counts made here from the card text alone."""

from __future__ import annotations

import random
from collections import Counter

from hypothesis import given
from hypothesis import strategies as st

from rules.cards import Card, DeckKind, deck
from rules.census import ShoeCensus

RANKS = ("A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K")
SUITS = ("S", "H", "D", "C")


def _holds(text: str, decks: int, kind: DeckKind) -> int:
    """Written from the definition: a Spanish deck is a standard one without its four 10s."""
    rank = text[:-1]
    return 0 if kind is DeckKind.SPANISH and rank == "10" else decks


@st.composite
def shoes(draw: st.DrawFn) -> tuple[int, DeckKind, list[Card]]:
    """A shoe's cards in a shuffled order, cut somewhere, with any cards slipped in."""
    decks = draw(st.integers(1, 8))
    kind = draw(st.sampled_from(DeckKind))
    cards = [card for _ in range(decks) for card in deck(kind)]
    random.Random(draw(st.integers(0, 2**32))).shuffle(cards)  # noqa: S311 - a test's shuffle
    dealt = cards[: draw(st.integers(0, len(cards)))]
    extra = draw(st.lists(st.sampled_from([r + s for r in RANKS for s in SUITS]), max_size=6))
    for text in extra:
        dealt.insert(draw(st.integers(0, len(dealt))), Card.parse(text))
    return decks, kind, dealt


@given(shoes())
def test_the_census_keeps_apart_every_card_beyond_what_the_shoe_holds(
    shoe: tuple[int, DeckKind, list[Card]],
) -> None:
    decks, kind, dealt = shoe
    census = ShoeCensus(decks, kind)
    census.shuffled(1)
    foreign: list[str] = []
    for card in dealt:
        reason = census.judge(card)
        if reason is None:
            census.seen_card(card)
        else:
            census.foreign_card(card)
            foreign.append(str(card))
    texts = [str(card) for card in dealt]
    counts = Counter(texts)
    # Each card's copies past what the shoe holds are the foreign ones: the last to come.
    expected: list[str] = []
    given_so_far: Counter[str] = Counter()
    for text in texts:
        given_so_far[text] += 1
        if given_so_far[text] > _holds(text, decks, kind):
            expected.append(text)
    assert foreign == expected
    summary = census.summary()
    assert summary.cards_seen == len(texts) - len(expected)
    assert summary.cards_left == decks * (48 if kind is DeckKind.SPANISH else 52) - (
        len(texts) - len(expected)
    )
    by_rank = {rank: sum(n for t, n in counts.items() if t[:-1] == rank) for rank in RANKS}
    assert summary.by_rank == by_rank
    assert summary.by_suit == {
        suit: sum(n for t, n in counts.items() if t[-1] == suit) for suit in SUITS
    }
    impossible = {i.what for i in summary.impossible}
    over = {t for t, n in counts.items() if n > _holds(t, decks, kind)}
    assert impossible - set(RANKS) - set(SUITS) == over
    ranks_over = {r for r, n in by_rank.items() if n > 4 * _holds(r + "S", decks, kind)}
    assert impossible & set(RANKS) == ranks_over


def test_a_shoe_not_seen_from_its_shuffle_is_judged_by_its_deck_kind_only() -> None:
    census = ShoeCensus(1, DeckKind.SPANISH)  # the daemon started mid-shoe
    queen = Card.parse("QH")
    census.seen_card(queen)
    assert census.judge(queen) is None  # how many it gave since its shuffle is unknown
    assert census.judge(Card.parse("10H")) == "not_in_deck_kind"
    assert not census.summary().complete


def test_early_burns_belong_to_the_shoe_whose_shuffle_follows_them() -> None:
    census = ShoeCensus(1, DeckKind.STANDARD)
    census.shuffled(1)
    census.seen_card(Card.parse("QH"))
    census.seen_card(Card.parse("QH"), early_burn=True)  # the next shoe's burn, come first
    ended = census.shuffled(2)
    assert (ended.shoe, ended.by_rank["Q"], ended.impossible) == (1, 1, ())
    assert census.seen == Counter({Card.parse("QH"): 1})


def test_the_census_state_round_trips() -> None:
    census = ShoeCensus(2, DeckKind.STANDARD)
    census.shuffled(3)
    census.seen_card(Card.parse("10S"))
    census.foreign_card(Card.parse("AH"))
    census.seen_card(Card.parse("2C"), early_burn=True)
    again = ShoeCensus.from_state(2, DeckKind.STANDARD, census.state())
    assert again == census
