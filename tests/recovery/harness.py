"""The pieces of a recovery run: the daemon as a process, a collector, a dealer, a verdict.

Shared by the recovery tests (tests/recovery) and the chaos run (bench/chaos.py), and
free of pytest, so that the chaos run can use it as a script.

- `DaemonProcess`: `python -m daemon.cli run --config FILE`, killed with SIGKILL or stopped
  with SIGTERM, always waited for; an exit nobody asked for is a crash.
- `Collector`: one MQTT client with a persistent session (a fixed identifier, clean session
  off) subscribed to everything under the base topic; it reconnects by itself after a
  broker restart, so the broker keeps what it is sent meanwhile. It also publishes the
  requests.
- `Dealer`: the dealer and the players of one blackjack table. Each round is worked out by
  `rules.player.RoundDriver` (basic strategy) from the latest round snapshot; wagers and
  actions go out as requests, cards come out of an `EmulatedShoe`. After anything that may
  have lost a step (a kill, a broker restart, an unplug) it asks the daemon for its `status`
  and goes on from what the daemon says, as a real dealer console would.
- `verify`: replays the journal through a fresh `TableService` (`daemon.service.apply_record`,
  the function the daemon itself replays with) and compares every settlement delivered, the
  per-table sequence numbers and the final round snapshot with it.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import json
import signal
import sqlite3
import subprocess
import sys
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Literal, Self, TypeAlias

import aiomqtt

from daemon.cli.demo import DEMO_TABLES
from daemon.console import console_request
from daemon.envelope import Envelopes
from daemon.journal import JOURNAL_FILE, read_events
from daemon.service import apply_record
from daemon.table_service import TableService
from daemon.topics import Topics
from rules.cards import Card
from rules.config import TableConfig
from rules.events import DealCard, VoidRound
from rules.games import GAMES, Game
from rules.player import RoundDriver

if TYPE_CHECKING:
    import random
    from collections.abc import Awaitable, Callable
    from pathlib import Path

    from drivers.emulator import EmulatedShoe
    from rules.events import TableEvent

BASE: Final = "shoe2mqtt"
TABLE_SETTINGS: Final[dict[str, Any]] = DEMO_TABLES[Game.BLACKJACK]
TABLE_ID: Final[str] = TABLE_SETTINGS["id"]
ENVELOPE: Final = ("schema", "id", "table", "seq", "ts")
SETTLEMENT_KEY: Final = ("round", "seat", "hand", "wager", "order", "phase")
STEP_TIMEOUT: Final = 10.0  # seconds the daemon has to answer one step
STATUS_TRIES: Final = 5  # status requests before a resync gives up
MAX_STEPS: Final = 120  # steps one round may take before the dealer voids it
_STOP_TIMEOUT: Final = 15.0


class DaemonCrashed(Exception):
    """The daemon exited without being asked to."""


class Stalled(Exception):
    """The daemon did not answer a step in time."""


def table_config() -> TableConfig:
    return TableConfig.from_mapping(TABLE_SETTINGS)


def write_config(
    path: Path,
    *,
    host: str,
    port: int,
    shoe_port: str | Path,
    state_directory: Path,
    client_id: str = "shoe2mqtt-recovery",
) -> Path:
    """The service configuration: the test broker, a journal in `state_directory`, one table."""
    limits = "\n".join(
        f'limits.{kind} = {{ min = "{limit["min"]}", max = "{limit["max"]}" }}'
        for kind, limit in TABLE_SETTINGS["limits"].items()
    )
    scalars = "\n".join(
        f"{key} = {json.dumps(value)}" for key, value in TABLE_SETTINGS.items() if key != "limits"
    )
    path.write_text(
        f"""\
[mqtt]
host = "{host}"
port = {port}
client_id = "{client_id}"
reconnect = {{ initial = 0.05, maximum = 0.5 }}

[journal]
state_directory = "{state_directory}"

[logging]
format = "json"
level = "info"

