"""`shoe2mqtt WORDS...` for the journal's tests: as a process (as a person types it), or in
this process (the same parser and command, without a second interpreter's start-up)."""

from __future__ import annotations

import io
import subprocess
import sys
from dataclasses import dataclass

from daemon.cli import build_parser


@dataclass(frozen=True)
class Done:
    returncode: int
    stdout: str
    stderr: str


def shoe2mqtt(*words: str, process: bool = False) -> Done:
    if process:
        done = subprocess.run(  # noqa: S603 - this Python, our own command and arguments
            [sys.executable, "-m", "daemon.cli", *words],
            capture_output=True,
            text=True,
            check=False,
            timeout=60,
        )
        return Done(done.returncode, done.stdout, done.stderr)
    args = build_parser().parse_args(list(words))
    out, err = io.StringIO(), io.StringIO()
    code = args.run(args, out, err)
    return Done(int(code), out.getvalue(), err.getvalue())
