"""A checkpoint of a table is exact: replaying from it equals replaying from the start.

The oracle is the replay from the table's first event, which never saw a checkpoint: a
session of journaled events (tests/daemon/journals.py: rounds of play with link losses,
restarts, notices, settings, unreadable cards and refused requests mixed in) is replayed
whole. At every event of it, a checkpoint is written out through JSON, as the journal stores
it, and a replay started from it must make byte for byte the messages the whole replay made
for the next few events, and judge what the shoe sends as it did (what a checkpoint forgets
shows soon: the shoe's last frame, a doubt, an unreadable card waiting for the console); from
one random event on, to the end, with the same rounds ended and the same state at the end.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from hypothesis import given, settings
from hypothesis import strategies as st

from daemon.journal import Checkpoint, JournalEvent, TableRecord
from daemon.table.records import event_of_body
from daemon.table.runner import TableRunner
from daemon.wire.topics import Topics
from rules.games import Game
from tests.daemon.journals import event_stream
from tests.rules.tables import make_config

if TYPE_CHECKING:
    from drivers.receiver import Intake

EPOCH = "0123456789abcdef0123456789abcdef"
LOOK_AHEAD = 4  # events replayed from every checkpoint


def _events(game: Game, seed: int, rounds: int) -> list[JournalEvent]:
    config = make_config(game.value)
    return [
        JournalEvent(
            config.table_id, n, kind, body, f"2026-11-29T14:{n // 60:02d}:{n % 60:02d}.000Z"
        )
        for n, (kind, body) in enumerate(event_stream(config, seed, rounds), start=1)
    ]


def _begin(events: list[JournalEvent], checkpoint: Checkpoint | None = None) -> TableRunner:
    table = TableRecord(events[0].table_id)
    return TableRunner.begin(
        table, Topics(), EPOCH, checkpoint=checkpoint, first_config=events[0].body["table"]
    )


@settings(max_examples=15, deadline=None)
@given(
    game=st.sampled_from(list(Game)),
    seed=st.integers(0, 2**32),
    rounds=st.integers(1, 5),
    cut=st.floats(0, 1),
)
def test_replay_from_a_checkpoint_equals_replay_from_the_start(
    game: Game, seed: int, rounds: int, cut: float
) -> None:
    events = _events(game, seed, rounds)
    split = int(cut * len(events))
    whole = _begin(events)
    made, stored, judged = [], [], []
    for event in events:
        stored.append(_through_json(whole.checkpoint()))
        judged.append(_judgement(whole, event))
        made.append(whole.apply_stored(event))
    final = whole.checkpoint()

    for k, checkpoint in enumerate(stored):
        resumed = _begin(events, checkpoint)
        last = len(events) if k == split else min(len(events), k + LOOK_AHEAD)
        for event, expected, judgement in zip(
            events[k:last], made[k:last], judged[k:last], strict=True
        ):
            # What the shoe sends is judged before it is journaled (decision D3): against
            # the table's memory of the shoe, which a checkpoint must carry too.
            assert _judgement(resumed, event) == judgement
            applied = resumed.apply_stored(event)
            assert [m.payload for m in applied.messages] == [m.payload for m in expected.messages]
            assert (applied.owner, applied.ended) == (expected.owner, expected.ended)
        if k == split:
            assert resumed.checkpoint() == final
    assert any(a.ended is not None for a in made) or rounds == 1  # rounds did end


def _judgement(replay: TableRunner, event: JournalEvent) -> Intake | None:
    return replay.service.judge(event_of_body(event.body)) if event.kind == "shoe" else None


def _through_json(checkpoint: Checkpoint) -> Checkpoint:
    return Checkpoint(
        checkpoint.table_id,
        checkpoint.n,
        checkpoint.next_seq,
        checkpoint.at,
        checkpoint.open_round,
        json.loads(json.dumps(checkpoint.state)),
    )
