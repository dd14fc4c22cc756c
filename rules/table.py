"""The mutable state of one round: seats, hands, the dealer's cards. No rules live here."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from rules.hands import HandValue, hand_value, is_blackjack
from rules.outputs import Result, Settlement

if TYPE_CHECKING:
    from rules.cards import Card
    from rules.games import WagerKind
    from rules.money import Cents, Odds
    from rules.outputs import Phase


class HandEnd(enum.Enum):
    STAND = "stand"
    BUST = "bust"
    TWENTY_ONE = "twenty_one"
    BLACKJACK = "blackjack"
    DOUBLED = "doubled"
    SIX_CARDS = "six_cards"  # 13:69F-36.5(b)
    SURRENDER = "surrender"
    SPLIT_ACE = "split_ace"  # split aces take one card each
    DEALER_BLACKJACK = "dealer_blackjack"  # play never reached the hand


@dataclass(slots=True)
class Hand:
    number: int  # 1-based within its seat
    cards: list[Card] = field(default_factory=list)
    stakes: dict[WagerKind, Cents] = field(default_factory=dict)  # wagers riding this hand
    from_split: bool = False
    split_aces: bool = False
    doubled: bool = False
    drawing: bool = False  # a hit was declared and its card has not come yet
    acted: bool = False  # any decision taken (surrender is a first decision only)
    ended: HandEnd | None = None
    settled: bool = False
    # The total, kept until the cards change; not part of what a hand is.
    _value: HandValue | None = field(default=None, compare=False, repr=False)

    @property
    def value(self) -> HandValue:
        # Read several times per card (the hand's end, the dealer's draw, the settlement),
        # so it is worked out once per change of cards; `add` and `split_off` reset it.
        if self._value is None:
            self._value = hand_value(self.cards)
        return self._value

    def add(self, card: Card) -> None:
        self.cards.append(card)
        self._value = None

    def split_off(self) -> Card:
        """Take the second card away, for the new hand of a split."""
        self._value = None
        return self.cards.pop()

    @property
    def natural(self) -> bool:
        """A blackjack: two-card 21 on a hand that was not split."""
        return not self.from_split and is_blackjack(self.cards)


@dataclass(slots=True)
class Seat:
    number: int
    wagers: dict[WagerKind, Cents] = field(default_factory=dict)
    hands: list[Hand] = field(default_factory=list)
    settled: set[WagerKind] = field(default_factory=set)  # seat-level wagers already settled


class RoundStage(enum.Enum):
    BETTING = "betting"  # open for wagers, no card yet
    DEALING = "dealing"  # the initial deal
    PLAYING = "playing"  # players' hands in turn
    DEALER = "dealer"  # the dealer draws
    OVER = "over"


@dataclass(slots=True)
class Round:
    round_id: int
    seats: dict[int, Seat] = field(default_factory=dict)
    dealer: list[Card] = field(default_factory=list)
    hole_revealed: bool = False
    stage: RoundStage = RoundStage.BETTING
    # A wager window is open and the dealer has not yet called "No more bets" on it: the
    # round opens with one, and Double and Triple Attack open more between deal steps.
    betting_open: bool = True
    step: int = 0  # index into the game's deal order
    step_cursor: int = 0  # cards dealt so far within that step
    dealt_in: tuple[int, ...] = ()  # seats receiving cards, ascending (seat 1 first)
    turn: tuple[int, int] | None = None  # (seat, hand index) in play
    deferred_queens: list[int] = field(default_factory=list)  # 2.24(e) seats, highest first
    phase_counts: dict[Phase, int] = field(default_factory=dict)

    def seat(self, number: int) -> Seat:
        found = self.seats.get(number)
        if found is None:
            found = self.seats[number] = Seat(number)
        return found

    def next_order(self, phase: Phase) -> int:
        """The next 1-based position of a settlement in `phase` of this round."""
        order = self.phase_counts.get(phase, 0) + 1
        self.phase_counts[phase] = order
        return order

    def settle(  # noqa: PLR0913 - a settlement's facts, each named at the call
        self,
        seat: int,
        wager: WagerKind,
        stake: Cents,
        *,
        outcome: str,
        phase: Phase,
        citation: str,
        odds: Odds | None = None,
        result: Result | None = None,
        won: Cents | None = None,
        hand: int | None = None,
        floorperson: bool = False,
        limited: bool = False,
    ) -> Settlement:
        """The one way a settlement of this round is made, numbered next in its phase.

        With `odds` it is a win paid at them (`won` overrides the payout where 2.24(h)
        shares a limit); without, a loss unless `result` says push or void.
        """
        if result is None:
            result = Result.LOSE if odds is None else Result.WIN
        if won is None:
            won = 0 if odds is None else odds.winnings(stake)
        return Settlement(
            self.round_id,
            seat,
            hand,
            wager,
            outcome,
            result,
            odds,
            stake,
            won,
            phase,
            self.next_order(phase),
            floorperson,
            citation,
            limited,
        )

    @property
    def dealer_value(self) -> HandValue:
        return hand_value(self.dealer)

    @property
    def upcard(self) -> Card | None:
        """The dealer's face-up card (the first card dealt to the dealer)."""
        return self.dealer[0] if self.dealer else None

    @property
    def hole_card(self) -> Card | None:
        return self.dealer[1] if len(self.dealer) > 1 else None

    def hands_in_order(self) -> list[tuple[Seat, Hand]]:
        """Every hand in play order: seat 1 up, each seat's hands in order."""
        return [(self.seats[n], hand) for n in self.dealt_in for hand in self.seats[n].hands]
