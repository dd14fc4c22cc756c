"""What the daemon counts and measures for Prometheus (docs/deploy.md, "Metrics").

Counters move as things happen: the table services tell `DaemonMetrics` of every card read,
settlement, notice and refusal (it is their `TableObserver`; silent while the journal is
replayed, so a restart counts nothing twice), and the daemon times each journal commit.
States are read when Prometheus scrapes, from the daemon itself (`Readings`), so they are
never stale: each reader's link, the outbox backlog, the broker connection, the seconds since
each table's last card, and what each shoe's line carried that was no frame (its driver's
running totals, `drivers.noise.LineCounts`, and what a full inbox dropped). They are read
in the event loop (`take_readings`), which owns them; the text is then rendered wherever the
caller likes (serve.py: in a worker thread).

Each daemon has a registry of its own, not prometheus-client's global one: a test (or the
demo) may run several daemons in one process. No label ever carries a card.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, ProcessCollector
from prometheus_client.metrics_core import CounterMetricFamily, GaugeMetricFamily

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping, Sequence

    from prometheus_client.context_managers import Timer
    from prometheus_client.metrics_core import Metric

    from drivers.noise import LineCounts

# The reader link states of `daemon.table.reader_state.ReaderState.link`, each a series of its own
# (1 for the state the reader is in, 0 for the others), so an alert is one comparison.
READER_LINKS: Final = ("starting", "connecting", "connected", "disconnected", "fault")
# Seconds. A commit is one fsync, 3 to 3.5 ms on the table PCs measured (docs/durability.md);
# group commit waits for the commits queued before it; a stalled disk takes seconds.
COMMIT_BUCKETS: Final = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 5.0)


@dataclass(frozen=True, slots=True)
class Readings:
    """The daemon's state at the moment of a scrape."""

    broker_connected: bool
    backlog: int  # messages the broker has not acknowledged
    reader_links: Mapping[str, str]  # table → its reader's link state
    lines: Mapping[str, LineCounts] = field(default_factory=dict)  # table → its line's totals
    overflowed: Mapping[str, int] = field(
        default_factory=dict
    )  # table → events a full inbox dropped


