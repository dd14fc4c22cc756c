"""A table simulator's decision-maker: basic strategy, and a simulated round played by it.

Used by property tests, the benchmark and the demo to produce legal event streams. It reads
only what anyone at the table sees (`TableEngine.public_view()`), never the hole card, and
has no randomness of its own: the caller passes a seeded `random.Random`.

Basic strategy is the standard multi-deck (4-8 decks) chart with double after split and late
surrender, kept as data: one row per hard total, soft total and pair, one column per dealer
upcard 2-10 then ace, and the few cells a dealer who hits soft 17 changes.
"""

from __future__ import annotations

import random
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, TypeAlias

from rules.cards import Card, DeckKind, deck
from rules.events import CloseBetting, DealCard, PlaceWager, PlayerAction, Shuffle, VoidRound
from rules.games import Action, Step, WagerKind
from rules.hands import hand_value
from rules.money import Cents

if TYPE_CHECKING:
    from collections.abc import Iterator, Sequence

    from rules.config import TableConfig
    from rules.engine import TableEngine
    from rules.events import TableEvent
    from rules.outputs import Output

# ---------------------------------------------------------------------------- the chart
# Cell codes: H hit, S stand, Dh double else hit, Ds double else stand, P split,
# Rh / Rs / Rp surrender else hit / stand / split, "-" (pairs only) play the hand's total.
# Columns: dealer upcard 2, 3, 4, 5, 6, 7, 8, 9, 10, A.
_UPCARDS = (2, 3, 4, 5, 6, 7, 8, 9, 10, 11)

_HARD: dict[int, str] = {
    4: "H  H  H  H  H  H  H  H  H  H",
    5: "H  H  H  H  H  H  H  H  H  H",
    6: "H  H  H  H  H  H  H  H  H  H",
    7: "H  H  H  H  H  H  H  H  H  H",
    8: "H  H  H  H  H  H  H  H  H  H",
    9: "H  Dh Dh Dh Dh H  H  H  H  H",
    10: "Dh Dh Dh Dh Dh Dh Dh Dh H  H",
    11: "Dh Dh Dh Dh Dh Dh Dh Dh Dh H",
    12: "H  H  S  S  S  H  H  H  H  H",
    13: "S  S  S  S  S  H  H  H  H  H",
    14: "S  S  S  S  S  H  H  H  H  H",
    15: "S  S  S  S  S  H  H  H  Rh H",
    16: "S  S  S  S  S  H  H  Rh Rh Rh",
    17: "S  S  S  S  S  S  S  S  S  S",
    18: "S  S  S  S  S  S  S  S  S  S",
    19: "S  S  S  S  S  S  S  S  S  S",
    20: "S  S  S  S  S  S  S  S  S  S",
    21: "S  S  S  S  S  S  S  S  S  S",
}
_SOFT: dict[int, str] = {
    12: "H  H  H  H  H  H  H  H  H  H",  # A,A that may not be split
    13: "H  H  H  Dh Dh H  H  H  H  H",
    14: "H  H  H  Dh Dh H  H  H  H  H",
    15: "H  H  Dh Dh Dh H  H  H  H  H",
    16: "H  H  Dh Dh Dh H  H  H  H  H",
    17: "H  Dh Dh Dh Dh H  H  H  H  H",
    18: "S  Ds Ds Ds Ds S  S  H  H  H",
    19: "S  S  S  S  S  S  S  S  S  S",
    20: "S  S  S  S  S  S  S  S  S  S",
    21: "S  S  S  S  S  S  S  S  S  S",
}
# Keyed by the pair's card value (ace = 11, any two ten-value cards = 10).
_PAIRS: dict[int, str] = {
    2: "P  P  P  P  P  P  -  -  -  -",
    3: "P  P  P  P  P  P  -  -  -  -",
    4: "-  -  -  P  P  -  -  -  -  -",
    5: "-  -  -  -  -  -  -  -  -  -",
    6: "P  P  P  P  P  -  -  -  -  -",
    7: "P  P  P  P  P  P  -  -  -  -",
    8: "P  P  P  P  P  P  P  P  P  P",
    9: "P  P  P  P  P  S  P  P  S  S",
    10: "-  -  -  -  -  -  -  -  -  -",
    11: "P  P  P  P  P  P  P  P  P  P",
}
# The cells that change when the dealer hits soft 17: (table, row, upcard) -> code.
_HITS_SOFT_17: dict[tuple[str, int, int], str] = {
    ("hard", 11, 11): "Dh",
    ("hard", 15, 11): "Rh",
    ("hard", 17, 11): "Rs",
    ("soft", 18, 2): "Ds",
    ("soft", 19, 6): "Ds",
    ("pair", 8, 11): "Rp",
}


