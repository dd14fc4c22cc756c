"""What a `shoe2mqtt` command's exit status means: the one table every command answers by.

Named after sysexits(3), where a meaning has a name there. Two numbers differ from it on
purpose: a wrong option is 2, because argparse exits 2 before any command runs and a
command that finds a wrong option itself should not answer differently; and 1 is the
plain failure of C's EXIT_FAILURE, which scripts written against shoe2mqtt already test.
"""

from __future__ import annotations

import enum


class ExitCode(enum.IntEnum):
    """The exit status of every `shoe2mqtt` command (also in README.md, "Exit codes")."""

    OK = 0
    # The command ran and the answer is no: a file it read has a mistake, the device or
    # journal it opened failed it, the round asked for is not there, or the simulation
    # disagrees with the exact figures.
    FAILURE = 1
    # A wrong option or argument, including a file named on the command line that cannot
    # be opened: argparse's own usage status, so every wrong invocation exits alike.
    USAGE = 2
    # sysexits' EX_CONFIG: the configuration has a mistake, or this host lacks a file it
    # names (`check-config` says which; `run` cannot start on it). The systemd units list
    # it in RestartPreventExitStatus=, because restarting cannot mend a configuration file,
    # while a crash (exit 1) is restarted.
    CONFIG = 78
