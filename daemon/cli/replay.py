"""`shoe2mqtt replay`: an auditor runs a round log through the rules core and reads every
settlement and notice as JSON Lines, in the order they happen at the table.

The round-log format and the replay itself are daemon/round_log.py, which `journal export`,
`analyze --round-log` and the tests use too; this module opens the file and prints. A
gzip-compressed log (the journal's archive files, `.jsonl.gz`) is read as it is.
"""

from __future__ import annotations

import gzip
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Final

from daemon.cli.command import Command, failure, usage_error
from daemon.cli.exit_codes import ExitCode
from daemon.cli.output import json_line
from daemon.round_log import ReplayError, replay

if TYPE_CHECKING:
    import argparse
    from typing import TextIO


def _add_arguments(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument("file", help="the round log, or - for standard input")
    cmd.add_argument(
        "--all",
        dest="everything",
        action="store_true",
        help="print every output (cards, hands, round ends), not only settlements and notices",
    )


def _run(args: argparse.Namespace, out: TextIO, err: TextIO) -> ExitCode:
    path: str = args.file
    name = "<stdin>" if path == "-" else path
    try:
        # Closed in the finally below; a with-block cannot cover stdin and files alike.
        source = sys.stdin if path == "-" else _open(Path(path))
    except OSError as exc:
        return usage_error(err, "replay", f"cannot read {name}: {exc.strerror}")
    try:
        out.writelines(
            json_line(record) + "\n" for record in replay(source, everything=args.everything)
        )
    except ReplayError as exc:
        return failure(err, "replay", f"{name}: {exc}")
    except BrokenPipeError:
        raise  # the output's reader left, not the input's fault: `main` ends quietly
    except (OSError, EOFError, UnicodeDecodeError) as exc:  # a damaged or foreign file
        return failure(err, "replay", f"{name}: cannot be read: {exc}")
    finally:
        if source is not sys.stdin:
            source.close()
    return ExitCode.OK


_GZIP_MAGIC: Final = b"\x1f\x8b"


def _open(path: Path) -> TextIO:
    """The file as text, decompressed if it is gzip (whatever its name)."""
    with path.open("rb") as probe:
        compressed = probe.read(2) == _GZIP_MAGIC
    if compressed:
        return gzip.open(path, "rt", encoding="utf-8")
    return path.open(encoding="utf-8")


COMMAND: Final = Command(
    description="Read a round log (JSON Lines, docs/events.md) and print every settlement "
    "and notice as JSON Lines, in the order they happen at the table.",
    add_arguments=_add_arguments,
    run=_run,
)
