"""A floor's sustained load watched as it goes: waits over a second caught in the act, memory.

Two observers of an open-loop run (`OpenLoopRun(observers=...)`), used by the goals bench's
goal 5 (256 tables at 0.4 cards a second each for an hour):
- `StallWatch`: every 0.2 s it looks for a settlement or a response the bench has waited for
  longer than a second. When it finds one it records, to `stalls.txt` in the record
  directory: what waited and how long, each table's last journaled event (read from the
  daemon's journal, read-only, as the daemon writes on), the bare relay's oldest card not yet
  received (if the machine or the broker stalled, the relay waits too), how late the watch's
  own sleep woke (if the bench's process stalled, so did it), the load average and CPU
  pressure, and a `py-spy dump` of the daemon's threads (with `--py-spy`). At most one record
  every `spacing` seconds, at most `most` in a run: a stall of many tables is one event.
- `RssCurve`: the daemon's resident memory every `every` seconds, with the cards dealt, to
  `rss.csv`; `plot_rss` draws it (matplotlib) for docs/performance.md.
"""

from __future__ import annotations

import asyncio
import sqlite3
import subprocess
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from bench.e2e.harness import machine, rss_mib
from daemon.journal.schema import JOURNAL_FILE

if TYPE_CHECKING:
    from pathlib import Path

    from bench.e2e.harness import ReadyDaemon
    from bench.e2e.openloop import OpenLoopRun

WAIT_LIMIT: Final = 1.0  # seconds: a settlement or response waited longer is a stall
LOOK_EVERY: Final = 0.2  # seconds between the watch's looks
LAST_EVENTS: Final = """
SELECT t.table_id, e.n, e.kind, e.at, substr(e.body, 1, 160)
FROM tables AS t JOIN events AS e ON e.table_id = t.table_id AND e.n = t.last_n
ORDER BY t.table_id
"""


@dataclass(frozen=True, slots=True)
class Waiting:
    """The longest-waiting thing the bench is owed at one look."""

    table: str
    what: str  # "settlement (round, seat, ...)" or "response <transaction>"
    waited: float  # seconds since its step went out
    tables: int  # tables owing something older than the limit


@dataclass(slots=True)
class StallWatch:
    """Catches waits over `limit` seconds as they happen (module docstring)."""

    record: Path
    py_spy: str | None = None
    limit: float = WAIT_LIMIT
    spacing: float = 10.0
    most: int = 30
    stalls: list[Waiting] = field(default_factory=list)
    oversleep: float = 0.0  # the watch's own worst late wake-up, seconds
    recorded: set[tuple[str, str]] = field(default_factory=set)  # (table, what): once each

    async def __call__(self, run: OpenLoopRun, daemon: ReadyDaemon) -> None:
        self.record.mkdir(parents=True, exist_ok=True)
        journal = run.directory / "state" / JOURNAL_FILE
        last_record = float("-inf")
        while True:
            before = time.monotonic()
            await asyncio.sleep(LOOK_EVERY)
            now = time.monotonic()
            self.oversleep = max(self.oversleep, now - before - LOOK_EVERY)
            if now - last_record < self.spacing or len(self.stalls) >= self.most:
                continue
            waiting = oldest_waiting(run, now, self.limit, self.recorded)
            if waiting is None:
                continue
            last_record = now
            self.stalls.append(waiting)
            self.recorded.add((waiting.table, waiting.what))
            text = await asyncio.to_thread(
                self._evidence, run, daemon.process.pid, journal, waiting, now - before
            )
            with (self.record / "stalls.txt").open("a") as out:
                out.write(text)
            print(f"  !! {waiting.what} at {waiting.table} waited {waiting.waited:.2f} s: "
                  f"recorded in {self.record / 'stalls.txt'}", flush=True)  # fmt: skip

    def _evidence(
        self, run: OpenLoopRun, pid: int, journal: Path, waiting: Waiting, look: float
    ) -> str:
        lines = [
            (
                f"==== {time.strftime('%Y-%m-%d %H:%M:%S', time.gmtime())} UTC: {waiting.what} "
                f"at {waiting.table} waited {waiting.waited:.3f} s; {waiting.tables} tables owe "
                f"something older than {self.limit:g} s"
            ),
            f"machine: {machine()}",
            f"the watch's look took {look * 1e3:.0f} ms (asked for {LOOK_EVERY * 1e3:.0f} ms)",
            (
                f"cards dealt {run.tally.cards:,}; daemon RSS {rss_mib(pid):.1f} MiB; tables with "
                f"a request out of its window so far (OVERLOAD, not watched): "
                f"{run.tally.early + run.tally.late}"
            ),
            *relay_waits(run, time.monotonic()),
            *bench_slip(run, waiting.table),
            "py-spy dump of the daemon:",
            py_spy_dump(self.py_spy, pid),
            "each table's last journaled event (table, n, kind, at, body):",
            *last_events(journal),
            "",
        ]
        return "\n".join(lines) + "\n"


def oldest_waiting(
    run: OpenLoopRun, now: float, limit: float, recorded: set[tuple[str, str]]
) -> Waiting | None:
    """The settlement or response waited for longest, if longer than `limit` and not yet
    recorded. A table with a request applied out of its window is not watched: its round went
    its own way (OVERLOAD, reported as such) and what the replay expects may never come."""
    worst: Waiting | None = None
    tables = 0
    for table, watch in run.watch.items():
        if watch.broken:
            continue
        owed = [(sent.at, f"settlement {key}") for key, (_r, _c, sent) in watch.expected.items()]
        owed += [(sent.at, f"response {tx}") for tx, (_c, sent) in watch.requests.items()]
        # A step's `at` is 0 until the bench has written it out.
        oldest = min(
            ((at, what) for at, what in owed if at and (table, what) not in recorded),
            default=None,
        )
        if oldest is None or now - oldest[0] <= limit:
            continue
        tables += 1
        if worst is None or now - oldest[0] > worst.waited:
            worst = Waiting(table, oldest[1], now - oldest[0], 0)
    if worst is None:
        return None
    return Waiting(worst.table, worst.what, worst.waited, tables)


