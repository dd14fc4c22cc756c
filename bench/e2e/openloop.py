"""One open-loop run: the daemon and its baselines fed the same timetable, side by side.

    uv run python -m bench.e2e.openloop [--shoes 8] [--pace 5] [--seconds 60] [--tcp]
        [--sync full|normal] [--baselines bare normal full] [--cards N]

What runs, all at once, each its own process under this one: mosquitto; the daemon
(`shoe2mqtt run`, as systemd starts it, journal on this disk, JSON logs at info); and the
baselines (`bench.e2e.relay`): the bare relay (`bare`) and the durable relay that writes each
frame to this disk before publishing it, synced (`full`) or not (`normal`). Each reads its
own shoes (bench/e2e/shoes.py: the emulator over ptys, or over TCP as device servers), and
every shoe of table i deals the same card at the same moment.

The load (bench/e2e/load.py) is built from basic-strategy rounds and played open loop: cards
and the dealer console's requests go out on their timetable whatever the daemon does. This
process's subscriber notes CLOCK_MONOTONIC at each receipt; a shoe notes it just before each
write; so:
- card→settlement: a settlement's receipt minus the write of the card that decided it (the
  replay says which); settlements decided by a request (a surrender, say) are timed from
  the request, apart;
- a relay's card→receipt: the receipt of a card's frame minus its write.
Every settlement must equal the replay's; at the end `shoe2mqtt replay` of the round logs of
what was played must print exactly the settlements that were expected. A lost, unexpected
or different settlement is an ERROR (exit 1), unless the daemon fell behind the timetable so
far that a request missed its window: the daemon's sequence numbers say whether each request
was applied after the card before it and before the card after it (`early`/`late`); if not,
the run is OVERLOAD, which is a finding about the pace, not a wrong result.
CPU time comes from /proc for each process, from the first step to the last settlement.
"""

from __future__ import annotations

import argparse
import array
import asyncio
import collections
import contextlib
import gc
import io
import itertools
import json
import math
import os
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, Literal, TextIO

import aiomqtt

from bench.e2e.harness import (
    BASE,
    ReadyDaemon,
    add_nice_argument,
    apply_nice,
    bench_broker,
    cpu_seconds,
    machine,
    no_delay,
    percentile,
    receipts,
    table_mapping,
    workspace,
    write_config,
)
from bench.e2e.load import (
    REQUEST_POSITION,
    CardStep,
    RoundLogWriter,
    TableLoad,
    settlement_key,
)
from bench.e2e.profile import PySpy, summarize
from bench.e2e.shoes import make_shoe
from bench.e2e.warm import warm_journal, warm_numbers
from daemon.cli.main import build_parser
from daemon.testing import content
from daemon.wire.round_message import CONTRACTS, ROUND_CONTRACT, unbundled
from drivers.codecs import reference
from rules.config import TableConfig
from rules.games import Game

if TYPE_CHECKING:
    from collections.abc import Callable, Coroutine, Iterable, Sequence

    from bench.e2e.load import Step
    from bench.e2e.shoes import LoadShoe
    from daemon.testing import Mosquitto

    # Watches a run as it goes (bench/e2e/sustained.py), from the daemon's READY=1 to the end.
    Observer = Callable[["OpenLoopRun", ReadyDaemon], Coroutine[Any, Any, None]]

Baseline = Literal["bare", "normal", "full"]
BASELINES: Final[tuple[Baseline, ...]] = ("bare", "normal", "full")
BASELINE_NAMES: Final[dict[str, str]] = {
    "bare": "bare relay",
    "normal": "durable relay (write)",
    "full": "durable relay (fdatasync)",
}
CARD_DRAWN: Final = reference.MessageType.CARD_DRAWN
# What the daemon says for each card it takes: the card event, the refusal of the card, or
# the doubt of a card that came before the round's wagers were applied (held for the
# floorperson: the wagers, sent before it, came after it).
CARDS_TAKEN: Final = frozenset(
    {"event/card_dealt", "event/card_burned", "notice/card_rejected", "notice/card_before_round"}
)
START_DELAY: Final = 1.0  # seconds between the last host opening a port and the first step
FULL_COLLECTIONS_OFF: Final = 1 << 30  # young collections before a full one: never, in a run
# The topics (below a table's) whose messages the listener reads; it counts every other one.
TIMED: Final = ("settlement", "response/", "event/card_dealt", "event/card_burned", "notice/")


@dataclass(frozen=True, slots=True)
class Profiling:
    """py-spy on the daemon for the run (bench/e2e/profile.py); `idle` for wall time."""

    py_spy: str
    output: Path
    idle: bool = False
    gil: bool = False  # only samples that hold the GIL: Python's own CPU, never a wait