class DaemonMetrics:
    """The daemon's metrics in a registry of their own; `registry` is what is served."""

    def __init__(
        self,
        *,
        node: str,
        version: str,
        tables: Sequence[str],
        readings: Callable[[], Readings],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.registry = CollectorRegistry(auto_describe=True)
        self._clock = clock
        self._last_card: dict[str, float] = {}
        registry = self.registry
        self._cards = _Series(
            "shoe2mqtt_cards_read",
            "Cards the table's reader read out of the shoe (burned ones too); readable=false: "
            "a card left the shoe unread and waits to be entered by hand.",
            ["table", "readable"],
            registry=registry,
        )
        self._settlements = _Series(
            "shoe2mqtt_settlements",
            "Wagers settled, by result (win, lose, push, void).",
            ["table", "result"],
            registry=registry,
        )
        self._notices = _Series(
            "shoe2mqtt_notices",
            "Notices to the pit, by kind (floorperson_required, card_unreadable, sequence_gap, "
            "reader_disconnected, ...).",
            ["table", "kind"],
            registry=registry,
        )
        self._rejected = _Series(
            "shoe2mqtt_rejected_events",
            "Events the table refused and that so changed nothing: source=request for a dealer "
            "console's request, source=shoe for something the shoe sent; by the refusal's code.",
            ["table", "source", "code"],
            registry=registry,
        )
        self._commits = Histogram(
            "shoe2mqtt_journal_commit_seconds",
            "Time from handing an event to the journal to its commit being on disk.",
            buckets=COMMIT_BUCKETS,
            registry=registry,
        )
        Gauge(
            "shoe2mqtt_info",
            "This daemon: its node name and version (the value is always 1).",
            ["node", "version"],
            registry=registry,
        ).labels(node, version).set(1)
        for table in tables:  # every table's series exist from the start, at zero
            for readable in ("true", "false"):
                self._cards.child(table, readable)
        self._shift = _ShiftGauges(registry)
        self._state = _StateCollector(self, readings)
        registry.register(self._state)
        ProcessCollector(registry=registry)  # CPU, resident memory, open files, start time

    # ------------------------------------------------------------- TableObserver
    def card_read(self, table: str, *, readable: bool) -> None:
        self._cards.inc(table, "true" if readable else "false")
        self._last_card[table] = self._clock()

    def settled(self, table: str, result: str) -> None:
        self._settlements.inc(table, result)

    def noticed(self, table: str, kind: str) -> None:
        self._notices.inc(table, kind)

    def rejected(self, table: str, source: str, code: str) -> None:
        self._rejected.inc(table, source, code)

    def shift_numbers(self, table: str, numbers: Mapping[str, object]) -> None:
        """The table's numbers for the current shift (daemon/numbers/live.py), as counted
        at its last round's end: the same figures as its retained `<table>/stats`."""
        self._shift.set(table, numbers)

    # ------------------------------------------------------------- the daemon's own
    def journal_commit(self) -> Timer:
        """`with metrics.journal_commit(): await journal.append_event(...)`."""
        return self._commits.time()

    def take_readings(self) -> None:
        """Read the daemon's state now, for the next rendering of `registry`: call it in the
        event loop, which owns that state, when the rendering runs in another thread."""
        self._state.taken = (self._state.read(), self.seconds_since_last_card())

    def seconds_since_last_card(self) -> dict[str, float]:
        now = self._clock()
        return {table: now - at for table, at in self._last_card.items()}


class _StateCollector:
    """The series read from the daemon at each scrape."""

    def __init__(self, metrics: DaemonMetrics, readings: Callable[[], Readings]) -> None:
        self._metrics = metrics
        self.read = readings
        # What `take_readings` read, for the next rendering only.
        self.taken: tuple[Readings, dict[str, float]] | None = None

    def describe(self) -> list[Metric]:
        # Names only, so the registry can check for clashes without asking the daemon.
        return list(self._families())

    def collect(self) -> Iterator[Metric]:
        taken, self.taken = self.taken, None
        if taken is None:  # rendered where the state lives (a test): read it now
            taken = (self.read(), self._metrics.seconds_since_last_card())
        yield from self._families(*taken)

    def _families(
        self, now: Readings | None = None, since_last_card: Mapping[str, float] | None = None
    ) -> Iterator[Metric]:
        broker = GaugeMetricFamily(
            "shoe2mqtt_mqtt_connected", "1 while the daemon is connected to its broker."
        )
        backlog = GaugeMetricFamily(
            "shoe2mqtt_outbox_backlog",
            "Messages journaled and not yet acknowledged by the broker.",
        )
        link = GaugeMetricFamily(
            "shoe2mqtt_reader_link",
            "1 for the state the table's reader link is in, 0 for the others.",
            labels=["table", "state"],
        )
        since = GaugeMetricFamily(
            "shoe2mqtt_seconds_since_last_card",
            "Seconds since the table's reader last read a card; absent until the first card "
            "this daemon process read.",
            labels=["table"],
        )
        if now is not None:
            broker.add_metric([], 1 if now.broker_connected else 0)
            backlog.add_metric([], now.backlog)
            for table, state in now.reader_links.items():
                for known in READER_LINKS:
                    link.add_metric([table, known], 1 if state == known else 0)
            for table, seconds in (since_last_card or {}).items():
                since.add_metric([table], round(seconds, 3))
        yield from (broker, backlog, link, since, *_line_families(now))


def _line_families(now: Readings | None) -> Iterator[Metric]:
    """What each shoe's line carried, and what of it was dropped (docs/protocol.md §2.4)."""
    read = CounterMetricFamily(
        "shoe2mqtt_line_bytes", "Bytes read from the table's shoe line.", labels=["table"]
    )
    garbage = CounterMetricFamily(
        "shoe2mqtt_line_garbage_bytes",
        "Bytes from the table's shoe line skipped outside any frame (line noise).",
        labels=["table"],
    )
    dropped = CounterMetricFamily(
        "shoe2mqtt_line_frames_dropped",
        "Frames from the table's shoe line thrown away, by reason: bad_checksum, malformed, "
        "unknown_message, unsolicited_reply (a reply to no command sent), overflow (the "
        "table's inbox was full; a shoe that keeps nothing).",
        labels=["table", "reason"],
    )
    if now is not None:
        for table, counts in now.lines.items():
            read.add_metric([table], counts.bytes_read)
            garbage.add_metric([table], counts.garbage_bytes)
            for reason, value in (
                ("bad_checksum", counts.bad_checksum),
                ("malformed", counts.malformed),
                ("unknown_message", counts.unknown_message),
                ("unsolicited_reply", counts.unsolicited_replies),
                ("overflow", now.overflowed.get(table, 0)),
            ):
                dropped.add_metric([table, reason], value)
    yield from (read, garbage, dropped)


class _Series:
    """A labelled counter whose children are each looked up once: `labels` checks and joins
    the values and takes a lock at every call, and every card and settlement counts one (no
    series is ever removed). The table observer's counters are all of this shape."""

    def __init__(
        self, name: str, documentation: str, labels: list[str], *, registry: CollectorRegistry
    ) -> None:
        self._counter = Counter(name, documentation, labels, registry=registry)
        self._looked_up: dict[tuple[str, ...], Counter] = {}

    def child(self, *values: str) -> Counter:
        """The series of these label values (made, at zero, the first time)."""
        found = self._looked_up.get(values)
        if found is None:
            found = self._looked_up[values] = self._counter.labels(*values)
        return found

    def inc(self, *values: str) -> None:
        self.child(*values).inc()


class _ShiftGauges:
    """The current shift's numbers per table (and wager kind): set at each round's end."""

    def __init__(self, registry: CollectorRegistry) -> None:
        def gauge(name: str, text: str, labels: list[str]) -> Gauge:
            return Gauge(f"shoe2mqtt_shift_{name}", text, labels, registry=registry)

        table = ["table"]
        wager = ["table", "wager"]
        self.rounds = gauge("rounds", "Rounds ended in the current shift.", table)
        self.pace = gauge("rounds_per_hour", "Rounds an hour of play in the current shift.", table)
        self.handle = gauge("handle_cents", "Stakes settled this shift, in cents.", wager)
        self.won = gauge("players_won_cents", "Paid on top of stakes this shift, cents.", wager)
        self.house = gauge("house_win_cents", "Stakes lost less paid this shift, cents.", wager)
        self.hold = gauge("hold", "House win / handle this shift.", wager)
        self.theory = gauge("theoretical_hold", "The posted paytable's exact hold.", wager)
        self.low = gauge("band_low", "The hold's band this shift: its lower edge.", wager)
        self.high = gauge("band_high", "The hold's band this shift: its upper edge.", wager)
        self.alert = gauge("hold_alert", "1 while this shift's hold is outside its band.", wager)

    def set(self, table: str, numbers: Mapping[str, object]) -> None:
        self.rounds.labels(table).set(float(numbers.get("rounds") or 0))  # type: ignore[arg-type]
        self.pace.labels(table).set(float(numbers.get("rounds_per_hour") or 0))  # type: ignore[arg-type]
        wagers = numbers.get("wagers") or []
        assert isinstance(wagers, list)
        for money in wagers:
            kind = str(money["wager"])
            self.handle.labels(table, kind).set(money["handle_cents"])
            self.won.labels(table, kind).set(money["players_won_cents"])
            self.house.labels(table, kind).set(money["house_win_cents"])
            self.hold.labels(table, kind).set(money["hold"] or 0)
            band = money["band"]
            if band is not None:
                self.theory.labels(table, kind).set(money["theoretical_hold"])
                self.low.labels(table, kind).set(band[0])
                self.high.labels(table, kind).set(band[1])
            self.alert.labels(table, kind).set(1 if money["alert"] else 0)
