"""Where the daemon's two threads spend their CPU, part by part, at goal 3's load.

    uv run python -m bench.e2e.loop_cpu [--seconds 30] [--shoes 32] [--pace 1.25]

Runs `bench.e2e.openloop`'s run in this process (the daemon and the bare relay on one
timetable, console contract 4) with the daemon measured from inside: every callback its loop
runs is timed with the thread's own CPU clock (`time.thread_time_ns`, user and system time
of that thread alone) and counted under what it resumes (a task's coroutine, or the
callback's own name), and so is each turn of the loop and its `epoll` wait; on the
journal's thread, each batch (its writes, what rides along, and the rest: BEGIN, savepoints,
COMMIT and its sync, the hand-back). A sampling profiler (py-spy) counts where the samples
fell, and `--gil` counts time the thread held the interpreter's lock, waiting on the kernel
included; this counts the CPU each thread used, so its parts add up to the thread's.

How: this folder's `loop_cpu_site/sitecustomize.py` is put on `PYTHONPATH`; Python imports it
at every start, and it installs the probe only in `shoe2mqtt run` with `SHOE2MQTT_LOOP_CPU`
set, which writes its totals there when the daemon exits (and then runs any other
`sitecustomize` the process would have had). Its own cost, some microseconds a callback and
a turn (two clock readings of about 0.8 µs each, the callback's name, the counts), falls
mostly in the "loop's own bookkeeping" row: read that row as an upper bound, the others as
what they say. The totals also hold the daemon's start and stop (their own rows: a
recovery, the numbers' rebuild), where openloop's CPU figures run from the first step to
the last settlement.
"""

from __future__ import annotations

import argparse
import asyncio
import atexit
import collections
import json
import os
import selectors
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from bench.e2e.openloop import Floor, OpenLoopRun, report, stoppable

if TYPE_CHECKING:
    from collections.abc import Callable

ENVIRONMENT: Final = "SHOE2MQTT_LOOP_CPU"
SITE: Final = Path(__file__).with_name("loop_cpu_site")
ROOT: Final = Path(__file__).resolve().parents[2]
TURN: Final = "(a turn of the loop, all included)"
SELECT: Final = "(epoll: the loop's wait for I/O)"
BATCH: Final = "(journal: a batch, all included)"
WRITE: Final = "(journal: a write of the batch)"
RIDERS: Final = "(journal: what rides along)"
JOURNAL: Final = (BATCH, WRITE, RIDERS)


# ---------------------------------------------------------------- the probe, in the daemon
def install(output: str) -> None:
    """Time every callback the event loop runs, and its turns, on this thread's CPU clock,
    and the journal's batches on that thread's; write the totals to `output` at exit."""
    import asyncio.base_events  # only in the daemon the probe measures
    import asyncio.events

    from daemon.journal import store

    cpu: collections.Counter[str] = collections.Counter()
    calls: collections.Counter[str] = collections.Counter()
    clock = time.thread_time_ns

    def timed(name: str | None, method: Callable[..., Any]) -> Callable[..., Any]:
        """`method`, its thread's CPU counted under `name` (None: its first argument's)."""

        def run(*args: Any, **kwargs: Any) -> Any:  # noqa: ANN401 - whatever the method takes and gives
            key = name if name is not None else _callback_name(args[0]._callback)  # noqa: SLF001 - a Handle's
            start = clock()
            try:
                return method(*args, **kwargs)
            finally:
                cpu[key] += clock() - start
                calls[key] += 1

        return run

    # The loop's own methods and the journal's, each replaced by one that times it (the
    # probe's whole point): a callback under what it runs, a turn, the wait in `epoll`.
    for owner, name, key in (
        (asyncio.events.Handle, "_run", None),
        (asyncio.base_events.BaseEventLoop, "_run_once", TURN),
        (selectors.EpollSelector, "select", SELECT),
        (store.Journal, "_run_batch", BATCH),
    ):
        setattr(owner, name, timed(key, getattr(owner, name)))
    # Module functions the batch calls by their global names: a write, and what rides along.
    store._attempt = timed(WRITE, store._attempt)  # noqa: SLF001
    store._write_riders = timed(RIDERS, store._write_riders)  # noqa: SLF001

    def write() -> None:
        # Copied first: a journal's thread still running at exit may add a key meanwhile.
        spent, runs = dict(cpu), dict(calls)
        totals = {name: [runs.get(name, 0), spent[name]] for name in spent}
        Path(output).write_text(json.dumps({"totals": totals}))

    atexit.register(write)


def _callback_name(callback: Any) -> str:  # noqa: ANN401 - whatever the loop was handed
    """A task's step or wake-up (bound to the task, in 3.11's C tasks as in Python's) is named
    by its coroutine; anything else by its own name."""
    get_coro = getattr(getattr(callback, "__self__", None), "get_coro", None)
    if get_coro is not None:
        return f"task {getattr(get_coro(), '__qualname__', '?')}"
    return getattr(callback, "__qualname__", None) or type(callback).__name__


