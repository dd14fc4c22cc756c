"""py-spy on the daemon during a run, and what its samples say.

py-spy (https://github.com/benfred/py-spy) samples another process's Python stacks from
outside it; it is not a dependency of shoe2mqtt. Install it anywhere, e.g.
`python3 -m venv /tmp/pyspy && /tmp/pyspy/bin/pip install py-spy`, and pass its path with
`--py-spy /tmp/pyspy/bin/py-spy`. Without `--idle` py-spy keeps only the samples of threads
that were running, so the profile is CPU, not wall time; with it, every thread's every
sample (wall time, waiting included: where a card's time goes).

The raw output (one line per distinct stack: `frame;frame;...;frame count`, outermost
first) is kept beside the summary, which `summarize` prints: the functions that were on the
CPU themselves (self), and those with the most samples below them (inclusive).
"""

from __future__ import annotations

import collections
import signal
import subprocess
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from pathlib import Path

RATE: Final = 250  # samples a second


class PySpy:
    """`py-spy record` attached to `pid` until `stop()`."""

    def __init__(
        self, executable: str, pid: int, output: Path, *, idle: bool = False, gil: bool = False
    ) -> None:
        self.output = output
        command = [
            executable, "record", "--pid", str(pid), "--format", "raw", "--output", str(output),
            "--rate", str(RATE), "--nonblocking", "--threads", "--function",
        ]  # fmt: skip
        if idle:
            command.append("--idle")
        if gil:
            command.append("--gil")
        self._process = subprocess.Popen(  # noqa: S603 - the py-spy the user named
            command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE
        )

    def stop(self) -> None:
        """Ctrl-C, as a person would: py-spy writes its file and exits."""
        self._process.send_signal(signal.SIGINT)
        try:
            _out, err = self._process.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.communicate()
            raise
        if not self.output.exists():
            raise RuntimeError(f"py-spy wrote nothing: {err.decode(errors='replace')}")


def _frame_name(frame: str) -> str:
    """`handle (daemon/journal.py:120)` -> `daemon/journal.py handle`."""
    name, _, where = frame.partition(" (")
    path = where.rstrip(")").rsplit(":", 1)[0]
    return f"{path} {name}" if path else name


# Where a sample's CPU went, by the innermost frame that says so (first match wins).
AREAS: Final = (
    ("JSON encoding and decoding", ("json/",)),
    ("envelopes: ids and timestamps", ("daemon/wire/envelope.py", "uuid.py", "datetime")),
    ("logging", ("structlog/", "logging/", "daemon/system/logs.py")),
    ("SQLite and the journal", ("daemon/journal", "sqlite3")),
    ("MQTT client (aiomqtt, paho)", ("aiomqtt/", "paho/")),
    ("outbox and link", ("daemon/mqtt/",)),
    ("rules engine", ("rules/",)),
    ("table service", ("daemon/table/",)),
    ("shoe driver and codec", ("drivers/", "serial_asyncio_fast/", "serial/")),
    ("daemon (service, queues)", ("daemon/",)),
    ("asyncio and the selector", ("asyncio/", "selectors.py")),
)


def area(frames: list[str]) -> str:
    for frame in reversed(frames):
        for name, markers in AREAS:
            if any(marker in frame for marker in markers):
                return name
    return "other"


def summarize(raw: Path, top: int = 20) -> list[str]:
    """The profile's top entries: by thread, by area, self and inclusive."""
    threads: collections.Counter[str] = collections.Counter()
    areas: collections.Counter[str] = collections.Counter()
    own: collections.Counter[str] = collections.Counter()
    below: collections.Counter[str] = collections.Counter()
    total = 0
    for line in raw.read_text().splitlines():
        stack, _, count_text = line.rpartition(" ")
        if not stack:
            continue
        count = int(count_text)
        frames = stack.split(";")
        total += count
        threads[frames[0]] += count
        areas[area(frames[1:])] += count
        names = [_frame_name(f) for f in frames[1:]]
        if names:
            own[names[-1]] += count
        for name in set(names):
            below[name] += count
    if not total:
        return ["no samples"]

    def share(count: int) -> str:
        return f"{100 * count / total:5.1f} %"

    lines = [f"{total:,} samples"]
    lines += ["threads:"] + [f"  {share(c)}  {name}" for name, c in threads.most_common()]
    lines += ["by area (the innermost frame that names one):"]
    lines += [f"  {share(c)}  {name}" for name, c in areas.most_common()]
    lines += ["self (on the CPU in this function):"]
    lines += [f"  {share(c)}  {name}" for name, c in own.most_common(top)]
    lines += ["inclusive (this function and what it called):"]
    lines += [f"  {share(c)}  {name}" for name, c in below.most_common(top)]
    return lines
