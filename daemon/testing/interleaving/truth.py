"""The physical truth of a table: what the dealer did, in the order a dealer does it, and what
a fresh rules engine makes of it.

Rounds are played by `rules.player.Dealer` (basic strategy, a seeded shoe shuffled again when
it runs low) on an engine of their own: fed the events in the order they happened at the
table, that engine is the oracle the table service is held against (its settlements are the
truth's). It knows nothing of the daemon, its two streams or their delays.

Each event becomes a `Step` the dealer makes: a tap on the console (a request), a card out of
the shoe, or a new shoe (a frame of a shoe that says so, a tap on one that does not); in half
the rounds a window's wagers and its "No more bets" are one tap (the layout).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Literal

from daemon.wire.console import Layout, console_request, layout_request, with_layouts
from rules.engine import TableEngine
from rules.events import CloseBetting, DealCard, Shuffle
from rules.games import GAMES
from rules.outputs import Settlement
from rules.player import Dealer

if TYPE_CHECKING:
    import random

    from rules.config import TableConfig
    from rules.events import TableEvent
    from rules.games import WagerKind
    from rules.money import Cents

StepKind = Literal["tap", "card", "shuffle"]


@dataclass(frozen=True, slots=True)
class Step:
    """One thing the dealer does: `tap` a request on the console, deal a `card`, or a new
    shoe (`shuffle`)."""

    kind: StepKind
    event: TableEvent
    round_id: int | None  # the round it belongs to; None for a new shoe and its burns
    command: str = ""  # a tap's request
    body: dict[str, Any] = field(default_factory=dict)

    @property
    def card(self) -> DealCard:
        assert isinstance(self.event, DealCard)
        return self.event


@dataclass(frozen=True, slots=True)
class TruthRound:
    """One round as it happened: a new shoe first if one came, then the round's steps."""

    round_id: int
    steps: tuple[Step, ...]
    settlements: tuple[dict[str, Any], ...]  # as the rules core writes them (to_mapping)
    hole: str | None  # the dealer's hole card, if one was dealt
    visible: frozenset[str]  # the cards anyone saw before the hole card's reveal

    @property
    def winners(self) -> tuple[dict[str, Any], ...]:
        return tuple(s for s in self.settlements if s["result"] == "win")


def wager_plan(
    config: TableConfig, engine: TableEngine, rng: random.Random, *, most: int = 7
) -> dict[int, dict[WagerKind, Cents]]:
    """One to `most` seats (none the table has barred), each with the main wager and, mostly,
    the others, every amount within the limits and the rules between wagers."""
    rules = GAMES[config.game]
    open_seats = [s for s in range(1, config.seats + 1) if s not in engine.barred_seats]
    seats = sorted(rng.sample(open_seats, rng.randint(1, min(most, len(open_seats)))))
    plan: dict[int, dict[WagerKind, Cents]] = {}
    for seat in seats:
        limits = config.limits[rules.main_wager]
        wagers: dict[WagerKind, Cents] = {rules.main_wager: limits.minimum * rng.randint(1, 5)}
        for rule in rules.wagers:
            if rule.requires is None or rule.kind not in config.limits or rng.random() < 0.25:
                continue
            required = wagers.get(rule.requires)
            if required is None:
                continue
            limit = config.limits[rule.kind]
            amount = min(limit.minimum * rng.randint(1, 3), limit.maximum)
            if rule.equal_to_requirement:
                amount = required
            elif rule.at_most_requirement:
                amount = min(amount, required)
            if limit.minimum <= amount <= limit.maximum:
                wagers[rule.kind] = amount
        plan[seat] = wagers
    return plan


class TruthTable:
    """A table's rounds, one after another, as the dealer plays them (seeded)."""

    def __init__(self, config: TableConfig, rng: random.Random, *, seats: int = 7) -> None:
        """`seats`: at most this many seats wager in a round."""
        self.config = config
        self.rng = rng
        self.seats = seats
        self.engine = TableEngine(config)
        self.dealer = Dealer(self.engine, rng)

    def next_round(self) -> TruthRound:
        plan = wager_plan(self.config, self.engine, self.rng, most=self.seats)
        played = self.dealer.play(plan)
        round_ = self.engine.round
        assert round_ is not None, "a plan has at least one seat"
        steps = _steps(played.events, round_.round_id)
        settlements = tuple(o.to_mapping() for o in played.outputs if isinstance(o, Settlement))
        hole = round_.hole_card
        visible = {str(c) for seat in round_.seats.values() for h in seat.hands for c in h.cards}
        if round_.upcard is not None:
            visible.add(str(round_.upcard))
        return TruthRound(
            round_.round_id,
            steps,
            settlements,
            None if hole is None else str(hole),
            frozenset(visible),
        )


def _steps(events: list[TableEvent], round_id: int) -> tuple[Step, ...]:
    """The round's steps. In a round of an even number the dealer taps each window's wagers
    with its "No more bets" (one request: the layout, docs/mqtt.md); in the others, each wager
    on its own and then the close. Decided by the round's number, so the truth's seeded rounds
    are the same either way."""
    taps = events if round_id % 2 else with_layouts(events)
    return tuple(
        Step("tap", CloseBetting(), round_id, *layout_request(tap.wagers))
        if isinstance(tap, Layout)
        else _step(tap, round_id)
        for tap in taps
    )


def _step(event: TableEvent, round_id: int) -> Step:
    if isinstance(event, Shuffle):
        return Step("shuffle", event, None)
    if isinstance(event, DealCard):
        return Step("card", event, None if event.burned else round_id)
    command, body = console_request(event)
    return Step("tap", event, round_id, command, body)
