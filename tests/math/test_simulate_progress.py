"""`shoe2mqtt simulate` shows its progress on a terminal, and nothing where none is."""

from __future__ import annotations

import os
import pty
import re
import subprocess
import sys

ARGV = [sys.executable, "-m", "daemon.cli", "simulate", "--game", "double_attack", "--seed", "3"]


def _simulate(rounds: int, *, terminal: bool) -> tuple[str, str]:
    """Its standard output (a pipe) and standard error (a terminal, or a pipe)."""
    environ = {**os.environ, "TERM": "xterm", "COLUMNS": "100"}
    if not terminal:
        done = subprocess.run(  # noqa: S603 - our own command
            [*ARGV, "--rounds", str(rounds)], capture_output=True, text=True, env=environ,
            timeout=60, check=True,
        )  # fmt: skip
        return done.stdout, done.stderr
    controller, terminal_side = pty.openpty()
    try:
        process = subprocess.Popen(  # noqa: S603 - our own command
            [*ARGV, "--rounds", str(rounds)], stdout=subprocess.PIPE, stderr=terminal_side,
            env=environ, text=True,
        )  # fmt: skip
        os.close(terminal_side)
        drawn = b""
        while chunk := _read(controller):
            drawn += chunk
        out, _ = process.communicate(timeout=60)
    finally:
        os.close(controller)
    assert process.returncode == 0
    return out, drawn.decode(errors="replace")


def _read(fd: int) -> bytes:
    try:
        return os.read(fd, 4096)
    except OSError:  # EIO: the other side closed (the process ended)
        return b""


ESCAPE = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")  # the terminal's colours and cursor moves


def test_a_terminal_sees_a_bar_of_the_rounds_played() -> None:
    out, drawn = _simulate(6000, terminal=True)
    assert ESCAPE.search(drawn)  # drawn in place, for a terminal
    text = ESCAPE.sub("", drawn)
    assert "simulating" in text
    assert "   0/6000 rounds" in text  # at once, before the first chunk ends
    assert "6000/6000 rounds" in text  # the last drawing, before the bar is cleared away
    assert "6,000 rounds in" in out  # the result itself goes to standard output, as before


def test_a_pipe_gets_no_bar() -> None:
    out, err = _simulate(100, terminal=False)
    assert "100 rounds in" in out
    assert err == ""
