"""Seeded rounds through the engine the daemon runs, every settlement tallied exactly.

Shoes come from the real shoe model (`rules.player.Dealer`: `seeded_shoe`, a reshuffle when
a quarter of the shoe is left, the table's burn cards); every seat plays the basic strategy
chart (`rules.player.basic_strategy_policy`); every event goes through
`rules.engine.TableEngine.apply`, and the tally counts only what the engine settled.

`FastRoundPlayer` makes the same events as `rules.player.SimulatedRound`, event for event (a
test holds them side by side), but reads the engine's round state directly instead of
building `public_view()` dictionaries and parsing card text for every event, which is
most of a round's cost. It reads only what anyone at the table sees: a player's own
cards and the dealer's upcard.

A run is cut into chunks of a fixed size, each with a seed derived from the run's seed, the
table and the chunk's number: the merged tally (integer sums) is the same however many
processes played the chunks, and in whatever order.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rules.analysis.dealer_totals import final_total_name
from rules.config import TableConfig
from rules.engine import TableEngine
from rules.events import CloseBetting, DealCard, PlayerAction, VoidRound
from rules.games import Action, Game, Step, WagerKind
from rules.outputs import HandCompleted, Result, RoundEnded, Settlement
from rules.player import (
    Dealer,
    Decision,
    PlayedRound,
    WagerPlan,
    basic_strategy_policy,
    wagers_by_step,
)
from rules.player import legal_actions as legal_actions_for
from rules.table import Round, RoundStage

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from rules.money import Cents
    from rules.outputs import Output

CHUNK_ROUNDS = 5_000
SEATS = 7
# Stakes a simulated seat prefers: every built-in paytable's odds divide them to the cent.
MAIN_STAKE: Cents = 2_500
BONUS_STAKE: Cents = 1_000
# The dealer stopped drawing because no hand needed the total (docs/rules.md, decision 7):
# the final total is unknown, so such rounds are left out of the dealer comparison.
DEALER_STOPPED_SHORT = "dealer_stopped_short"
_PLAYER_STEPS = (Step.PLAYERS_FIRST_CARD, Step.PLAYERS_SECOND_CARD)
_CLOSE_BETTING = CloseBetting()


# ---------------------------------------------------------------------------- the tally
@dataclass(slots=True)
class ReturnSums:
    """One wager kind's money, summed per round so a confidence interval can respect that
    the seats of one round share the dealer's cards (and draw from the same shoe)."""

    rounds: int = 0
    settlements: int = 0
    staked: int = 0  # cents
    net: int = 0  # cents won (positive) or lost (negative)
    net_squared: int = 0  # sum over rounds of (the round's net) ** 2
    staked_squared: int = 0
    net_times_staked: int = 0

    def add_round(self, net: int, staked: int, settlements: int) -> None:
        self.rounds += 1
        self.settlements += settlements
        self.staked += staked
        self.net += net
        self.net_squared += net * net
        self.staked_squared += staked * staked
        self.net_times_staked += net * staked

    def merge(self, other: ReturnSums) -> None:
        self.rounds += other.rounds
        self.settlements += other.settlements
        self.staked += other.staked
        self.net += other.net
        self.net_squared += other.net_squared
        self.staked_squared += other.staked_squared
        self.net_times_staked += other.net_times_staked


