"""What can happen to a table, as mixes of delays and faults, and a session of rounds under
one (`run`): the seed chooses the game, the shoe's protocol and every moment and fault."""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from daemon.simulator.tables import DEMO_TABLES
from daemon.testing.interleaving.session import Session
from daemon.testing.interleaving.shoe_line import ENQ_FAULTS
from daemon.wire.round_message import DEFAULT_CONTRACT
from rules.config import TableConfig
from rules.games import Game

if TYPE_CHECKING:
    from daemon.testing.interleaving.session import Outcome
    from daemon.testing.interleaving.shoe_line import LineFault

REALISTIC: Final = 0.05  # seconds: a table PC's serial port, a pit's broker, a console's Wi-Fi
WIDE: Final = 0.3


@dataclass(frozen=True, slots=True)
class Mix:
    """Delays and faults: each message is delayed up to `jitter` s; the rest are chances."""

    name: str
    jitter: float = REALISTIC
    repeats: float = 0.3  # an ENQ shoe sends a frame again right after itself (its own habit)
    protocols: tuple[str, ...] = ("reference", "enq")
    card_faults: tuple[LineFault, ...] = ()
    card_fault_rate: float = 0.0  # per card: one of `card_faults`
    daemon_restarts: float = 0.0  # per round: the daemon is killed and started again
    broker_restarts: float = 0.0  # per round
    duplicates: float = 0.0  # per request: QoS 1 delivers it twice
    twin_daemon: float = 0.0  # per round: another daemon claims the table
    stray_cards: float = 0.0  # between rounds, ENQ: a card read in lock mode, no round's


def _card_fault(fault: LineFault, protocol: str) -> Mix:
    return Mix(f"{protocol}_{fault}", protocols=(protocol,), card_faults=(fault,),
               card_fault_rate=0.02)  # fmt: skip


MIXES: Final[dict[str, Mix]] = {
    mix.name: mix
    for mix in (
        Mix("realistic"),
        Mix("wide", jitter=WIDE),
        Mix("duplicates", duplicates=0.1),
        Mix("daemon_restart", daemon_restarts=0.25),
        Mix("broker_restart", broker_restarts=0.25),
        Mix("twin_daemon", twin_daemon=0.2),
        Mix("enq_stray", protocols=("enq",), stray_cards=0.3),
        _card_fault("unreadable", "reference"),
        *(_card_fault(fault, "enq") for fault in ENQ_FAULTS),
    )
}


def table(game: Game, rng: random.Random) -> TableConfig:
    """The demo's table of `game`, with or without a hole-card reader."""
    mapping = dict(DEMO_TABLES[game])
    mapping["hole_card_reader"] = rng.random() < 0.5
    return TableConfig.from_mapping(mapping)


def run(
    seed: int,
    mix: Mix,
    *,
    rounds: int,
    game: Game | None = None,
    protocol: str | None = None,
    trace: bool = False,
    contract: int = DEFAULT_CONTRACT,
) -> Outcome:
    """One table for `rounds` rounds under `mix`; the seed chooses what is not given (and
    the same table whatever is given). `trace`: what happened, line by line, in
    `Outcome.trace`. `contract`: the console contract the daemon publishes under."""
    rng = random.Random(seed)  # noqa: S311 - a simulation, not a secret
    chosen_game, chosen_protocol = rng.choice(list(Game)), rng.choice(mix.protocols)
    config = table(game or chosen_game, rng)  # the same table whatever is given
    protocol = protocol or chosen_protocol
    session = Session(
        seed, mix, config, protocol=protocol, rounds=rounds, trace=trace, contract=contract
    )
    return session.run()
