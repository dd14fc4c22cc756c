"""How often the surveillance flags a card counter, and how often it flags a player who is not.

    uv run python bench/surveillance.py [--sessions N] [--shoes S] [--seed K] [--workers W]

Sessions of seeded six-deck shoes (75 % dealt, one burn) are dealt through the rules engine
(`rules.analysis.simulation.FastRoundPlayer`: basic strategy at every seat), each seat bet by
one of the players below, and every output is fed to the surveillance's `AdvantageWatch`
exactly as the daemon feeds it. The players keep their own count from the cards they see
(a Hi-Lo count written here, not the watch's), and bet from it:

- `counter_1_8`, `counter_1_12`: Hi-Lo, one unit up to a true count of +1, then 2 (1-8) or
  3 (1-12) units more per point, at most 8 or 12 units;
- `wonger`: comes in at a true count of +2 or more, leaves below 0, bets 1-4 while in;
- `bonus_counter`: a flat main wager, the 20 point bonus only when ten-value cards are at
  least 1.5 percentage points richer than in a full shoe;
- count-blind: `flat` (one unit, always, and the bonus always), `random_spread` (1, 2, 4 or 8
  units at random each round), `drifting` (a level of 1-8 units that moves one step up or
  down a fifth of the rounds), `come_and_go` (sits out a round after any round with chance
  0.15, comes back with chance 0.35), `random_bonus` (the bonus on a third of the rounds).

Two tables: `crowded` (seven seats: the counters, the wonger, the bonus counter and three
count-blind players) and `nulls` (seven count-blind players). For every seat, shoe and test
the z of the shoe and of the session so far is kept, and the flag rate per shoe and per
session is printed for the default thresholds and for a grid around them.
"""

from __future__ import annotations

import argparse
import math
import random
from collections import defaultdict
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from rules.advantage import AdvantageWatch, Evidence, Thresholds
from rules.analysis.simulation import FastRoundPlayer
from rules.config import TableConfig
from rules.games import WagerKind
from rules.outputs import CardBurned, CardDealt, HoleCardRevealed, ShoeShuffled

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

    from rules.outputs import Output

UNIT = 1_000  # cents: $10
BONUS = 500
DECKS = 6
TABLE = TableConfig.from_mapping(
    {
        "id": "bench-surveillance",
        "game": "blackjack",
        "decks": DECKS,
        "seats": 7,
        "twenty_point_bonus": True,
        "limits": {
            "blackjack": {"min": "10.00", "max": "1000.00"},
            "twenty_point_bonus": {"min": "1.00", "max": "100.00"},
        },
    }
)
LINEUPS: dict[str, tuple[str, ...]] = {
    "crowded": (
        "counter_1_8", "counter_1_12", "wonger", "bonus_counter",
        "flat", "random_spread", "drifting",
    ),
    "quiet": ("counter_1_8", "counter_1_12", "wonger"),
    "heads_up": ("counter_1_8", "random_spread"),
    "nulls": (
        "flat", "random_spread", "drifting", "come_and_go",
        "random_bonus", "random_spread", "drifting",
    ),
}  # fmt: skip
COUNTERS = frozenset({"counter_1_8", "counter_1_12", "wonger", "bonus_counter"})
# Hi-Lo, written out here as the players keep it (an oracle apart from rules.counting).
_HI_LO = {"2": 1, "3": 1, "4": 1, "5": 1, "6": 1, "10": -1, "J": -1, "Q": -1, "K": -1, "A": -1}
_TEN_VALUE = frozenset({"10", "J", "Q", "K"})


