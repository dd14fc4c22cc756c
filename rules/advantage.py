"""Advantage play as evidence: each seat's wagers beside the count, and how likely chance is.

Fed the engine's outputs (`AdvantageWatch.observe`), it keeps the shoe's count as a player
could (rules.counting) and notes, at each round's start, the true count, the ten-value
excess and, for each seat that played, its main wager and its 20 point bonus wager. At each
shuffle it weighs three things per seat, over the shoe that ended and over the seat's
session (its rounds since it last sat out a whole shoe):

- `bet_count`: the main wager (its logarithm: a ramp multiplies) against the true count,
  with the bet spread (the largest wager over the least);
- `wonging`: the seat's presence at the table's rounds against the true count (a wonger is
  in when the count is high and out when it is low);
- `bonus`: whether the seat bet the 20 point bonus against the ten-value excess.

Each is `S = sum of (w_j - w_i)(x_j - x_i)` over consecutive rounds `i`, `j` of one shoe,
`w` the seat's choice and `x` the count at the round's start, and `z = S / sd(S)` with `sd`
taken over the shuffle: a count-blind seat's choices do not depend on the order of the cards
(however they depend on each other: a bettor who drifts up and down is count-blind too), and
both counts are martingales over the shuffle (rules.counting): their changes between rounds
are uncorrelated, each with variance `v(c_j) - v(c_i)` (`v(c)` after `c` cards seen), and
shoes are independent. So `E[S] = 0` and `Var(S) = sum of (w_j - w_i)^2 (v(c_j) - v(c_i))`
exactly, for any count-blind seat; `p` is the normal tail of `z` (docs/math.md holds both
against simulated count-blind bettors). A seat whose `z` reaches the threshold (and, for
bet_count, whose spread reaches its own) is flagged: evidence for a person to weigh, not a
verdict.
"""

from __future__ import annotations

import collections
import dataclasses
import functools
import math
import operator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal, Protocol, TypeVar

from rules import kept_rounds
from rules.counting import COUNT_SYSTEMS, DEFAULT_SYSTEM, ShoeCount
from rules.games import WagerKind
from rules.kept_rounds import KeptRound, Seating, shoe_of
from rules.outputs import (
    CardDealt,
    HoleCardRevealed,
    RoundEnded,
    RoundOpened,
    ShoeShuffled,
    WagerAccepted,
    WagerWithdrawn,
)

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable, Mapping, Sequence

    from rules.cards import DeckKind
    from rules.config import TableConfig
    from rules.outputs import Output

Test = Literal["bet_count", "wonging", "bonus"]
Scope = Literal["shoe", "session"]
# The table's latest rounds only: a seat that never sits out a shoe must not grow the table's
# memory, or the checkpoint written at every round's end, without end. 600 rounds is 20 to 50
# shoes, 30 to 75 KB of checkpoint (packed: rules.kept_rounds); a longer session is weighed
# over its latest 600 rounds.
MAX_ROUNDS = 600


@dataclass(frozen=True, slots=True)
class Thresholds:
    """When a seat's evidence is flagged (`[surveillance]`, docs/configuration.md; the
    defaults are chosen from the simulated players in docs/math.md)."""

    evidence_z: float = 4.0
    min_rounds: int = 10  # rounds a bet_count or bonus test needs before it can flag
    min_spread: float = 2.0  # a bet_count flag needs the largest wager this many times the least
    min_moves: int = 4  # entries and exits a wonging flag needs


def seating(seats: Mapping[int, tuple[int, int]]) -> Seating:
    """`seats` as a round keeps them: by seat."""
    return tuple(sorted(seats.items()))


