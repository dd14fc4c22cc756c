"""What a table's state keeps per round, and what its surveillance keeps at its bound.

    uv run python -m bench.table_memory [--rounds 400] [--games ...] [--top 5]

Two figures, both sans-I/O and deterministic (the same seed gives the same bytes):
- **per round**: the goals bench's load (bench/e2e/load.py) played through the daemon's own
  table service as the daemon applies journaled events, as bench/messages_per_card.py plays
  it; Python's allocations still held (`tracemalloc`) between a quarter of `--rounds` and
  `--rounds`, divided by the rounds between, with the `--top` places that hold most. What
  stays per round is what a floor's daemon grows by until its bounds are reached (the
  surveillance's 600 rounds a table: rules.advantage).
- **a seven-seat table at the bound**: 600 rounds of seven seats, each betting one of four
  amounts, 20 rounds a shoe, kept by the surveillance (`AdvantageWatch`): the memory they
  hold (a second table's: the process's first table also makes the tables every table
  shares, printed beside it), the time the shuffle's weighing of every seat takes over them
  (median of 15), and the size and time of their checkpoint (its state encoded as the
  journal encodes it).
- **a floor's answers**: the 64 answers a table keeps for requests delivered again
  (daemon/table/redelivery.py), a Triple Attack table's after the load's first 600 steps,
  taken back from its checkpoint at 256 tables, as a restart of a floor's daemon does.
- **a shift at its bound**: the live numbers of a Triple Attack table's shift of 540
  rounds (`<table>/stats` keeps its last 500 for the numbers page): the memory its history
  holds, and the size and time of the payload published at each round's end.
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import itertools
import json
import logging
import random
import statistics
import tempfile
import time
import tracemalloc
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import structlog

from bench.e2e.harness import table_mapping
from bench.e2e.load import TableLoad
from bench.messages_per_card import AT, _records
from daemon.history.audit import JournalReader
from daemon.journal import JOURNAL_FILE
from daemon.journal.archive import Archive
from daemon.numbers import sources
from daemon.numbers.live import ShiftStats
from daemon.numbers.periods import Shifts
from daemon.table.redelivery import Answered
from daemon.table.round_state import RoundStates
from daemon.table.service import TableService
from daemon.testing.floor import Pace, write_journal
from daemon.wire.envelope import Envelopes
from daemon.wire.topics import Topics
from rules.advantage import MAX_ROUNDS, AdvantageWatch
from rules.cards import DeckKind, deck
from rules.config import TableConfig
from rules.games import Game, WagerKind
from rules.outputs import CardDealt, RoundEnded, RoundOpened, ShoeShuffled, WagerAccepted

if TYPE_CHECKING:
    from collections.abc import Sequence

    from daemon.wire.envelope import Outbound
    from rules.outputs import Output

SEATS = 7
ROUNDS_A_SHOE = 20
WAGERS = (1_000, 2_000, 5_000, 10_000)  # cents


def per_round(game: Game, rounds: int, top: int) -> list[str]:
    """Bytes a round the table service keeps, over `rounds` whole rounds of `game`."""
    config = TableConfig.from_mapping(table_mapping(game, "t1"))
    service = TableService(config, Topics("bench"), Envelopes("t1"))
    published: list[Outbound] = []
    states = RoundStates(published.append)
    service.apply_body("start", {"protocol": "reference", "node": "bench", "contract": 3}, AT)
    first, ended = max(rounds // 4, 1), 0
    snapshots: list[tracemalloc.Snapshot] = []
    # The load's steps made before any is traced: what the load keeps of the rounds it has
    # yet to deal is the bench's, not the table's (a round is some 30 steps).
    steps = list(itertools.islice(TableLoad(config, 1, pace=1.25, phase=0.0).steps(), 60 * rounds))
    tracemalloc.start()
    try:
        for step in steps:
            states.publish_due(step.at)
            for kind, record in _records(step):
                published += service.apply_body(kind, json.loads(json.dumps(record)), AT)
                states.applied("t1", service, step.at)
            round_ended = any(m.topic.endswith("/event/round_ended") for m in published)
            published.clear()
            ended += round_ended
            if round_ended and ended in (first, rounds):
                gc.collect()
                snapshots.append(tracemalloc.take_snapshot())
                if ended == rounds:
                    break
    finally:
        tracemalloc.stop()
    between = rounds - first
    stats = snapshots[1].compare_to(snapshots[0], "lineno")  # by the allocating line
    grown = sum(s.size_diff for s in stats)
    lines = [f"{game.value:14} {grown / between:6.0f} bytes a round kept ({between} rounds)"]
    lines += [
        f"{'':16}{s.size_diff / between:6.0f}  {s.traceback[0].filename.rsplit('/', 2)[-1]}:"
        f"{s.traceback[0].lineno}"
        for s in stats[:top]
    ]
    return lines


def _seven_seats(seed: int = 3) -> AdvantageWatch:
    config = TableConfig.from_mapping(table_mapping(Game.BLACKJACK, "t1"))
    rng = random.Random(seed)  # noqa: S311 - a bench's wagers, not a secret
    watch = AdvantageWatch(config)
    cards = deck(DeckKind.STANDARD) * config.decks
    round_id = 0
    for shoe in range(1, MAX_ROUNDS // ROUNDS_A_SHOE + 1):
        watch.observe([ShoeShuffled(shoe)])
        rng.shuffle(cards)
        for n in range(ROUNDS_A_SHOE):
            round_id += 1
            outputs: list[Output] = [RoundOpened(round_id)]
            outputs += [
                WagerAccepted(round_id, seat, WagerKind.BLACKJACK, rng.choice(WAGERS))
                for seat in range(1, SEATS + 1)
            ]
            dealt = cards[n * 12 : n * 12 + SEATS]
            outputs += [CardDealt(round_id, seat, 1, c) for seat, c in enumerate(dealt, 1)]
            watch.observe([*outputs, RoundEnded(round_id)])
    return watch


def at_the_bound() -> list[str]:
    """The surveillance of a seven-seat table holding its 600 rounds: a floor's table, the
    tables every table of the process shares (made by the first, once) measured apart."""
    first_held, _ = _held_by_seven_seats()
    held, watch = _held_by_seven_seats()
    weighing, encoding = [], []
    config = TableConfig.from_mapping(table_mapping(Game.BLACKJACK, "t1"))
    for _ in range(15):
        again = AdvantageWatch.from_state(config, watch.state())
        started = time.perf_counter()
        again.shoe_ended()
        weighing.append(time.perf_counter() - started)
        started = time.perf_counter()
        text = json.dumps(watch.state(), separators=(",", ":"))
        encoding.append(time.perf_counter() - started)
    line = (
        f"seven seats, {len(watch.rounds)} rounds: {held / 1024:.0f} KiB held (the process's "
        f"first table {first_held / 1024:.0f} KiB, with the tables all share); the shuffle's "
        f"weighing {statistics.median(weighing) * 1e3:.1f} ms; checkpoint "
        f"{len(text) / 1024:.0f} KiB in {statistics.median(encoding) * 1e3:.1f} ms"
    )
    return [line]


def _held_by_seven_seats() -> tuple[int, AdvantageWatch]:
    """Bytes a seven-seat table's surveillance holds after its 600 rounds, and the table."""
    tracemalloc.start(1)
    watch = _seven_seats()
    gc.collect()  # a full collection empties the tuples' free lists, which tracemalloc counts
    held = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    return held, watch


