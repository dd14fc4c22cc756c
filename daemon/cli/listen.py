"""`shoe2mqtt listen`: open a shoe with a driver and print what it says as JSON Lines, the
way `candump` prints a CAN bus: every decoded event and every change of the link; with
--raw, the bytes received too, and a line for each frame judged a repeat.

It is a host like the daemon, with the terminal for a journal: a frame is acknowledged
(reference protocol) only once its line is printed, a repeat of a frame already printed is
acknowledged again and not printed twice, a loss is printed as a `SequenceGap` line and a
frame with the number of the one before it but other content after a `SequenceConflict`
line (decision D3, drivers/receiver.py). `--count N` stops after N cards, once the last is
printed and acknowledged.

`--record FILE` keeps what the shoe said, byte for byte and when, as a capture
(docs/captures.md; none is kept when the port never opened); `--capture FILE` reads one
instead of a shoe, as the shoe it recorded, and stops at its end (a `Disconnected` line
says so): every event of its last chunk printed, exit 0; 1, with a word, when nothing in it
read as the protocol."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import logging
import os
import time
from typing import TYPE_CHECKING, Final

from daemon.cli.command import Command, until_signalled, usage_error
from daemon.cli.exit_codes import ExitCode
from daemon.cli.listen_record import (
    TappedTransport,
    capture_writer,
    drop_unopened_capture,
    new_capture_file,
)
from daemon.cli.output import event_record, json_line, print_line
from drivers.errors import DriverError
from drivers.events import CardDrawn, CardUnreadable, frame_number
from drivers.session import HostSession

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable
    from typing import TextIO

    from drivers.captures import CaptureWriter
    from drivers.codecs.base import Decoder
    from drivers.driver import DriverEvent
    from drivers.transports import TransportSettings
    from drivers.transports.base import Transport


def _add_arguments(cmd: argparse.ArgumentParser) -> None:
    protocol = cmd.add_mutually_exclusive_group(required=True)
    protocol.add_argument("--protocol", help="the shoe's protocol: reference, enq, ...")
    # The old name of --protocol, as `driver` is of the configuration's `protocol`.
    protocol.add_argument("--driver", dest="old_protocol", help=argparse.SUPPRESS)
    cmd.add_argument(
        "port", nargs="?", help="serial port, e.g. /dev/serial/by-id/... or /tmp/shoe0"
    )
    cmd.add_argument("--tcp", metavar="HOST:PORT", help="a serial device server instead of a port")
    cmd.add_argument(
        "--capture",
        metavar="FILE",
        help="play a capture (listen --record) instead of a port, as the shoe it recorded",
    )
    cmd.add_argument(
        "--speed",
        type=float,
        metavar="FACTOR",
        help="with --capture: 1 as recorded (default), 2 twice as fast, 0 as fast as read",
    )
    cmd.add_argument("--baud", type=int, default=9600, help="bit rate (default 9600; ENQ: 4800)")
    cmd.add_argument("--parity", default="N", help="N, E, O, M or S (default N)")
    cmd.add_argument("--bytesize", type=int, default=8, help="data bits (default 8)")
    cmd.add_argument("--stopbits", type=float, default=1, help="stop bits (default 1)")
    cmd.add_argument(
        "--raw",
        action="store_true",
        help="also print the bytes received, in hex, and a line for each repeat",
    )
    cmd.add_argument(
        "--record",
        metavar="FILE",
        help="write what the shoe sends (and the host writes), timed, to a new capture FILE",
    )
    cmd.add_argument("--count", type=int, metavar="N", help="exit after N cards")
    cmd.add_argument(
        "--retry", action="store_true", help="keep trying when the first connection fails"
    )
    cmd.add_argument("--timestamps", action="store_true", help="add seconds since start")


def listen_transport(args: argparse.Namespace) -> TransportSettings:
    """The transport `listen` opens; raises `DriverError` saying which option is wrong."""
    from drivers.transports import CaptureSettings, SerialSettings, SettingsError, TcpSettings

    if [args.port, args.tcp, args.capture].count(None) != 2:
        raise SettingsError(
            "give one of a serial port, --tcp HOST:PORT or --capture FILE (see `shoe2mqtt ports`)",
            field="port",
            value=args.port,
        )
    if args.speed is not None and args.capture is None:
        raise SettingsError("only with --capture FILE", field="speed", value=args.speed)
    if args.capture is not None:
        speed = 1.0 if args.speed is None else args.speed
        path = os.path.abspath(args.capture)  # noqa: PTH100 - keeps a symlink's name
        return CaptureSettings(path=path, speed=speed, ends=True)  # read to its end, then stop
    if args.tcp is not None:
        host, _, port = str(args.tcp).rpartition(":")
        if not host or not port.isdigit():
            raise SettingsError(
                "write it as HOST:PORT, e.g. 10.0.0.5:4001", field="tcp", value=args.tcp
            )
        return TcpSettings(host=host.strip("[]"), port=int(port))
    return SerialSettings(
        port=args.port,
        baudrate=args.baud,
        bytesize=args.bytesize,
        parity=str(args.parity).upper(),  # type: ignore[arg-type]  # SerialSettings checks it
        stopbits=args.stopbits,
    )


def _run(args: argparse.Namespace, out: TextIO, err: TextIO) -> ExitCode:
    if args.count is not None and args.count < 1:
        return usage_error(err, "listen", f"--count={args.count}: must be 1 or more")
    # Every link change and gap is printed as JSON already; the driver's own warnings would
    # only repeat them on stderr.
    logging.basicConfig(level=logging.ERROR, stream=err, format="%(name)s: %(message)s")
    options = ListenOptions(
        raw=args.raw,
        count=args.count,
        retry=args.retry,
        timestamps=args.timestamps,
        record=args.record,
    )
    return asyncio.run(until_signalled(listen(args, out, err, options)))


SILENCE_HINT: Final = 10.0  # seconds of an open port without a word before listen says so


@dataclasses.dataclass(frozen=True, slots=True)
class ListenOptions:
    raw: bool = False  # also print the bytes received, in hex
    count: int | None = None  # stop after this many cards (readable or not, burned or not)
    retry: bool = False  # keep retrying when the first connection fails, instead of exiting
    timestamps: bool = False  # "t": seconds since start, on every line
    record: str | None = None  # a new capture file to write what the shoe says to


async def listen(
    args: argparse.Namespace, out: TextIO, err: TextIO, options: ListenOptions | None = None
) -> ExitCode:
    """Print what the shoe says until `count` events, a failed first connection, a capture's
    end, or cancel."""
    from drivers.registry import load_decoder_class

    if args.old_protocol is not None:
        err.write("shoe2mqtt listen: --driver is now called --protocol; the old name still works\n")
        args.protocol = args.old_protocol
    try:
        decoder = load_decoder_class(args.protocol)()
        settings = listen_transport(args)
    except DriverError as exc:
        return usage_error(err, "listen", exc)
    options = options or ListenOptions()
    try:
        record = new_capture_file(options.record)
    except FileExistsError:
        return usage_error(
            err, "listen", f"--record {options.record}: exists; a capture is never overwritten"
        )
    except OSError as exc:
        return usage_error(err, "listen", f"--record {options.record}: {exc.strerror or exc}")
    recorder = None
    try:
        with record or contextlib.nullcontext():
            recorder = None if record is None else capture_writer(record, args.protocol, settings)
            return await _listen(args.protocol, decoder, settings, out, err, options, recorder)
    finally:
        if record is not None and (recorder is None or not recorder.opened):
            drop_unopened_capture(record.name, err)


async def _listen(
    protocol: str,
    decoder: Decoder,
    settings: TransportSettings,
    out: TextIO,
    err: TextIO,
    options: ListenOptions,
    recorder: CaptureWriter | None,
) -> ExitCode:
    from drivers.driver import ShoeDriver
    from drivers.transports import CaptureSettings, transport_factory

    make_transport = transport_factory(settings)

    def tapped() -> Transport:  # called at each connection, once `printer` exists
        return TappedTransport(make_transport(), printer.print_bytes, recorder)

    tap = options.raw or recorder is not None
    session = HostSession.of(decoder)  # listen's own: its memory is what it printed
    driver = ShoeDriver(protocol, decoder, tapped if tap else make_transport, session=session)
    capture = protocol if isinstance(settings, CaptureSettings) else None
    printer = _EventPrinter(out, err, options, session, driver.deliver, recorder, capture)
    async with contextlib.aclosing(driver.events()) as events, asyncio.TaskGroup() as tasks:
        hint = tasks.create_task(printer.hint_if_silent(protocol), name="listen-silence")
        try:
            async for event in events:
                done = await printer.take(event)
                if done is not None:
                    return done
        finally:
            hint.cancel()
    raise AssertionError("a shoe driver's events never end")  # pragma: no cover - unreachable


class _EventPrinter:
    """Prints what the driver hands up, as a receiver: judged, printed, then acknowledged."""

    def __init__(
        self,
        out: TextIO,
        err: TextIO,
        options: ListenOptions,
        session: HostSession,
        deliver: Callable[[bytes], Awaitable[None]],
        recorder: CaptureWriter | None = None,
        capture: str | None = None,
    ) -> None:
        """`session`: listen's host session, whose memory judges; `deliver` writes what it
        says to the shoe (the driver's); `capture`: the protocol a capture is read as (its
        link is lost at its end), None for a shoe."""
        self.options = options
        self._session = session
        self._deliver = deliver
        self._recorder = recorder
        self._out = out
        self._err = err
        self._receiver = session.memory
        self._started = time.monotonic()
        self._cards_seen = 0
        self._ever_connected = False
        self._connected = asyncio.Event()
        self._heard = False  # anything but the link's own news: a frame, a gap, noise
        self._capture = capture

    async def print_bytes(self, data: bytes) -> None:
        if self.options.raw:
            self._print({"type": "raw", "hex": data.hex(" ")})

    async def hint_if_silent(self, protocol: str) -> None:
        """Once, when a port has been open SILENCE_HINT seconds and the shoe said nothing: a
        shoe speaking another protocol may wait for a poll this host never sends."""
        await self._connected.wait()
        await asyncio.sleep(SILENCE_HINT)
        if not self._heard:
            self._err.write(
                f"shoe2mqtt listen: nothing heard in {SILENCE_HINT:g} s since the port opened; "
                f"is the shoe dealing, and does it speak the {protocol} protocol "
                "(--protocol)? --raw shows every byte that arrives\n"
            )

    async def take(self, event: DriverEvent) -> ExitCode | None:
        """Print `event` as the receiver judges it; the exit code once `listen` is done."""
        from drivers.driver import Connected

        ended = self._link_ended(event)
        if ended is not None:
            return ended
        if isinstance(event, Connected):
            self._ever_connected = True
        self._note_link(event)
        intake = self._receiver.judge(event)
        for diagnostic in (intake.gap, intake.conflict):
            if diagnostic is not None:
                self._print(event_record(diagnostic))
                self._receiver.record(diagnostic)
        if intake.take:
            self._print(event_record(event))  # the terminal is this host's journal
            self._receiver.record(event)
        elif self.options.raw:  # the bytes above held it: say what became of it
            self._print({"type": "repeat", "seq": frame_number(event), "of": type(event).__name__})
        if intake.acknowledge is not None:
            await self._deliver(self._session.acknowledgement(intake.acknowledge))
        if intake.take and isinstance(event, CardDrawn | CardUnreadable):
            self._cards_seen += 1
            if self.options.count is not None and self._cards_seen >= self.options.count:
                return ExitCode.OK
        return None

    def _link_ended(self, event: DriverEvent) -> ExitCode | None:
        """Where the link's news ends `listen` (printed without the driver's `retry_in`:
        it would retry, but listen stops there): a capture read to its end, or a port or
        server that never opened (wrong, not merely gone: said rather than retried)."""
        from drivers.driver import Disconnected, LinkFault

        if isinstance(event, Disconnected) and self._capture is not None:
            # Every chunk read and its events printed: the capture is over, not a shoe lost.
            self._note_link(event)
            self._print({k: v for k, v in event_record(event).items() if k != "retry_in"})
            if self._heard:
                return ExitCode.OK
            self._err.write(
                f"shoe2mqtt listen: nothing in the capture read as the {self._capture} "
                "protocol; was it recorded from another (--protocol)? --raw shows its bytes\n"
            )
            return ExitCode.FAILURE
        if isinstance(event, LinkFault) and not (self._ever_connected or self.options.retry):
            self._print({k: v for k, v in event_record(event).items() if k != "retry_in"})
            self._err.write(f"shoe2mqtt listen: {event.reason}\n")
            return ExitCode.FAILURE
        return None

    def _note_link(self, event: DriverEvent) -> None:
        """Whether the shoe has said anything since the port opened (its silence is hinted
        at), and a capture being recorded notes where the link opened and was lost."""
        from drivers.driver import Connected, Connecting, Disconnected, LinkFault, Reconnected

        if not isinstance(event, Connecting | Connected | Disconnected | LinkFault | Reconnected):
            self._heard = True
        elif isinstance(event, Connected | Reconnected):
            self._connected.set()
        if self._recorder is None:
            return
        if isinstance(event, Connected | Reconnected):
            self._recorder.link("opened")
        elif isinstance(event, Disconnected):
            self._recorder.link("lost", event.reason)

    def _print(self, record: dict[str, object]) -> None:
        if self.options.timestamps:
            record = {"t": round(time.monotonic() - self._started, 3), **record}
        print_line(self._out, json_line(record))


COMMAND: Final = Command(
    description="Open a shoe with a driver and print every decoded event and every change "
    "of the link as one JSON object per line; --raw also prints the bytes received. A "
    "frame is acknowledged (reference protocol) once its line is printed; a repeat is not "
    "printed again, a loss is printed as a SequenceGap line, a frame with the number of the "
    "one before it but other content after a SequenceConflict line. --record FILE writes "
    "what the shoe says to a capture; --capture FILE plays one as the shoe, to its end.",
    add_arguments=_add_arguments,
    run=_run,
)