@dataclass(frozen=True, slots=True)
class TableRound:
    """One round the table dealt: the counts at its start, and each seat's wagers (cents).

    Kept small (a floor holds 600 of each table's): the counts as the whole numbers they
    come from, the true count and the ten-value excess worked out from them when asked, by
    `count`'s system and shoe (the table's, one object for all its rounds)."""

    round_id: int
    shoe: int
    seen: int  # cards seen face up before it, since the shuffle
    running: int
    tens_seen: int
    seats: Seating  # (seat, (main wager, 20 point bonus or 0)) by seat
    count: ShoeCount = dataclasses.field(compare=False, repr=False)

    @property
    def true_count(self) -> float:
        return self.count.true_count_at(self.seen, self.running)

    @property
    def ten_excess(self) -> float:
        return self.count.ten_excess_at(self.seen, self.tens_seen)

    def kept(self) -> KeptRound:
        """As the table keeps it (`AdvantageWatch`): packed (rules.kept_rounds)."""
        return kept_rounds.pack(
            self.round_id, self.shoe, self.seen, self.running, self.tens_seen, self.seats
        )

    def state(self) -> list[Any]:
        """Whole numbers only: the counts are worked out again from them, exactly. (A
        checkpoint keeps its rounds packed: `AdvantageWatch.state`.)"""
        seats = {str(seat): list(wagers) for seat, wagers in self.seats}
        return [self.round_id, self.shoe, self.seen, self.running, self.tens_seen, seats]

    @classmethod
    def from_state(cls, row: Sequence[Any], count: ShoeCount) -> TableRound:
        """From `state()`, the counts worked out by `count`'s system and shoe."""
        round_id, shoe, seen, running, tens_seen, seats = row
        wagers = {int(seat): (int(pair[0]), int(pair[1])) for seat, pair in seats.items()}
        return cls(
            int(round_id), int(shoe), int(seen), int(running), int(tens_seen),
            seating(wagers), count,
        )  # fmt: skip

    def to_mapping(self) -> dict[str, Any]:
        """For the surveillance room: the counts at the round's start beside the wagers."""
        return {
            "round": self.round_id,
            "running_count": self.running,
            "true_count": round(self.true_count, 2),
            "ten_excess": round(self.ten_excess, 2),
            "seats": {
                str(seat): {"main_cents": main, "bonus_cents": bonus}
                for seat, (main, bonus) in self.seats
            },
        }


@dataclass(slots=True)  # not frozen: made 600 at a time, and frozen fields cost to set
class _Weighed:
    """A round as the tests weigh it: its counts worked out and its seats as a dict, once for
    every seat and scope weighed at one shuffle (the kept round is the smaller of the two)."""

    shoe: int
    seen: int
    true_count: float
    ten_excess: float
    seats: dict[int, tuple[int, int]]

    @classmethod
    def of(cls, kept: KeptRound, count: ShoeCount) -> _Weighed:
        _round_id, shoe, seen, running, tens_seen, seats = kept_rounds.unpack(kept)
        return cls(
            shoe, seen, count.true_count_at(seen, running), count.ten_excess_at(seen, tens_seen),
            dict(seats),
        )  # fmt: skip


class Dealt(Protocol):
    """What `shuffle_z` reads of a round: its shoe, and the cards seen before it."""

    @property
    def shoe(self) -> int: ...

    @property
    def seen(self) -> int: ...


_Round = TypeVar("_Round", bound=Dealt)


@dataclass(frozen=True, slots=True)
class Evidence:
    """One test of one seat over one scope, flagged or not."""

    seat: int
    test: Test
    scope: Scope
    shoe: int  # the shoe that ended
    rounds: int  # rounds weighed
    correlation: float  # Spearman's rho of the seat's choice and the count: for reading
    z: float
    p: float  # how likely a count-blind seat scores z or more (the normal tail)
    flagged: bool
    spread: float | None = None  # bet_count: the largest wager over the least
    wagers: tuple[int, int] | None = None  # bet_count: the least and the largest, cents
    moves: int | None = None  # wonging: the entries and exits

    def to_mapping(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "seat": self.seat,
            "test": self.test,
            "scope": self.scope,
            "shoe": self.shoe,
            "rounds": self.rounds,
            "correlation": round(self.correlation, 4),
            "z": round(self.z, 3),
            "p": float(f"{self.p:.3g}"),
            "flagged": self.flagged,
        }
        if self.spread is not None and self.wagers is not None:
            body["spread"] = round(self.spread, 2)
            body["least_cents"], body["largest_cents"] = self.wagers
        if self.moves is not None:
            body["moves"] = self.moves
        return body