@dataclass(slots=True)
class Tally:
    """Everything one table settled over a run; merged by adding integers, so exactly.

    `trials` holds what the exact analysis predicts, one trial at a time: at blackjack each
    20 point bonus settlement (one player's two cards), at Double Attack each round's
    optional bonus outcome (the dealer's three cards, shared by every seat), at Triple
    Attack each round's dealer final total.
    """

    game: str
    rounds: int = 0
    voided_rounds: int = 0
    outcomes: Counter[tuple[str, str]] = field(default_factory=Counter)  # (wager, outcome)
    trials: Counter[str] = field(default_factory=Counter)
    returns: dict[str, ReturnSums] = field(default_factory=dict)

    def merge(self, other: Tally) -> None:
        if other.game != self.game:
            raise ValueError(f"cannot merge a {other.game} tally into a {self.game} one")
        self.rounds += other.rounds
        self.voided_rounds += other.voided_rounds
        self.outcomes.update(other.outcomes)
        self.trials.update(other.trials)
        for kind, sums in other.returns.items():
            self.returns.setdefault(kind, ReturnSums()).merge(sums)

    def record(self, outputs: Iterable[Output]) -> None:
        """Count one round's outputs."""
        self.rounds += 1
        net: dict[str, int] = {}
        staked: dict[str, int] = {}
        settled: Counter[str] = Counter()
        round_outcomes: set[str] = set()
        dealer_final: str | None = None
        for output in outputs:
            if type(output) is Settlement:
                kind = output.wager.value
                self.outcomes[kind, output.outcome] += 1
                settled[kind] += 1
                staked[kind] = staked.get(kind, 0) + output.stake
                net[kind] = net.get(kind, 0) + _net(output)
                round_outcomes.add(output.outcome)
                if kind == WagerKind.TWENTY_POINT_BONUS.value:
                    self.trials[output.outcome] += 1  # one trial per player's two cards
            elif type(output) is HandCompleted and output.seat is None:
                dealer_final = (
                    DEALER_STOPPED_SHORT
                    if output.reason == "not_needed"
                    else final_total_name(output.total, _dealer_cards(output.reason))
                )
            elif type(output) is RoundEnded and output.voided:
                self.voided_rounds += 1
                return  # a voided round decided nothing the analysis predicts
        for kind, count in settled.items():
            self.returns.setdefault(kind, ReturnSums()).add_round(net[kind], staked[kind], count)
        if self.game == Game.DOUBLE_ATTACK.value and round_outcomes:
            # Every seat's bonus rides the same dealer cards: one trial, one outcome. Seats
            # that disagree would be an engine bug, and show as an outcome nothing predicts.
            self.trials[round_outcomes.pop() if len(round_outcomes) == 1 else "inconsistent"] += 1
        elif self.game == Game.TRIPLE_ATTACK.value and dealer_final is not None:
            self.trials[dealer_final] += 1


def _net(settlement: Settlement) -> int:
    if settlement.result is Result.WIN:
        return settlement.won
    if settlement.result is Result.LOSE:
        return -settlement.stake
    return 0  # a push or a void returns the stake


def _dealer_cards(reason: str) -> int:
    # Only a blackjack is told apart by its number of cards: two.
    return 2 if reason == "blackjack" else 3


# ---------------------------------------------------------------------------- the rounds
def wager_plan(config: TableConfig, seats: int = SEATS) -> WagerPlan:
    """Every seat bets the main wager and each wager the daemon settles at this game.

    Stakes are the preferred ones moved inside the table's limits and the regulations'
    bounds (a bonus no more than the initial wager, attack wagers equal to the first).
    """
    rules = config.rules
    main = _within(MAIN_STAKE, config, rules.main_wager)
    stakes: dict[WagerKind, Cents] = {rules.main_wager: main}
    for kind in rules.settled_kinds:
        if kind is rules.main_wager or kind not in config.limits:
            continue
        rule = rules.wager_rule(kind)
        assert rule is not None
        if rule.equal_to_requirement:
            stakes[kind] = main
        elif rule.at_most_requirement:
            stakes[kind] = min(_within(BONUS_STAKE, config, kind), main)
        else:
            stakes[kind] = _within(BONUS_STAKE, config, kind)
    return dict.fromkeys(range(1, min(seats, config.seats) + 1), stakes)


def _within(preferred: Cents, config: TableConfig, kind: WagerKind) -> Cents:
    limits = config.limits[kind]
    return min(max(preferred, limits.minimum), limits.maximum)


