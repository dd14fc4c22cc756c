"""The census of a shoe: every card it gave, from shuffle to shuffle, against what it holds.

A shoe of `decks` decks of a deck kind holds `decks` of each card of that kind and nothing
else. A card it cannot hold (a 10 in a Spanish shoe, a seventh queen of hearts in six decks)
was added to it: `judge` names the reason before the card is placed anywhere, and the census
keeps it apart (`foreign`) rather than counting it as one of the shoe's. At the shuffle,
`summary` says what the shoe gave: the cards seen, those left behind the cut card, and every
card, rank or suit whose count no shoe of this kind could give.

Fed with what the engine took, in its order (`seen`, `shuffled`), so the census follows the
engine's own account of which shoe a card belongs to: a burn the shoe sent before the
shuffle was announced (an ENQ shoe announces none) belongs to the shoe that follows it, as
`TableEngine.burned_unannounced` does. Sans-I/O, stdlib only, state as plain data.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from rules.cards import Card, Rank, Suit, shoe_composition

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from rules.cards import DeckKind

# Why a card cannot be the shoe's: its rank is not in the deck kind, or the shoe gave every
# one of that card already since its shuffle.
ForeignReason = Literal["not_in_deck_kind", "over_the_shoe"]


@dataclass(frozen=True, slots=True)
class Impossible:
    """A count no shoe of this kind could give: `what` is a card (`QH`), a rank (`10`) or a
    suit (`H`); `seen` of it against the `holds` the shoe has."""

    what: str
    seen: int
    holds: int

    def to_mapping(self) -> dict[str, Any]:
        return {"what": self.what, "seen": self.seen, "holds": self.holds}


@dataclass(frozen=True, slots=True)
class CensusSummary:
    """What one shoe gave, told at its shuffle (or when asked, for the shoe in play).

    `complete` is False when the census did not see the shoe's shuffle (the daemon started,
    or the table's shoe changed, in the middle of it): its counts are then a part of the shoe.
    """

    shoe: int
    decks: int
    deck_kind: str
    complete: bool
    cards_seen: int  # the shoe's own cards: burns included, foreign cards not
    cards_left: int  # behind the cut card: the shoe's size less what it gave
    foreign: tuple[str, ...]  # in the order they came
    impossible: tuple[Impossible, ...]
    by_rank: dict[str, int]  # every card seen, the foreign ones included
    by_suit: dict[str, int]

    def to_mapping(self) -> dict[str, Any]:
        return {
            "shoe": self.shoe,
            "decks": self.decks,
            "deck_kind": self.deck_kind,
            "complete": self.complete,
            "cards_seen": self.cards_seen,
            "cards_left": self.cards_left,
            "foreign": list(self.foreign),
            "impossible": [each.to_mapping() for each in self.impossible],
            "by_rank": dict(self.by_rank),
            "by_suit": dict(self.by_suit),
        }


@dataclass(slots=True)
class ShoeCensus:
    """One table's census: the shoe in play, and the burns that came before its shuffle."""

    decks: int
    deck_kind: DeckKind
    shoe: int = 0  # the engine's shoe number this census counts
    complete: bool = False  # the census saw this shoe's shuffle
    seen: Counter[Card] = field(default_factory=Counter)
    foreign: list[Card] = field(default_factory=list)
    early: list[Card] = field(default_factory=list)  # burns before their shoe's shuffle

    def holds(self, card: Card) -> int:
        """How many of `card` the shoe holds when full."""
        return self.decks if card.rank in self.deck_kind.ranks else 0

    def judge(
        self, card: Card, pending: Iterable[Card] = (), *, fresh: bool = False
    ) -> ForeignReason | None:
        """Why `card` cannot come from this shoe, or None if it can: `pending` are the cards
        that came before it and are not counted yet (held for their place); `fresh`: a new
        shoe came between (its census starts from nothing). A shoe whose shuffle the census
        did not see is judged by the deck kind alone: how many of a card it gave is unknown."""
        if card.rank not in self.deck_kind.ranks:
            return "not_in_deck_kind"
        if not (self.complete or fresh):
            return None
        given = sum(1 for each in pending if each == card)
        if not fresh:
            given += self.seen[card]
        return "over_the_shoe" if given >= self.decks else None

    # ---------------------------------------------------------------- fed by the engine
    def shuffled(self, shoe: int) -> CensusSummary:
        """The engine took a shuffle (its shoe number now `shoe`): the summary of the shoe
        that ended, then a fresh count that starts with the burns that came early."""
        ended = self.summary()
        self.shoe, self.complete = shoe, True
        self.seen = Counter(self.early)
        self.foreign, self.early = [], []
        return ended

    def seen_card(self, card: Card, *, early_burn: bool = False) -> None:
        """The engine took `card`: as this shoe's, or (`early_burn`) as a burn that waits for
        the shuffle it belongs to. A card of a round settles which shoe the early burns were
        from: this one (the engine's rule)."""
        if early_burn:
            self.early.append(card)
            return
        self.seen.update(self.early)
        self.early.clear()
        self.seen[card] += 1

    def foreign_card(self, card: Card) -> None:
        """A card this shoe cannot hold came out of it: kept apart, named in the summary."""
        self.foreign.append(card)

    def reshaped(self, decks: int, deck_kind: DeckKind) -> ShoeCensus:
        """The table's shoe changed (decks or kind) between shuffles: what is left of this
        one is unknown, so the new census is incomplete until the next shuffle."""
        if decks == self.decks and deck_kind is self.deck_kind:
            return self
        return ShoeCensus(decks, deck_kind, self.shoe)

    # ---------------------------------------------------------------- what it says
    def summary(self) -> CensusSummary:
        composition = shoe_composition(self.decks, self.deck_kind)
        everything = self.seen + Counter(self.foreign)
        by_rank: Counter[str] = Counter()
        by_suit: Counter[str] = Counter()
        for card, count in everything.items():
            by_rank[card.rank.value] += count
            by_suit[card.suit.value] += count
        impossible = [
            Impossible(str(card), count, composition[card])
            for card, count in sorted(everything.items(), key=_card_order)
            if count > composition[card]
        ]
        ranks_held = self.decks * len(Suit)
        impossible += [
            Impossible(rank.value, by_rank[rank.value], holds)
            for rank in Rank
            if by_rank[rank.value] > (holds := ranks_held if rank in self.deck_kind.ranks else 0)
        ]
        suit_held = self.decks * len(self.deck_kind.ranks)
        impossible += [
            Impossible(suit.value, by_suit[suit.value], suit_held)
            for suit in Suit
            if by_suit[suit.value] > suit_held
        ]
        seen = sum(self.seen.values())
        return CensusSummary(
            shoe=self.shoe,
            decks=self.decks,
            deck_kind=self.deck_kind.value,
            complete=self.complete,
            cards_seen=seen,
            cards_left=max(0, sum(composition.values()) - seen),
            foreign=tuple(str(card) for card in self.foreign),
            impossible=tuple(impossible),
            by_rank={rank.value: by_rank[rank.value] for rank in Rank},
            by_suit={suit.value: by_suit[suit.value] for suit in Suit},
        )

    # ---------------------------------------------------------------- checkpoints
    def state(self) -> dict[str, Any]:
        return {
            "shoe": self.shoe,
            "complete": self.complete,
            "seen": {
                str(card): count for card, count in sorted(self.seen.items(), key=_card_order)
            },
            "foreign": [str(card) for card in self.foreign],
            "early": [str(card) for card in self.early],
        }

    @classmethod
    def from_state(cls, decks: int, deck_kind: DeckKind, data: Mapping[str, Any]) -> ShoeCensus:
        """From `state()`; KeyError, TypeError, ValueError or a CardParseError if malformed."""
        return cls(
            decks,
            deck_kind,
            int(data["shoe"]),
            bool(data["complete"]),
            Counter({Card.parse(text): int(count) for text, count in data["seen"].items()}),
            [Card.parse(text) for text in data["foreign"]],
            [Card.parse(text) for text in data["early"]],
        )


_RANK_ORDER = {rank: index for index, rank in enumerate(Rank)}
_SUIT_ORDER = {suit: index for index, suit in enumerate(Suit)}


def _card_order(item: tuple[Card, int]) -> tuple[int, int]:
    card = item[0]
    return _SUIT_ORDER[card.suit], _RANK_ORDER[card.rank]