@dataclass(slots=True)
class _Session:
    first_shoe: int
    last_shoe: int


class AdvantageWatch:
    """One table's seats against its shoes' counts."""

    def __init__(
        self,
        config: TableConfig,
        system: str = DEFAULT_SYSTEM,
        thresholds: Thresholds | None = None,
    ) -> None:
        self.main = config.rules.main_wager
        self.system = system
        self.thresholds = thresholds or Thresholds()
        self.count = ShoeCount(COUNT_SYSTEMS[system], config.decks, config.deck_kind)
        self.shoe = 0
        self._kept: list[KeptRound] = []
        self.sessions: dict[int, _Session] = {}
        # The system and the shoe, never counted in: every round works its counts out by it.
        self._makeup = ShoeCount(COUNT_SYSTEMS[system], config.decks, config.deck_kind)
        self._variances = _variances(system, config.decks, config.deck_kind)
        self._wagers: dict[int, dict[WagerKind, int]] = {}
        # The round, and the cards seen, the running count and the ten-value cards seen at
        # its start.
        self._opening: tuple[int, int, int, int] = (0, 0, 0, 0)
        self._dealt = False

    # ---------------------------------------------------------------- fed by the engine
    def observe(self, outputs: Iterable[Output]) -> list[Evidence]:
        """Take the engine's outputs; at a shuffle, the evidence of the shoe that ended."""
        evidence: list[Evidence] = []
        for output in outputs:
            if isinstance(output, CardDealt):
                self._dealt = True
                if output.card is not None:
                    self.count.seen(output.card)
            elif isinstance(output, HoleCardRevealed):
                self.count.seen(output.card)
            elif isinstance(output, WagerAccepted):
                self._wagers.setdefault(output.seat, {})[output.wager] = output.amount
            elif isinstance(output, WagerWithdrawn):
                self._wagers.get(output.seat, {}).pop(output.wager, None)
            elif isinstance(output, RoundOpened):
                self._wagers, self._dealt = {}, False
                count = self.count
                self._opening = (output.round_id, count.cards_seen, count.running, count.tens_seen)
            elif isinstance(output, RoundEnded):
                self._round_ended()
            elif isinstance(output, ShoeShuffled):
                evidence += self.shoe_ended()
                self.shoe = output.shoe
                self.count = ShoeCount(self.count.tags, self.count.decks, self.count.deck_kind)
        return evidence

    def _round_ended(self) -> None:
        if not self._dealt:  # voided before its first card: nobody played it
            return
        round_id, seen, running, tens_seen = self._opening
        seats = {
            seat: (wagers[self.main], wagers.get(WagerKind.TWENTY_POINT_BONUS, 0))
            for seat, wagers in self._wagers.items()
            if self.main in wagers
        }
        played = seating(seats)
        self._kept.append(kept_rounds.pack(round_id, self.shoe, seen, running, tens_seen, played))
        del self._kept[:-MAX_ROUNDS]
        for seat in seats:
            session = self.sessions.setdefault(seat, _Session(self.shoe, self.shoe))
            session.last_shoe = self.shoe
        self._wagers, self._dealt = {}, False

    def shoe_ended(self) -> list[Evidence]:
        """Weigh every seat that played the shoe in play; a seat that sat it out entirely
        ends its session. Called at the shuffle (`observe` does)."""
        evidence: list[Evidence] = []
        weighable = self._weighable(min((s.first_shoe for s in self.sessions.values()), default=0))
        counts: dict[int, Ranked] = {}
        for seat in sorted(self.sessions):
            session = self.sessions[seat]
            if session.last_shoe != self.shoe:
                del self.sessions[seat]  # sat out the whole shoe: a new session next time
                continue
            evidence += self._weigh(weighable, seat, "shoe", self.shoe, counts)
            evidence += self._weigh(weighable, seat, "session", session.first_shoe, counts)
        # Rounds before every session still open are weighed no more.
        first = min((s.first_shoe for s in self.sessions.values()), default=self.shoe + 1)
        self._kept = [kept for kept in self._kept if shoe_of(kept) >= first]
        return evidence

    def weigh(self, seat: int, scope: Scope, first_shoe: int) -> list[Evidence]:
        """The seat's evidence over the table's rounds from `first_shoe` on."""
        return self._weigh(self._weighable(first_shoe), seat, scope, first_shoe)

    def _weighable(self, first_shoe: int) -> list[_Weighed]:
        return [
            _Weighed.of(kept, self._makeup) for kept in self._kept if shoe_of(kept) >= first_shoe
        ]

    def _weigh(
        self,
        weighable: Sequence[_Weighed],
        seat: int,
        scope: Scope,
        first_shoe: int,
        counts: dict[int, Ranked] | None = None,
    ) -> list[Evidence]:
        """`counts`: the true counts' ranks over the rounds from each first shoe, kept for
        the other seats weighed at the same shuffle."""
        rounds = [r for r in weighable if r.shoe >= first_shoe]
        played = [r for r in rounds if seat in r.seats]
        if not played:
            return []
        counts = {} if counts is None else counts
        if first_shoe not in counts:
            counts[first_shoe] = ranked([r.true_count for r in rounds])
        out = [
            self._bet_count(seat, scope, played),
            self._wonging(seat, scope, rounds, counts[first_shoe]),
        ]
        if any(r.seats[seat][1] for r in played):
            out.append(self._bonus(seat, scope, played))
        return out

    # ---------------------------------------------------------------- the tests
    def _bet_count(self, seat: int, scope: Scope, played: Sequence[_Weighed]) -> Evidence:
        wagers = [r.seats[seat][0] for r in played]
        choice = [math.log(wager) if wager > 0 else 0.0 for wager in wagers]
        z = shuffle_z(played, choice, _true_count, self._count_variance)
        least, largest = min(wagers), max(wagers)
        spread = largest / least if least > 0 else math.inf
        limits = self.thresholds
        flagged = (
            len(played) >= limits.min_rounds
            and z >= limits.evidence_z
            and spread >= limits.min_spread
        )
        rho = rank_correlation(wagers, [r.true_count for r in played])
        return Evidence(
            seat, "bet_count", scope, self.shoe, len(played), rho, z, upper_tail(z), flagged,
            spread=spread, wagers=(least, largest),
        )  # fmt: skip

    def _bonus(self, seat: int, scope: Scope, played: Sequence[_Weighed]) -> Evidence:
        choice = [1.0 if r.seats[seat][1] else 0.0 for r in played]
        z = shuffle_z(played, choice, _ten_excess, self._ten_variance)
        flagged = len(played) >= self.thresholds.min_rounds and z >= self.thresholds.evidence_z
        rho = rank_correlation(choice, [r.ten_excess for r in played])
        return Evidence(
            seat, "bonus", scope, self.shoe, len(played), rho, z, upper_tail(z), flagged
        )

    def _wonging(
        self, seat: int, scope: Scope, rounds: Sequence[_Weighed], counts: Ranked
    ) -> Evidence:
        presence = [1.0 if seat in r.seats else 0.0 for r in rounds]
        moves = sum(
            1
            for before, after, b, a in zip(rounds, rounds[1:], presence, presence[1:], strict=False)
            if before.shoe == after.shoe and b != a
        )
        z = shuffle_z(rounds, presence, _true_count, self._count_variance)
        flagged = moves >= self.thresholds.min_moves and z >= self.thresholds.evidence_z
        # The counts' ranks stand for the counts (rho reads only ranks), made once a shuffle.
        rho = rank_correlation(presence, counts.ranks, counts)
        return Evidence(
            seat, "wonging", scope, self.shoe, len(rounds), rho, z, upper_tail(z), flagged,
            moves=moves,
        )  # fmt: skip

    def _count_variance(self, seen: int) -> float:
        counts = self._variances[0]
        return counts[seen] if 0 <= seen < len(counts) else self.count.true_count_variance(seen)

    def _ten_variance(self, seen: int) -> float:
        tens = self._variances[1]
        return tens[seen] if 0 <= seen < len(tens) else self.count.ten_excess_variance(seen)

    # ---------------------------------------------------------------- views and state
    @property
    def rounds(self) -> list[TableRound]:
        """The rounds kept, oldest first, each made on asking."""
        return [TableRound(*kept_rounds.unpack(kept), self._makeup) for kept in self._kept]

    def shoe_rounds(self) -> list[TableRound]:
        """The rounds of the shoe in play (or, at its shuffle, of the shoe that ended)."""
        return [
            TableRound(*kept_rounds.unpack(kept), self._makeup)
            for kept in self._kept
            if shoe_of(kept) == self.shoe
        ]

    def seats(self) -> dict[int, dict[str, Any]]:
        """Each seat's session so far, for the pit's report: rounds, shoes, and the
        session's evidence as it stands (flagged at the shoe's end only)."""
        view: dict[int, dict[str, Any]] = {}
        counts: dict[int, Ranked] = {}
        weighable = self._weighable(min((s.first_shoe for s in self.sessions.values()), default=0))
        for seat, session in sorted(self.sessions.items()):
            played = [r for r in weighable if r.shoe >= session.first_shoe and seat in r.seats]
            if not played:
                continue
            view[seat] = {
                "rounds": len(played),
                "shoes": len({r.shoe for r in played}),
                "evidence": [
                    e.to_mapping()
                    for e in self._weigh(weighable, seat, "session", session.first_shoe, counts)
                ],
            }
        return view

    def state(self) -> dict[str, Any]:
        return {
            "system": self.system,
            "shoe": self.shoe,
            "count": self.count.state(),
            "rounds": kept_rounds.joined(self._kept),  # at every round's end: packed
            "sessions": {
                str(seat): [session.first_shoe, session.last_shoe]
                for seat, session in self.sessions.items()
            },
            "wagers": {
                str(seat): {kind.value: amount for kind, amount in wagers.items()}
                for seat, wagers in self._wagers.items()
            },
            "opening": list(self._opening),
            "dealt": self._dealt,
        }

    @classmethod
    def from_state(
        cls, config: TableConfig, data: Mapping[str, Any], thresholds: Thresholds | None = None
    ) -> AdvantageWatch:
        """From `state()`; KeyError, TypeError or ValueError when malformed."""
        watch = cls(config, str(data["system"]), thresholds)
        watch.shoe = int(data["shoe"])
        watch.count.restored(data["count"])
        watch._kept = _kept_of_state(data["rounds"], watch._makeup)
        watch.sessions = {
            int(seat): _Session(int(first), int(last))
            for seat, (first, last) in data["sessions"].items()
        }
        watch._wagers = {
            int(seat): {WagerKind(kind): int(amount) for kind, amount in wagers.items()}
            for seat, wagers in data["wagers"].items()
        }
        round_id, seen, running, tens_seen = data["opening"]
        watch._opening = (int(round_id), int(seen), int(running), int(tens_seen))
        watch._dealt = bool(data["dealt"])
        return watch


