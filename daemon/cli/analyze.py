"""`shoe2mqtt analyze`: what each paytable is worth, worked out exactly.

Exact probabilities, hit frequency, return and house edge (rules/analysis), as a table, as
JSON (--json) or as a chart against the number of decks (--plot). The tables come from a
configuration file, a round log, or options (daemon.cli.table_options).
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from daemon.cli import table_options
from daemon.cli.command import Command, failure
from daemon.cli.exit_codes import ExitCode
from rules.analysis.dealer_totals import LABELS as DEALER_LABELS
from rules.analysis.dealer_totals import DealerAnalysis
from rules.analysis.outcomes import WagerAnalysis, decimal_text
from rules.analysis.shoe import ShoeSpec
from rules.analysis.tables import analyse
from rules.cards import DeckKind
from rules.games import GAMES, Game
from rules.paytables import OPTIONAL_BONUS_PAYTABLES, TWENTY_POINT_PAYTABLES

if TYPE_CHECKING:
    import argparse
    from collections.abc import Iterable, Mapping
    from fractions import Fraction
    from typing import TextIO

    from rules.config import TableConfig
    from rules.money import Odds

PLOT_DECKS: Final = tuple(range(1, 9))

_TITLES = {
    "twenty_point_bonus": "20 point bonus wager",
    "optional_bonus": "Double Attack optional bonus wager",
}
_BUILTIN_PAYTABLES: dict[Game, Mapping[str, Mapping[Any, Odds]]] = {
    Game.BLACKJACK: TWENTY_POINT_PAYTABLES,
    Game.DOUBLE_ATTACK: OPTIONAL_BONUS_PAYTABLES,
    Game.TRIPLE_ATTACK: {"even_money": {}},  # 13:69F-36.5(g): 1 to 1, no paytable to choose
}


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


def _described_requests(args: argparse.Namespace) -> list[Request]:
    """The built-in tables --game, --decks, --deck-kind, --paytable and --soft-17 describe."""
    games = table_options.chosen_games(args)
    if args.paytable and len(games) != 1:
        raise table_options.UsageError(
            "--paytable names one game's paytables: give exactly one --game"
        )
    requests: list[Request] = []
    for game in games:
        rules = GAMES[game]
        kind = DeckKind(args.deck_kind or rules.default_deck_kind)
        hits_soft_17 = rules.default_hits_soft_17 if args.soft_17 is None else args.soft_17 == "hit"
        builtin = _BUILTIN_PAYTABLES[game]
        names = list(builtin) if game is Game.TRIPLE_ATTACK else args.paytable or list(builtin)
        unknown = [name for name in names if name not in builtin]
        if unknown:
            raise table_options.UsageError(
                f"no {game.value} paytable {unknown[0]!r}: built-in ones are {sorted(builtin)}; "
                "a custom paytable is read from a table's --config"
            )
        decks_list = args.decks if isinstance(args.decks, list) else [args.decks]
        for decks in decks_list:
            count = rules.default_decks if decks is None else decks
            if count < 1:
                raise table_options.UsageError(f"--decks must be at least 1, not {count}")
            requests.extend(
                Request(game, ShoeSpec(count, kind), name, builtin[name], hits_soft_17, "built-in")
                for name in names
            )
    return requests


def _add_arguments(cmd: argparse.ArgumentParser) -> None:
    table_options.add_table_options(cmd, many_decks=True)
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


def analyze(args: argparse.Namespace, out: TextIO, err: TextIO) -> ExitCode:
    """The `analyze` subcommand: print (and plot) the exact figures of every request."""
    try:
        if args.config is not None or args.round_log is not None:
            requests = [
                Request.of_table(t, s) for t, s in table_options.configured_tables(args, err)
            ]
        else:
            requests = _described_requests(args)
    except table_options.REFUSALS as exc:
        return table_options.refuse(err, "analyze", exc)
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
            return failure(err, "analyze", "--plot needs matplotlib: install shoe2mqtt[plot]")
        if not args.json:
            out.write(f"chart written to {args.plot}\n")
    return ExitCode.OK


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


COMMAND: Final = Command(
    description="Work out exactly (rational arithmetic, no sampling) the probability of "
    "every outcome of the 20 point bonus (13:69F-2.24) and the Double Attack optional "
    "bonus (13:69F-26.6) with their hit frequency, expected return and house edge, and "
    "the dealer's final-total distribution at Triple Attack (13:69F-36.5).",
    add_arguments=_add_arguments,
    run=analyze,
)
