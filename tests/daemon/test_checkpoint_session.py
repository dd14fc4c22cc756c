"""The table owns its host session: a checkpoint's `receiver` is the session's memory, kept
in the format it always had, and restored in place, so the driver that pumps the session
judges and acknowledges after a restore as the table does."""

from __future__ import annotations

import dataclasses
import json
from typing import TYPE_CHECKING

from daemon.journal import Checkpoint, TableRecord
from daemon.table.records import ShoeRecord, event_body
from daemon.table.runner import TableRunner
from daemon.wire.topics import Topics
from drivers.events import CardDrawn, DeviceIdentity
from drivers.registry import host_session
from tests.rules.tables import make_config

if TYPE_CHECKING:
    from drivers.session import HostSession

EPOCH = "0123456789abcdef0123456789abcdef"
AT = "2026-11-29T14:00:00.000Z"
IDENTITY = DeviceIdentity("Acme", "Shoe-1", "SN0001", "1.2.3", power_up=1, next_seq=0)


def _runner(session: HostSession, checkpoint: Checkpoint | None = None) -> TableRunner:
    return TableRunner.begin(
        TableRecord(make_config().table_id, protocol="reference"),
        Topics(),
        EPOCH,
        checkpoint=checkpoint,
        first_config=make_config().to_mapping(),
        session=session,
    )


def _dealt(session: HostSession) -> Checkpoint:
    """A table that heard the shoe name itself and deal frame 0: its checkpoint, via JSON."""
    runner = _runner(session)
    runner.apply(1, AT, ShoeRecord(IDENTITY))
    runner.apply(2, AT, ShoeRecord(CardDrawn(rank="K", suit="H", seq=0)))
    checkpoint = runner.checkpoint()
    return dataclasses.replace(checkpoint, state=json.loads(json.dumps(checkpoint.state)))


def test_the_tables_memory_is_its_sessions_and_a_restore_loads_it_in_place() -> None:
    session = host_session("reference")
    checkpoint = _dealt(session)
    assert checkpoint.state["service"]["receiver"] == session.memory.state()
    assert session.memory.state()["last"] == 0
    again = host_session("reference")  # a restarted daemon's: its driver already holds it
    memory = again.memory
    runner = _runner(again, checkpoint)
    assert runner.service.session is again
    assert runner.service.receiver is memory  # loaded in place
    assert memory.state() == session.memory.state()
    assert not memory.judge(CardDrawn(rank="K", suit="H", seq=0)).take  # a repeat: not taken
    assert memory.judge(CardDrawn(rank="2", suit="S", seq=1)).acknowledge == 1


def test_a_checkpoint_written_before_the_memory_kept_the_frames_content_is_still_read() -> None:
    checkpoint = _dealt(host_session("reference"))
    # As it was written then: the last number and the device as the journal holds it.
    checkpoint.state["service"]["receiver"] = {"last": 0, "device": event_body(IDENTITY)}
    session = host_session("reference")
    runner = _runner(session, checkpoint)
    memory = session.memory
    assert (memory.last, memory.held) == (0, None)
    assert memory.device == IDENTITY
    # Without the content a frame numbered as the last one is judged by its number alone.
    assert not runner.service.judge(CardDrawn(rank="A", suit="S", seq=0)).take
    assert runner.service.judge(CardDrawn(rank="2", suit="S", seq=1)).take
    assert runner.checkpoint().state["service"]["receiver"] == {
        "last": 0,
        "held": None,
        "device": event_body(IDENTITY),
    }