[[table]]
{scalars}
{limits}
shoe = {{ protocol = "reference", transport = "serial", port = "{shoe_port}" }}
""",
        encoding="utf-8",
    )
    return path


class DaemonProcess:
    """The daemon as a child process; its log (stdout and stderr) goes to `log`."""

    def __init__(self, config: Path, log: Path) -> None:
        self.config = config
        self.log = log
        self.starts = 0
        self.kills = 0
        self._process: asyncio.subprocess.Process | None = None

    @property
    def running(self) -> bool:
        return self._process is not None and self._process.returncode is None

    async def start(self) -> None:
        assert self._process is None, "the daemon is already running"
        with self.log.open("ab") as log:
            self._process = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "daemon.cli", "run", "--config", str(self.config),
                stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
            )  # fmt: skip
        self.starts += 1

    def check(self) -> None:
        """Raise `DaemonCrashed` if the daemon exited by itself."""
        process = self._process
        if process is not None and process.returncode is not None:
            self._process = None
            raise DaemonCrashed(f"the daemon exited with {process.returncode}:\n{self.tail()}")

    async def kill(self) -> None:
        """SIGKILL, as a power cut or the OOM killer would, and wait for the corpse."""
        process, self._process = self._process, None
        assert process is not None, "no daemon to kill"
        if process.returncode is not None:
            raise DaemonCrashed(f"the daemon exited with {process.returncode}:\n{self.tail()}")
        process.kill()
        await process.wait()
        self.kills += 1

    async def stop(self) -> int | None:
        """SIGTERM and wait (SIGKILL after a while); returns the exit code, None if not running."""
        process, self._process = self._process, None
        if process is None:
            return None
        if process.returncode is None:
            process.send_signal(signal.SIGTERM)
            try:
                async with asyncio.timeout(_STOP_TIMEOUT):
                    await process.wait()
            except TimeoutError:
                process.kill()
                await process.wait()
        return process.returncode

    def tail(self, lines: int = 30) -> str:
        if not self.log.exists():
            return ""
        return "\n".join(self.log.read_text(errors="replace").splitlines()[-lines:])


@dataclass
class Received:
    topic: str
    payload: bytes
    retain: bool

    @property
    def body(self) -> dict[str, Any]:
        value = json.loads(self.payload)
        assert isinstance(value, dict)
        return value

    @property
    def is_json(self) -> bool:
        return self.payload.startswith(b"{")


class Collector:
    """Everything under the base topic, in arrival order, through broker restarts."""

    def __init__(self, host: str, port: int, identifier: str = "recovery-collector") -> None:
        self.host = host
        self.port = port
        self.identifier = identifier
        self.messages: list[Received] = []
        self.connections = 0
        self._client: aiomqtt.Client | None = None
        self._arrived = asyncio.Event()
        self._connected = asyncio.Event()
        self._task: asyncio.Task[None] | None = None

    async def __aenter__(self) -> Self:
        self._task = asyncio.create_task(self._run(), name="recovery-collector")
        async with asyncio.timeout(STEP_TIMEOUT):
            await self._connected.wait()
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        task, self._task = self._task, None
        if task is not None:
            task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await task

    async def _run(self) -> None:
        while True:
            client = aiomqtt.Client(
                self.host, self.port, identifier=self.identifier, clean_session=False
            )
            try:
                async with client:
                    await client.subscribe(f"{BASE}/#", qos=1)
                    self._client = client
                    self.connections += 1
                    self._connected.set()
                    async for message in client.messages:
                        payload = message.payload
                        assert isinstance(payload, bytes)
                        self.messages.append(Received(str(message.topic), payload, message.retain))
                        self._arrived.set()
            except aiomqtt.MqttError:
                pass
            finally:
                self._client = None
                self._connected.clear()
                self._arrived.set()  # let waiters see that we are away
            # The broker is away: try again soon (it gives no signal of its return).
            await asyncio.sleep(0.05)

    async def wait_connected(self) -> None:
        async with asyncio.timeout(STEP_TIMEOUT):
            await self._connected.wait()

    async def publish(self, topic: str, payload: str) -> None:
        await self.wait_connected()
        assert self._client is not None
        await self._client.publish(topic, payload, qos=1)

    def mark(self) -> int:
        return len(self.messages)

    async def wait(
        self, match: Callable[[Received], bool], *, after: int, within: float = STEP_TIMEOUT
    ) -> Received:
        """The first message from index `after` on that `match`es; `Stalled` after `within`."""
        seen = after
        try:
            async with asyncio.timeout(within):
                while True:
                    for message in self.messages[seen:]:
                        if match(message):
                            return message
                    seen = len(self.messages)
                    self._arrived.clear()
                    await self._arrived.wait()
        except TimeoutError:
            raise Stalled(f"nothing matched within {within} s") from None

    def on(self, suffix: str) -> list[Received]:
        topic = f"{BASE}/{TABLE_ID}/{suffix}"
        return [m for m in self.messages if m.topic == topic]

    async def wait_online(self, after: int) -> None:
        """Until the daemon announces itself live (not a retained `online` of the past)."""
        await self.wait(
            lambda m: (
                m.topic.startswith(f"{BASE}/bridge/")
                and m.topic.endswith("/state")
                and m.payload == b"online"
                and not m.retain
            ),
            after=after,
        )


def wager_plan(config: TableConfig, rng: random.Random) -> dict[int, dict[Any, int]]:
    """Two to five seats, each with the main wager and (mostly) the bonus wagers."""
    rules = GAMES[config.game]
    seats = sorted(rng.sample(range(1, config.seats + 1), rng.randint(2, 5)))
    plan: dict[int, dict[Any, int]] = {}
    for seat in seats:
        main = config.limits[rules.main_wager].minimum * rng.randint(1, 5)
        wagers = {rules.main_wager: main}
        for rule in rules.wagers:  # the bonus wagers: these are what the daemon settles
            if rule.requires is None or rng.random() < 0.1:
                continue
            limit = config.limits[rule.kind]
            wagers[rule.kind] = limit.minimum * rng.randint(1, 3)
        plan[seat] = wagers
    return plan


# Called in the middle of a step: does something bad to the pit, and repairs it.
Disturbance: TypeAlias = "Callable[[], Awaitable[None]]"
SHUFFLE: Final = "shuffle"  # a step that is not a rules event: the dealer reshuffles the shoe


@dataclass
class Dealer:
    """The dealer and players of the table, over MQTT and the emulated shoe."""

    config: TableConfig
    shoe: EmulatedShoe
    collector: Collector
    rng: random.Random
    view: dict[str, Any] = field(default_factory=lambda: {"round": None})
    rounds: int = 0
    steps: int = 0
    resyncs: int = 0
    cut_cards_handled: int = 0
    _transactions: itertools.count[int] = field(default_factory=lambda: itertools.count(1))

    @property
    def round_id(self) -> int | None:
        round_ = self.view.get("round")
        return None if round_ is None else int(round_["id"])

    async def play_round(self, disturb: Callable[[], Disturbance | None]) -> None:
        """One round from its first wager to its end; `disturb()` is asked before each step
        for something to do in the middle of it."""
        driver = RoundDriver(
            self.config, itertools.repeat(Card.parse("AS")), wager_plan(self.config, self.rng),
            self.rng,
        )  # fmt: skip
        steps = 0
        while (event := driver.next_event(self.view)) is not None:
            steps += 1
            if steps > MAX_STEPS:  # a round that cannot end (cards refused): the dealer voids it
                event = VoidRound("the round could not be finished")
            await self.step(event, disturb())
            if isinstance(event, VoidRound):
                break
        self.rounds += 1
        if self.shoe.stats.cut_cards > self.cut_cards_handled:
            # The cut card came out during the round: a new shoe, and its burn card.
            self.cut_cards_handled = self.shoe.stats.cut_cards
            await self.step(SHUFFLE, disturb())
            await self.step(DealCard(Card.parse("AS"), burned=True), disturb())

    async def step(
        self, event: TableEvent | Literal["shuffle"], disturbance: Disturbance | None = None
    ) -> None:
        """Do one thing at the table and wait for the daemon's answer; with a disturbance,
        do it half-way and then ask the daemon where things stand."""
        self.steps += 1
        mark = self.collector.mark()
        answered: Callable[[Received], bool]
        if isinstance(event, str):  # SHUFFLE
            await self.shoe.shuffle()
            answered = _snapshot_or_notice
        elif isinstance(event, DealCard):
            await self.shoe.next_card()
            answered = _snapshot_or_refusal
        else:
            command, body = console_request(event)
            transaction = await self._request(command, body)
            answered = _response_to(transaction)
        if disturbance is not None:
            await disturbance()
            await self.resync()
            return
        await self.collector.wait(answered, after=mark)
        self.view = self.latest_snapshot()

    async def resync(self) -> None:
        """Ask the daemon for its status until it answers; take its round as the view."""
        self.resyncs += 1
        for _ in range(STATUS_TRIES):
            mark = self.collector.mark()
            try:
                transaction = await self._request("status", {})
                response = await self.collector.wait(
                    _response_to(transaction), after=mark, within=STEP_TIMEOUT / 2
                )
            except (Stalled, aiomqtt.MqttError, TimeoutError):
                continue
            round_ = response.body["data"]["round"]
            assert isinstance(round_, dict)
            self.view = round_
            return
        raise Stalled("the daemon did not answer `status`")

    def latest_snapshot(self) -> dict[str, Any]:
        snapshots = [m.body for m in self.collector.on("round")]
        return max(snapshots, key=lambda body: int(body["seq"]))

    async def _request(self, command: str, body: dict[str, Any]) -> str:
        transaction = f"d-{next(self._transactions)}"
        topic = f"{BASE}/{TABLE_ID}/request/{command}"
        await self.collector.publish(topic, json.dumps({"transaction": transaction, **body}))
        return transaction


def _snapshot_or_refusal(message: Received) -> bool:
    return message.topic in (
        f"{BASE}/{TABLE_ID}/round",
        f"{BASE}/{TABLE_ID}/notice/card_rejected",
    )


def _snapshot_or_notice(message: Received) -> bool:
    return message.topic == f"{BASE}/{TABLE_ID}/round" or message.topic.startswith(
        f"{BASE}/{TABLE_ID}/notice/"
    )


def _response_to(transaction: str) -> Callable[[Received], bool]:
    def match(message: Received) -> bool:
        return (
            "/response/" in message.topic
            and message.is_json
            and message.body.get("transaction") == transaction
        )

    return match


# ---------------------------------------------------------------- the verdict
@dataclass
class Replay:
    """What the rules core decided, according to the journal alone."""

    settlements: list[dict[str, Any]]
    snapshot: dict[str, Any]
    events: int
    rounds: int
    restarted_rounds: set[int]  # rounds that were open when the daemon (re)started
    unflagged: list[str]  # settlements of such rounds, decided after the restart, not flagged


def replay_journal(state_directory: Path, config: TableConfig) -> Replay:
    """Every journaled event of the table through a fresh TableService, in journal order."""
    path = state_directory / JOURNAL_FILE
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        events = read_events(db, config.table_id)
    finally:
        db.close()
    topics = Topics(BASE)
    service = TableService(config, topics, Envelopes(config.table_id))
    service.quiet = True
    settlements: list[dict[str, Any]] = []
    restarted: set[int] = set()
    unflagged: list[str] = []
    for event in events:
        round_ = service.engine.round
        if event.kind == "start" and round_ is not None and service.engine.round_open:
            restarted.add(round_.round_id)
        for message in apply_record(service, event.kind, event.body, event.at):
            if message.topic == topics.settlement(config.table_id):
                body = json.loads(message.payload)
                settlements.append(body)
                if body["round"] in restarted and body["review"] is not True:
                    unflagged.append(f"{settlement_key(body)}: review is false")
    snapshot = json.loads(service.snapshot().payload)
    rounds = service.engine.next_round_id - 1
    return Replay(settlements, snapshot, len(events), rounds, restarted, unflagged)


def content(body: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in body.items() if k not in ENVELOPE}


def settlement_key(body: dict[str, Any]) -> tuple[Any, ...]:
    return tuple(body[k] for k in SETTLEMENT_KEY)


@dataclass
class Verdict:
    expected: int = 0
    delivered: int = 0
    lost: list[tuple[Any, ...]] = field(default_factory=list)
    duplicated: int = 0
    mismatched: list[str] = field(default_factory=list)
    sequence: list[str] = field(default_factory=list)
    snapshot: list[str] = field(default_factory=list)
    unflagged: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not (
            self.lost or self.mismatched or self.sequence or self.snapshot or self.unflagged
        )

    def explain(self) -> str:
        return (
            f"expected={self.expected} delivered={self.delivered} lost={self.lost} "
            f"duplicated={self.duplicated} mismatched={self.mismatched} "
            f"sequence={self.sequence[:5]} snapshot={self.snapshot} unflagged={self.unflagged}"
        )


def verify(messages: list[Received], replay: Replay) -> Verdict:
    """Delivered settlements against the journal's; sequence numbers; the last snapshot."""
    verdict = Verdict(expected=len(replay.settlements))
    expected = {settlement_key(s): content(s) for s in replay.settlements}
    assert len(expected) == len(replay.settlements), "two settlements share a key"
    delivered: dict[tuple[Any, ...], list[dict[str, Any]]] = {}
    for message in messages:
        if message.topic == f"{BASE}/{TABLE_ID}/settlement":
            body = message.body
            delivered.setdefault(settlement_key(body), []).append(body)
    verdict.delivered = len(delivered)
    for key, wanted in expected.items():
        copies = delivered.get(key)
        if not copies:
            verdict.lost.append(key)
            continue
        verdict.duplicated += len(copies) - 1
        for copy in copies:
            if content(copy) != wanted:
                verdict.mismatched.append(f"{key}: delivered {content(copy)}, decided {wanted}")
        if len({copy["id"] for copy in copies}) != 1:
            verdict.mismatched.append(f"{key}: copies with different ids")
    verdict.mismatched += [
        f"{key}: delivered, but the journal decided no such settlement"
        for key in delivered.keys() - expected.keys()
    ]
    verdict.unflagged = list(replay.unflagged)
    verdict.sequence = check_sequence(messages)
    snapshots = [m.body for m in messages if m.topic == f"{BASE}/{TABLE_ID}/round"]
    if not snapshots:
        verdict.snapshot.append("no round snapshot was delivered")
    else:
        last = content(max(snapshots, key=lambda body: int(body["seq"])))
        if last != content(replay.snapshot):
            verdict.snapshot.append(f"last snapshot {last} != replay {content(replay.snapshot)}")
    return verdict