def _parse_chart(rows: dict[int, str]) -> dict[tuple[int, int], str]:
    cells: dict[tuple[int, int], str] = {}
    for row, text in rows.items():
        codes = text.split()
        assert len(codes) == len(_UPCARDS), row
        cells.update({(row, up): code for up, code in zip(_UPCARDS, codes, strict=True)})
    return cells


CHART: dict[str, dict[tuple[int, int], str]] = {
    "hard": _parse_chart(_HARD),
    "soft": _parse_chart(_SOFT),
    "pair": _parse_chart(_PAIRS),
}


def _column(card: Card) -> int:
    return 11 if card.points == 1 else card.points


def _cell(table: str, row: int, upcard: int, *, hits_soft_17: bool) -> str:
    if hits_soft_17:
        changed = _HITS_SOFT_17.get((table, row, upcard))
        if changed is not None:
            return changed
    return CHART[table][row, upcard]


def basic_strategy(
    hand_cards: Sequence[Card],
    dealer_upcard: Card,
    *,
    can_double: bool,
    can_split: bool,
    can_surrender: bool,
    hits_soft_17: bool,
) -> Action:
    """The chart's decision for a hand of two or more cards; only allowed actions come back."""
    if len(hand_cards) < 2:
        raise ValueError("a decision needs at least two cards; a split hand is dealt one first")
    upcard = _column(dealer_upcard)
    code = "-"
    if can_split and len(hand_cards) == 2 and hand_cards[0].points == hand_cards[1].points:
        code = _cell("pair", _column(hand_cards[0]), upcard, hits_soft_17=hits_soft_17)
    if code == "-":
        value = hand_value(hand_cards)
        table = "soft" if value.soft else "hard"
        row = min(max(value.total, 4), 21)
        if value.total > 21:
            return Action.STAND  # a busted hand is over; asked anyway, it takes no card
        code = _cell(table, row, upcard, hits_soft_17=hits_soft_17)
    return _resolve(code, can_double=can_double, can_surrender=can_surrender)


def _resolve(code: str, *, can_double: bool, can_surrender: bool) -> Action:
    first, fallback = code[0], code[1:]
    if first == "D" and can_double:
        return Action.DOUBLE
    if first == "R" and can_surrender:
        return Action.SURRENDER
    if first in "DR":
        first = fallback.upper()
    return _CODES[first]


_CODES = {"H": Action.HIT, "S": Action.STAND, "P": Action.SPLIT}


# ---------------------------------------------------------------------------- decisions
@dataclass(frozen=True, slots=True)
class Decision:
    """The hand in play, as the table sees it, and what the dealer would accept for it."""

    seat: int
    hand: int
    cards: tuple[Card, ...]
    upcard: Card
    legal: frozenset[Action]
    hits_soft_17: bool


Policy: TypeAlias = Callable[[Decision, random.Random], Action]


def basic_strategy_policy(decision: Decision, rng: random.Random) -> Action:  # noqa: ARG001 - a Policy
    legal = decision.legal
    return basic_strategy(
        decision.cards,
        decision.upcard,
        can_double=Action.DOUBLE in legal,
        can_split=Action.SPLIT in legal,
        can_surrender=Action.SURRENDER in legal,
        hits_soft_17=decision.hits_soft_17,
    )


def random_policy(decision: Decision, rng: random.Random) -> Action:
    """Any legal action, uniformly: play no sane player would make, which is the point."""
    return rng.choice(sorted(decision.legal, key=lambda action: action.value))


def legal_actions(
    config: TableConfig, cards: Sequence[Card], *, from_split: bool
) -> frozenset[Action]:
    """What the engine accepts for a hand of two or more cards that has taken no decision yet."""
    offered = config.rules.actions
    legal = {Action.HIT, Action.STAND}
    two_cards = len(cards) == 2
    if two_cards and (not from_split or config.double_after_split):
        legal.add(Action.DOUBLE)
    if two_cards and cards[0].points == cards[1].points:
        split_aces = from_split and cards[0].points == 1
        if not (split_aces and config.split_aces_one_card):
            legal.add(Action.SPLIT)  # the seat's hand count is checked by the caller
    if two_cards and not from_split and config.surrender:
        legal.add(Action.SURRENDER)
    return frozenset(legal & offered)


