"""Cards, decks, shoes and hand totals (docs/procedures.md, "Words")."""

from __future__ import annotations

import copy
import dataclasses
import pickle

import pytest

from rules.cards import (
    QUEEN_OF_HEARTS,
    Card,
    Colour,
    DeckKind,
    Rank,
    Suit,
    deck,
    shoe_composition,
)
from rules.errors import CardParseError
from rules.hands import HandValue, hand_value, is_blackjack
from tests.rules.tables import card


@pytest.mark.parametrize(
    ("text", "rank", "suit"),
    [
        ("QH", Rank.QUEEN, Suit.HEARTS),
        ("qh", Rank.QUEEN, Suit.HEARTS),
        (" Qh ", Rank.QUEEN, Suit.HEARTS),
        ("10S", Rank.TEN, Suit.SPADES),
        ("TS", Rank.TEN, Suit.SPADES),
        ("ts", Rank.TEN, Suit.SPADES),
        ("AD", Rank.ACE, Suit.DIAMONDS),
        ("2C", Rank.TWO, Suit.CLUBS),
        ("9c", Rank.NINE, Suit.CLUBS),
        ("JD", Rank.JACK, Suit.DIAMONDS),
        ("KS", Rank.KING, Suit.SPADES),
    ],
)
def test_card_parse(text: str, rank: Rank, suit: Suit) -> None:
    assert Card.parse(text) == Card(rank, suit)


def test_a_card_read_is_the_one_instance_of_that_card() -> None:
    """A card is a value: however it is written and however often it is read (a shoe's
    frame, a journal's replay), reading it gives the one instance of that card, so a floor's
    tables hold 52 cards and not one object for each card dealt, each one more for Python's
    cycle collector to walk."""
    assert Card.parse("QH") is Card.parse(" qh ") is QUEEN_OF_HEARTS
    assert Card.parse("10s") is Card.parse("TS")
    read = [Card.parse(str(c)) for kind in DeckKind for c in deck(kind)]
    assert len({id(c) for c in read}) == len(set(read)) == 52


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "a card is a rank"),
        ("Q", "a card is a rank"),
        ("QX", "unknown suit"),
        ("1S", "unknown rank"),
        ("11S", "unknown rank"),
        ("0H", "unknown rank"),
        ("ZZ", "unknown suit"),
        ("1OS", "unknown rank"),
        ("Q H", "unknown rank"),
    ],
)
def test_card_parse_rejects_bad_text(text: str, message: str) -> None:
    with pytest.raises(CardParseError, match=message) as caught:
        Card.parse(text)
    assert caught.value.text == text
    assert caught.value.code == "invalid_card"


@pytest.mark.parametrize("text", ["QH", "10S", "AD", "2C", "KS", "JD"])
def test_card_text_round_trips(text: str) -> None:
    assert str(Card.parse(text)) == text


@pytest.mark.parametrize("rank", list(Rank))
@pytest.mark.parametrize("suit", list(Suit))
def test_every_card_prints_as_its_rank_and_suit(rank: Rank, suit: Suit) -> None:
    """Made directly or parsed, a card's text is its rank's then its suit's, and equal cards
    are equal whatever text they were made from."""
    card = Card(rank, suit)
    assert str(card) == rank.value + suit.value
    assert Card.parse(str(card)) == card
    assert hash(Card.parse(str(card))) == hash(card)


def test_a_card_copied_pickled_or_replaced_keeps_its_text() -> None:
    """Its text is made with the card (a field outside its equality and hash): a copy, a
    pickle (a simulation's worker process) and a replaced card each print as they are."""
    card = Card.parse("QH")
    for again in (copy.copy(card), copy.deepcopy(card), pickle.loads(pickle.dumps(card))):  # noqa: S301 - our own bytes
        assert (again, str(again), hash(again)) == (card, "QH", hash(card))
    assert str(dataclasses.replace(card, suit=Suit.SPADES)) == "QS"


def test_ts_prints_as_10s() -> None:
    assert str(Card.parse("TS")) == "10S"


