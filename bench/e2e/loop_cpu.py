"""Where the daemon's event loop spends its thread's CPU, callback by callback, at goal 3's load.

    uv run python -m bench.e2e.loop_cpu [--seconds 30] [--shoes 32] [--pace 1.25]

Runs `bench.e2e.openloop` (the daemon and the bare relay on one timetable, console contract 4)
with the daemon's loop measured from inside: every callback the loop runs is timed with the
thread's own CPU clock (`time.thread_time_ns`, user and system time of that thread alone)
and counted under what it resumes (a task's coroutine, or the callback's own name), and so is
each turn of the loop and its `epoll` wait. A sampling profiler (py-spy) counts where the
samples fell, and `--gil` counts time the thread held the interpreter's lock, waiting on the
kernel included; this counts the CPU the thread used, so its parts add up to the thread's.

How: this folder's `loop_cpu_site/sitecustomize.py` is put on `PYTHONPATH`; Python imports it
at every start, and it installs the probe only in `shoe2mqtt run` with `SHOE2MQTT_LOOP_CPU`
set, which writes its totals there when the daemon exits. The probe costs a few microseconds
a callback, so the loop's figures come out some 5-20 % above the plain daemon's; their shares
are what to read. The daemon's start and stop are in the totals (their own rows: a recovery,
the numbers' rebuild).
"""

from __future__ import annotations

import argparse
import atexit
import collections
import json
import os
import re
import selectors
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

if TYPE_CHECKING:
    from collections.abc import Callable

ENVIRONMENT: Final = "SHOE2MQTT_LOOP_CPU"
SITE: Final = Path(__file__).with_name("loop_cpu_site")
ROOT: Final = Path(__file__).resolve().parents[2]
TURN: Final = "(a turn of the loop, all included)"
SELECT: Final = "(epoll: the loop's wait for I/O)"


# ---------------------------------------------------------------- the probe, in the daemon
def install(output: str) -> None:
    """Time every callback the event loop runs, and its turns, on this thread's CPU clock;
    write the totals to `output` at exit."""
    import asyncio.base_events  # only in the daemon the probe measures
    import asyncio.events

    cpu: collections.Counter[str] = collections.Counter()
    calls: collections.Counter[str] = collections.Counter()
    clock = time.thread_time_ns
    # The loop's own methods, each replaced by one that times it (the probe's whole point).
    run_handle = _original(asyncio.events.Handle, "_run")
    run_once = _original(asyncio.base_events.BaseEventLoop, "_run_once")
    select = _original(selectors.EpollSelector, "select")

    def timed_handle(handle: Any) -> None:  # noqa: ANN401 - a Handle: its callback is private
        name = _callback_name(handle._callback)  # noqa: SLF001 - what the loop will run
        start = clock()
        try:
            run_handle(handle)
        finally:
            cpu[name] += clock() - start
            calls[name] += 1

    def timed_turn(loop: asyncio.base_events.BaseEventLoop) -> None:
        start = clock()
        try:
            run_once(loop)
        finally:
            cpu[TURN] += clock() - start
            calls[TURN] += 1

    def timed_select(
        selector: selectors.EpollSelector, timeout: float | None = None
    ) -> list[tuple[selectors.SelectorKey, int]]:
        start = clock()
        try:
            ready: list[tuple[selectors.SelectorKey, int]] = select(selector, timeout)
            return ready
        finally:
            cpu[SELECT] += clock() - start
            calls[SELECT] += 1

    _replace(asyncio.events.Handle, "_run", timed_handle)
    _replace(asyncio.base_events.BaseEventLoop, "_run_once", timed_turn)
    _replace(selectors.EpollSelector, "select", timed_select)
    thread = threading.get_ident()

    def write() -> None:
        totals = {name: [calls[name], cpu[name]] for name in cpu}
        Path(output).write_text(json.dumps({"thread": thread, "totals": totals}))

    atexit.register(write)


def _original(owner: type, name: str) -> Callable[..., Any]:
    method: Callable[..., Any] = getattr(owner, name)
    return method


