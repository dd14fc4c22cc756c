"""`shoe2mqtt emulate`: a shoe on a virtual serial port, dealing until Ctrl-C or the end of
a script. The first lines printed say which port (and link) a host should open."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Final

from daemon.cli.command import Command, until_signalled, usage_error
from daemon.cli.exit_codes import ExitCode
from daemon.cli.output import event_record, json_line, print_line
from drivers.emulator import PROTOCOLS, SCRIPT_HELP
from drivers.errors import DriverError

if TYPE_CHECKING:
    import argparse
    from typing import TextIO

    from drivers.emulator import Dealt, EmulatedShoe, EmulatorSettings

DRAIN_TIMEOUT: Final = 5.0  # seconds a finished script waits for the host to read the rest
_LINE_FAULTS: Final = (
    ("noise", "junk bytes before a frame"),
    ("drop", "a frame lost (the host sees a sequence gap)"),
    ("bad-checksum", "a frame with one check-value bit flipped"),
    ("split", "a frame written in pieces with short pauses"),
    ("repeat", "a frame sent twice"),
    ("unreadable", "a card whose face cannot be read (per card)"),
)


def _add_arguments(cmd: argparse.ArgumentParser) -> None:
    cmd.add_argument("--protocol", choices=PROTOCOLS, default="reference")
    cmd.add_argument("--decks", type=int, default=6, help="decks in the shoe (default 6)")
    cmd.add_argument("--spanish", action="store_true", help="48-card decks without tens")
    cmd.add_argument(
        "--penetration",
        type=float,
        default=0.75,
        help="fraction of the shoe dealt before the cut card (default 0.75)",
    )
    cmd.add_argument("--seed", type=int, help="shuffle and fault seed: the same seed deals alike")
    cmd.add_argument("--cards", metavar="SCRIPT", help=f"deal exactly these cards: {SCRIPT_HELP}")
    cmd.add_argument(
        "--pace",
        type=float,
        default=1.0,
        metavar="CARDS_PER_S",
        help="cards per second (default 1); 0 deals as fast as the host reads",
    )
    cmd.add_argument(
        "--copies", type=int, default=1, help="send every frame this many times (ENQ shoes: 3)"
    )
    cmd.add_argument(
        "--heartbeat",
        type=float,
        default=2.0,
        metavar="SECONDS",
        help="heartbeat after this much silence (reference protocol; 0: never; default 2)",
    )
    cmd.add_argument("--link", type=Path, help="keep a symlink here to the port, e.g. /tmp/shoe0")
    faults = cmd.add_argument_group("line faults", "each a chance per frame, 0 to 1")
    for name, text in _LINE_FAULTS:
        faults.add_argument(f"--{name}", type=float, default=0.0, metavar="RATE", help=text)
    faults.add_argument(
        "--unplug-every", type=float, metavar="SECONDS", help="pull the virtual cable this often"
    )
    faults.add_argument(
        "--unplug-for", type=float, default=1.0, metavar="SECONDS", help="and for this long"
    )
    cmd.add_argument(
        "--verbose", "-v", action="store_true", help="print every card dealt as a JSON line"
    )


def emulator_settings(args: argparse.Namespace) -> EmulatorSettings:
    """The settings `emulate` runs with; raises `EmulatorError` saying which option is wrong."""
    from drivers.emulator import EmulatorSettings, FaultRates

    return EmulatorSettings(
        protocol=args.protocol,
        decks=args.decks,
        spanish=args.spanish,
        penetration=args.penetration,
        script=args.cards,
        seed=args.seed,
        pace=args.pace or None,
        faults=FaultRates(
            noise=args.noise,
            drop=args.drop,
            bad_checksum=args.bad_checksum,
            split=args.split,
            repeat=args.repeat,
            unreadable=args.unreadable,
        ),
        copies=args.copies,
        heartbeat_interval=args.heartbeat or None,
        link=args.link,
        unplug_every=args.unplug_every,
        unplug_for=args.unplug_for,
    )


def _run(args: argparse.Namespace, out: TextIO, err: TextIO) -> ExitCode:
    logging.basicConfig(level=logging.INFO, stream=err, format="%(message)s")
    try:
        settings = emulator_settings(args)
    except DriverError as exc:
        return usage_error(err, "emulate", exc)
    return asyncio.run(until_signalled(emulate(settings, out, err, verbose=args.verbose)))


async def emulate(
    settings: EmulatorSettings, out: TextIO, err: TextIO, *, verbose: bool = False
) -> ExitCode:
    """Run one emulated shoe until cancelled or its script ends; print where to find it."""
    from drivers.emulator import EmulatedShoe, EmulatorError

    try:
        shoe = EmulatedShoe(settings)  # a script that does not parse fails here
        async with shoe:  # and a link that cannot be made, here
            print_line(out, f"port: {shoe.port_path}")
            if shoe.link is not None:
                print_line(out, f"link: {shoe.link}")
            print_line(out, f"seed: {shoe.seed}")
            logging.getLogger("drivers.emulator").info(
                "emulating a %s shoe; open %s; Ctrl-C to stop", settings.protocol, shoe.path
            )
            await _deal_until_done(shoe, out, verbose=verbose)
    except EmulatorError as exc:
        return usage_error(err, "emulate", exc)
    return ExitCode.OK


async def _deal_until_done(shoe: EmulatedShoe, out: TextIO, *, verbose: bool) -> None:
    def show(dealt: Dealt) -> None:
        print_line(out, json_line(_dealt_record(dealt)))

    await shoe.run(show if verbose else None)
    # A script ran out: give the host the time to read the last cards before the port goes.
    with contextlib.suppress(TimeoutError):
        async with asyncio.timeout(DRAIN_TIMEOUT):
            await shoe.wait_drained()


def _dealt_record(dealt: Dealt) -> dict[str, object]:
    record = event_record(dealt.event)
    record["fate"] = dealt.fate
    if dealt.lost_unplugged:
        record["lost_unplugged"] = True
    return record


COMMAND: Final = Command(
    name="emulate",
    help="emulate a shoe on a virtual serial port",
    description="Open a pseudo-terminal that behaves like a shoe's serial port and deal "
    "cards into it until Ctrl-C, SIGTERM, or the end of a --cards script. The first "
    "lines printed say which port (and link) a host should open.",
    add_arguments=_add_arguments,
    run=_run,
)
