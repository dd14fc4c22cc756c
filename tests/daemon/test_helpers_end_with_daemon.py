"""The daemon's helper processes (the archiver, the count of closed days) end with the daemon
that started them, however it ends: real processes, a real SIGKILL, the kernel's own
parent-death signal (daemon/system/parent.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from typing import TYPE_CHECKING

import pytest

from daemon.journal import JOURNAL_FILE, schema

if TYPE_CHECKING:
    from pathlib import Path

# A harness of its own makes itself the subreaper of what it starts, so the orphaned helper
# comes back to it (not to this machine's init) and is reaped, whatever it did.
HARNESS = textwrap.dedent(
    """
    import ctypes, json, os, signal, subprocess, sys, time

    ctypes.CDLL(None).prctl(36, 1, 0, 0, 0)  # PR_SET_CHILD_SUBREAPER
    ask = sys.argv[1] == "ask"
    helper = (
        "import os, sys, time\\n"
        "from daemon.system.parent import end_with_parent\\n"
        f"end_with_parent(os.getppid() if {ask} else None)\\n"
        "print(os.getpid(), flush=True)\\n"
        "time.sleep(60)\\n"
    )
    middle = subprocess.Popen(
        [sys.executable, "-c",
         "import subprocess, sys; subprocess.Popen([sys.executable, '-c', sys.argv[1]]); "
         "import time; time.sleep(60)", helper],
        stdout=subprocess.PIPE, text=True,
    )
    pid = int(middle.stdout.readline())
    middle.kill()  # the daemon, killed outright
    middle.wait()
    deadline, ended = time.monotonic() + 5.0, None
    while ended is None and time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            ended = signal.Signals(os.WTERMSIG(status)).name if os.WIFSIGNALED(status) else "exit"
        else:
            time.sleep(0.02)
    if ended is None:
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
    print(json.dumps({"ended": ended}))
    """
)


@pytest.mark.parametrize(("ask", "ended"), [("ask", "SIGTERM"), ("no", None)])
def test_a_helper_that_asked_ends_when_its_daemon_is_killed(ask: str, ended: str | None) -> None:
    """One that did not ask (as before) runs on for the whole five seconds watched."""
    run = subprocess.run(  # noqa: S603 - our own harness
        [sys.executable, "-c", HARNESS, ask],
        capture_output=True, text=True, timeout=30, check=True,
    )  # fmt: skip
    assert json.loads(run.stdout.splitlines()[-1]) == {"ended": ended}, run.stderr


@pytest.mark.parametrize("module", ["daemon.numbers.days", "daemon.history.archiver"])
def test_a_helper_whose_daemon_is_gone_does_nothing(module: str) -> None:
    """A job for a daemon that is not the helper's parent (it ended before the helper could
    ask): the helper ends at once and says why."""
    job = {"journal": "/nonexistent/journal.db", "archive": "/nonexistent", "parent": 1}
    run = subprocess.run(  # noqa: S603 - our own helper
        [sys.executable, "-m", module], input=json.dumps(job),
        capture_output=True, text=True, timeout=30, check=False,
    )  # fmt: skip
    assert run.returncode == 1
    assert "the daemon that started this process (1) has ended" in run.stderr


def test_the_count_of_days_runs_where_the_units_filter_refuses_nice(tmp_path: Path) -> None:
    """The shipped unit's system call filter refuses setpriority (EPERM): the count goes on
    at the priority it has."""
    refused = textwrap.dedent(
        """
        import errno, os, runpy
        def refuse(increment):
            raise PermissionError(errno.EPERM, "Operation not permitted")
        os.nice = refuse
        runpy.run_module("daemon.numbers.days", run_name="__main__")
        """
    )
    journal = tmp_path / JOURNAL_FILE
    schema.connect(journal).close()  # a new journal: no table, nothing to count
    job = {"journal": str(journal), "archive": str(tmp_path / "archive"), "base": "shoe2mqtt",
           "shifts": ["06:00"], "timezone": "UTC", "confidence": 0.999, "tables": {},
           "parent": os.getpid()}  # fmt: skip
    run = subprocess.run(  # noqa: S603 - our own helper
        [sys.executable, "-c", refused], input=json.dumps(job),
        capture_output=True, text=True, timeout=60, check=False,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    assert json.loads(run.stdout) == {}
