"""A long session at one blackjack table with random daemon kills, broker restarts and unplugs.

    uv run python bench/chaos.py [--rounds N] [--seed S] [--minutes M]

Everything is real and on this machine: mosquitto (started here on a free loopback port,
with its own configuration and persistence in a temporary directory), the daemon as a child
process (`python -m daemon.cli run`), an emulated reference shoe on a pty behind a link, and
a dealer with basic-strategy players (`rules.player.RoundDriver`) that sends its wagers and
actions over MQTT and deals from the shoe. A collector with a persistent session records
everything the daemon publishes.

At random moments of random steps (seeded): SIGKILL the daemon (sometimes dealing a card
while it is dead) and start it again; stop the broker for a while (dealing cards meanwhile)
and start it again; pull the shoe's cable (sometimes dealing a card while it is out) and plug
it back. The session stops by itself after `--minutes` (finishing the round in play) or
`--rounds`. Then the daemon is stopped, its journal replayed through a fresh TableService,
and every delivered settlement held against the replay; one line sums it up:

    rounds=… settlements=… lost=… duplicated=… mismatched=… kills=… broker_restarts=…
    unplugs=… elapsed=…   (on one line)

The exit status is 1 if a settlement was lost or mismatched (or the table's sequence numbers
or its last snapshot disagree with the replay, or the daemon crashed), else 0. The details
of any problem go to stderr; the daemon's and the broker's logs stay in `--keep DIR` if given.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import getpass
import random
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Final

# The recovery harness lives with the recovery tests; this script runs from the repository.
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from drivers.emulator import EmulatedShoe, EmulatorSettings
from rules.cards import Card
from rules.events import DealCard
from tests.recovery.harness import (
    STEP_TIMEOUT,
    Collector,
    DaemonCrashed,
    DaemonProcess,
    Dealer,
    Stalled,
    replay_journal,
    start_daemon,
    table_config,
    verify,
    write_config,
)

if TYPE_CHECKING:
    from tests.recovery.harness import Disturbance, Verdict

MOSQUITTO: Final = "/usr/sbin/mosquitto"
# Per step: the chance of each disturbance (a step is a wager, an action or a card).
KILL_CHANCE: Final = 0.012
BROKER_CHANCE: Final = 0.005
UNPLUG_CHANCE: Final = 0.008


class Broker:
    """mosquitto on a free 127.0.0.1 port that keeps sessions across `stop()` and `start()`."""

    host: Final = "127.0.0.1"

    def __init__(self, directory: Path) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        with socket.socket() as probe:
            probe.bind((self.host, 0))
            self.port: int = probe.getsockname()[1]
        self.directory = directory
        self.config = directory / "mosquitto.conf"
        self.config.write_text(
            "\n".join(
                [
                    f"listener {self.port} {self.host}",
                    "allow_anonymous true",
                    "persistence true",
                    f"persistence_location {directory}/",
                    "max_queued_messages 0",  # no limit for an offline persistent session
                    f"log_dest file {directory}/mosquitto.log",
                    f"user {getpass.getuser()}",  # as root it would switch to `mosquitto`
                ]
            )
            + "\n",
            encoding="utf-8",
        )
        self._process: subprocess.Popen[bytes] | None = None
        self.restarts = 0

    def start(self) -> None:
        assert self._process is None
        self._process = subprocess.Popen(  # noqa: S603 - a fixed binary and our own config
            [MOSQUITTO, "-c", str(self.config)],
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        deadline = time.monotonic() + 5
        while True:  # mosquitto gives no readiness signal but its listening socket
            try:
                with socket.create_connection((self.host, self.port), timeout=0.2):
                    return
            except OSError:
                if self._process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError("mosquitto did not start") from None
                time.sleep(0.01)

    def stop(self) -> None:
        """SIGTERM (a persistent broker saves its sessions) and wait."""
        process, self._process = self._process, None
        if process is None:
            return
        process.terminate()
        try:
            process.wait(5)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


class Chaos:
    def __init__(self, rng: random.Random, shoe: EmulatedShoe, broker: Broker) -> None:
        self.rng = rng
        self.shoe = shoe
        self.broker = broker
        self.unplugs = 0
        self.cards_lost = 0
        self.stalls = 0
        self.daemon: DaemonProcess
        self.collector: Collector

    def choose(self) -> Disturbance | None:
        self.daemon.check()
        draw = self.rng.random()
        if draw < KILL_CHANCE:
            return self.kill
        if draw < KILL_CHANCE + BROKER_CHANCE:
            return self.restart_broker
        if draw < KILL_CHANCE + BROKER_CHANCE + UNPLUG_CHANCE:
            return self.unplug
        return None

    async def moment(self) -> None:
        """A random moment of the step under way: before, during or after the daemon's work."""
        rng = self.rng
        await asyncio.sleep(rng.choice([0.0, rng.uniform(0, 0.01), rng.uniform(0, 0.05), 0.1]))

    async def kill(self) -> None:
        await self.moment()
        await self.daemon.kill()
        if self.rng.random() < 0.3:
            await self.shoe.next_card()  # no one listens: the host flushes it at its next open
            self.cards_lost += 1
        await start_daemon(self.daemon, self.shoe, self.collector)

    async def restart_broker(self) -> None:
        await self.moment()
        self.broker.stop()
        for _ in range(self.rng.randint(0, 2)):
            await self.shoe.next_card()  # the daemon reads them; their messages wait on disk
        await asyncio.sleep(self.rng.uniform(0.1, 1.0))  # the outage goes on
        mark = self.collector.mark()
        self.broker.start()
        self.broker.restarts += 1
        await self.collector.wait_online(mark)

    async def unplug(self) -> None:
        await self.moment()
        await self.shoe.unplug()
        self.unplugs += 1
        if self.rng.random() < 0.5:
            await self.shoe.next_card()  # dealt with the cable out: a sequence gap later
            self.cards_lost += 1
        await asyncio.sleep(self.rng.uniform(0.05, 0.5))  # the cable stays out a while
        await self.shoe.replug()
        async with asyncio.timeout(STEP_TIMEOUT + 5):  # the driver's backoff, then its open
            await self.shoe.wait_for_host()