def check_sequence(messages: list[Received]) -> list[str]:
    """The table's messages, duplicates (same id) dropped: seq goes 1, 2, 3... in arrival order,
    each id with one seq and each seq with one id."""
    problems: list[str] = []
    seen: dict[str, int] = {}
    by_seq: dict[int, str] = {}
    expected_seq = 1
    prefix = f"{BASE}/{TABLE_ID}/"
    for message in messages:
        if not message.topic.startswith(prefix) or "/request/" in message.topic:
            continue
        if message.topic.endswith("/availability"):  # a state, without envelope (docs/mqtt.md)
            continue
        body = message.body
        event_id, seq = body["id"], int(body["seq"])
        if event_id in seen:
            if seen[event_id] != seq:
                problems.append(f"id {event_id} came with seq {seen[event_id]} and {seq}")
            continue
        if seq in by_seq:
            problems.append(f"seq {seq} came with ids {by_seq[seq]} and {event_id}")
        seen[event_id], by_seq[seq] = seq, event_id
        if seq != expected_seq:
            problems.append(f"seq {seq} arrived where {expected_seq} was due ({message.topic})")
        expected_seq = seq + 1
    return problems


def journal_pending(state_directory: Path) -> list[int]:
    """The seq of every message waiting in the journal's outbox, read while the daemon runs."""
    path = state_directory / JOURNAL_FILE
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
    try:
        rows = db.execute("SELECT payload FROM outbox ORDER BY id").fetchall()
    finally:
        db.close()
    return [int(json.loads(bytes(row[0]))["seq"]) for row in rows]


