"""`shoe2mqtt simulate`: seeded shoes played by basic strategy through the daemon's round
engine, every settlement tallied and held against the exact figures of `shoe2mqtt analyze`.

It reads its tables as `analyze` does (daemon.cli.table_options). It exits 1 when a
figure is more than four standard errors from the exact one: a bug in the engine or in
the analysis.
"""

from __future__ import annotations

import contextlib
import json
import math
import multiprocessing
import os
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from typing import TYPE_CHECKING, Any, Final

from daemon.cli import table_options
from daemon.cli.command import Command, usage_error
from daemon.cli.exit_codes import ExitCode
from daemon.cli.output import counted
from rules.analysis.shoe import ShoeSpec
from rules.config import TableConfig
from rules.errors import ConfigError
from rules.games import GAMES, Game

if TYPE_CHECKING:
    import argparse
    from collections.abc import Callable, Iterator, Sequence
    from typing import TextIO

    from rules.analysis.comparison import SimulationComparison
    from rules.analysis.simulation import Chunk, Tally

DEFAULT_ROUNDS: Final = 100_000


def _add_arguments(cmd: argparse.ArgumentParser) -> None:
    table_options.add_table_options(cmd, many_decks=False)
    cmd.add_argument(
        "--rounds",
        type=int,
        default=DEFAULT_ROUNDS,
        help=f"rounds per table (default {DEFAULT_ROUNDS:,})",
    )
    cmd.add_argument("--seed", type=int, default=1, help="the same seed deals the same shoes")
    cmd.add_argument(
        "--workers",
        type=int,
        default=1,
        help="processes to play on; 0: one per core (the result does not depend on it)",
    )
    cmd.add_argument("--seats", type=int, default=7, help="seats that play (default 7)")
    cmd.add_argument("--json", action="store_true", help="one JSON document instead")


def simulate(args: argparse.Namespace, out: TextIO, err: TextIO) -> ExitCode:
    """The `simulate` subcommand: play, tally, compare, print; 1 when anything disagrees."""
    if args.rounds < 1 or args.seats < 1 or args.workers < 0:
        return usage_error(
            err, "simulate", "--rounds and --seats must be at least 1, --workers at least 0"
        )
    try:
        if args.config is not None or args.round_log is not None:
            configs = [table for table, _ in table_options.configured_tables(args, err)]
        else:
            configs = [_described_table(args, game) for game in table_options.chosen_games(args)]
    except table_options.REFUSALS as exc:
        return table_options.refuse(err, "simulate", exc)
    workers = args.workers or os.cpu_count() or 1
    started = time.perf_counter()
    with progress_bar(err, total=args.rounds * len(configs)) as played:
        comparisons = run_simulation(
            configs, args.rounds, args.seed, workers, seats=args.seats, played=played
        )
    elapsed = time.perf_counter() - started
    rounds = sum(c.tally.rounds for c in comparisons)
    rate = rounds / elapsed if elapsed > 0 else math.inf
    agrees = all(c.agrees for c in comparisons)
    if args.json:
        document = {
            "seed": args.seed,
            "workers": workers,
            "seconds": elapsed,
            "rounds_per_second": rate,
            "tables": [c.to_mapping() for c in comparisons],
            "agrees": agrees,
        }
        out.write(json.dumps(document, indent=2) + "\n")
    else:
        out.writelines(render_comparison(comparison) + "\n" for comparison in comparisons)
        out.write(
            f"{counted(rounds, 'round')} in {elapsed:.1f} s on {counted(workers, 'worker')}: "
            f"{rate:,.0f} rounds a second (seed {args.seed})\n"
        )
        out.write(
            "every line agrees with the exact figures (within 4 standard errors, or as likely "
            "for a rare line)\n"
            if agrees
            else "DISAGREEMENT: a line marked !! is further from the exact figure than 4 standard "
            "errors (or, for a rare line, than chance allows as often): a bug in the engine or "
            "in the analysis\n"
        )
    return ExitCode.OK if agrees else ExitCode.FAILURE


def _described_table(args: argparse.Namespace, game: Game) -> TableConfig:
    """A table of `game` with the options' decks, paytable and rule, limits wide enough."""
    rules = GAMES[game]
    settings: dict[str, Any] = {
        "id": f"simulate-{game.value.replace('_', '-')}",
        "game": game.value,
        "seats": min(max(args.seats, 1), 7),
        "limits": {rule.kind.value: {"min": "1.00", "max": "1000.00"} for rule in rules.wagers},
    }
    if args.decks is not None:
        settings["decks"] = args.decks
    if args.deck_kind is not None:
        settings["deck_kind"] = args.deck_kind
    if args.soft_17 is not None:
        settings["dealer_hits_soft_17"] = args.soft_17 == "hit"
    if args.paytable:
        if len(args.paytable) != 1 or game is Game.TRIPLE_ATTACK:
            raise table_options.UsageError(
                "simulate takes one --paytable, for a blackjack or Double Attack table"
            )
        settings["paytable"] = args.paytable[0]
    try:
        return TableConfig.from_mapping(settings)
    except ConfigError as exc:
        raise table_options.UsageError(str(exc)) from None


