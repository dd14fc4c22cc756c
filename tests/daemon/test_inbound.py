"""Inbound events as journal records: what the codecs now add (a SEQ on every ENQ event, a
name on an error or a NAK, a conflict) reads back, and so does what older journals hold."""

from __future__ import annotations

import json

import pytest

from daemon.table.records import event_body, event_of_body, is_journaled
from drivers.events import (
    CommandRejected,
    CommunicationStarted,
    FaultCleared,
    FaultSet,
    LockChanged,
    SequenceConflict,
    Standby,
)


@pytest.mark.parametrize(
    "event",
    [
        FaultSet("other", 1, seq=0x36, name="can not read"),
        FaultCleared("other", 1, seq=0x37, name="can not read"),
        CommandRejected(2, name="BCC error"),
        CommunicationStarted(seq=0x30),
        Standby(seq=0x31),
        LockChanged(locked=True, seq=0x32),
        SequenceConflict(seq=0x31),
    ],
)
def test_what_the_codecs_now_say_is_journaled_and_reads_back(event: object) -> None:
    assert is_journaled(event)
    assert event_of_body(json.loads(json.dumps(event_body(event)))) == event


@pytest.mark.parametrize(
    ("record", "event"),
    [
        (
            {"event": "FaultSet", "kind": "other", "code": 1, "seq": 54},
            FaultSet("other", 1, seq=54),
        ),
        ({"event": "CommandRejected", "code": 49}, CommandRejected(49)),
        ({"event": "CommunicationStarted"}, CommunicationStarted()),
        ({"event": "LockChanged", "locked": False}, LockChanged(locked=False)),
    ],
)
def test_a_journal_written_before_names_and_numbers_still_loads(
    record: dict[str, object], event: object
) -> None:
    assert event_of_body(record) == event