class FastRoundPlayer:
    """Deals round after round at one table, as `rules.player.Dealer.play` does."""

    def __init__(
        self, config: TableConfig, rng: random.Random, plan: WagerPlan | None = None
    ) -> None:
        self.config = config
        self.engine = TableEngine(config)
        self.dealer = Dealer(self.engine, rng)
        self.rng = rng
        self.replan(wager_plan(config) if plan is None else plan)

    def replan(self, plan: WagerPlan) -> None:
        """The wagers of the rounds from the next one on (a seat absent sits them out)."""
        # As SimulatedRound: each wager placed as its window opens.
        self._wagers_after = wagers_by_step(self.config, plan)
        self._dealt_in = sum(1 for seat in plan.values() if self.config.rules.main_wager in seat)

    def play(self) -> PlayedRound:
        """One round, and the shuffle and burns before it when the shoe is low."""
        played = PlayedRound()
        dealer = self.dealer
        if dealer.shoe is None or dealer.shoe.remaining < dealer.reshuffle_below:
            dealer.shuffle(played)
        opening = self._wagers_after.get(None, [])
        if not opening:
            return played  # no wager, no round
        for event in opening:
            played.apply(self.engine, event)
        round_ = self.engine.round
        assert round_ is not None
        # Each step ends False when the shoe ran out and the round was voided.
        if self._initial_deal(played):
            while round_.stage is RoundStage.PLAYING and self._play_turn(played, round_):
                pass
            while round_.stage is RoundStage.DEALER and self._deal(played):
                pass
        return played

    def _initial_deal(self, played: PlayedRound) -> bool:
        round_ = self.engine.round
        assert round_ is not None
        for step in self.config.rules.deal_order:
            if round_.betting_open:  # as SimulatedRound: "No more bets" before the cards
                played.apply(self.engine, _CLOSE_BETTING)
            cards = self._dealt_in if step in _PLAYER_STEPS else 1
            for _ in range(cards):
                if not self._deal(played):
                    return False
            for event in self._wagers_after.get(step, ()):
                played.apply(self.engine, event)
        return True

    def _play_turn(self, played: PlayedRound, round_: Round) -> bool:
        assert round_.turn is not None
        seat_number, index = round_.turn
        seat = round_.seats[seat_number]
        hand = seat.hands[index]
        if len(hand.cards) < 2:
            return self._deal(played)  # a split hand takes its second card
        config = self.config
        legal = legal_actions_for(config, hand.cards, from_split=len(seat.hands) > 1)
        if len(seat.hands) >= config.max_hands_per_seat:
            legal -= {Action.SPLIT}
        upcard = round_.upcard
        assert upcard is not None  # play starts after the initial deal
        decision = Decision(
            seat_number,
            hand.number,
            tuple(hand.cards),
            upcard,
            legal,
            config.dealer_hits_soft_17,
        )
        action = basic_strategy_policy(decision, self.rng)
        played.apply(self.engine, PlayerAction(action, seat_number, hand.number))
        if action in (Action.HIT, Action.DOUBLE):
            return self._deal(played)
        return True

    def _deal(self, played: PlayedRound) -> bool:
        shoe = self.dealer.shoe
        assert shoe is not None
        card = next(shoe, None)
        if card is None:
            played.apply(self.engine, VoidRound("the shoe ran out of cards"))
            return False
        played.apply(self.engine, DealCard(card))
        return True


# ---------------------------------------------------------------------------- chunks
@dataclass(frozen=True, slots=True)
class Chunk:
    """A share of a run: plain data, so a worker process can be handed it."""

    table: Mapping[str, Any]  # TableConfig.to_mapping()
    seed: str
    rounds: int
    seats: int = SEATS


def plan_chunks(
    config: TableConfig,
    rounds: int,
    seed: int,
    *,
    seats: int = SEATS,
    chunk_rounds: int = CHUNK_ROUNDS,
) -> list[Chunk]:
    """`rounds` cut into chunks; each chunk's seed names the run's seed, table and chunk."""
    if rounds < 0 or chunk_rounds < 1:
        raise ValueError("rounds must be at least 0 and a chunk at least one round")
    table = config.to_mapping()
    full, rest = divmod(rounds, chunk_rounds)
    sizes = [chunk_rounds] * full + ([rest] if rest else [])
    return [
        Chunk(
            table, f"shoe2mqtt-simulate/{seed}/{config.game.value}/{config.table_id}/{i}", n, seats
        )
        for i, n in enumerate(sizes)
    ]


def simulate_chunk(chunk: Chunk) -> Tally:
    """Play one chunk from a fresh shoe and tally it. Deterministic in `chunk`."""
    config = TableConfig.from_mapping(chunk.table)
    # A string seed is hashed with SHA-512 by `random.Random`: the same in every process.
    rng = random.Random(chunk.seed)  # noqa: S311 - a reproducible shoe, not a secret
    player = FastRoundPlayer(config, rng, wager_plan(config, chunk.seats))
    tally = Tally(config.game.value)
    for _ in range(chunk.rounds):
        tally.record(player.play().outputs)
    return tally


def merge_tallies(game: str, tallies: Iterable[Tally]) -> Tally:
    merged = Tally(game)
    for tally in tallies:
        merged.merge(tally)
    return merged
