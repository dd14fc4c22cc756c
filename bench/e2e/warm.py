"""A floor that has been dealing for a while: its journal written before the daemon starts.

A daemon keeps bounded windows of each table's latest rounds: the surveillance's 600
(rules.advantage.MAX_ROUNDS) and the shift's 500 (daemon.numbers.live.HISTORY). From a cold
start they fill for hours at a floor's pace, so a cold hour's resident memory grows by what
they take in, leak or not. A warm start is the steady state a floor lives in: each table's
journal already holds `rounds` rounds, dealt by the real engine and written by the journal's
own store with a checkpoint at each round's end and the shift's numbers saved every few
rounds, as the daemon saves them (daemon.testing.floor.write_journal), its requests numbered
by their consoles as the run's are (so that each table's checkpoint holds the 64 answers it
keeps for a redelivery, daemon/table/redelivery.py), in the hour before the run's and in
the shift the run deals in (`warm_numbers`), so that the daemon restores full windows from
its checkpoints and the shift's numbers from the journal, as after any restart in the
middle of a shift.

Each table's journal ends with a new shoe announced (its shuffle journaled, none of its cards
dealt), which the daemon applies as it starts, weighing the shoe that ended; the run's shoes
then deal that shoe's cards without announcing it again. Without it the run's first step at
every table is a shuffle: the whole floor's seats weighed over full windows in the run's
first 2.5 s, which no floor does (its shoes end when each runs out), and which held the
daemon's loop past a second (docs/performance.md, decision P8).
"""

from __future__ import annotations

from datetime import timedelta
from typing import TYPE_CHECKING

from daemon.numbers.settings import NumbersConfig
from daemon.testing.floor import Pace, write_journal

if TYPE_CHECKING:
    from collections.abc import Sequence
    from datetime import datetime
    from pathlib import Path

    from rules.config import TableConfig

SHIFT_HOURS = 8  # a floor's shifts (the daemon's default: 06:00, 14:00, 22:00)


def warm_hour(now: datetime) -> datetime:
    """The hour the warm rounds are dealt in: the one before `now`'s."""
    return (now - timedelta(hours=1)).replace(minute=0, second=0, microsecond=0)


def warm_numbers(now: datetime) -> NumbersConfig:
    """The warm floor's shifts, for its journal and its daemon alike: eight hours each, as a
    floor's, the first beginning with the warm hour. The warm rounds and a run of up to six
    hours then lie in one shift at any time of day; with the default shifts, a run started
    in a shift's first hour found its warm rounds in the shift before, its shift's numbers
    empty (and no table's numbers published until its first round)."""
    first = warm_hour(now)
    starts = [f"{first + timedelta(hours=h):%H:%M}" for h in range(0, 24, SHIFT_HOURS)]
    return NumbersConfig(shifts=tuple(sorted(starts)))  # in order through the day


async def warm_journal(
    state: Path, configs: Sequence[TableConfig], rounds: int, contract: int, now: datetime
) -> dict[str, int]:
    """Write `rounds` rounds of each table into the journal at `state`, dealt over the hour
    before `now`'s, each table's numbers counted by `warm_numbers(now)`'s shifts (its daemon
    must count by them too); returns each table's last round number."""
    hour = warm_hour(now)
    # Numbered requests, as the run's consoles send them: each table restores the answers it
    # keeps for a redelivery, instead of filling them in the run's first minutes.
    pace = Pace(rounds_per_hour=rounds, opens=hour.hour, hours=1, transactions=True)
    return await write_journal(
        state, list(configs), hour, 1, pace, contract=contract, new_shoe=True,
        numbers=warm_numbers(now),  # its shifts' numbers saved as the daemon saves them
    )  # fmt: skip