# ---------------------------------------------------------------------------- shoes
def seeded_shoe(decks: int, deck_kind: DeckKind, rng: random.Random) -> list[Card]:
    """`decks` decks shuffled by `rng`; every card is its own object (tests track identity)."""
    cards = [card for _ in range(decks) for card in deck(deck_kind)]
    rng.shuffle(cards)
    return cards


class Shoe:
    """A shuffled shoe dealt from the front; `remaining` says when to reshuffle."""

    def __init__(self, cards: list[Card]) -> None:
        self.cards = cards
        self.position = 0

    def __iter__(self) -> Iterator[Card]:
        return self

    def __next__(self) -> Card:
        if self.position >= len(self.cards):
            raise StopIteration
        card = self.cards[self.position]
        self.position += 1
        return card

    def peek(self) -> Card | None:
        return self.cards[self.position] if self.position < len(self.cards) else None

    @property
    def remaining(self) -> int:
        return len(self.cards) - self.position


# ---------------------------------------------------------------------------- rounds
WagerPlan: TypeAlias = Mapping[int, Mapping[WagerKind, Cents]]  # seat -> kind -> amount


def wagers_by_step(config: TableConfig, plan: WagerPlan) -> dict[Step | None, list[PlaceWager]]:
    """The plan's wagers by the deal step after which their window opens (None: at the
    start), each step's in the game's order of wagers, then seat 1 up."""
    by_step: dict[Step | None, list[PlaceWager]] = {}
    for rule in config.rules.wagers:
        for seat in sorted(plan):
            amount = plan[seat].get(rule.kind)
            if amount is not None:
                by_step.setdefault(rule.opens_after, []).append(PlaceWager(seat, rule.kind, amount))
    return by_step


class SimulatedRound:
    """The next legal event of one round, worked out from the public view.

    Call `next_event(engine.public_view())`, apply what it returns, repeat until it returns
    None. Other events may be applied in between (rejected ones change nothing; a VoidRound
    ends the round). Each wager in the plan is placed as soon as its window opens (the
    game's data), seat 1 up, and the dealer then calls "No more bets" (`CloseBetting`)
    before the deal goes on; a hit or double is followed by its card.
    """

    def __init__(
        self,
        config: TableConfig,
        cards: Iterator[Card],
        wagers: WagerPlan,
        rng: random.Random,
        policy: Policy = basic_strategy_policy,
    ) -> None:
        self.config = config
        self.cards = cards
        self.rng = rng
        self.policy = policy
        self._by_step = wagers_by_step(config, wagers)
        self._pending: list[TableEvent] = list(reversed(self._by_step.pop(None, [])))
        self._started = False
        self._owe_card = False
        self._initial_cards = 0  # cards of the initial deal handed out so far
        self._boundaries: dict[int, Step] = {}  # cards dealt -> the step just completed

    def next_event(self, view: Mapping[str, Any]) -> TableEvent | None:
        round_view = view["round"]
        if not self._started:  # the first wager opens the round; no wager, no round
            self._started = bool(self._pending)
            return self._pending.pop() if self._pending else None
        stage = "over" if round_view is None else round_view["stage"]
        if stage == "over":
            return None  # ended, or voided by someone else
        if self._pending:
            return self._pending.pop()
        if stage == "playing":
            return self._play(round_view)
        return self._initial_card(round_view) if stage in ("betting", "dealing") else self._deal()

    def take_window(self) -> list[PlaceWager]:
        """The wagers of the window just opened that `next_event` has not returned yet, taken:
        for a console that sends them with the window's "No more bets" (the layout). The
        next event is then that close."""
        pending = [event for event in reversed(self._pending) if isinstance(event, PlaceWager)]
        self._pending = []
        return pending

    def _initial_card(self, round_view: Mapping[str, Any]) -> TableEvent:
        event = self._window_wager(round_view)
        if event is not None:
            return event
        if round_view.get("betting_open"):
            return CloseBetting()  # 13:69F-2.24(d): "No more bets", then the cards
        self._initial_cards += 1
        return self._deal()

    def _window_wager(self, round_view: Mapping[str, Any]) -> TableEvent | None:
        """The first of the wagers whose window opens where the deal now stands, if any."""
        if self._initial_cards == 0:
            main = self.config.rules.main_wager.value
            dealt_in = sum(1 for seat in round_view["seats"] if main in seat["wagers"])
            done = 0
            for step in self.config.rules.deal_order:
                done += 1 if step in (Step.DEALER_UPCARD, Step.DEALER_HOLE_CARD) else dealt_in
                self._boundaries[done] = step
        completed = self._boundaries.get(self._initial_cards)
        if completed is not None and completed in self._by_step:
            self._pending = list(reversed(self._by_step.pop(completed)))
            return self._pending.pop()
        return None

    def _play(self, round_view: Mapping[str, Any]) -> TableEvent:
        if self._owe_card:
            self._owe_card = False
            return self._deal()
        turn = round_view["turn"]
        seat_view = next(s for s in round_view["seats"] if s["seat"] == turn["seat"])
        hand_view = seat_view["hands"][turn["hand"] - 1]
        cards = tuple(Card.parse(text) for text in hand_view["cards"])
        if len(cards) < 2:
            return self._deal()  # a split hand takes its second card
        hands = len(seat_view["hands"])
        legal = legal_actions(self.config, cards, from_split=hands > 1)
        if hands >= self.config.max_hands_per_seat:
            legal -= {Action.SPLIT}
        upcard = Card.parse(round_view["dealer"]["cards"][0])
        decision = Decision(
            turn["seat"], turn["hand"], cards, upcard, legal, self.config.dealer_hits_soft_17
        )
        action = self.policy(decision, self.rng)
        self._owe_card = action in (Action.HIT, Action.DOUBLE)
        return PlayerAction(action, turn["seat"], turn["hand"])

    def _deal(self) -> TableEvent:
        card = next(self.cards, None)
        if card is None:
            return VoidRound("the shoe ran out of cards")
        return DealCard(card)


