"""A long session at one blackjack table with random daemon kills, broker restarts and unplugs.

    uv run python bench/chaos.py [--rounds N] [--seed S] [--minutes M]

Everything is real and on this machine: mosquitto (started here on a free loopback port,
with its own configuration and persistence in a temporary directory), the daemon as a child
process (`python -m daemon.cli run`), an emulated reference shoe on a pty behind a link, and
a dealer with basic-strategy players (`rules.player.SimulatedRound`) that sends its wagers and
actions over MQTT and deals from the shoe. A collector with a persistent session records
everything the daemon publishes.

At random moments of random steps (seeded): SIGKILL the daemon (sometimes dealing a card
while it is dead) and start it again; stop the broker for a while (dealing cards meanwhile)
and start it again; pull the shoe's cable (sometimes dealing a card while it is out) and plug
it back. The reference shoe keeps what it deals while the daemon cannot hear it and hands it
over when the daemon is back (docs/protocol.md §1.4), so no card is lost. The session stops
by itself after `--minutes` (finishing the round in play) or `--rounds`. Then the daemon is
stopped, its journal replayed from its first event, and every delivered settlement held
against the replay, envelope and all; one line sums it up:

    rounds=… settlements=… lost=… duplicated=… redelivered=… mismatched=… kills=…
    broker_restarts=… unplugs=… elapsed=…   (on one line)

`duplicated` counts settlements the pit received twice under different ids (a defect);
`redelivered` the same message received again with its id (QoS 1 after a reconnect, or a
watermark a kill kept from the disk: a subscriber drops it). Then `shoe2mqtt journal verify`
runs on the journal (the hash chain of every table) and prints its line.

The exit status is 1 if a settlement was lost, duplicated or mismatched (or the table's
sequence numbers or its last snapshot disagree with the replay, the chain is broken, or the
daemon crashed), else 0. The details of any problem go to stderr; the daemon's and the
broker's logs stay in `--keep DIR` if given.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import random
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING, Final

from daemon.testing import (
    MOSQUITTO,
    STEP_TIMEOUT,
    DaemonCrashed,
    Mosquitto,
    Stalled,
    random_moment,
    recovery_run,
    verify,
)
from drivers.emulator import EmulatedShoe, EmulatorSettings

if TYPE_CHECKING:
    from daemon.testing import Disturbance, RecoveryRun, Verdict

# Per step: the chance of each disturbance (a step is a wager, an action or a card).
KILL_CHANCE: Final = 0.012
BROKER_CHANCE: Final = 0.005
UNPLUG_CHANCE: Final = 0.008


class Chaos:
    def __init__(self, rng: random.Random, run: RecoveryRun, shoe: EmulatedShoe) -> None:
        self.rng = rng
        self.run = run
        self.shoe = shoe
        self.broker_restarts = 0
        self.unplugs = 0
        self.unheard = 0  # cards dealt while the daemon could not hear: the shoe kept them
        self.stalls = 0

    def choose(self) -> Disturbance | None:
        self.run.daemon.check()
        draw = self.rng.random()
        if draw < KILL_CHANCE:
            return self.kill
        if draw < KILL_CHANCE + BROKER_CHANCE:
            return self.restart_broker
        if draw < KILL_CHANCE + BROKER_CHANCE + UNPLUG_CHANCE:
            return self.unplug
        return None

    async def kill(self) -> None:
        self.unheard += await self.run.kill_and_restart(self.rng)

    async def restart_broker(self) -> None:
        await asyncio.sleep(random_moment(self.rng))
        self.run.broker.stop()
        for _ in range(self.rng.randint(0, 2)):
            await self.shoe.next_card()  # the daemon reads them; their messages wait on disk
        await asyncio.sleep(self.rng.uniform(0.1, 1.0))  # the outage goes on
        await self.run.start_broker()
        self.broker_restarts += 1

    async def unplug(self) -> None:
        await asyncio.sleep(random_moment(self.rng))
        await self.shoe.unplug()
        self.unplugs += 1
        if self.rng.random() < 0.5:
            await self.shoe.next_card()  # dealt with the cable out: kept, handed over later
            self.unheard += 1
        await asyncio.sleep(self.rng.uniform(0.05, 0.5))  # the cable stays out a while
        await self.shoe.replug()
        async with asyncio.timeout(STEP_TIMEOUT + 5):  # the driver's backoff, then its open
            await self.shoe.wait_for_host()


def verify_chain(state: Path) -> int:
    """`shoe2mqtt journal --state-directory STATE verify`, as a process, as a person runs it."""
    done = subprocess.run(  # noqa: S603 - this Python, our own command and arguments
        [sys.executable, "-m", "daemon.cli", "journal", "--state-directory", str(state), "verify"],
        capture_output=True, text=True, check=False, timeout=600,
    )  # fmt: skip
    print(done.stdout, end="")
    if done.returncode != 0:
        print(done.stderr, end="", file=sys.stderr)
    return done.returncode


async def session(args: argparse.Namespace, directory: Path) -> tuple[Verdict, Chaos, int, float]:
    rng = random.Random(args.seed)  # noqa: S311 - a seeded table, not a secret
    # No limit for an offline persistent session: the collector's queue outlasts any outage.
    broker = Mosquitto(
        directory / "mosquitto", persistence=True, log_all=False,
        options=["max_queued_messages 0"],
    )  # fmt: skip
    started = time.monotonic()
    deadline = started + args.minutes * 60
    shoe_settings = EmulatorSettings(
        protocol="reference", seed=args.seed, link=directory / "shoe0", cards_after_cut=60
    )
    with broker:
        async with (
            EmulatedShoe(shoe_settings) as shoe,
            recovery_run(directory, broker, rng, shoe=shoe, collector="chaos-collector") as run,
        ):
            chaos, dealer = Chaos(rng, run, shoe), run.dealer
            await run.begin()
            while time.monotonic() < deadline and (
                args.rounds is None or dealer.rounds < args.rounds
            ):
                try:
                    await dealer.play_round(chaos.choose)
                except Stalled as exc:
                    chaos.stalls += 1
                    print(f"stalled: {exc}; asking the daemon", file=sys.stderr)
                    run.daemon.check()
                    await dealer.resync()
            code = await run.finish()
            if code != 0:
                raise DaemonCrashed(code, run.daemon.tail())
    elapsed = time.monotonic() - started
    replay = run.replay()
    return verify(run.collector.messages, replay), chaos, replay.rounds, elapsed


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, help="stop after N rounds (default: by time)")
    parser.add_argument("--seed", type=int, default=1, help="the shoe's and the chaos's seed")
    parser.add_argument("--minutes", type=float, default=3.0, help="how long (default 3)")
    parser.add_argument("--keep", type=Path, help="run in this directory and keep its logs")
    args = parser.parse_args()
    if not MOSQUITTO.exists():
        print(f"{MOSQUITTO} is missing: apt-get install mosquitto", file=sys.stderr)
        return 2
    with contextlib.ExitStack() as stack:
        if args.keep is not None:
            args.keep.mkdir(parents=True, exist_ok=True)
            directory = args.keep
        else:
            directory = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="chaos-")))
        try:
            verdict, chaos, rounds, elapsed = asyncio.run(session(args, directory))
        except DaemonCrashed as exc:
            print(f"the daemon crashed: {exc}", file=sys.stderr)
            return 1
        print(
            f"rounds={rounds} settlements={verdict.expected} lost={len(verdict.lost)} "
            f"duplicated={verdict.duplicated} redelivered={verdict.redelivered} "
            f"mismatched={len(verdict.mismatched)} kills={chaos.run.daemon.kills} "
            f"broker_restarts={chaos.broker_restarts} unplugs={chaos.unplugs} "
            f"elapsed={elapsed:.0f}s",
            flush=True,
        )
        chain = verify_chain(chaos.run.state)
    if not verdict.ok or chaos.stalls:
        print(f"problems: {verdict.explain()} stalls={chaos.stalls}", file=sys.stderr)
    return 0 if verdict.ok and chain == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