def _kept_of_state(rounds: str | Sequence[Any], makeup: ShoeCount) -> list[KeptRound]:
    """A checkpoint's rounds: packed (`kept_rounds.joined`), or as the rows of each round's
    `TableRound.state()` that checkpoints written before the packing hold."""
    if isinstance(rounds, str):
        return kept_rounds.split(rounds)
    return [TableRound.from_state(row, makeup).kept() for row in rounds]


@functools.lru_cache(maxsize=16)
def _variances(
    system: str, decks: int, kind: DeckKind
) -> tuple[tuple[float, ...], tuple[float, ...]]:
    """The variances of the true count and of the ten-value excess after each number of
    cards seen, 0 to the whole shoe, as `ShoeCount` works them out: the weighing asks for
    them some 10,000 times at a seven-seat table's shuffle. One pair for every table of the
    same system and shoe."""
    count = ShoeCount(COUNT_SYSTEMS[system], decks, kind)
    seen = range(count.shoe_size + 1)
    counts = tuple(count.true_count_variance(c) for c in seen)
    return counts, tuple(count.ten_excess_variance(c) for c in seen)


def _true_count(row: _Weighed) -> float:
    return row.true_count


def _ten_excess(row: _Weighed) -> float:
    return row.ten_excess


def shuffle_z(
    rounds: Sequence[_Round],
    choice: Sequence[float],
    index: Callable[[_Round], float],
    variance: Callable[[int], float],
) -> float:
    """z of `sum (choice_j - choice_i) * (index_j - index_i)` over consecutive rounds `i`, `j`
    of one shoe, against the shuffle (module docstring); 0 when the choice never changes (a
    flat bettor, a seat that never left)."""
    total = spread = 0.0
    for (before, was), (after, now) in zip(
        zip(rounds, choice, strict=True), zip(rounds[1:], choice[1:], strict=True), strict=False
    ):
        change = now - was
        if change == 0 or before.shoe != after.shoe:
            continue
        total += change * (index(after) - index(before))
        spread += change * change * (variance(after.seen) - variance(before.seen))
    if spread <= 1e-12:
        return 0.0
    return total / math.sqrt(spread)


