"""Count one card's path through the daemon: the calls, the modules and the JSON texts made or
read, from the shoe's frame to the settlement in the outbox.

A daemon of one blackjack table (a real journal in a temporary directory, no broker: the
link's publishing is the same one step for every message) plays seeded rounds with one
seat, through the way the daemon itself takes them: requests and shuffles as inbox items,
each card as the reference shoe's frame bytes, decoded by the codec, put in the table's
inbox as the driver's events are pulled, taken by the table's task (judged, journaled, acknowledged,
applied, handed to the outbox). The card counted is the first whose commit puts a
settlement in the outbox. Counted, on the event loop's thread and the journal's:

- calls: every Python function call into the project (daemon/, drivers/, rules/), a
  coroutine's every resumption included;
- functions and modules: how many distinct ones those calls reach;
- JSON: every `json.dumps` and `json.loads` on the path (each a change of shape to or from
  text), and by whom.

Run from a checkout: `uv run python -m bench.card_path`. It runs on any tree whose
`TableCommits.take` takes a `ShoeItem` and a `RequestItem` (the items the driver and the
broker put in a table's inbox), so the same script counts the path before and after a
change (docs/architecture.md, "The card's path").
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import json
import random
import sys
import tempfile
import threading
from pathlib import Path
from typing import TYPE_CHECKING

from daemon.configuration.service_config import LoggingConfig, ServiceConfig, ShoeConfig, TableSetup
from daemon.journal import prepare_state_directory
from daemon.mqtt.settings import MqttSettings
from daemon.parts.driver_inbox import DriverInbox
from daemon.parts.items import RequestItem, ShoeItem
from daemon.service import Daemon
from daemon.simulator.tables import DEMO_TABLES
from daemon.system import logs
from daemon.wire.console import console_request
from drivers.codecs.reference import DeviceFrameDecoder, encode_device_frame
from drivers.events import CardDrawn, NewShoe
from drivers.transports import SerialSettings
from rules.config import TableConfig
from rules.engine import TableEngine
from rules.events import DealCard, Shuffle
from rules.games import GAMES, Game
from rules.player import Dealer

if TYPE_CHECKING:
    from types import FrameType

ROOT = Path(__file__).resolve().parent.parent
PROJECT = tuple(str(ROOT / package) + "/" for package in ("daemon", "drivers", "rules"))
JSON_MODULE = str(Path(json.__file__).parent) + "/"


class _Acknowledging:
    """The shoe's side of an acknowledgement: nothing to send without a port."""

    line = None

    async def acknowledge(self, seq: int) -> None:
        pass


class PathCount:
    """What the profiler saw while `counting`."""

    def __init__(self) -> None:
        self.counting = False
        self.calls = 0
        self.functions: collections.Counter[str] = collections.Counter()
        self.json: collections.Counter[str] = collections.Counter()

    def profile(self, frame: FrameType, event: str, arg: object) -> None:  # noqa: ARG002 - the profiler's signature
        if event != "call" or not self.counting:
            return
        path = frame.f_code.co_filename
        if path.startswith(PROJECT):
            self.calls += 1
            where = Path(path).relative_to(ROOT).as_posix()
            self.functions[f"{where}:{frame.f_code.co_name}"] += 1
        elif path.startswith(JSON_MODULE) and frame.f_code.co_name in {"dumps", "loads"}:
            caller = frame.f_back
            by = "?" if caller is None else Path(caller.f_code.co_filename).name
            self.json[f"json.{frame.f_code.co_name} by {by}"] += 1

    def report(self) -> str:
        modules = {name.split(":")[0] for name in self.functions}
        json_lines = "\n".join(f"  {count:3d}  {name}" for name, count in sorted(self.json.items()))
        return (
            f"calls into the project: {self.calls}\n"
            f"distinct functions: {len(self.functions)}\n"
            f"distinct modules: {len(modules)}\n"
            f"JSON texts made or read: {sum(self.json.values())}\n{json_lines}\n"
            "modules:\n" + "\n".join(f"  {m}" for m in sorted(modules))
        )


def _config(directory: Path) -> ServiceConfig:
    state = directory / "state"
    prepare_state_directory(state)
    table = TableConfig.from_mapping(dict(DEMO_TABLES[Game.BLACKJACK]))
    return ServiceConfig(
        path=directory / "shoe2mqtt.toml",
        mqtt=MqttSettings(host="127.0.0.1", node="bench"),
        tables=(TableSetup(table, ShoeConfig("reference", SerialSettings(port="/dev/null"))),),
        state_directory=state,
        logging=LoggingConfig(format="console", level="warning"),
        journal_sync="normal",
    )


async def count_one_card(directory: Path) -> PathCount:
    config = _config(directory)
    logs.configure(fmt="console", level="warning", raw_frames=False)
    counter = PathCount()
    threading.setprofile(counter.profile)  # the journal's thread, started below, too
    daemon = Daemon(config, driver_factory=lambda _: _Acknowledging())  # type: ignore[arg-type,return-value]
    await daemon.journal.open()
    await daemon.recovery.recover()
    [table] = daemon.tables.values()
    while len(table.queue):  # the start (and the first settings), as the table's task takes them
        await daemon.commits.take(table, table.queue.get_nowait())
    inbox = DriverInbox(table, daemon.storage)
    decoder = DeviceFrameDecoder()
    engine_config = table.setup.table
    plan = {
        1: {
            rule.kind: engine_config.limits[rule.kind].minimum
            for rule in GAMES[engine_config.game].wagers
        }
    }
    dealer = Dealer(TableEngine(engine_config), random.Random(1))  # noqa: S311 - a bench's shoe
    seq = 0
    settlement = daemon.topics.settlement(engine_config.table_id)
    _delivered(daemon)
    sys.setprofile(counter.profile)
    try:
        for _ in range(20):
            for event in dealer.play(plan).events:
                if isinstance(event, Shuffle):
                    await daemon.commits.take(table, ShoeItem(NewShoe()))
                elif isinstance(event, DealCard):
                    seq += 1
                    code = str(event.card)
                    drawn = CardDrawn(code[:-1], code[-1], seq % 65536, burned=event.burned)  # type: ignore[arg-type]
                    frame = encode_device_frame(drawn, seq=drawn.seq)
                    counter.counting = True
                    for decoded in decoder.feed(frame):  # the codec: bytes to an event
                        await inbox.put(decoded)  # the driver's event: into the inbox
                    await daemon.commits.take(table, table.queue.get_nowait())
                    counter.counting = False
                    if settlement in _delivered(daemon):
                        return counter
                    counter.__init__()  # type: ignore[misc]
                else:
                    command, body = console_request(event)
                    item = RequestItem(command, json.dumps(body).encode())
                    await daemon.commits.take(table, item)
                _delivered(daemon)
    finally:
        sys.setprofile(None)
        threading.setprofile(None)
        await daemon.journal.close()
    message = "no card settled a round"
    raise RuntimeError(message)


def _delivered(daemon: Daemon) -> list[str]:
    """The outbox emptied, as a broker would: the topics it held."""
    topics = []
    while (queued := daemon.outbox.peek()) is not None:
        topics.append(queued.message.topic)
        daemon.outbox.ack(queued.message_id)
    return topics


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--functions", action="store_true", help="list each function reached and its calls"
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as directory:
        counter = asyncio.run(count_one_card(Path(directory)))
    print(counter.report())
    if args.functions:
        for name, count in sorted(counter.functions.items()):
            print(f"{count:3d}  {name}")


if __name__ == "__main__":
    main()
