"""`shoe2mqtt analyze` and `shoe2mqtt simulate`: what each paytable is worth, and proof that
the engine pays it.

    analyze   exact probabilities, hit frequency, return and house edge (rules/analysis),
              as a table, as JSON (--json) or as a chart against the number of decks (--plot)
    simulate  seeded shoes played by basic strategy through the daemon's round engine, every
              settlement tallied and held against the exact figures

Both read a table from a configuration file (`--config FILE [--table ID]`) or a round log's
`table` line (`--round-log FILE`), or take the game, decks and paytable as options.
`register` adds them to the main parser, each with its handler (`set_defaults(handler=...)`).

Exit codes: 0 done, 1 a file has a mistake or the simulation disagrees with the exact
figures, 2 a wrong option.
"""

from __future__ import annotations

import argparse
import json
import math
import multiprocessing
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, TextIO

from rules.analysis.dealer_totals import LABELS as DEALER_LABELS
from rules.analysis.dealer_totals import DealerAnalysis
from rules.analysis.outcomes import WagerAnalysis, decimal_text
from rules.analysis.shoe import ShoeSpec
from rules.analysis.tables import analyse
from rules.cards import DeckKind
from rules.config import TableConfig
from rules.errors import ConfigError
from rules.games import GAMES, Game
from rules.paytables import OPTIONAL_BONUS_PAYTABLES, TWENTY_POINT_PAYTABLES

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from fractions import Fraction

    from rules.analysis.comparison import SimulationComparison
    from rules.analysis.simulation import Chunk, Tally
    from rules.money import Odds

EXIT_OK: Final = 0
EXIT_FAILED: Final = 1
EXIT_USAGE: Final = 2
PLOT_DECKS: Final = tuple(range(1, 9))
DEFAULT_ROUNDS: Final = 100_000

_TITLES = {
    "twenty_point_bonus": "20 point bonus wager",
    "optional_bonus": "Double Attack optional bonus wager",
}
_BUILTIN_PAYTABLES: dict[Game, Mapping[str, Mapping[Any, Odds]]] = {
    Game.BLACKJACK: TWENTY_POINT_PAYTABLES,
    Game.DOUBLE_ATTACK: OPTIONAL_BONUS_PAYTABLES,
    Game.TRIPLE_ATTACK: {"even_money": {}},  # 13:69F-36.5(g): 1 to 1, no paytable to choose
}


class UsageError(Exception):
    """A wrong option: the message says which and why."""


class TableFileError(Exception):
    """A configuration file or round log that cannot give the tables asked for."""


