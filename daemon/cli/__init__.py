"""The `shoe2mqtt` command line: one module per command, each building one `Command`.

    run, check-config    the service and its configuration        run.py, check_config.py
    watch, demo          the pit view, and a whole pit on one PC  watch.py, demo.py
    emulate, listen,     the engineer's shoe tools                emulate.py, listen.py,
    ports                                                         ports.py
    replay, journal      the auditor's                            replay.py, journal.py
    analyze, simulate    the mathematics of each paytable         analyze.py, simulate.py
    asyncapi             the document of every topic              asyncapi.py

`main` (main.py) lists every command by name and runs the one asked for, importing that
command's module alone; what its exit status means is `ExitCode` (exit_codes.py).
"""

from daemon.cli.command import Command
from daemon.cli.exit_codes import ExitCode
from daemon.cli.main import build_parser, main

__all__ = ["Command", "ExitCode", "build_parser", "main"]