class PlayersCount:
    """The count every player at the table keeps from what it sees."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.running, self.gone, self.tens = 0, 0, 0

    def see(self, outputs: Iterable[Output]) -> None:
        for output in outputs:
            if isinstance(output, ShoeShuffled):
                self.reset()
            elif isinstance(output, CardBurned) or (
                isinstance(output, CardDealt) and output.card is None
            ):
                self.gone += 1
            elif isinstance(output, CardDealt | HoleCardRevealed):
                assert output.card is not None
                rank = output.card.rank.value
                self.running += _HI_LO.get(rank, 0)
                self.tens += rank in _TEN_VALUE
                self.gone += isinstance(output, CardDealt)

    @property
    def true_count(self) -> float:
        return self.running / max((DECKS * 52 - self.gone) / 52, 0.5)

    @property
    def ten_excess(self) -> float:
        return 100 * ((DECKS * 16 - self.tens) / max(DECKS * 52 - self.gone, 1) - 16 / 52)


@dataclass
class Player:
    kind: str
    rng: random.Random
    level: int = 1
    playing: bool = True

    def wagers(self, count: PlayersCount) -> dict[WagerKind, int] | None:
        """This round's wagers (None: sits it out)."""
        tc = count.true_count
        main, bonus = self._main(tc), False
        if self.kind == "wonger":
            self.playing = tc >= 0 if self.playing else tc >= 2
        elif self.kind == "come_and_go":
            chance = 0.15 if self.playing else 0.35
            if self.rng.random() < chance:
                self.playing = not self.playing
        if not self.playing or main is None:
            return None
        if self.kind == "flat":
            bonus = True
        elif self.kind == "bonus_counter":
            bonus = count.ten_excess >= 1.5
        elif self.kind == "random_bonus":
            bonus = self.rng.random() < 1 / 3
        return {WagerKind.BLACKJACK: main * UNIT} | (
            {WagerKind.TWENTY_POINT_BONUS: BONUS} if bonus else {}
        )

    def _main(self, tc: float) -> int | None:
        step = {"counter_1_8": 2, "counter_1_12": 3, "wonger": 1}.get(self.kind)
        top = {"counter_1_8": 8, "counter_1_12": 12, "wonger": 4}.get(self.kind)
        if step is not None and top is not None:
            return min(max(1, 1 + step * (math.floor(tc) - 1)), top)
        if self.kind == "random_spread":
            return self.rng.choice((1, 2, 4, 8))
        if self.kind == "drifting":
            if self.rng.random() < 0.2:
                self.level = min(8, max(1, self.level + self.rng.choice((-1, 1))))
            return self.level
        return 1


@dataclass
class SessionResult:
    """Per seat, per shoe (1-based), the evidence the watch gave at that shoe's end."""

    lineup: str
    evidence: dict[int, list[list[Evidence]]] = field(default_factory=dict)


def play_session(lineup: str, seed: int, session: int, shoes: int) -> SessionResult:
    rng = random.Random(f"bench-surveillance/{seed}/{lineup}/{session}")  # noqa: S311 - a reproducible shoe
    kinds = LINEUPS[lineup]
    players = {
        seat: Player(kind, random.Random(rng.random()))  # noqa: S311 - a reproducible player
        for seat, kind in enumerate(kinds, 1)
    }
    table = FastRoundPlayer(TABLE, rng, {})
    watch = AdvantageWatch(TABLE, thresholds=Thresholds(evidence_z=math.inf))
    count = PlayersCount()
    result = SessionResult(lineup, {seat: [] for seat in players})
    while True:
        dealer = table.dealer
        if dealer.shoe is None or dealer.shoe.remaining < dealer.reshuffle_below:
            count.reset()  # the players see the shuffle before they bet
        plan = {seat: w for seat, p in players.items() if (w := p.wagers(count)) is not None}
        assert plan, "every lineup has a seat that always plays"
        table.replan(plan)
        outputs = table.play().outputs
        count.see(outputs)
        for item in watch.observe(outputs):
            if item.shoe >= 1:
                _keep(result, item)
        if watch.shoe > shoes:
            return result


def _keep(result: SessionResult, item: Evidence) -> None:
    shoes = result.evidence[item.seat]
    while len(shoes) < item.shoe:
        shoes.append([])
    shoes[item.shoe - 1].append(item)


# -------------------------------------------------------------------- rates
def flagged(item: Evidence, limits: Thresholds) -> bool:
    if item.test == "wonging":
        return (item.moves or 0) >= limits.min_moves and item.z >= limits.evidence_z
    enough = item.rounds >= limits.min_rounds and item.z >= limits.evidence_z
    if item.test == "bet_count":
        return enough and (item.spread or 0) >= limits.min_spread
    return enough