def _replace(owner: type, name: str, method: Callable[..., Any]) -> None:
    setattr(owner, name, method)


def _callback_name(callback: Any) -> str:  # noqa: ANN401 - whatever the loop was handed
    """A task's step or wake-up is named by its coroutine; anything else by its own name."""
    owner = getattr(callback, "__self__", None)
    get_coro = getattr(owner, "get_coro", None)
    name = getattr(callback, "__qualname__", None) or type(callback).__name__
    if get_coro is not None:
        coroutine = get_coro()
        return f"task {getattr(coroutine, '__qualname__', '?')}"
    if type(callback).__name__ == "TaskStepMethWrapper":
        return "task (its first step)"
    return name


# ---------------------------------------------------------------- the run, and its table
def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--shoes", type=int, default=32)
    parser.add_argument("--pace", type=float, default=1.25, help="cards a second per shoe")
    parser.add_argument("--rows", type=int, default=16, help="callbacks listed")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="loop-cpu-") as folder:
        output = Path(folder) / "loop.json"
        environment = {
            **os.environ,
            ENVIRONMENT: str(output),
            "PYTHONPATH": os.pathsep.join(
                [str(SITE), str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]
            ),
        }
        command = [
            sys.executable, "-m", "bench.e2e.openloop", "--shoes", str(args.shoes),
            "--pace", str(args.pace), "--seconds", str(args.seconds), "--contract", "4",
            "--baselines", "bare",
        ]  # fmt: skip
        run = subprocess.run(  # noqa: S603 - this checkout's own benchmark
            command, env=environment, capture_output=True, text=True, check=False
        )
        sys.stdout.write(run.stdout)
        sys.stderr.write(run.stderr)
        if run.returncode != 0 or not output.exists():
            print("loop_cpu: the open-loop run failed, or the daemon wrote no totals")
            return 1
        measured = json.loads(output.read_text())
    cards = _cards_dealt(run.stdout)
    print(_table(measured["totals"], cards, args.rows))
    return 0


def _cards_dealt(report: str) -> int:
    found = re.search(r"dealt ([\d,]+) cards", report)
    if found is None:
        raise SystemExit("loop_cpu: the open-loop run printed no count of cards")
    return int(found.group(1).replace(",", ""))


def _table(totals: dict[str, list[int]], cards: int, rows: int) -> str:
    """Each callback's CPU a card, its share of the loop thread's, and how often it ran."""
    turn_calls, turn_cpu = totals.get(TURN, [0, 0])
    select_calls, select_cpu = totals.get(SELECT, [0, 0])
    callbacks = {k: v for k, v in totals.items() if k not in {TURN, SELECT}}
    in_callbacks = sum(ns for _, ns in callbacks.values())
    loop_own = turn_cpu - in_callbacks - select_cpu
    runs = sum(n for n, _ in callbacks.values())
    head = (
        f"the event loop's thread over {cards:,} cards: {turn_cpu / cards / 1e3:,.0f} us a card, "
        f"{turn_calls / cards:.1f} turns and {runs / cards:.1f} callbacks a card"
    )
    lines = [
        head,
        f"{'us a card':>10} {'share':>6} {'runs a card':>11} {'us a run':>9}  what ran",
    ]

    def row(name: str, calls: int, ns: int) -> str:
        share = 100 * ns / turn_cpu if turn_cpu else 0.0
        each = ns / calls / 1e3 if calls else 0.0
        return f"{ns / cards / 1e3:10.1f} {share:5.1f}% {calls / cards:11.2f} {each:9.1f}  {name}"

    ranked = sorted(callbacks.items(), key=lambda item: -item[1][1])
    lines += [row(name, calls, ns) for name, (calls, ns) in ranked[:rows]]
    rest = ranked[rows:]
    lines.append(
        row(f"({len(rest)} others)", sum(c for _, (c, _) in rest), sum(n for _, (_, n) in rest))
    )
    lines.append(row(SELECT, select_calls, select_cpu))
    lines.append(row("(the loop's own bookkeeping between them)", turn_calls, loop_own))
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