@dataclass(frozen=True, slots=True)
class Floor:
    """What one run deals: `shoes` tables at `pace` cards a second each, for `seconds`
    (or until `cards` cards in all); the daemon's `[journal] sync` (None: its default)."""

    shoes: int = 8
    pace: float = 5.0
    seconds: float = 60.0
    transport: Literal["pty", "tcp"] = "pty"
    sync: str | None = None
    baselines: tuple[Baseline, ...] = BASELINES
    seed: int = 1
    warmup: float = 2.0  # seconds of the start not measured
    cards: int | None = None
    drain: float = 60.0  # seconds allowed after the last step for what is still due
    games: tuple[Game, ...] = tuple(Game)  # the tables' games, in turn
    # The console contract the daemon publishes under: 4, one message an input, is the one
    # the goals' messages per card are measured under (docs/performance.md).
    contract: int = ROUND_CONTRACT
    # Each window's wagers with its "No more bets" (one request), as the goals measure; False:
    # each wager its own request (docs/performance.md, "The layout: one request a window").
    layout: bool = True
    # Rounds each table's journal holds before the daemon starts (bench/e2e/warm.py): its
    # windows of latest rounds full, as on a floor that has been dealing; 0: a cold start.
    warm_rounds: int = 0

    @property
    def rate(self) -> float:
        return self.shoes * self.pace

    def describe(self) -> str:
        sync = self.sync or "the daemon's default"
        limit = f"{self.cards:,} cards" if self.cards else f"{self.seconds:g} s"
        warm = f", {self.warm_rounds:,} rounds a table journaled before" if self.warm_rounds else ""
        return (
            f"{self.shoes} shoes x {self.pace:g} cards/s = {self.rate:g} cards/s over "
            f"{self.transport}, {limit}, journal sync: {sync}, console contract {self.contract}"
            f"{'' if self.layout else ', each wager its own request'}"
            f"{warm}"
        )


def table_ids(shoes: int, games: Sequence[Game]) -> list[tuple[Game, str]]:
    dealt = itertools.islice(itertools.cycle(games), shoes)
    return [(game, f"{game.value.replace('_', '-')}-{i + 1}") for i, game in enumerate(dealt)]


@dataclass(slots=True)
class Sent:
    """When a step went out (CLOCK_MONOTONIC), and whether it counts (after the warm-up)."""

    measured: bool
    at: float = 0.0


@dataclass(slots=True)
class Lane:
    """One table's load and what it is dealt on: the daemon's shoe, a shoe per baseline, and
    the round log and expected settlements of what was played."""

    index: int
    load: TableLoad
    shoe: LoadShoe = field(init=False)
    relay_shoes: list[LoadShoe] = field(default_factory=list)
    log: RoundLogWriter = field(init=False)
    expected: TextIO = field(init=False)
    last_card: float = 0.0  # when the latest card went out
    waiting: list[float] = field(default_factory=list)  # requests sent since then

    def squeezed(self, step: Step, at: float, window: float) -> int:
        """How many requests went out less than half their window after the card before them
        or before the card after them: the bench itself fell behind its timetable there."""
        if isinstance(step, CardStep):
            late = sum(1 for sent in self.waiting if at - sent < window / 2)
            self.last_card, self.waiting = at, []
            return late
        self.waiting.append(at)
        return int(at - self.last_card < window / 2)

    timetable: TextIO = field(init=False)
    recent: collections.deque[tuple[str, float, float]] = field(
        default_factory=lambda: collections.deque(maxlen=8)
    )  # the latest steps: (what, when due, when sent), CLOCK_MONOTONIC

    def played(self, step: Step, due: float, sent: float) -> None:
        """Log the step: the round log, its settlements, and when it was due and went out
        (the wall clock, as the daemon's journal and log have it: to read an overload by)."""
        self.log.played(step)
        self.expected.writelines(_canonical(record) + "\n" for record in step.settles)
        offset = time.time() - time.monotonic()
        kind = "card" if isinstance(step, CardStep) else step.command
        self.recent.append((f"{kind} {step.number}", due, sent))
        self.timetable.write(f"{kind}\t{step.number}\t{due + offset:.6f}\t{sent + offset:.6f}\n")

    def close(self) -> None:
        self.log.close()
        self.expected.close()
        self.timetable.close()


@dataclass(slots=True)
class TableWatch:
    """What one table still owes, and how its messages arrived."""

    expected: dict[tuple[Any, ...], tuple[dict[str, Any], bool, Sent]] = field(
        default_factory=dict
    )  # settlement key -> (record, decided by a card, when its step went out)
    requests: dict[object, tuple[int, Sent]] = field(default_factory=dict)
    cards_seen: int = 0  # cards taken (CARDS_TAKEN) received
    last_seq: int = 0
    rounds_before: int = 0  # the table's rounds journaled before the run (a warm start)
    broken: bool = False  # a request went out of its window: the rest of the order is moot