def relay_waits(run: OpenLoopRun, now: float) -> list[str]:
    """Each baseline relay's oldest card written and not yet received back."""
    lines = []
    for kind, lanes in run.relay_writes.items():
        oldest = min((writes[0][0] for writes in lanes if writes), default=None)
        waited = "none outstanding" if oldest is None else f"{now - oldest:.3f} s"
        lines.append(f"{kind} relay's oldest card not yet received: {waited}")
    return lines


def bench_slip(run: OpenLoopRun, table: str) -> list[str]:
    """How late the bench itself sent its latest steps: a bench starved of CPU sends late,
    and a request sent late can miss its window whatever the daemon does."""
    recent = run.tally.slip[-2000:]
    worst = max(recent, default=0.0)
    lines = [f"the bench's slip over its last {len(recent)} steps: max {worst * 1e3:.0f} ms"]
    lane = next((lane for lane in run.lanes if lane.load.table == table), None)
    if lane is not None:
        steps = ", ".join(f"{what} {(sent - due) * 1e3:+.0f} ms" for what, due, sent in lane.recent)
        lines.append(f"{table}'s latest steps, sent after their time by: {steps}")
    return lines


def py_spy_dump(py_spy: str | None, pid: int) -> str:
    if py_spy is None:
        return "  (no --py-spy given)"
    done = subprocess.run(  # noqa: S603 - the py-spy the user named, our own daemon's pid
        [py_spy, "dump", "--pid", str(pid), "--locals"],
        capture_output=True, text=True, timeout=30, check=False,
    )  # fmt: skip
    return done.stdout + done.stderr


def last_events(journal: Path) -> list[str]:
    try:
        db = sqlite3.connect(f"file:{journal}?mode=ro", uri=True, timeout=5.0)
        try:
            rows = db.execute(LAST_EVENTS).fetchall()
        finally:
            db.close()
    except sqlite3.Error as exc:
        return [f"  (the journal could not be read: {exc})"]
    return ["  " + "\t".join(str(value) for value in row) for row in rows]


@dataclass(slots=True)
class RssCurve:
    """The daemon's RSS every `every` seconds: (seconds since the start, cards, MiB)."""

    record: Path
    every: float = 30.0
    say_every: int = 10  # samples between progress lines
    samples: list[tuple[float, int, float]] = field(default_factory=list)
    started: float = 0.0  # CLOCK_MONOTONIC of the first sample

    async def __call__(self, run: OpenLoopRun, daemon: ReadyDaemon) -> None:
        self.record.mkdir(parents=True, exist_ok=True)
        self.started = started = time.monotonic()
        with (self.record / "rss.csv").open("w") as out:
            out.write("seconds,cards,rss_mib\n")
            while True:
                sample = (time.monotonic() - started, run.tally.cards, daemon.rss_mib())
                self.samples.append(sample)
                out.write(f"{sample[0]:.1f},{sample[1]},{sample[2]:.2f}\n")
                out.flush()
                if len(self.samples) % self.say_every == 1:
                    tally = run.tally
                    print(
                        f"  ... {sample[0] / 60:.0f} min: {sample[1]:,} cards, daemon RSS "
                        f"{sample[2]:.1f} MiB, tables out of their window "
                        f"{tally.early + tally.late}, {machine()}", flush=True,
                    )  # fmt: skip
                await asyncio.sleep(self.every)


def plot_rss(csv: Path, png: Path, title: str) -> None:
    """The curve of `rss.csv` as a PNG: MiB against minutes, cards on a second axis."""
    import matplotlib as mpl  # only the plot needs it (a second to import)

    mpl.use("Agg")
    import matplotlib.pyplot as plt  # after the backend is chosen

    rows = [line.split(",") for line in csv.read_text().splitlines()[1:] if line]
    minutes = [float(row[0]) / 60 for row in rows]
    cards = [int(row[1]) for row in rows]
    rss = [float(row[2]) for row in rows]
    figure, axis = plt.subplots(figsize=(8, 3.6), dpi=100)
    axis.plot(minutes, rss, color="tab:blue", label="daemon RSS (MiB)")
    axis.set_xlabel("minutes since the first card")
    axis.set_ylabel("RSS (MiB)", color="tab:blue")
    axis.set_ylim(0, max(rss, default=1) * 1.15)
    cards_axis = axis.twinx()
    cards_axis.plot(minutes, cards, color="tab:gray", linestyle="--", label="cards dealt")
    cards_axis.set_ylabel("cards dealt", color="tab:gray")
    axis.set_title(title, fontsize=9)
    axis.grid(visible=True, alpha=0.3)
    figure.tight_layout()
    png.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(png)
    plt.close(figure)


def growth(samples: list[tuple[float, int, float]], settle: float) -> tuple[float, float, float]:
    """(RSS once the load settled, at the end, the peak after it): the reference is the first
    sample at least `settle` seconds in (the tables' first rounds, the journal's cache)."""
    settled = [s for s in samples if s[0] >= settle] or samples
    if not settled:
        return (float("nan"),) * 3
    return settled[0][2], settled[-1][2], max(s[2] for s in settled)