# ---------------------------------------------------------------- the run, and its table
async def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--shoes", type=int, default=32)
    parser.add_argument("--pace", type=float, default=1.25, help="cards a second per shoe")
    parser.add_argument("--rows", type=int, default=16, help="callbacks listed")
    args = parser.parse_args()
    floor = Floor(
        shoes=args.shoes, pace=args.pace, seconds=args.seconds, contract=4, baselines=("bare",)
    )
    with tempfile.TemporaryDirectory(prefix="loop-cpu-") as folder:
        output = Path(folder) / "loop.json"
        # The daemon the run starts inherits this process's environment (its site folder
        # first on the path, then this checkout); the probe's gate keeps it to the daemon.
        os.environ[ENVIRONMENT] = str(output)
        os.environ["PYTHONPATH"] = os.pathsep.join(
            [str(SITE), str(ROOT), *filter(None, [os.environ.get("PYTHONPATH")])]
        )
        result = await OpenLoopRun(floor).run()
        print("\n".join(report(result)), flush=True)
        if not output.exists():
            print("loop_cpu: the daemon wrote no totals")
            return 1
        measured = json.loads(output.read_text())
    print(_table(measured["totals"], result.tally.cards, args.rows))
    return 1 if result.verdict == "ERROR" else 0


def _table(totals: dict[str, list[int]], cards: int, rows: int) -> str:
    """The loop's thread, then the journal's: each part's CPU a card, its share of its
    thread's, and how often it ran."""
    cards = max(cards, 1)  # a run that dealt nothing still prints its totals
    return "\n".join([*_loop_lines(totals, cards, rows), *_journal_lines(totals, cards)])


def _row(name: str, calls: int, ns: int, cards: int, whole: int) -> str:
    share = 100 * ns / whole if whole else 0.0
    each = ns / calls / 1e3 if calls else 0.0
    return f"{ns / cards / 1e3:10.1f} {share:5.1f}% {calls / cards:11.2f} {each:9.1f}  {name}"


_HEADER: Final = f"{'us a card':>10} {'share':>6} {'runs a card':>11} {'us a run':>9}  what ran"


def _loop_lines(totals: dict[str, list[int]], cards: int, rows: int) -> list[str]:
    turn_calls, turn_cpu = totals.get(TURN, [0, 0])
    select_calls, select_cpu = totals.get(SELECT, [0, 0])
    callbacks = {k: v for k, v in totals.items() if k not in {TURN, SELECT, *JOURNAL}}
    in_callbacks = sum(ns for _, ns in callbacks.values())
    runs = sum(n for n, _ in callbacks.values())
    head = (
        f"the event loop's thread over {cards:,} cards: {turn_cpu / cards / 1e3:,.0f} us a card, "
        f"{turn_calls / cards:.1f} turns and {runs / cards:.1f} callbacks a card"
    )
    lines = [head, _HEADER]
    ranked = sorted(callbacks.items(), key=lambda item: -item[1][1])
    lines += [_row(name, calls, ns, cards, turn_cpu) for name, (calls, ns) in ranked[:rows]]
    rest = ranked[rows:]
    others = (sum(c for _, (c, _) in rest), sum(n for _, (_, n) in rest))
    lines.append(_row(f"({len(rest)} others)", *others, cards, turn_cpu))
    lines.append(_row(SELECT, select_calls, select_cpu, cards, turn_cpu))
    own = turn_cpu - in_callbacks - select_cpu
    lines.append(
        _row("(the loop's own bookkeeping between them)", turn_calls, own, cards, turn_cpu)
    )
    return lines


def _journal_lines(totals: dict[str, list[int]], cards: int) -> list[str]:
    batches, batch_cpu = totals.get(BATCH, [0, 0])
    writes, write_cpu = totals.get(WRITE, [0, 0])
    riders, riders_cpu = totals.get(RIDERS, [0, 0])
    rest = batch_cpu - write_cpu - riders_cpu
    head = (
        f"the journal's thread: {batch_cpu / cards / 1e3:,.0f} us a card in "
        f"{batches / cards:.2f} batches a card"
    )
    around = "(journal: the rest of a batch: BEGIN, savepoints, COMMIT and its sync, hand-back)"
    return [
        head,
        _HEADER,
        _row(WRITE, writes, write_cpu, cards, batch_cpu),
        _row(RIDERS, riders, riders_cpu, cards, batch_cpu),
        _row(around, batches, rest, cards, batch_cpu),
    ]


if __name__ == "__main__":
    sys.exit(asyncio.run(stoppable(main())))
