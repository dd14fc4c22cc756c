"""What is physically in the emulated shoe and the order it comes out in: no protocol, no I/O.

A model is a stream of steps: a shuffle (a new shoe), a card drawn, the cut card. Two models:
`ShuffledShoe` shuffles N decks with a seeded generator, burns the first card and places the
cut card at a penetration; `ScriptedShoe` plays back a written list, for demos and tests
that need exact hands.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final, TypeAlias

from drivers.emulator.errors import EmulatorError
from drivers.events import RANKS, SUITS, Rank, Suit

if TYPE_CHECKING:
    import random

STANDARD_DECK_SIZE: Final = 52
SPANISH_DECK_SIZE: Final = 48  # a Spanish 21 deck: the four tens removed (picture cards stay)
MAX_DECKS: Final = 8  # the most any shoe game in the regulations is dealt from

# Script tokens besides cards.
SCRIPT_CUT: Final = "CUT"
SCRIPT_SHUFFLE: Final = "SHUFFLE"
SCRIPT_BURN: Final = "BURN"  # the card after it is burned
SCRIPT_UNREADABLE: Final = "??"
SCRIPT_HELP: Final = (
    "write cards as rank then suit (QH, 10S, AD, 7C; T for ten is accepted), separated by "
    f"spaces; {SCRIPT_CUT} for the cut card, {SCRIPT_SHUFFLE} for a new shoe, "
    f"{SCRIPT_BURN} before a card to burn it, {SCRIPT_UNREADABLE} for a card that cannot be read"
)

_RANK_BY_TEXT: Final[dict[str, Rank]] = {**{rank: rank for rank in RANKS}, "T": "10"}
_SUIT_BY_TEXT: Final[dict[str, Suit]] = {suit: suit for suit in SUITS}


@dataclass(frozen=True, slots=True)
class Card:
    rank: Rank
    suit: Suit

    @property
    def code(self) -> str:
        return f"{self.rank}{self.suit}"


@dataclass(frozen=True, slots=True)
class Shuffled:
    """A new shoe: shuffled (or refilled) and ready to deal."""


@dataclass(frozen=True, slots=True)
class Drawn:
    """A card left the shoe. `card` is None for one whose face the reader cannot see."""

    card: Card | None
    burned: bool = False


@dataclass(frozen=True, slots=True)
class CutCardOut:
    """The cut card came out: the round in progress is the last of this shoe."""


ShoeStep: TypeAlias = Shuffled | Drawn | CutCardOut


class ShoeModel(ABC):
    @abstractmethod
    def next_step(self) -> ShoeStep | None:
        """The next thing that happens at the shoe; None once a script has run out."""

    @abstractmethod
    def request_shuffle(self) -> None:
        """The dealer reshuffles now: the next step is `Shuffled`."""


def build_deck(*, spanish: bool = False) -> list[Card]:
    ranks = [r for r in RANKS if r != "10"] if spanish else list(RANKS)
    return [Card(rank, suit) for suit in SUITS for rank in ranks]


def cut_position(total_cards: int, penetration: float) -> int:
    """How many cards come out before the cut card: never 0, never the whole shoe."""
    return min(max(round(total_cards * penetration), 1), total_cards - 1)


class ShuffledShoe(ShoeModel):
    """N decks shuffled by `rng`; the first card after each shuffle is burned.

    After the cut card, `cards_after_cut` more cards finish the round in progress, then the
    shoe is reshuffled: the cards and their order depend on nothing but the generator's seed.
    """

    def __init__(
        self,
        rng: random.Random,
        *,
        decks: int = 6,
        spanish: bool = False,
        penetration: float = 0.75,
        cards_after_cut: int = 8,
        burn: bool = True,
    ) -> None:
        if isinstance(decks, bool) or not isinstance(decks, int) or not 1 <= decks <= MAX_DECKS:
            raise EmulatorError(f"must be 1 to {MAX_DECKS} decks", field="decks", value=decks)
        if not isinstance(penetration, int | float) or not 0 < penetration < 1:
            raise EmulatorError(
                "must be a fraction of the shoe between 0 and 1, e.g. 0.75",
                field="penetration",
                value=penetration,
            )
        if isinstance(cards_after_cut, bool) or not (
            isinstance(cards_after_cut, int) and cards_after_cut >= 0
        ):
            raise EmulatorError(
                "must be a whole number of cards, 0 or more",
                field="cards_after_cut",
                value=cards_after_cut,
            )
        self._rng = rng
        self._one_deck = build_deck(spanish=spanish)
        self.decks = decks
        self.total_cards = decks * len(self._one_deck)
        self.cut_position = cut_position(self.total_cards, penetration)
        self._cards_after_cut = cards_after_cut
        self._burn = burn
        self._remaining: list[Card] = []  # popped from the end: the top of the shoe
        self._drawn = 0
        self._cut_out = False
        self._needs_shuffle = True

    @property
    def cards_remaining(self) -> int:
        return len(self._remaining)

    def request_shuffle(self) -> None:
        self._needs_shuffle = True

    def next_step(self) -> ShoeStep:
        if self._needs_shuffle or not self._remaining or self._past_last_round():
            self._shuffle()
            return Shuffled()
        if self._drawn == self.cut_position and not self._cut_out:
            self._cut_out = True
            return CutCardOut()
        card = self._remaining.pop()
        self._drawn += 1
        return Drawn(card, burned=self._burn and self._drawn == 1)

    def _past_last_round(self) -> bool:
        return self._cut_out and self._drawn >= self.cut_position + self._cards_after_cut

    def _shuffle(self) -> None:
        cards = self._one_deck * self.decks
        self._rng.shuffle(cards)
        self._remaining = cards
        self._drawn = 0
        self._cut_out = False
        self._needs_shuffle = False


class ScriptedShoe(ShoeModel):
    """Plays back `parse_script` steps, then runs out."""

    def __init__(self, steps: list[ShoeStep]) -> None:
        self._steps = list(reversed(steps))  # popped from the end
        self._shuffle_requested = False

    def request_shuffle(self) -> None:
        self._shuffle_requested = True

    def next_step(self) -> ShoeStep | None:
        if self._shuffle_requested:
            self._shuffle_requested = False
            return Shuffled()
        return self._steps.pop() if self._steps else None


def parse_card(token: str) -> Card:
    text = token.strip().upper()
    rank = _RANK_BY_TEXT.get(text[:-1])
    suit = _SUIT_BY_TEXT.get(text[-1:])
    if rank is None or suit is None:
        raise EmulatorError(f"not a card: {SCRIPT_HELP}", field="card", value=token)
    return Card(rank, suit)


def parse_script(script: str) -> list[ShoeStep]:
    """ "BURN 7C QH 10S CUT 5D" -> the steps a `ScriptedShoe` plays back."""
    steps: list[ShoeStep] = []
    burn_next = False
    for token in script.split():
        word = token.upper()
        if burn_next and word in {SCRIPT_CUT, SCRIPT_SHUFFLE, SCRIPT_BURN}:
            raise EmulatorError(
                f"{SCRIPT_BURN} must be followed by a card", field="cards", value=token
            )
        if word == SCRIPT_CUT:
            steps.append(CutCardOut())
        elif word == SCRIPT_SHUFFLE:
            steps.append(Shuffled())
        elif word == SCRIPT_BURN:
            burn_next = True
            continue
        elif word == SCRIPT_UNREADABLE:
            steps.append(Drawn(None, burned=burn_next))
        else:
            steps.append(Drawn(parse_card(token), burned=burn_next))
        burn_next = False
    if burn_next:
        message = f"{SCRIPT_BURN} must be followed by a card"
        raise EmulatorError(message, field="cards", value=script)
    if not any(isinstance(step, Drawn) for step in steps):
        raise EmulatorError(f"the script deals no card: {SCRIPT_HELP}", field="cards", value=script)
    return steps