def floor_answers(tables: int = 256) -> list[str]:
    """The answers `tables` tables keep for a redelivery, as a restart restores them."""
    config = TableConfig.from_mapping(table_mapping(Game.TRIPLE_ATTACK, "t1"))
    service = TableService(config, Topics("bench"), Envelopes("t1"))
    service.apply_body("start", {"protocol": "reference", "node": "bench", "contract": 3}, AT)
    for step in itertools.islice(TableLoad(config, 1, pace=1.25, phase=0.0).steps(), 600):
        for kind, record in _records(step):
            service.apply_body(kind, json.loads(json.dumps(record)), AT)
    state = json.loads(json.dumps(service.answered.state()))  # as a checkpoint holds them
    tracemalloc.start()
    floor = [Answered.from_state(state) for _ in range(tables)]
    held = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    line = (
        f"a floor's answers kept for a redelivery, {len(floor)} tables x {len(state)}: "
        f"{held / 2**20:.2f} MiB held ({held / tables / 1024:.1f} KiB a table)"
    )
    return [line]


def shift_at_the_bound(state: Path) -> list[str]:
    """A Triple Attack table's shift of 540 rounds (60 an hour for 9 hours), its journal
    written in `state` by the journal's own store: what `<table>/stats` keeps of its last
    500 rounds (`history`), and the size and time of the payload at a round's end."""
    config = TableConfig.from_mapping(table_mapping(Game.TRIPLE_ATTACK, "t1"))
    start = datetime(2026, 12, 1, tzinfo=UTC)
    asyncio.run(
        write_journal(state, [config], start, 1, Pace(rounds_per_hour=60, opens=6, hours=9))
    )
    reader = JournalReader(state / JOURNAL_FILE, Archive(state / "archive"))
    try:
        records = list(sources.records(reader))
    finally:
        reader.close()
    stats = ShiftStats("t1", Shifts.parse(("00:00",)))
    tracemalloc.start()
    stats.take(records)
    gc.collect()
    held = tracemalloc.get_traced_memory()[0]  # the shift's numbers, its history most of it
    tracemalloc.stop()
    timings = []
    for _ in range(15):
        started = time.perf_counter()
        payload = stats.payload()
        timings.append(time.perf_counter() - started)
    line = (
        f"a shift's {len(stats.history)} last rounds: {held / 1024:.0f} KiB held; the stats "
        f"payload {len(payload) / 1024:.0f} KiB in {statistics.median(timings) * 1e3:.2f} ms"
    )
    return [line]


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=400, help="whole rounds per game")
    parser.add_argument("--games", nargs="+", type=Game, default=list(Game))
    parser.add_argument("--top", type=int, default=5, help="places that hold most, per game")
    args = parser.parse_args(argv)
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.ERROR))
    # The seven-seat line first: its first table must be the process's first, whatever
    # `--games` asks for (the rounds per game build the tables every table shares).
    bound = at_the_bound()
    for game in args.games:
        print("\n".join(per_round(game, args.rounds, args.top)))
    print("\n".join(bound))
    print("\n".join(floor_answers()))
    with tempfile.TemporaryDirectory() as state:
        print("\n".join(shift_at_the_bound(Path(state))))


if __name__ == "__main__":
    main()