def register(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add `analyze` and `simulate` to the `shoe2mqtt` command line."""
    _add_analyze(commands)
    _add_simulate(commands)


def main(argv: list[str] | None = None) -> int:
    """`python -m daemon.cli.analyze COMMAND ...`: the same tools without the daemon's parser."""
    parser = argparse.ArgumentParser(prog="shoe2mqtt")
    register(parser.add_subparsers(dest="command", required=True, metavar="COMMAND"))
    args = parser.parse_args(argv)
    return int(args.handler(args))


# ================================================================ choosing the tables


@dataclass(frozen=True, slots=True)
class Request:
    """One thing to analyse: a game on a shoe under a paytable and soft-17 rule."""

    game: Game
    shoe: ShoeSpec
    paytable_name: str
    paytable: Mapping[Any, Odds]
    hits_soft_17: bool
    source: str  # where it came from: "built-in" or a table of a file

    @classmethod
    def of_table(cls, config: TableConfig, source: str) -> Request:
        return cls(
            config.game,
            ShoeSpec(config.decks, config.deck_kind),
            config.paytable_name,
            config.paytable,
            config.dealer_hits_soft_17,
            source,
        )


def _add_table_options(cmd: argparse.ArgumentParser, *, many_decks: bool) -> None:
    source = cmd.add_argument_group(
        "a configured table", "instead of --game and the options below it"
    )
    source.add_argument("--config", type=Path, help="a shoe2mqtt TOML configuration file")
    source.add_argument("--table", help="the table's id in --config (default: every table)")
    source.add_argument("--round-log", type=Path, help="a round log: its first, 'table' line")
    builtin = cmd.add_argument_group("a table described here")
    builtin.add_argument(
        "--game",
        choices=[game.value for game in Game],
        action="append",
        help="the game (repeat for several; default: all three)",
    )
    builtin.add_argument(
        "--decks",
        type=int,
        nargs="+" if many_decks else None,
        help="decks in the shoe (default: the game's, 6 at blackjack, 8 at the others)",
    )
    builtin.add_argument(
        "--deck-kind",
        choices=[kind.value for kind in DeckKind],
        help="standard, or Spanish (no 10s); default: the game's",
    )
    builtin.add_argument(
        "--paytable",
        nargs="+",
        help="built-in paytable names (20 point bonus: A, B; Double Attack: regulation); "
        "default: every built-in one",
    )
    builtin.add_argument(
        "--soft-17",
        choices=["hit", "stand"],
        help="the dealer's soft-17 rule (default: the game's; Triple Attack hits)",
    )


def _configured_tables(args: argparse.Namespace, err: TextIO) -> list[tuple[TableConfig, str]]:
    """The tables a --config or --round-log names, each with where it came from."""
    if args.config is not None and args.round_log is not None:
        raise UsageError("give --config or --round-log, not both")
    if args.round_log is not None:
        if args.table is not None:
            raise UsageError("--table goes with --config; a round log holds one table")
        return [(_round_log_table(args.round_log), f"round log {args.round_log}")]
    tables = _config_file_tables(args.config, err)
    if args.table is not None:
        tables = [t for t in tables if t.table_id == args.table]
        if not tables:
            raise TableFileError(f"{args.config}: no table with id {args.table!r}")
    return [(table, f"table {table.table_id} in {args.config}") for table in tables]


def _config_file_tables(path: Path, err: TextIO) -> list[TableConfig]:
    """Every table of a configuration file, checked as `shoe2mqtt check-config` checks it.

    A mistake outside the tables (a broker certificate not on this machine, say) does not
    stop the analysis of a paytable: it is reported as a warning and the tables are read
    from the file as `load_config` reads them.
    """
    from daemon.config import ConfigErrors, load_config
    from daemon.config_file import ConfigFileError, read_toml

    try:
        return [setup.game for setup in load_config(path).tables]
    except ConfigErrors as exc:
        in_tables = [e for e in exc.errors if e.field.startswith("table") or not e.field]
        if in_tables:
            raise TableFileError("\n".join(map(str, in_tables))) from None
        err.writelines(f"warning (not about the tables): {error}\n" for error in exc.errors)
    try:
        document, _ = read_toml(path)
    except ConfigFileError as exc:  # pragma: no cover - load_config read it a moment ago
        raise TableFileError(str(exc)) from None
    return [
        TableConfig.from_mapping({k: v for k, v in table.items() if k != "shoe"})
        for table in document.get("table", [])
    ]


def _round_log_table(path: Path) -> TableConfig:
    from daemon.replay import ReplayError, read_table_line

    try:
        with path.open(encoding="utf-8") as log:
            for number, line in enumerate(log, start=1):
                if line.strip():
                    return read_table_line(number, line)
    except OSError as exc:
        raise TableFileError(f"cannot read {path}: {exc.strerror}") from None
    except ReplayError as exc:
        raise TableFileError(f"{path}: {exc}") from None
    raise TableFileError(f"{path}: the round log is empty")


def _games(args: argparse.Namespace) -> list[Game]:
    return [Game(name) for name in args.game] if args.game else list(Game)


def _described_requests(args: argparse.Namespace) -> list[Request]:
    """The built-in tables --game, --decks, --deck-kind, --paytable and --soft-17 describe."""
    games = _games(args)
    if args.paytable and len(games) != 1:
        raise UsageError("--paytable names one game's paytables: give exactly one --game")
    requests: list[Request] = []
    for game in games:
        rules = GAMES[game]
        kind = DeckKind(args.deck_kind or rules.default_deck_kind)
        hits_soft_17 = rules.default_hits_soft_17 if args.soft_17 is None else args.soft_17 == "hit"
        builtin = _BUILTIN_PAYTABLES[game]
        names = list(builtin) if game is Game.TRIPLE_ATTACK else args.paytable or list(builtin)
        unknown = [name for name in names if name not in builtin]
        if unknown:
            raise UsageError(
                f"no {game.value} paytable {unknown[0]!r}: built-in ones are {sorted(builtin)}; "
                "a custom paytable is read from a table's --config"
            )
        decks_list = args.decks if isinstance(args.decks, list) else [args.decks]
        for decks in decks_list:
            count = rules.default_decks if decks is None else decks
            if count < 1:
                raise UsageError(f"--decks must be at least 1, not {count}")
            requests.extend(
                Request(game, ShoeSpec(count, kind), name, builtin[name], hits_soft_17, "built-in")
                for name in names
            )
    return requests


# ================================================================ analyze


def _add_analyze(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    cmd = commands.add_parser(
        "analyze",
        help="exact odds, hit frequency, return and house edge of each paytable",
        description="Work out exactly (rational arithmetic, no sampling) the probability of "
        "every outcome of the 20 point bonus (13:69F-2.24) and the Double Attack optional "
        "bonus (13:69F-26.6) with their hit frequency, expected return and house edge, and "
        "the dealer's final-total distribution at Triple Attack (13:69F-36.5).",
    )
    _add_table_options(cmd, many_decks=True)
    cmd.add_argument(
        "--json",
        action="store_true",
        help="one JSON document; every probability as an exact fraction and a decimal",
    )
    cmd.add_argument(
        "--plot",
        type=Path,
        metavar="FILE.png",
        help="also draw the house edge against the number of decks (1-8) for each paytable",
    )
    cmd.set_defaults(handler=_analyze_command)


def _analyze_command(args: argparse.Namespace) -> int:
    return analyze(args, sys.stdout, sys.stderr)


def analyze(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """The `analyze` subcommand: print (and plot) the exact figures of every request."""
    try:
        if args.config is not None or args.round_log is not None:
            requests = [Request.of_table(t, s) for t, s in _configured_tables(args, err)]
        else:
            requests = _described_requests(args)
    except UsageError as exc:
        return _usage_error("analyze", exc, err)
    except (TableFileError, ConfigError) as exc:
        err.write(f"shoe2mqtt analyze: {exc}\n")
        return EXIT_FAILED
    started = time.perf_counter()
    results = [(request, _analyse(request)) for request in requests]
    elapsed = time.perf_counter() - started
    if args.json:
        document = {
            "analyses": [
                {"source": request.source, **result.to_mapping()} for request, result in results
            ],
            "seconds": elapsed,
        }
        out.write(json.dumps(document, indent=2) + "\n")
    else:
        out.writelines(render_analysis(result, source.source) + "\n" for source, result in results)
        out.write(f"worked out exactly in {elapsed * 1000:.1f} ms\n")
    if args.plot is not None:
        try:
            plot_house_edges(args.plot, requests)
        except ModuleNotFoundError:
            err.write("shoe2mqtt analyze: --plot needs matplotlib: install shoe2mqtt[plot]\n")
            return EXIT_FAILED
        if not args.json:
            out.write(f"chart written to {args.plot}\n")
    return EXIT_OK


def _analyse(request: Request) -> WagerAnalysis | DealerAnalysis:
    return analyse(
        request.game,
        request.shoe,
        paytable=request.paytable,
        paytable_name=request.paytable_name,
        hits_soft_17=request.hits_soft_17,
    )


def render_analysis(result: WagerAnalysis | DealerAnalysis, source: str = "built-in") -> str:
    if isinstance(result, DealerAnalysis):
        return _render_dealer(result, source)
    return _render_wager(result, source)


def _render_wager(result: WagerAnalysis, source: str) -> str:
    title = _TITLES.get(result.wager, result.wager)
    heading = (
        f"{title} ({result.citation}): {result.shoe.describe()}, paytable "
        f"{result.paytable_name} [{source}]"
    )
    lines = [
        heading,
        f"  {'outcome':<44}{'pays':>12}{'probability':>21}{'one in':>14}{'return':>12}",
    ]
    for outcome in result.outcomes:
        pays = str(outcome.odds) if outcome.odds is not None else "loses"
        one_in = f"{float(1 / outcome.probability):,.1f}" if outcome.probability else "never"
        lines.append(
            f"  {outcome.label:<44}{pays:>12}{decimal_text(outcome.probability, 12):>21}"
            f"{one_in:>14}{_percent(outcome.return_per_unit):>12}"
        )
    lines.extend(
        [
            f"  hit frequency    {_percent(result.hit_frequency)}",
            f"  expected return  {_percent(result.expected_return)} of each unit wagered",
            f"  house edge       {_percent(result.house_edge)}",
        ]
    )
    lines.extend(f"  note: {note}" for note in result.notes)
    return "\n".join(lines) + "\n"


def _render_dealer(result: DealerAnalysis, source: str) -> str:
    heading = (
        f"Dealer's final total at Triple Attack (13:69F-36.5): {result.shoe.describe()}, "
        f"dealer {result.rule} [{source}]"
    )
    lines = [
        heading,
        f"  {'final total':<50}{'probability':>19}{'one in':>14}",
    ]
    for name, probability in result.probabilities.items():
        one_in = f"{float(1 / probability):,.2f}" if probability else "never"
        lines.append(f"  {DEALER_LABELS[name]:<50}{decimal_text(probability, 12):>19}{one_in:>14}")
    bust = result.probabilities["22"] + result.probabilities["over_22"]
    lines.append(
        f"  dealer over 21: {_percent(bust)}; of that, exactly 22 (a push, 36.5(d)): "
        f"{_percent(result.probabilities['22'])}"
    )
    return "\n".join(lines) + "\n"


def _percent(value: Fraction) -> str:
    return f"{float(value) * 100:.4f} %"


def house_edge_series(requests: Iterable[Request]) -> dict[str, list[tuple[int, float]]]:
    """House edge (a fraction) for 1 to 8 decks: each built-in paytable, and any other asked.

    The 20 point bonus is drawn on standard decks, the Double Attack bonus on Spanish decks
    (its usual shoe) and on standard decks. A request with a custom paytable adds its own
    line on its deck kind.
    """
    wanted: list[tuple[str, Game, DeckKind, str, Mapping[Any, Odds]]] = [
        (f"20 point bonus, paytable {name}", Game.BLACKJACK, DeckKind.STANDARD, name, table)
        for name, table in TWENTY_POINT_PAYTABLES.items()
    ]
    wanted.extend(
        (
            f"Double Attack bonus, {name}, {ShoeSpec(8, kind).describe().split()[1]} decks",
            Game.DOUBLE_ATTACK,
            kind,
            name,
            table,
        )
        for name, table in OPTIONAL_BONUS_PAYTABLES.items()
        for kind in (DeckKind.SPANISH, DeckKind.STANDARD)
    )
    for request in requests:
        if request.game is not Game.TRIPLE_ATTACK and (
            request.paytable_name not in _BUILTIN_PAYTABLES[request.game]
        ):
            label = f"{_TITLES[_wager_of(request.game)]}, {request.source}"
            wanted.append((label, request.game, request.shoe.deck_kind, "custom", request.paytable))
    series: dict[str, list[tuple[int, float]]] = {}
    for label, game, kind, name, table in wanted:
        series[label] = [
            (
                decks,
                float(
                    _house_edge(
                        analyse(
                            game,
                            ShoeSpec(decks, kind),
                            paytable=table,
                            paytable_name=name,
                            hits_soft_17=False,
                        )
                    )
                ),
            )
            for decks in PLOT_DECKS
        ]
    return series


def _wager_of(game: Game) -> str:
    return "twenty_point_bonus" if game is Game.BLACKJACK else "optional_bonus"


def _house_edge(result: WagerAnalysis | DealerAnalysis) -> Fraction:
    assert isinstance(result, WagerAnalysis)
    return result.house_edge


def plot_house_edges(path: Path, requests: Iterable[Request] = ()) -> None:
    """A PNG of the house edge against the number of decks, one line per paytable."""
    from matplotlib.figure import Figure  # optional: shoe2mqtt[plot]

    series = house_edge_series(requests)
    figure = Figure(figsize=(10, 4.8), layout="constrained")
    twenty, bonus = figure.subplots(1, 2)
    for label, points in series.items():
        axes = twenty if label.startswith("20 point") else bonus
        decks = [d for d, _ in points]
        edges = [edge * 100 for _, edge in points]
        axes.plot(decks, edges, marker="o", label=label)
    twenty.axvspan(0.6, 1.5, color="0.9")
    twenty.annotate(
        "not allowed:\n13:69F-2.2(a)2",
        xy=(1.05, 0.03),
        xycoords=("data", "axes fraction"),
        ha="center",
        va="bottom",
        fontsize=8,
    )
    twenty.set_title("20 point bonus (13:69F-2.24)")
    bonus.set_title("Double Attack optional bonus (13:69F-26.6)")
    for axes in (twenty, bonus):
        axes.set_xlabel("decks in the shoe")
        axes.set_ylabel("house edge (% of the wager)")
        axes.set_xticks(list(PLOT_DECKS))
        axes.set_xlim(0.6, 8.4)
        axes.set_ylim(bottom=0)
        axes.grid(visible=True, alpha=0.3)
        axes.legend(fontsize=8)
    figure.suptitle("Exact house edge by number of decks (shoe2mqtt analyze)")
    figure.savefig(path, dpi=120)


# ================================================================ simulate


def _add_simulate(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    cmd = commands.add_parser(
        "simulate",
        help="play seeded shoes through the round engine and check them against analyze",
        description="Deal seeded shoes with the emulated shoe's model, play every seat by "
        "basic strategy, feed every event through the daemon's round engine and tally what "
        "it settles: each outcome's frequency and each wager's return with a 95 %% "
        "confidence interval, beside the exact figures of `shoe2mqtt analyze`.",
    )
    _add_table_options(cmd, many_decks=False)
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
    cmd.set_defaults(handler=_simulate_command)


def _simulate_command(args: argparse.Namespace) -> int:
    return simulate(args, sys.stdout, sys.stderr)


def simulate(args: argparse.Namespace, out: TextIO, err: TextIO) -> int:
    """The `simulate` subcommand: play, tally, compare, print; 1 when anything disagrees."""
    if args.rounds < 1 or args.seats < 1 or args.workers < 0:
        return _usage_error(
            "simulate", "--rounds and --seats must be at least 1, --workers at least 0", err
        )
    try:
        if args.config is not None or args.round_log is not None:
            configs = [table for table, _ in _configured_tables(args, err)]
        else:
            configs = [_described_table(args, game) for game in _games(args)]
    except UsageError as exc:
        return _usage_error("simulate", exc, err)
    except (TableFileError, ConfigError) as exc:
        err.write(f"shoe2mqtt simulate: {exc}\n")
        return EXIT_FAILED
    workers = args.workers or os.cpu_count() or 1
    started = time.perf_counter()
    comparisons = run_simulation(configs, args.rounds, args.seed, workers, seats=args.seats)
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
            f"{rounds:,} rounds in {elapsed:.1f} s on {workers} worker(s): "
            f"{rate:,.0f} rounds a second (seed {args.seed})\n"
        )
        out.write(
            "every line agrees with the exact figures (within 4 standard errors)\n"
            if agrees
            else "DISAGREEMENT: a line marked !! is more than 4 standard errors from the exact "
            "figure: a bug in the engine or in the analysis\n"
        )
    return EXIT_OK if agrees else EXIT_FAILED


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
            raise UsageError(
                "simulate takes one --paytable, for a blackjack or Double Attack table"
            )
        settings["paytable"] = args.paytable[0]
    try:
        return TableConfig.from_mapping(settings)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None


def run_simulation(
    configs: Sequence[TableConfig], rounds: int, seed: int, workers: int, *, seats: int = 7
) -> list[SimulationComparison]:
    """Play `rounds` rounds at each table on `workers` processes; compare with the exact.

    The chunks and their seeds depend on the seed and the tables only, and tallies add up
    as integers, so the result is the same for any number of workers.
    """
    from rules.analysis.comparison import compare_with_exact
    from rules.analysis.simulation import merge_tallies, plan_chunks

    chunks_by_table = [plan_chunks(config, rounds, seed, seats=seats) for config in configs]
    tallies = _play_chunks([chunk for chunks in chunks_by_table for chunk in chunks], workers)
    comparisons: list[SimulationComparison] = []
    start = 0
    for config, chunks in zip(configs, chunks_by_table, strict=True):
        merged = merge_tallies(config.game.value, tallies[start : start + len(chunks)])
        start += len(chunks)
        comparisons.append(compare_with_exact(config, merged))
    return comparisons


def _play_chunks(chunks: list[Chunk], workers: int) -> list[Tally]:
    from rules.analysis.simulation import simulate_chunk

    if workers <= 1 or len(chunks) <= 1:
        return [simulate_chunk(chunk) for chunk in chunks]
    # fork: a worker starts at once with the rules already imported, and no resource
    # tracker process outlives the pool (spawn and forkserver would leave one behind).
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(max_workers=min(workers, len(chunks)), mp_context=context) as pool:
        return list(pool.map(simulate_chunk, chunks))


def render_comparison(comparison: SimulationComparison) -> str:
    config, tally = comparison.config, comparison.tally
    shoe = ShoeSpec(config.decks, config.deck_kind).describe()
    rule = "hits" if config.dealer_hits_soft_17 else "stands on"
    lines = [
        f"{config.game.value} table {config.table_id}: {shoe}, paytable {config.paytable_name}, "
        f"dealer {rule} soft 17; {tally.rounds:,} rounds"
        + (f", {tally.voided_rounds} voided" if tally.voided_rounds else ""),
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
            f"  ({stopped:,} rounds left out: no hand needed the dealer's total, so the dealer "
            "stopped short)"
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
            f"{estimate.settlements:,} settlements; {exact}{mark}"
        )
    lines.append("  settlements by outcome:")
    lines.extend(
        f"    {wager:<20}{outcome:<40}{count:>11,}"
        for (wager, outcome), count in sorted(tally.outcomes.items())
    )
    return "\n".join(lines) + "\n"


def _sigmas(value: float) -> str:
    return "-" if math.isnan(value) else f"{value:.2f} SE"


def _usage_error(command: str, exc: Exception | str, err: TextIO) -> int:
    err.write(f"shoe2mqtt {command}: {exc}\n")
    return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
