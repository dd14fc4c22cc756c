"""How many seven-seat rounds a second the rules core settles, per game, on one core.

    uv run python bench/engine_rounds.py [--rounds N] [--seed S] [--repeat R]

Rounds are generated first (every seat bets the main wager and the game's bonus or attack
wagers; basic-strategy play; a fresh seeded shoe when the cut card comes out) by
`rules.player`, then replayed through a fresh `TableEngine` R times: only `engine.apply` is
timed, and the best replay counts.
"""

from __future__ import annotations

import argparse
import gc
import platform
import random
import time
from typing import TYPE_CHECKING

from rules.config import TableConfig
from rules.engine import TableEngine
from rules.games import Game, WagerKind
from rules.outputs import Settlement
from rules.player import Dealer

if TYPE_CHECKING:
    from collections.abc import Mapping

    from rules.events import TableEvent
    from rules.money import Cents

SEATS = 7

# Per game: the table's limits, and what every seat bets (main wager first).
TABLES: dict[Game, Mapping[WagerKind, Cents]] = {
    Game.BLACKJACK: {WagerKind.BLACKJACK: 2500, WagerKind.TWENTY_POINT_BONUS: 500},
    Game.DOUBLE_ATTACK: {
        WagerKind.INITIAL: 2500,
        WagerKind.OPTIONAL_BONUS: 500,
        WagerKind.DOUBLE_ATTACK: 2500,
    },
    Game.TRIPLE_ATTACK: {
        WagerKind.FIRST_ATTACK: 2500,
        WagerKind.SECOND_ATTACK: 2500,
        WagerKind.THIRD_ATTACK: 2500,
    },
}


def table_config(game: Game) -> TableConfig:
    limits = {kind.value: {"min": "1.00", "max": "1000.00"} for kind in TABLES[game]}
    return TableConfig.from_mapping(
        {"id": f"bench-{game.value}", "game": game.value, "seats": SEATS, "limits": limits}
    )


def generate(config: TableConfig, rounds: int, seed: int) -> list[TableEvent]:
    """The event stream of `rounds` basic-strategy rounds, shuffles and burns included."""
    dealer = Dealer(TableEngine(config), random.Random(seed))  # noqa: S311 - a seeded shoe, not a secret
    plan = dict.fromkeys(range(1, SEATS + 1), TABLES[config.game])
    events: list[TableEvent] = []
    for _ in range(rounds):
        events.extend(dealer.play(plan).events)
    return events


def replay(config: TableConfig, events: list[TableEvent]) -> float:
    """Seconds spent in `engine.apply` over `events`; outputs are dropped, as once published."""
    engine = TableEngine(config)
    apply = engine.apply
    gc.collect()  # start every run with the same heap
    start = time.perf_counter()
    for event in events:
        apply(event)
    return time.perf_counter() - start


def count_settlements(config: TableConfig, events: list[TableEvent]) -> int:
    """The settlements the stream makes (an untimed pass)."""
    engine = TableEngine(config)
    return sum(isinstance(out, Settlement) for event in events for out in engine.apply(event))


def cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as info:  # noqa: PTH123 - one read-only file
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    parser.add_argument("--rounds", type=int, default=10_000, help="rounds per game")
    parser.add_argument("--seed", type=int, default=1, help="seed of the shoes and the plan")
    parser.add_argument("--repeat", type=int, default=3, help="timed replays; the best counts")
    args = parser.parse_args()
    print(f"python {platform.python_version()} ({platform.python_implementation()})")
    print(f"cpu {cpu_model()}; one core; best of {args.repeat} timed replays")
    header = f"{'game':<14}{'rounds':>8}{'events':>10}{'settlements':>13}"
    print(f"{header}{'seconds':>10}{'rounds/s':>11}{'events/s':>11}")
    for game in Game:
        config = table_config(game)
        events = generate(config, args.rounds, args.seed)
        elapsed = min(replay(config, events) for _ in range(args.repeat))
        settlements = count_settlements(config, events)
        print(
            f"{game.value:<14}{args.rounds:>8}{len(events):>10}{settlements:>13}"
            f"{elapsed:>10.3f}{args.rounds / elapsed:>11.0f}{len(events) / elapsed:>11.0f}"
        )


if __name__ == "__main__":
    main()