# -------------------------------------------------------------------- statistics
def mid_ranks(values: Sequence[float]) -> list[float]:
    """1-based ranks, ties given the mean of the ranks they span."""
    return ranked(values).ranks


@dataclass(frozen=True, slots=True)
class Ranked:
    """Values' mid-ranks, and the sum of the ranks' squared deviations from their mean."""

    ranks: list[float]
    spread: float


def ranked(values: Sequence[float]) -> Ranked:
    """Each distinct value ranked once (a seat's wagers and presence have few), then looked
    up. The spread is `(n^3 - n - sum of (t^3 - t) over ties of t) / 12`, which the squared
    deviations sum to exactly: every rank is a multiple of a half."""
    tally = collections.Counter(values)
    rank_of: dict[float, float] = {}
    below = ties = 0
    for value in sorted(tally):
        tied = tally[value]
        rank_of[value] = below + (tied + 1) / 2
        below += tied
        ties += tied**3 - tied
    n = len(values)
    return Ranked([rank_of[value] for value in values], (n**3 - n - ties) / 12)


def rank_correlation(
    xs: Sequence[float], ys: Sequence[float], ys_ranked: Ranked | None = None
) -> float:
    """Spearman's rho: Pearson's correlation of the mid-ranks; 0 when either has no spread
    (a flat bettor correlates with nothing). `ys_ranked`, when given, is `ranked(ys)`: one
    count's ranks serve every seat weighed over the same rounds. Every sum below is of
    multiples of a quarter far below 2^53: exact, so the same as the textbook's deviations."""
    n = len(xs)
    if len(ys) != n:
        raise ValueError(f"{n} values beside {len(ys)}")
    if n < 2:
        return 0.0
    x, y = ranked(xs), ys_ranked or ranked(ys)
    if x.spread <= 0 or y.spread <= 0:
        return 0.0
    mean = (n + 1) / 2
    products: float = sum(map(operator.mul, x.ranks, y.ranks))
    sxy = products - n * mean * mean
    return max(-1.0, min(1.0, sxy / math.sqrt(x.spread * y.spread)))


def upper_tail(z: float) -> float:
    """P(Z >= z) for a standard normal Z."""
    return 0.5 * math.erfc(z / math.sqrt(2))