def journal_events_done(state_directory: Path) -> int:
    """How many events the daemon has journaled and applied, read while it runs."""
    path = state_directory / JOURNAL_FILE
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True, timeout=5)
    try:
        row = db.execute("SELECT count(*) FROM events WHERE outputs_recorded = 1").fetchone()
    finally:
        db.close()
    return int(row[0])


async def until(check: Callable[[], bool], *, within: float = STEP_TIMEOUT) -> None:
    """Poll `check` (for what gives no signal, like another process's database) until true."""
    async with asyncio.timeout(within):
        while not check():  # noqa: ASYNC110 - nothing to await: the state is in another process
            await asyncio.sleep(0.02)


async def start_daemon(daemon: DaemonProcess, shoe: EmulatedShoe, collector: Collector) -> None:
    """Start the daemon; return once it has the shoe's port open and is on the broker."""
    mark = collector.mark()
    shoe._host_opened.clear()  # the previous daemon opened it; wait for this one
    await daemon.start()
    async with asyncio.timeout(STEP_TIMEOUT):
        await shoe.wait_for_host()
    await collector.wait_online(mark)


async def retained_snapshot(host: str, port: int) -> dict[str, Any]:
    """The round snapshot the broker gives a display that connects now."""
    async with aiomqtt.Client(host, port) as display:
        await display.subscribe(f"{BASE}/{TABLE_ID}/round", qos=1)
        async with asyncio.timeout(STEP_TIMEOUT):
            message = await anext(display.messages)
    assert message.retain
    assert isinstance(message.payload, bytes)
    body = json.loads(message.payload)
    assert isinstance(body, dict)
    return body
