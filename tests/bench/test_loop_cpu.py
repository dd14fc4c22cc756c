"""The loop's CPU, callback by callback (bench.e2e.loop_cpu): its probe in a process of its
own, the gate that installs it in `shoe2mqtt run` alone, and a short run as a user types it."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from typing import TYPE_CHECKING, Final

from bench.e2e.loop_cpu import BATCH, ENVIRONMENT, RIDERS, ROOT, SELECT, SITE, TURN, WRITE, _table

if TYPE_CHECKING:
    from pathlib import Path

# A loop whose one task spins a known while between its sleeps: the probe must name it and
# give it nearly all the thread's CPU the callbacks used.
_PROGRAM: Final = """
import asyncio, sys, time
from bench.e2e.loop_cpu import install
if len(sys.argv) > 1 and sys.argv[1] == "probe":
    install(sys.argv[2])

async def spinning() -> None:
    for _ in range(20):
        end = time.thread_time() + 0.005
        while time.thread_time() < end:
            pass
        await asyncio.sleep(0.001)

asyncio.run(spinning())
"""


def _python(*args: str, environment: dict[str, str] | None = None) -> None:
    done = subprocess.run(  # noqa: S603 - this interpreter, this checkout's code
        [sys.executable, *args], capture_output=True, text=True, timeout=60, check=False,
        cwd=ROOT, env=environment,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr


def test_the_probe_gives_each_task_the_cpu_its_steps_used(tmp_path: Path) -> None:
    output = tmp_path / "loop.json"
    _python("-c", _PROGRAM, "probe", str(output))
    totals = json.loads(output.read_text())["totals"]
    calls, cpu = totals["task spinning"]
    assert calls == 21  # its first step and twenty wake-ups after a sleep
    assert 0.1e9 <= cpu < 0.2e9  # the 20 x 5 ms it spun, and little else
    turns, turn_cpu = totals[TURN]
    assert turns >= 21
    callbacks = sum(ns for name, (_, ns) in totals.items() if name not in {TURN, SELECT})
    assert callbacks + totals[SELECT][1] <= turn_cpu  # the parts are inside the turns


def test_only_shoe2mqtt_run_is_probed(tmp_path: Path) -> None:
    """The site folder is on every process's path during a run (the bench, the relay,
    `shoe2mqtt replay`): the probe goes only where `run --config` is asked for."""
    output = tmp_path / "loop.json"
    environment = {
        **os.environ,
        ENVIRONMENT: str(output),
        "PYTHONPATH": os.pathsep.join([str(SITE), str(ROOT)]),
    }
    _python("-c", _PROGRAM, "replay", "log.jsonl", environment=environment)
    assert not output.exists()
    _python("-c", _PROGRAM, "run", "--config", "x.toml", environment=environment)
    assert "task spinning" in json.loads(output.read_text())["totals"]


def test_a_sitecustomize_it_hides_still_runs(tmp_path: Path) -> None:
    """Its folder goes first on the path, where Python looks for one `sitecustomize`: the
    one it hides (a distribution's, a site's) runs after it, in every process."""
    other = tmp_path / "other"
    other.mkdir()
    marker = tmp_path / "ran"
    (other / "sitecustomize.py").write_text(
        f"import pathlib\npathlib.Path({str(marker)!r}).write_text('yes')\n", encoding="utf-8"
    )
    environment = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SITE), str(other), str(ROOT)])}
    _python("-c", "pass", environment=environment)
    assert marker.read_text(encoding="utf-8") == "yes"


def test_the_table_adds_up_to_each_thread() -> None:
    totals = {
        TURN: [100, 10_000_000],
        SELECT: [100, 1_000_000],
        "task TableCommits.consume": [40, 6_000_000],
        "Journal._hand_over": [10, 1_000_000],
        BATCH: [12, 4_000_000],
        WRITE: [15, 1_000_000],
        RIDERS: [12, 500_000],
    }
    lines = _table(totals, cards=10, rows=1).splitlines()
    assert lines[0].startswith("the event loop's thread over 10 cards: 1,000 us a card, 10.0 turns")
    assert lines[0].endswith("5.0 callbacks a card")  # the journal's own are not the loop's
    assert re.match(r"\s+600\.0\s+60\.0%\s+4\.00\s+150\.0  task TableCommits\.consume", lines[2])
    assert "(1 others)" in lines[3]
    assert lines[5].split()[:2] == ["200.0", "20.0%"]  # 10 ms - 7 ms in callbacks - 1 ms in epoll
    assert lines[6] == "the journal's thread: 400 us a card in 1.20 batches a card"
    assert lines[8].split()[:2] == ["100.0", "25.0%"]  # the writes: a quarter of the batches
    assert lines[-1].split()[:2] == ["250.0", "62.5%"]  # the rest of the batches' CPU


def test_a_short_run_prints_the_loops_callbacks(tmp_path: Path) -> None:
    command = [
        sys.executable, "-m", "bench.e2e.loop_cpu", "--shoes", "2", "--pace", "4",
        "--seconds", "3", "--rows", "4",
    ]  # fmt: skip
    done = subprocess.run(  # noqa: S603 - our own module
        command, capture_output=True, text=True, timeout=50, check=False, cwd=ROOT,
        env={**os.environ, "BENCH_DIR": str(tmp_path)},
    )  # fmt: skip
    assert done.returncode == 0, done.stdout + done.stderr
    assert "verdict: ok" in done.stdout
    assert "task TableCommits.consume" in done.stdout  # the table's task, by its coroutine
    assert re.search(r"the journal's thread: [\d,]+ us a card in [\d.]+ batches", done.stdout)
    # The journal's writes are timed where the batch calls them (module functions, looked up
    # when called): a run that dealt cards wrote some.
    [writes] = re.findall(
        r"^\s*[\d.]+\s+[\d.]+%\s+([\d.]+)\s+[\d.]+  \(journal: a write", done.stdout, re.MULTILINE
    )
    assert float(writes) > 0, done.stdout
    assert re.search(r"the event loop's thread over [\d,]+ cards: [\d,]+ us a card", done.stdout)