@dataclass(slots=True)
class Tally:
    """What one run saw."""

    card_latency: array.array[float] = field(default_factory=lambda: array.array("d"))
    request_latency: array.array[float] = field(default_factory=lambda: array.array("d"))
    response_time: array.array[float] = field(default_factory=lambda: array.array("d"))
    relay_latency: dict[str, array.array[float]] = field(default_factory=dict)
    # When each of `card_latency` and of the bare relay's latencies was received: the
    # tail period by period (`by_period`), to tell a tail that grows from one that comes.
    card_received: array.array[float] = field(default_factory=lambda: array.array("d"))
    relay_received: array.array[float] = field(default_factory=lambda: array.array("d"))
    slip: array.array[float] = field(default_factory=lambda: array.array("d"))
    cards: int = 0
    requests: int = 0
    expected: int = 0
    received: int = 0
    mismatched: list[str] = field(default_factory=list)
    unexpected: list[str] = field(default_factory=list)
    lost: list[str] = field(default_factory=list)
    refused: list[str] = field(default_factory=list)
    early: int = 0  # tables whose first request out of its window came before its card
    late: int = 0  # tables whose first request out of its window came after the next card
    out_of_order: int = 0  # a table's messages that arrived with a lower seq than before
    squeezed: int = 0  # request windows the bench itself narrowed by falling behind
    messages: int = 0  # every message the daemon published on its tables' topics, states too
    notices: collections.Counter[str] = field(default_factory=collections.Counter)
    replay: list[str] = field(default_factory=list)  # where `shoe2mqtt replay` disagreed

    @property
    def overloaded(self) -> bool:
        return self.early + self.late > 0

    @property
    def lines_lost(self) -> int:
        return self.notices["reader_disconnected"]

    @property
    def wrong(self) -> list[str]:
        lost = self.lines_lost
        return [
            *([f"the daemon lost a shoe's line {lost} times"] if lost else []),
            *self.mismatched, *self.unexpected, *self.lost, *self.refused, *self.replay,
            *([f"{self.out_of_order} messages arrived out of order"] if self.out_of_order else []),
        ]  # fmt: skip


@dataclass(slots=True)
class RunResult:
    floor: Floor
    tally: Tally
    wall: float  # seconds from the first step to the last settlement
    cpu: dict[str, float]  # process -> CPU seconds over `wall`
    rss: float  # the daemon's resident MiB at the end
    rss_samples: list[tuple[int, float]]  # (cards dealt, the daemon's RSS) along the way
    # card->settlement in two: card write -> published (the daemon's settled line), and
    # published -> received (`OpenLoopRun._split`)
    split: tuple[list[float], list[float]] = ([], [])
    watch: dict[str, TableWatch] = field(default_factory=dict)

    @property
    def verdict(self) -> str:
        if self.tally.lines_lost:  # the load assumes lines that hold: the run proves nothing
            return "ERROR"
        if self.tally.overloaded:
            return "OVERLOAD"
        return "ERROR" if self.tally.wrong else "ok"

    def p99(self, name: str = "daemon") -> float:
        values = self.tally.card_latency if name == "daemon" else self.tally.relay_latency[name]
        return percentile(list(values), 0.99) if values else float("nan")

    def cpu_per_card(self, name: str = "daemon") -> float:
        return self.cpu[name] / max(self.tally.cards, 1)

    def messages_per_card(self) -> float:
        """Every message the daemon published on its tables' topics (numbered or a state)
        per card dealt: each is a publish and a PUBACK on its link. A relay's is 1."""
        return self.tally.messages / max(self.tally.cards, 1)

    def longest_wait(self) -> float:
        """The longest a settlement or a response was waited for (0 if none came)."""
        tally = self.tally
        waits = (tally.card_latency, tally.request_latency, tally.response_time)
        return max((max(values) for values in waits if values), default=0.0)


class RelayProcess:
    """A baseline relay (`bench.e2e.relay`) on its own shoes."""

    def __init__(self, kind: Baseline, directory: Path) -> None:
        self.kind = kind
        self.file = directory / f"relay-{kind}.frames"
        self.prefix = f"relay-{kind}"
        self.process: subprocess.Popen[bytes] | None = None

    async def start(self, broker_port: int, endpoints: Sequence[str]) -> None:
        durable = [] if self.kind == "bare" else ["--durable", self.kind, "--file", str(self.file)]
        self.process = subprocess.Popen(  # noqa: S603, ASYNC220 - our own module, started once
            [sys.executable, "-m", "bench.e2e.relay", str(broker_port), *endpoints,
             "--prefix", self.prefix, *durable],
            stdout=subprocess.PIPE,
        )  # fmt: skip
        assert self.process.stdout is not None
        line = await asyncio.to_thread(self.process.stdout.readline)
        if line.strip() != b"ready":
            raise RuntimeError(f"the {self.kind} relay did not start")

    @property
    def pid(self) -> int:
        assert self.process is not None
        return self.process.pid

    async def stop(self) -> None:
        process, self.process = self.process, None
        if process is None:
            return
        process.terminate()
        try:
            await asyncio.to_thread(process.wait, 10)
        except subprocess.TimeoutExpired:
            process.kill()
            await asyncio.to_thread(process.wait)
        if process.stdout is not None:
            process.stdout.close()


