"""`shoe2mqtt asyncapi`: print the AsyncAPI 3.0 document of every topic and payload.

The document is built by daemon/wire/asyncapi.py, which a test also holds against
docs/asyncapi.json; this module only prints it.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Final

from daemon.cli.command import Command
from daemon.cli.exit_codes import ExitCode

if TYPE_CHECKING:
    import argparse
    from typing import TextIO


def _add_arguments(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument(
        "--base-topic", default="shoe2mqtt", help="the base topic (default: shoe2mqtt)"
    )


def _run(args: argparse.Namespace, out: TextIO, _err: TextIO) -> ExitCode:
    from daemon.wire.asyncapi import build

    out.write(json.dumps(build(base=args.base_topic), indent=2) + "\n")
    return ExitCode.OK


COMMAND: Final = Command(
    description="Print the AsyncAPI 3.0 document (JSON) of every MQTT topic and payload.",
    add_arguments=_add_arguments,
    run=_run,
)
