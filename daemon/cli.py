"""The `shoe2mqtt` command line."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import TextIO

from daemon.replay import ReplayError, replay


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="shoe2mqtt",
        description="Card-reading blackjack shoe to MQTT, settling New Jersey bonus wagers.",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    replay_cmd = commands.add_parser(
        "replay",
        help="run a round log through the rules core and print settlements and notices",
        description="Read a round log (JSON Lines, docs/events.md) and print every settlement "
        "and notice as JSON Lines, in the order they happen at the table.",
    )
    replay_cmd.add_argument("file", help="the round log, or - for standard input")
    replay_cmd.add_argument(
        "--all",
        dest="everything",
        action="store_true",
        help="print every output (cards, hands, round ends), not only settlements and notices",
    )
    asyncapi_cmd = commands.add_parser(
        "asyncapi",
        help="print the AsyncAPI 3.0 document of every topic and payload",
        description="Print the AsyncAPI 3.0 document (JSON) of every MQTT topic and payload.",
    )
    asyncapi_cmd.add_argument(
        "--base-topic", default="shoe2mqtt", help="the base topic (default: shoe2mqtt)"
    )
    return parser


def _asyncapi(base_topic: str, out: TextIO) -> int:
    from daemon.asyncapi import build

    out.write(json.dumps(build(base=base_topic), indent=2) + "\n")
    return 0


def _replay(path: str, *, everything: bool, out: TextIO, err: TextIO) -> int:
    name = "<stdin>" if path == "-" else path
    try:
        # Closed in the finally below; a with-block cannot cover stdin and files alike.
        source = sys.stdin if path == "-" else Path(path).open(encoding="utf-8")  # noqa: SIM115
    except OSError as exc:
        err.write(f"shoe2mqtt replay: cannot read {name}: {exc.strerror}\n")
        return 2
    try:
        out.writelines(
            json.dumps(record, separators=(",", ":")) + "\n"
            for record in replay(source, everything=everything)
        )
    except ReplayError as exc:
        err.write(f"shoe2mqtt replay: {name}: {exc}\n")
        return 1
    finally:
        if source is not sys.stdin:
            source.close()
    return 0


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    if args.command == "replay":
        return _replay(args.file, everything=args.everything, out=sys.stdout, err=sys.stderr)
    if args.command == "asyncapi":
        return _asyncapi(args.base_topic, sys.stdout)
    return 2  # pragma: no cover - argparse rejects unknown commands first


if __name__ == "__main__":
    sys.exit(main())