@dataclass(slots=True)
class PlayedRound:
    """Every event applied for one round (a shuffle and its burns first, if any) and outputs."""

    events: list[TableEvent] = field(default_factory=list)
    outputs: list[Output] = field(default_factory=list)

    def apply(self, engine: TableEngine, event: TableEvent) -> None:
        self.events.append(event)
        self.outputs.extend(engine.apply(event))


def play_round(
    engine: TableEngine,
    cards: Iterator[Card],
    wagers: WagerPlan,
    rng: random.Random,
    policy: Policy = basic_strategy_policy,
) -> PlayedRound:
    """Play one round on `engine` from `cards`; a shoe that runs out voids the round."""
    played = PlayedRound()
    simulated = SimulatedRound(engine.config, cards, wagers, rng, policy)
    while (event := simulated.next_event(engine.public_view())) is not None:
        played.apply(engine, event)
    return played


class Dealer:
    """Deals round after round at one table, shuffling a fresh seeded shoe when it runs low."""

    def __init__(
        self, engine: TableEngine, rng: random.Random, *, reshuffle_at: float = 0.25
    ) -> None:
        self.engine = engine
        self.rng = rng
        config = engine.config
        self.shoe_size = config.decks * config.deck_kind.size
        self.reshuffle_below = max(int(self.shoe_size * reshuffle_at), 1)
        self.shoe: Shoe | None = None

    def play(
        self,
        wagers: WagerPlan,
        policy: Policy = basic_strategy_policy,
    ) -> PlayedRound:
        played = PlayedRound()
        if self.shoe is None or self.shoe.remaining < self.reshuffle_below:
            self.shuffle(played)
        assert self.shoe is not None
        round_ = play_round(self.engine, self.shoe, wagers, self.rng, policy)
        played.events.extend(round_.events)
        played.outputs.extend(round_.outputs)
        return played

    def shuffle(self, played: PlayedRound) -> None:
        """A new shoe: the Shuffle event, then the table's burn cards."""
        config = self.engine.config
        self.shoe = Shoe(seeded_shoe(config.decks, config.deck_kind, self.rng))
        played.apply(self.engine, Shuffle())
        for _ in range(config.burn_cards):
            played.apply(self.engine, DealCard(next(self.shoe), burned=True))