class OpenLoopRun:
    """One run of `floor`; `await run()` returns its result."""

    def __init__(
        self,
        floor: Floor,
        *,
        progress: Callable[[RunResult], None] | None = None,
        profile: Profiling | None = None,
        observers: Sequence[Observer] = (),
    ) -> None:
        self.floor = floor
        self.observers = observers
        self.directory = Path()  # the run's workspace, once it runs
        self.tally = Tally()
        self.progress = progress
        self.profile = profile
        self.daemon_pid = 0
        # (table, round, seat, wager), card write and receipt, for the split of the latency
        self.timed: list[tuple[tuple[Any, ...], float, float]] = []
        tables = table_ids(floor.shoes, floor.games)
        self.configs = [
            TableConfig.from_mapping(table_mapping(game, table)) for game, table in tables
        ]
        self.mappings = [table_mapping(game, table) for game, table in tables]
        self.lanes = [
            Lane(i, TableLoad(config, floor.seed * 1000 + i, pace=floor.pace,
                              phase=i / (floor.shoes * floor.pace), layout=floor.layout))
            for i, config in enumerate(self.configs)
        ]  # fmt: skip
        self.watch = {config.table_id: TableWatch() for config in self.configs}
        self.relay_writes: dict[str, list[collections.deque[tuple[float, bool]]]] = {
            kind: [collections.deque() for _ in self.configs] for kind in floor.baselines
        }
        self.rss_samples: list[tuple[int, float]] = []
        # CLOCK_MONOTONIC of each table's first `stats`: its shift's numbers counted (after a
        # warm start, rebuilt from the journal)
        self.stats_first: dict[str, float] = {}

    async def run(self) -> RunResult:
        with workspace() as directory, bench_broker(directory) as broker:
            self.directory = directory
            async with contextlib.AsyncExitStack() as stack:
                daemon, client, processes = await self._start(stack, directory, broker)
                result = await self._play(daemon, client, processes)
            self._count_lost()
            self._check_replay(directory)
            result.split = self._split(directory / "daemon.log")
        return result

    async def _start(
        self, stack: contextlib.AsyncExitStack, directory: Path, broker: Mosquitto
    ) -> tuple[ReadyDaemon, aiomqtt.Client, dict[str, int]]:
        """Every process and shoe, until each shoe's host has opened it; what it started is
        stopped when `stack` closes."""
        floor = self.floor
        shoes = await self._shoes(stack)
        tables = [
            (mapping, lane.shoe.shoe_section())
            for mapping, lane in zip(self.mappings, self.lanes, strict=True)
        ]
        now = datetime.now(UTC)
        numbers = warm_numbers(now) if floor.warm_rounds else None
        config = write_config(
            directory, broker, tables, sync=floor.sync, contract=floor.contract, numbers=numbers
        )
        if floor.warm_rounds:
            await self._warm(directory / "state", now)
        daemon = ReadyDaemon(config, directory)
        await daemon.start()
        stack.push_async_callback(daemon.stop)
        processes = {"daemon": daemon.process.pid, "mosquitto": broker.pid}
        self.daemon_pid = daemon.process.pid
        for kind in floor.baselines:
            relay_shoes = await self._shoes(stack, relay=True)
            relay = RelayProcess(kind, directory)
            await relay.start(broker.port, [s.endpoint() for s in relay_shoes])
            stack.push_async_callback(relay.stop)
            processes[kind] = relay.pid
            shoes += relay_shoes
            self.tally.relay_latency[kind] = array.array("d")
        processes["bench"] = os.getpid()
        # The bench speaks for every table's console at once: paho's default of 20 QoS 1
        # messages in flight would hold requests back behind other tables' PUBACKs.
        # A request's PUBACK is waited for as long as it takes: on a starved machine aiomqtt's
        # 10 s would fail the bench's own publishes (the broker still delivers them).
        client = aiomqtt.Client(
            broker.host, broker.port, identifier="bench-open-loop", max_inflight_messages=10_000,
            timeout=math.inf,
        )  # fmt: skip
        await stack.enter_async_context(client)
        no_delay(client)
        client.pending_calls_threshold = 100_000  # requests in flight at every table
        # Everything the daemon publishes, to count it (a message per card is its cost); the
        # listener reads only what it times.
        await client.subscribe(f"{BASE}/#", qos=1)
        for kind in floor.baselines:
            await client.subscribe(f"relay-{kind}/#", qos=1)
        async with asyncio.timeout(60):
            await asyncio.gather(*(shoe.wait_for_host() for shoe in shoes))
        listener = asyncio.create_task(self._listen(client), name="bench-listener")
        stack.push_async_callback(_cancel, listener)
        for lane, table in zip(self.lanes, self.configs, strict=True):
            lane.log = RoundLogWriter(table, directory / f"{table.table_id}.jsonl")
            lane.expected = (directory / f"{table.table_id}.expected").open("w")
            lane.timetable = (directory / f"{table.table_id}.timetable").open("w")
            stack.callback(lane.close)
        return daemon, client, processes

    async def _warm(self, state: Path, now: datetime) -> None:
        """Each table's journal, `warm_rounds` rounds long, before the daemon starts."""
        began = time.monotonic()
        floor = self.floor
        last = await warm_journal(state, self.configs, floor.warm_rounds, floor.contract, now)
        for table, rounds in last.items():
            self.watch[table].rounds_before = rounds
        took = time.monotonic() - began
        print(f"-- warm journal: {sum(last.values()):,} rounds in {took:.0f} s", flush=True)

    async def _shoes(
        self, stack: contextlib.AsyncExitStack, *, relay: bool = False
    ) -> list[LoadShoe]:
        """A shoe per table: the daemon's (in its lane), or a relay's (added to the lanes)."""
        shoes = []
        for index, lane in enumerate(self.lanes):
            # A warm journal ends with each table's new shoe announced: the daemon's shoe
            # deals its cards without announcing it again; a relay's shoe starts from nothing.
            announced = bool(self.floor.warm_rounds) and not relay
            seed = self.floor.seed * 1000 + index
            shoe = make_shoe(self.floor.transport, seed, announced=announced)
            await shoe.start()
            stack.push_async_callback(shoe.aclose)
            if relay:
                lane.relay_shoes.append(shoe)
            else:
                lane.shoe = shoe
            shoes.append(shoe)
        return shoes

    async def _play(
        self, daemon: ReadyDaemon, client: aiomqtt.Client, processes: dict[str, int]
    ) -> RunResult:
        """Deal the timetable, wait for what it owes, and measure."""
        floor = self.floor
        loop = asyncio.get_running_loop()
        start = loop.time() + START_DELAY
        # This process's own full collections held its event loop 170-640 ms on a floor of
        # 256 tables, and with what it built to start frozen out of them still 80-140 ms and
        # growing with the run (a gc callback, 2026-12-02): a message received during one
        # was stamped late, the daemon's and the bare relay's alike, so the tail measured
        # was partly the bench's. While it deals, it makes no full collection (the young
        # generations are collected as before; what reaches the oldest stays to the end).
        gc.collect()
        thresholds = gc.get_threshold()
        gc.set_threshold(*thresholds[:2], FULL_COLLECTIONS_OFF)
        cpu_before = {name: cpu_seconds(pid) for name, pid in processes.items()}
        main_before = cpu_seconds(self.daemon_pid, self.daemon_pid)
        publishing: set[asyncio.Task[None]] = set()
        spy = None
        if self.profile is not None:
            spy = PySpy(
                self.profile.py_spy, daemon.process.pid, self.profile.output,
                idle=self.profile.idle, gil=self.profile.gil,
            )  # fmt: skip
        drivers = [
            asyncio.create_task(self._drive(lane, start, client, publishing), name=f"bench-{i}")
            for i, lane in enumerate(self.lanes)
        ]
        monitor = asyncio.create_task(self._monitor(daemon, drivers), name="bench-monitor")
        watching = [
            asyncio.create_task(observer(self, daemon), name=f"bench-observer-{i}")
            for i, observer in enumerate(self.observers)
        ]
        try:
            await asyncio.gather(*drivers)
            await self._drain(daemon)
        finally:
            gc.set_threshold(*thresholds)
            for task in (monitor, *watching):
                task.cancel()
            await asyncio.gather(monitor, *watching, return_exceptions=True)
            if spy is not None:
                await asyncio.to_thread(spy.stop)
        wall = loop.time() - start
        cpu = {name: cpu_seconds(pid) - cpu_before[name] for name, pid in processes.items()}
        # The daemon's event loop runs on its main thread; the journal on a thread of its own.
        cpu["daemon main thread"] = cpu_seconds(self.daemon_pid, self.daemon_pid) - main_before
        rss = daemon.rss_mib()
        await asyncio.gather(*publishing, return_exceptions=True)
        return RunResult(floor, self.tally, wall, cpu, rss, self.rss_samples, watch=self.watch)

    async def _drive(
        self, lane: Lane, start: float, client: aiomqtt.Client, publishing: set[asyncio.Task[None]]
    ) -> None:
        """One table's timetable: each step at its time, whatever the daemon does."""
        floor = self.floor
        loop = asyncio.get_running_loop()
        watch = self.watch[lane.load.table]
        end = start + floor.seconds
        measured_from = start + floor.warmup
        card_limit = None if floor.cards is None else -(-floor.cards // floor.shoes)
        for step in lane.load.steps():
            due = start + step.at
            if isinstance(step, CardStep) and (
                step.number > card_limit if card_limit is not None else due >= end
            ):
                return
            await asyncio.sleep(max(due - loop.time(), 0.0))  # sleep(0) too: the others must run
            self.tally.slip.append(loop.time() - due)
            sent = Sent(measured=due >= measured_from)
            self._expect(watch, step, sent)
            if isinstance(step, CardStep):
                sent.at = await lane.shoe.deal(step)
                for kind, relay_shoe in zip(floor.baselines, lane.relay_shoes, strict=True):
                    written = await relay_shoe.deal(step)
                    self.relay_writes[kind][lane.index].append((written, sent.measured))
                self.tally.cards += 1
            else:
                watch.requests[step.body["transaction"]] = (step.cards_before, sent)
                self.tally.requests += 1
                sent.at = time.monotonic()
                topic = f"{BASE}/{step.table}/request/{step.command}"
                task = asyncio.create_task(client.publish(topic, json.dumps(step.body), qos=1))
                publishing.add(task)
                task.add_done_callback(publishing.discard)
            self.tally.squeezed += lane.squeezed(step, sent.at, REQUEST_POSITION / floor.pace)
            lane.played(step, due, sent.at)

    def _expect(self, watch: TableWatch, step: Step, sent: Sent) -> None:
        by_card = isinstance(step, CardStep)
        for settled in step.settles:  # numbered on from the rounds journaled before the run
            record = {**settled, "round": settled["round"] + watch.rounds_before}
            watch.expected[settlement_key(record)] = (record, by_card, sent)
            self.tally.expected += 1

    async def _listen(self, client: aiomqtt.Client) -> None:
        prefix = len(BASE) + 1
        async for now, topic, payload in receipts(client):
            if topic.startswith("relay-"):
                self._relay_frame(topic, payload, now)
                continue
            table, _, rest = topic[prefix:].partition("/")
            watch = self.watch.get(table)
            if watch is None or rest.startswith("request/"):  # the bench's own requests
                continue
            self.tally.messages += 1
            if rest == "stats":
                self.stats_first.setdefault(table, now)
            if rest == "round" and payload.startswith(b'{"schema"'):  # contract 4: numbered
                body = json.loads(payload)
                self._numbered(watch, body)
                for part_topic, part in unbundled(topic, body)[:-1]:  # what it carried
                    self._timed(table, watch, part_topic[prefix + len(table) + 1 :], part, now)
                continue
            if not rest.startswith(TIMED):
                continue
            body = json.loads(payload)
            self._numbered(watch, body)
            self._timed(table, watch, rest, body, now)

    def _numbered(self, watch: TableWatch, body: dict[str, Any]) -> None:
        """A numbered message: the daemon's messages arrive in its `seq` order."""
        seq = int(body["seq"])
        if seq <= watch.last_seq:
            self.tally.out_of_order += 1
        watch.last_seq = seq

    def _timed(
        self, table: str, watch: TableWatch, rest: str, body: dict[str, Any], now: float
    ) -> None:
        """A card taken, a settlement, a response or a notice (`rest`: its topic under the
        table's), received at `now`."""
        if rest in CARDS_TAKEN:
            watch.cards_seen += 1
        if rest == "settlement":
            self._settlement(table, watch, body, now)
        elif rest.startswith("response/"):
            self._response(table, watch, body, now)
        elif rest.startswith("notice/"):
            self.tally.notices[rest.removeprefix("notice/")] += 1

    def _relay_frame(self, topic: str, payload: bytes, now: float) -> None:
        kind_part, _, index = topic.partition("/")
        if len(payload) < 2 or payload[1] != CARD_DRAWN:
            return  # the device's identity, a new shoe: not a card
        writes = self.relay_writes[kind_part.removeprefix("relay-")][int(index)]
        written, measured = writes.popleft()
        if measured:
            kind = kind_part.removeprefix("relay-")
            self.tally.relay_latency[kind].append(now - written)
            if kind == "bare":
                self.tally.relay_received.append(now)

    def _settlement(self, table: str, watch: TableWatch, body: dict[str, Any], now: float) -> None:
        key = settlement_key(body)
        entry = watch.expected.pop(key, None)
        if entry is None:
            self.tally.unexpected.append(f"{table} {key}: not a settlement the replay decided")
            return
        record, by_card, sent = entry
        self.tally.received += 1
        delivered = content(body)
        review = delivered.pop("review", None)
        if delivered != record or review is not False:
            self.tally.mismatched.append(
                f"{table} {key}: delivered {delivered} (review {review}), replay {record}"
            )
        if sent.measured:
            (self.tally.card_latency if by_card else self.tally.request_latency).append(
                now - sent.at
            )
            if by_card:
                self.tally.card_received.append(now)
            if by_card and self.floor.cards is None:
                self.timed.append(((table, *key[:2], key[3]), sent.at, now))

    def _response(self, table: str, watch: TableWatch, body: dict[str, Any], now: float) -> None:
        entry = watch.requests.pop(body.get("transaction"), None)
        if entry is None:
            return
        cards_before, sent = entry
        if sent.measured:
            self.tally.response_time.append(now - sent.at)
        # The daemon's messages arrive in its seq order: the cards it took (a card event, or
        # a refusal) before this response are the cards it had taken before this request.
        # After the first request out of its window the table's round goes its own way
        # (cards refused, wagers missing): only the first counts.
        if not watch.broken and watch.cards_seen != cards_before:
            watch.broken = True
            if watch.cards_seen > cards_before:
                self.tally.late += 1
            else:
                self.tally.early += 1
        if body.get("status") != "ok":
            self.tally.refused.append(f"{table} {body.get('transaction')}: {body.get('error')}")

    async def _monitor(self, daemon: ReadyDaemon, drivers: list[asyncio.Task[None]]) -> None:
        """The daemon must not die; long runs sample its memory as they go (every 50,000
        cards, or every twentieth of a shorter run's cards)."""
        every = min(50_000, max(1_000, (self.floor.cards or 0) // 20 or 50_000))
        mark = every
        while True:
            await asyncio.sleep(0.5)
            try:
                daemon.process.check()
            except Exception:
                for driver in drivers:
                    driver.cancel()
                raise
            if self.tally.cards >= mark:
                self.rss_samples.append((self.tally.cards, daemon.rss_mib()))
                mark += every
                if self.progress is not None:
                    self.progress(
                        RunResult(self.floor, self.tally, 0.0, {}, self.rss_samples[-1][1],
                                  self.rss_samples)
                    )  # fmt: skip

    async def _drain(self, daemon: ReadyDaemon) -> None:
        """Until every expected settlement and response came, or `floor.drain` seconds."""
        deadline = asyncio.get_running_loop().time() + self.floor.drain
        while any(w.expected or w.requests for w in self.watch.values()):
            if asyncio.get_running_loop().time() > deadline:
                return
            daemon.process.check()
            await asyncio.sleep(0.05)

    def _split(self, daemon_log: Path) -> tuple[list[float], list[float]]:
        """Card write -> the daemon's `table.settled` line (the card read, journaled,
        applied and its messages written to the broker: the line is logged after them), and
        that line -> receipt (the broker's delivery to the bench)."""
        offset = time.time() - time.monotonic()  # the log's clock is the wall clock
        logged: dict[tuple[Any, ...], list[float]] = {}
        with daemon_log.open() as lines:
            for line in lines:
                if '"table.settled"' not in line:
                    continue
                record = json.loads(line)
                key = (record["table"], record["round"], record["seat"], record["wager"])
                moment = datetime.fromisoformat(record["timestamp"]).timestamp() - offset
                logged.setdefault(key, []).append(moment)
        to_published, to_received = [], []
        for key, written, received in self.timed:
            moments = logged.get(key)
            if moments:
                moment = moments.pop(0)
                to_published.append(moment - written)
                to_received.append(received - moment)
        return to_published, to_received

    def _count_lost(self) -> None:
        for table, watch in self.watch.items():
            self.tally.lost += [f"{table} {key}: never delivered" for key in watch.expected]
            self.tally.lost += [
                f"{table} request {transaction}: never answered" for transaction in watch.requests
            ]

    def _check_replay(self, directory: Path) -> None:
        """`shoe2mqtt replay` of each table's round log prints exactly the expected settlements.

        The command runs in this process (its parser and handler, as `main` calls them): a
        new interpreter per table would cost a second each, minutes for a floor.
        """
        parser = build_parser()
        for config in self.configs:
            table = config.table_id
            out, err = io.StringIO(), io.StringIO()
            args = parser.parse_args(["replay", str(directory / f"{table}.jsonl")])
            if args.run(args, out, err) != 0:
                self.tally.replay.append(f"{table}: replay failed: {err.getvalue().strip()}")
                continue
            settlements = [
                _canonical(record)
                for record in map(json.loads, out.getvalue().splitlines())
                if record["type"] == "settlement"
            ]
            wanted = (directory / f"{table}.expected").read_text().splitlines()
            if settlements != wanted:
                first = next(
                    (
                        i
                        for i, (a, b) in enumerate(zip(settlements, wanted, strict=False))
                        if a != b
                    ),
                    min(len(settlements), len(wanted)),
                )
                self.tally.replay.append(
                    f"{table}: `shoe2mqtt replay` differs from the expected settlements at "
                    f"settlement {first + 1} ({len(settlements)} against {len(wanted)})"
                )


async def stoppable(run: Coroutine[Any, Any, int]) -> int:
    """`run`, cancelled by SIGTERM or SIGINT (even where the shell ignores SIGINT, as it does
    for a background job), so that every process and shoe it started is stopped first."""
    task = asyncio.ensure_future(run)
    loop = asyncio.get_running_loop()
    for signum in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(signum, task.cancel)
    try:
        return await task
    except asyncio.CancelledError:
        print("stopped", file=sys.stderr)
        return 130


def _canonical(record: dict[str, Any]) -> str:
    return json.dumps(record, sort_keys=True, separators=(",", ":"))


async def _cancel(task: asyncio.Task[None]) -> None:
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)


# ---------------------------------------------------------------- printing
def ms(seconds: float) -> str:
    return f"{seconds * 1e3:.2f} ms"


def describe(values: Iterable[float]) -> str:
    ordered = sorted(values)
    if not ordered:
        return "no samples"
    return (
        f"p50 {ms(percentile(ordered, 0.5))}, p99 {ms(percentile(ordered, 0.99))}, "
        f"max {ms(ordered[-1])} over {len(ordered):,}"
    )


PERIOD: Final = 300.0  # seconds: the tail period by period, in runs longer than one


def by_period(tally: Tally, period: float = PERIOD) -> str | None:
    """Card->settlement p99 in each `period` of the run, the bare relay's beside it, or None
    for a run no longer than one period."""
    received = list(tally.card_received) + list(tally.relay_received)
    if not received or max(received) - min(received) <= period:
        return None
    start = min(received)

    def p99s(latencies: Iterable[float], times: Iterable[float]) -> dict[int, float]:
        grouped: dict[int, list[float]] = {}
        for latency, at in zip(latencies, times, strict=True):
            grouped.setdefault(int((at - start) // period), []).append(latency)
        return {n: percentile(sorted(values), 0.99) for n, values in grouped.items()}

    daemon = p99s(tally.card_latency, tally.card_received)
    relay = p99s(tally.relay_latency.get("bare", ()), tally.relay_received)
    minutes = period / 60
    cells = [
        f"{n * minutes:.0f}-{(n + 1) * minutes:.0f} min {daemon[n] * 1e3:.0f}"
        + (f"/{relay[n] * 1e3:.0f}" if n in relay else "")
        for n in sorted(daemon)
    ]
    return "  card->settlement p99 by period, ms (daemon/bare relay): " + ", ".join(cells)


def report(result: RunResult) -> list[str]:
    """The run's figures, a line each."""
    tally, floor, wall = result.tally, result.floor, result.wall
    slip = ms(percentile(list(tally.slip), 0.99)) if tally.slip else "-"
    dealt = f"{tally.cards:,} cards and {tally.requests:,} requests in {wall:.1f} s"
    requests = describe(tally.request_latency)
    lines = [
        f"open loop: {floor.describe()}",
        f"  dealt {dealt} ({tally.cards / wall:,.0f} cards/s); bench slip p99 {slip}",
        f"  shoe2mqtt card->settlement: {describe(tally.card_latency)}",
        f"  shoe2mqtt request->settlement: {requests}",
        f"  shoe2mqtt request->response: {describe(tally.response_time)}",
    ]
    to_published, to_received = result.split
    if to_published:
        lines.append(
            "    card write -> published (the daemon's table.settled line): "
            f"{describe(to_published)}"
        )
        lines.append(f"    published -> settlement received: {describe(to_received)}")
    lines += [
        f"  {BASELINE_NAMES[kind]} card->receipt: {describe(values)}"
        for kind, values in tally.relay_latency.items()
    ]
    periods = by_period(tally)
    if periods is not None:
        lines.append(periods)
    per_card = ", ".join(
        f"{name} {ms(seconds / max(tally.cards, 1))} ({seconds / wall:.2f} of a core)"
        for name, seconds in ((BASELINE_NAMES.get(n, n), s) for n, s in result.cpu.items())
    )
    lines.append(f"  CPU per card: {per_card}")
    lines.append(
        f"  daemon RSS {result.rss:.1f} MiB; {result.messages_per_card():.2f} MQTT messages per "
        f"card ({tally.messages:,} published on the tables' topics / cards)"
    )
    lines.append(
        f"  settlements: {tally.expected:,} expected, {tally.received:,} received"
        + ("" if tally.replay else ", the expected equal to `shoe2mqtt replay` of the round logs")
    )
    lines.append(
        f"  tables with a request out of its window: {tally.early + tally.late} (applied "
        f"before the card it follows: {tally.early}, after the card that closes it: "
        f"{tally.late}); "
        f"refused {len(tally.refused)}; notices {dict(tally.notices) or 'none'}; windows the "
        f"bench narrowed by more than half (its own slip): {tally.squeezed}"
    )
    verdict = result.verdict
    if verdict == "OVERLOAD":
        verdict += (
            f": the daemon fell behind the timetable ({tally.early + tally.late} tables with a "
            "request outside its window); settlements may differ for that reason alone"
        )
    elif verdict == "ERROR":
        verdict += ": " + "; ".join(tally.wrong[:5])
    lines.append(f"  verdict: {verdict}")
    return lines


def add_contract_argument(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--contract", type=int, choices=CONTRACTS, default=ROUND_CONTRACT,
        help="the console contract the daemon publishes under (mqtt.contract; default 4)",
    )  # fmt: skip
    parser.add_argument(
        "--one-by-one", action="store_true",
        help="the consoles send each wager as its own request, not the window's layout with "
        "its close_betting",
    )  # fmt: skip


def add_floor_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--shoes", type=int, default=8)
    parser.add_argument("--pace", type=float, default=5.0, help="cards a second per shoe")
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--cards", type=int, help="deal this many cards in all, then stop")
    parser.add_argument("--tcp", action="store_true", help="shoes over TCP, not ptys")
    parser.add_argument("--sync", choices=["full", "normal"], help="the daemon's journal sync")
    parser.add_argument("--seed", type=int, default=1)
    add_contract_argument(parser)
    parser.add_argument("--warmup", type=float, default=2.0, help="seconds not measured")
    parser.add_argument(
        "--warm-rounds", type=int, default=0,
        help="rounds each table's journal holds before the daemon starts (default: none)",
    )  # fmt: skip
    parser.add_argument(
        "--drain", type=float, default=60.0,
        help="seconds allowed after the last step for the settlements and responses still due",
    )  # fmt: skip


async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    add_floor_arguments(parser)
    parser.add_argument("--baselines", nargs="*", choices=BASELINES, default=list(BASELINES))
    parser.add_argument("--py-spy", help="profile the daemon with this py-spy")
    parser.add_argument("--profile", type=Path, default=Path("daemon-profile.txt"),
                        help="where py-spy's raw samples go")  # fmt: skip
    parser.add_argument("--idle", action="store_true", help="py-spy: wall time, not CPU")
    parser.add_argument("--gil", action="store_true", help="py-spy: only samples holding the GIL")
    add_nice_argument(parser)
    args = parser.parse_args()
    apply_nice(args.nice)
    floor = Floor(
        shoes=args.shoes, pace=args.pace, seconds=args.seconds, cards=args.cards,
        transport="tcp" if args.tcp else "pty", sync=args.sync,
        baselines=tuple(args.baselines), seed=args.seed, warmup=args.warmup, drain=args.drain,
        contract=args.contract, layout=not args.one_by_one, warm_rounds=args.warm_rounds,
    )  # fmt: skip
    print(f"machine: {machine()}", flush=True)
    profiling = None
    if args.py_spy is not None:
        profiling = Profiling(args.py_spy, args.profile, idle=args.idle, gil=args.gil)
    result = await OpenLoopRun(floor, profile=profiling).run()
    print("\n".join(report(result)))
    if profiling is not None:
        print(f"py-spy on the daemon ({'wall' if args.idle else 'CPU'}), raw: {args.profile}")
        print("\n".join(summarize(args.profile)))
    return 1 if result.verdict == "ERROR" else 0


if __name__ == "__main__":
    sys.exit(asyncio.run(stoppable(main())))