@contextlib.contextmanager
def progress_bar(err: TextIO, *, total: int) -> Iterator[Callable[[int], None]]:
    """A bar of the rounds played on `err` while the block runs, if `err` is a terminal
    (nothing in a pipe, a log or a test); yields what to call with each chunk's rounds.

    Drawn when a chunk ends rather than by rich's refresh thread: no thread is running when
    the worker processes are forked, and a chunk takes about a second anyway.
    """
    if not err.isatty():
        yield lambda _rounds: None
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    columns = (
        TextColumn("simulating"),
        BarColumn(),
        MofNCompleteColumn(),
        TextColumn("rounds"),
        TimeElapsedColumn(),
        TextColumn("left"),
        TimeRemainingColumn(),
    )
    with Progress(*columns, console=Console(file=err), auto_refresh=False, transient=True) as bar:
        task = bar.add_task("simulate", total=total)
        bar.refresh()

        def played(rounds: int) -> None:
            bar.advance(task, rounds)
            bar.refresh()

        yield played


def run_simulation(
    configs: Sequence[TableConfig],
    rounds: int,
    seed: int,
    workers: int,
    *,
    seats: int = 7,
    played: Callable[[int], None] | None = None,
    chunk_rounds: int | None = None,
) -> list[SimulationComparison]:
    """Play `rounds` rounds at each table on `workers` processes; compare with the exact.

    The chunks and their seeds depend on the seed and the tables only (and `chunk_rounds`,
    the rounds a chunk: rules.analysis.simulation's default unless given), and tallies add
    up as integers, so the result is the same for any number of workers. `played` is told
    the rounds of each chunk as it ends.
    """
    from rules.analysis.comparison import compare_with_exact
    from rules.analysis.simulation import CHUNK_ROUNDS, merge_tallies, plan_chunks

    size = CHUNK_ROUNDS if chunk_rounds is None else chunk_rounds
    chunks_by_table = [
        plan_chunks(config, rounds, seed, seats=seats, chunk_rounds=size) for config in configs
    ]
    tallies = _play_chunks(
        [chunk for chunks in chunks_by_table for chunk in chunks],
        workers,
        played or (lambda _rounds: None),
    )
    comparisons: list[SimulationComparison] = []
    start = 0
    for config, chunks in zip(configs, chunks_by_table, strict=True):
        merged = merge_tallies(config.game.value, tallies[start : start + len(chunks)])
        start += len(chunks)
        comparisons.append(compare_with_exact(config, merged))
    return comparisons


def _play_chunks(chunks: list[Chunk], workers: int, played: Callable[[int], None]) -> list[Tally]:
    """Each chunk's tally, in the chunks' order; `played` hears of each as it ends."""
    from rules.analysis.simulation import simulate_chunk

    if workers <= 1 or len(chunks) <= 1:
        tallies = []
        for chunk in chunks:
            tallies.append(simulate_chunk(chunk))
            played(chunk.rounds)
        return tallies
    # fork: a worker starts at once with the rules already imported, and no resource
    # tracker process outlives the pool (spawn and forkserver would leave one behind).
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(max_workers=min(workers, len(chunks)), mp_context=context) as pool:
        futures = {pool.submit(simulate_chunk, chunk): chunk for chunk in chunks}
        for finished in as_completed(futures):
            played(futures[finished].rounds)
        return [future.result() for future in futures]


def render_comparison(comparison: SimulationComparison) -> str:
    config, tally = comparison.config, comparison.tally
    shoe = ShoeSpec(config.decks, config.deck_kind).describe()
    rule = "hits" if config.dealer_hits_soft_17 else "stands on"
    lines = [
        f"{config.game.value} table {config.table_id}: {shoe}, paytable {config.paytable_name}, "
        f"dealer {rule} soft 17; {counted(tally.rounds, 'round')}"
        + (f", {tally.voided_rounds:,} voided" if tally.voided_rounds else ""),
        f"  per {comparison.trial_kind}:",
        f"  {'outcome':<44}{'count':>11}{'simulated':>13}{'exact':>13}{'std err':>11}{'off by':>9}",
    ]
    for line in comparison.lines:
        exact = "-" if line.exact is None else f"{float(line.exact):.6f}"
        error = "-" if math.isnan(line.standard_error) else f"{line.standard_error:.6f}"
        mark = "" if line.agrees() else " !!"
        lines.append(
            f"  {line.label:<44}{line.count:>11,}{line.simulated:>13.6f}{exact:>13}{error:>11}"
            f"{_sigmas(line.sigmas):>9}{mark}"
        )
    stopped = tally.trials.get("dealer_stopped_short", 0)
    if stopped:
        lines.append(
            f"  ({counted(stopped, 'round')} left out: no hand needed the dealer's total, "
            "so the dealer stopped short)"
        )
    lines.append("  return per unit wagered, 95 % confidence interval:")
    for estimate in comparison.returns:
        low, high = estimate.interval_95
        exact = (
            "no exact figure (depends on the players' play)"
            if estimate.exact is None
            else f"exact {float(estimate.exact):+.6f}, off by {_sigmas(estimate.sigmas)}"
        )
        mark = "" if estimate.agrees() else " !!"
        lines.append(
            f"    {estimate.wager:<20}{estimate.simulated:+.6f}  [{low:+.6f}, {high:+.6f}]  "
            f"{counted(estimate.settlements, 'settlement')}; {exact}{mark}"
        )
    lines.append("  settlements by outcome:")
    lines.extend(
        f"    {wager:<20}{outcome:<40}{count:>11,}"
        for (wager, outcome), count in sorted(tally.outcomes.items())
    )
    return "\n".join(lines) + "\n"


def _sigmas(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:.2f} SE"


COMMAND: Final = Command(
    description="Deal seeded shoes with the emulated shoe's model, play every seat by "
    "basic strategy, feed every event through the daemon's round engine and tally what "
    "it settles: each outcome's frequency and each wager's return with a 95 % "
    "confidence interval, beside the exact figures of `shoe2mqtt analyze`.",
    add_arguments=_add_arguments,
    run=simulate,
)