def rates(
    results: list[SessionResult], limits: Thresholds, within: int
) -> dict[tuple[str, str], tuple[int, int, int, int, int, int]]:
    """Per (lineup, player): sessions, flagged within `within` shoes, flagged at all, shoes,
    shoes flagged by that shoe's own evidence, flagged within twice `within` shoes."""
    tally: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0, 0, 0, 0, 0])
    for result in results:
        kinds = LINEUPS[result.lineup]
        for seat, shoes in result.evidence.items():
            row = tally[result.lineup, kinds[seat - 1]]
            row[0] += 1
            first = next(
                (i for i, items in enumerate(shoes, 1) if any(flagged(e, limits) for e in items)),
                None,
            )
            row[1] += first is not None and first <= within
            row[2] += first is not None
            row[3] += len(shoes)
            row[4] += sum(
                any(flagged(e, limits) for e in items if e.scope == "shoe") for items in shoes
            )
            row[5] += first is not None and first <= 2 * within
    return {key: (r[0], r[1], r[2], r[3], r[4], r[5]) for key, r in tally.items()}


def _sessions(args: tuple[str, int, int, int, int]) -> list[SessionResult]:
    lineup, seed, start, stop, shoes = args
    return [play_session(lineup, seed, n, shoes) for n in range(start, stop)]


def run(sessions: int, shoes: int, seed: int, workers: int) -> list[SessionResult]:
    jobs = [
        (lineup, seed, start, min(start + 50, sessions), shoes)
        for lineup in LINEUPS
        for start in range(0, sessions, 50)
    ]
    if workers <= 1:
        return [r for job in jobs for r in _sessions(job)]
    with ProcessPoolExecutor(workers) as pool:
        return [r for chunk in pool.map(_sessions, jobs) for r in chunk]


def report(results: list[SessionResult], limits: Thresholds, *, within: int = 2) -> list[str]:
    lines = [
        (
            f"thresholds: z >= {limits.evidence_z}, at least {limits.min_rounds} rounds, "
            f"bet spread >= {limits.min_spread}, wonging at least {limits.min_moves} moves"
        ),
        (
            f"{'table':<8} {'player':<14} {'sessions':>8} {f'<= {within} shoes':>12} "
            f"{f'<= {2 * within} shoes':>12} {'any shoe':>10} {'per shoe':>10}"
        ),
    ]
    for (lineup, kind), (n, early, ever, shoes, per_shoe, later) in sorted(
        rates(results, limits, within).items()
    ):
        lines.append(
            f"{lineup:<8} {kind:<14} {n:>8} {early / n:>12.4f} {later / n:>12.4f} "
            f"{ever / n:>10.4f} {per_shoe / max(shoes, 1):>10.4f}"
        )
    return lines


def grid(results: list[SessionResult], within: int) -> list[str]:
    """The 1-8 counter's detection within `within` shoes and the session false-alarm rate of
    the worst count-blind player (its seats at every table pooled), around the defaults."""
    lines = [f"{'z':>5} {'rounds':>6} {'spread':>6}  {'1-8 counter':>11}  worst count-blind seat"]
    for z in (2.5, 3.0, 3.5, 3.7, 4.0, 4.5):
        for min_rounds in (10, 20):
            limits = Thresholds(evidence_z=z, min_rounds=min_rounds)
            table = rates(results, limits, within)
            detected = " ".join(
                f"{lineup} {v[1] / v[0]:.3f}"
                for (lineup, k), v in sorted(table.items())
                if k == "counter_1_8"
            )
            nulls = {key: v for key, v in table.items() if key[1] not in COUNTERS}
            pooled: dict[str, list[int]] = defaultdict(lambda: [0, 0])
            for (_, kind), v in nulls.items():
                pooled[kind][0] += v[0]
                pooled[kind][1] += v[2]
            worst = max(pooled, key=lambda k: pooled[k][1] / pooled[k][0])
            n, ever = pooled[worst]
            lines.append(
                f"{z:>5} {min_rounds:>6} {limits.min_spread:>6}  {detected}  "
                f"{worst} {ever}/{n} = {ever / n:.5f}"
            )
    return lines


def main(argv: list[str] | None = None, out: Callable[[str], Any] = print) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sessions", type=int, default=2_000, help="per table")
    parser.add_argument("--shoes", type=int, default=8, help="per session")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args(argv)
    results = run(args.sessions, args.shoes, args.seed, args.workers)
    out(f"{args.sessions} sessions of {args.shoes} shoes per table, seed {args.seed}")
    for line in report(results, Thresholds()):
        out(line)
    for line in grid(results, within=2):
        out(line)


if __name__ == "__main__":
    main()
