"""Ground truth under every interleaving, at scale: rounds through the real table service, each
held to what physically happened (docs/testing.md, "Ground truth").

    uv run python -m bench.interleaving --rounds 100000 --workers 2

The rounds are shared among the mixes (`daemon.testing.interleaving.MIXES`): the realistic
tier (each message delayed 0-50 ms, no fault but an ENQ shoe's own exact repeats) and the
0-300 ms tier take a quarter each, every fault class (at 0-50 ms) an equal share of the rest.
Each table plays `--session` rounds from its own seed (which picks the game, the shoe's
protocol and every delay and fault). Per mix it prints the rounds, the settlements the tables
published, those wrong in silence (goal 0), winners left unpaid without a flag (goal 0), the
other breaches of the invariant, the share of rounds a floorperson had to resolve (goal, at
realistic jitter: under 0.5 %) and why the tables held their cards; then the first breaches
found, each with the seed that reproduces it.
"""

from __future__ import annotations

import argparse
import collections
import multiprocessing
import time
from dataclasses import dataclass, field
from typing import Final

from daemon.testing.interleaving import MIXES, check, run

REALISTIC_GOAL: Final = 0.005  # of rounds a floorperson resolves at realistic jitter
TIERS: Final = ("realistic", "wide")  # a quarter of the rounds each
SHOWN: Final = 3  # breaches printed per mix


@dataclass
class Tally:
    """One mix's figures, summed over its tables."""

    tables: int = 0
    rounds: int = 0
    settlements: int = 0
    wrong: int = 0
    unpaid: int = 0
    other: int = 0  # flags without a notice, hole cards shown, holes in `seq`, unfinished
    supervised: int = 0
    voided: int = 0
    reasons: collections.Counter[str] = field(default_factory=collections.Counter)
    breaches: list[str] = field(default_factory=list)

    def add(self, other: Tally) -> None:
        for name in ("tables", "rounds", "settlements", "wrong", "unpaid", "other"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.supervised += other.supervised
        self.voided += other.voided
        self.reasons.update(other.reasons)
        self.breaches += other.breaches[: max(0, SHOWN - len(self.breaches))]


def play(task: tuple[str, int, int]) -> tuple[str, Tally]:
    """One table: `rounds` rounds of mix `name` from `seed`."""
    name, seed, rounds = task
    outcome = run(seed, MIXES[name], rounds=rounds)
    verdict = check(outcome)
    other = (
        len(verdict.unexplained_flags)
        + len(verdict.hole_card_leaks)
        + len(verdict.sequence)
        + int(verdict.unfinished)
    )
    tally = Tally(
        1, verdict.rounds, verdict.settlements, len(verdict.wrong_in_silence),
        len(verdict.unpaid_winners), other, verdict.supervised, verdict.voided,
        collections.Counter(verdict.reasons),
    )  # fmt: skip
    if not verdict.ok:
        where = f"{name} seed {seed} ({outcome.protocol}, {outcome.config.game.value})"
        tally.breaches.append(f"{where}: {verdict.explain()[:400]}")
    return name, tally


def tasks(total: int, session: int, seed: int) -> list[tuple[str, int, int]]:
    """Tables for every mix: a quarter of the rounds to each tier, the rest shared."""
    faults = [name for name in MIXES if name not in TIERS]
    shares = dict.fromkeys(TIERS, total // 4)
    rest = total - sum(shares.values())
    shares.update({name: rest // len(faults) for name in faults})
    out: list[tuple[str, int, int]] = []
    for index, (name, rounds) in enumerate(shares.items()):
        tables = max(1, -(-rounds // session))
        out += [(name, seed + index * 1_000_003 + t, session) for t in range(tables)]
    return out


def _row(name: str, tally: Tally) -> str:
    share = tally.supervised / max(1, tally.rounds)
    return (
        f"{name:<24}{tally.rounds:>8}{tally.settlements:>9}{tally.wrong:>7}{tally.unpaid:>8}"
        f"{tally.other:>7}{share:>12.2%} {tally.voided:>8}"
    )


def report(tallies: dict[str, Tally], seconds: float, workers: int) -> None:
    """Print the table of figures, then the first breaches of each mix."""
    print(f"{'mix':<24}{'rounds':>8}{'settled':>9}{'wrong':>7}{'unpaid':>8}{'other':>7}"
          f"{'floorperson':>13}{'voided':>8}  why the tables held")  # fmt: skip
    total = Tally()
    for name in MIXES:
        tally = tallies.get(name, Tally())
        total.add(tally)
        why = ", ".join(f"{k} {v}" for k, v in tally.reasons.most_common(4))
        print(_row(name, tally) + f"  {why}")
    print(_row("all", total))
    realistic = tallies.get("realistic", Tally())
    share = realistic.supervised / max(1, realistic.rounds)
    verdict = "PASS" if share < REALISTIC_GOAL else "MISS"
    print(f"wrong in silence: {total.wrong} (goal 0); floorperson at realistic jitter: "
          f"{share:.3%} (goal under {REALISTIC_GOAL:.1%}: {verdict})")  # fmt: skip
    print(f"{total.rounds} rounds at {total.rounds / seconds:.0f} rounds/s on {workers} workers")
    for name in MIXES:
        for breach in tallies.get(name, Tally()).breaches:
            print(f"  {breach}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--rounds", type=int, default=10_000, help="rounds in all")
    parser.add_argument("--session", type=int, default=25, help="rounds each table plays")
    parser.add_argument("--seed", type=int, default=1, help="the first table's seed")
    parser.add_argument("--workers", type=int, default=1, help="processes (one per core)")
    args = parser.parse_args()
    work = tasks(args.rounds, args.session, args.seed)
    tallies: dict[str, Tally] = collections.defaultdict(Tally)
    start = time.perf_counter()
    with multiprocessing.Pool(args.workers) as pool:
        for name, tally in pool.imap_unordered(play, work, chunksize=4):
            tallies[name].add(tally)
    report(tallies, time.perf_counter() - start, args.workers)


if __name__ == "__main__":
    main()