async def session(
    args: argparse.Namespace, directory: Path
) -> tuple[Verdict, Chaos, DaemonProcess, int, float]:
    rng = random.Random(args.seed)  # noqa: S311 - a seeded table, not a secret
    config = table_config()
    state = directory / "state"
    broker = Broker(directory / "mosquitto")
    broker.start()
    started = time.monotonic()
    deadline = started + args.minutes * 60
    try:
        shoe_settings = EmulatorSettings(
            protocol="reference", seed=args.seed, link=directory / "shoe0", cards_after_cut=60
        )
        async with (
            EmulatedShoe(shoe_settings) as shoe,
            Collector(broker.host, broker.port, identifier="chaos-collector") as collector,
        ):
            config_file = write_config(
                directory / "shoe2mqtt.toml", host=broker.host, port=broker.port,
                shoe_port=shoe.path, state_directory=state,
            )  # fmt: skip
            daemon = DaemonProcess(config_file, directory / "daemon.log")
            chaos = Chaos(rng, shoe, broker)
            chaos.daemon, chaos.collector = daemon, collector
            dealer = Dealer(config, shoe, collector, rng)
            try:
                await start_daemon(daemon, shoe, collector)
                await dealer.resync()
                await dealer.step(DealCard(Card.parse("AS"), burned=True))  # shuffle, burn
                while time.monotonic() < deadline and (
                    args.rounds is None or dealer.rounds < args.rounds
                ):
                    try:
                        await dealer.play_round(chaos.choose)
                    except Stalled as exc:
                        chaos.stalls += 1
                        print(f"stalled: {exc}; asking the daemon", file=sys.stderr)
                        daemon.check()
                        await dealer.resync()
                await dealer.resync()  # answered after everything the daemon sent before
                code = await daemon.stop()
                if code != 0:
                    raise DaemonCrashed(f"the daemon stopped with {code}:\n{daemon.tail()}")
            finally:
                await daemon.stop()
    finally:
        broker.stop()
    elapsed = time.monotonic() - started
    replay = replay_journal(state, config)
    return verify(collector.messages, replay), chaos, daemon, replay.rounds, elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, help="stop after N rounds (default: by time)")
    parser.add_argument("--seed", type=int, default=1, help="the shoe's and the chaos's seed")
    parser.add_argument("--minutes", type=float, default=3.0, help="how long (default 3)")
    parser.add_argument("--keep", type=Path, help="run in this directory and keep its logs")
    args = parser.parse_args()
    if shutil.which(MOSQUITTO) is None:
        print(f"{MOSQUITTO} is missing: apt-get install mosquitto", file=sys.stderr)
        return 2
    with contextlib.ExitStack() as stack:
        if args.keep is not None:
            args.keep.mkdir(parents=True, exist_ok=True)
            directory = args.keep
        else:
            directory = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="chaos-")))
        try:
            verdict, chaos, daemon, rounds, elapsed = asyncio.run(session(args, directory))
        except DaemonCrashed as exc:
            print(f"the daemon crashed: {exc}", file=sys.stderr)
            return 1
    print(
        f"rounds={rounds} settlements={verdict.expected} lost={len(verdict.lost)} "
        f"duplicated={verdict.duplicated} mismatched={len(verdict.mismatched)} "
        f"kills={daemon.kills} broker_restarts={chaos.broker.restarts} "
        f"unplugs={chaos.unplugs} elapsed={elapsed:.0f}s"
    )
    if not verdict.ok or chaos.stalls:
        print(f"problems: {verdict.explain()} stalls={chaos.stalls}", file=sys.stderr)
    return 0 if verdict.ok else 1


if __name__ == "__main__":
    sys.exit(main())