@pytest.mark.parametrize(
    ("text", "points", "ten_value"),
    [
        ("AS", 1, False),
        ("2S", 2, False),
        ("9S", 9, False),
        ("10S", 10, True),
        ("JS", 10, True),
        ("QS", 10, True),
        ("KS", 10, True),
    ],
)
def test_points_and_ten_value(text: str, points: int, ten_value: bool) -> None:  # noqa: FBT001 - parametrized
    assert card(text).points == points
    assert card(text).rank.is_ten_value is ten_value


def test_colours() -> None:
    assert card("QH").colour is Colour.RED
    assert card("QD").colour is Colour.RED
    assert card("QS").colour is Colour.BLACK
    assert card("QC").colour is Colour.BLACK


def test_queen_of_hearts_constant() -> None:
    assert Card.parse("QH") == QUEEN_OF_HEARTS
    assert Card.parse("QD") != QUEEN_OF_HEARTS


def test_standard_deck_has_52_distinct_cards() -> None:
    cards = deck(DeckKind.STANDARD)
    assert len(cards) == 52 == DeckKind.STANDARD.size
    assert len(set(cards)) == 52
    assert sum(1 for c in cards if c.rank is Rank.TEN) == 4


def test_spanish_deck_has_48_cards_and_no_tens() -> None:
    """A Spanish deck is a standard deck without its four 10s; J, Q, K stay."""
    cards = deck(DeckKind.SPANISH)
    assert len(cards) == 48 == DeckKind.SPANISH.size
    assert len(set(cards)) == 48
    assert all(c.rank is not Rank.TEN for c in cards)
    assert set(deck(DeckKind.STANDARD)) - set(cards) == {Card(Rank.TEN, suit) for suit in Suit}
    for rank in (Rank.JACK, Rank.QUEEN, Rank.KING):
        assert sum(1 for c in cards if c.rank is rank) == 4


@pytest.mark.parametrize(
    ("decks", "kind", "total"),
    [(1, DeckKind.STANDARD, 52), (6, DeckKind.STANDARD, 312), (8, DeckKind.SPANISH, 384)],
)
def test_shoe_composition(decks: int, kind: DeckKind, total: int) -> None:
    shoe = shoe_composition(decks, kind)
    assert shoe.total() == total
    assert shoe[QUEEN_OF_HEARTS] == decks
    assert set(shoe.values()) == {decks}


def _hand(text: str) -> HandValue:
    return hand_value([card(t) for t in text.split()])


@pytest.mark.parametrize(
    ("text", "total", "soft"),
    [
        ("KH QH", 20, False),
        ("AS 9S", 20, True),  # ace + nine: soft 20 (docs/procedures.md)
        ("AS KS", 21, True),
        ("AS AD", 12, True),  # one ace as 11, the other as 1
        ("AS AD 9C", 21, True),
        ("AS 6D", 17, True),
        ("AS 6D 10C", 17, False),  # the ace must count 1 now
        ("AS 5D 5C", 21, True),
        ("10H 6D", 16, False),
        ("10H 6D 9C", 25, False),
        ("AS AD AH AC", 14, True),
        ("2S 3S", 5, False),
        ("", 0, False),
    ],
)
def test_hand_value_hard_and_soft(text: str, total: int, soft: bool) -> None:  # noqa: FBT001 - parametrized
    value = _hand(text)
    assert value == HandValue(total, soft=soft)
    assert value.busted is (total > 21)


@pytest.mark.parametrize(
    ("text", "blackjack"),
    [
        ("AS KS", True),
        ("KS AS", True),
        ("AH 10D", True),
        ("AH JD", True),
        ("AS 5D 5C", False),  # 21 in three cards is not a blackjack
        ("KS QS", False),
        ("AS 9S", False),
        ("AS", False),
    ],
)
def test_is_blackjack(text: str, blackjack: bool) -> None:  # noqa: FBT001 - parametrized
    assert is_blackjack([card(t) for t in text.split()]) is blackjack
