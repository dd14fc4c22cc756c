"""The envelope's time and id, against oracles of their own: the time's fields written out
by hand, the id as RFC 4122 names it (the standard library's `uuid.uuid5` of the epoch)."""

from __future__ import annotations

import json
import uuid
from datetime import UTC, datetime, timedelta, timezone

from hypothesis import given
from hypothesis import strategies as st

from daemon.wire.envelope import Envelopes, message_id, utc_timestamp
from tests.daemon.journals import JSON_VALUES

# Any offset a clock's zone may have, to the minute (UTC+14 to UTC-12 and beyond).
offsets = st.integers(min_value=-23 * 60 - 59, max_value=23 * 60 + 59).map(
    lambda minutes: timezone(timedelta(minutes=minutes))
)
moments = st.datetimes(
    min_value=datetime(1000, 1, 2),  # noqa: DTZ001 - Hypothesis bounds are naive; zones below
    max_value=datetime(9999, 12, 30),  # noqa: DTZ001 - as above
    timezones=offsets,
)


@given(moments)
def test_the_timestamp_is_the_utc_moment_to_the_millisecond(moment: datetime) -> None:
    utc = moment.astimezone(UTC)
    expected = (
        f"{utc.year:04d}-{utc.month:02d}-{utc.day:02d}T"
        f"{utc.hour:02d}:{utc.minute:02d}:{utc.second:02d}.{utc.microsecond // 1000:03d}Z"
    )
    assert utc_timestamp(moment) == expected


def test_the_timestamp_truncates_and_does_not_round() -> None:
    moment = datetime(2026, 11, 29, 13, 59, 59, 999_999, tzinfo=UTC)
    assert utc_timestamp(moment) == "2026-11-29T13:59:59.999Z"


# Any table id the id could be asked for (a configuration names them more narrowly), and
# numbers well past a table's lifetime.
table_ids = st.text(st.characters(exclude_categories=["Cs"]), min_size=1, max_size=24)


@given(st.uuids(), table_ids, st.integers(1, 10**12))
def test_a_sealed_message_carries_the_id_of_its_table_and_number(
    epoch: uuid.UUID, table: str, seq: int
) -> None:
    envelopes = Envelopes(table, epoch=epoch.hex, next_seq=seq)
    sealed = envelopes.seal(f"{table}/round", {"type": "x"})
    assert sealed.event_id == uuid.uuid5(epoch, f"{table}/{seq}").hex
    assert sealed.event_id == message_id(epoch.hex, table, seq)


@given(st.dictionaries(st.text(), JSON_VALUES, max_size=6))
def test_a_payload_is_the_body_as_json_dumps_writes_it(body: dict[str, object]) -> None:
    """The payload's text is `json.dumps`', compact, non-ASCII as UTF-8 (the envelope's
    encoder is made once, not at each message: the bytes must not change)."""
    sealed = Envelopes("bj-1", epoch=uuid.UUID(int=7).hex).seal("t", {"body": body})
    assert sealed.body is not None
    expected = json.dumps(
        {"schema": 1, "id": sealed.event_id, "table": "bj-1", "seq": 1, "ts": sealed.body["ts"]}
        | {"body": body},
        separators=(",", ":"),
        ensure_ascii=False,
    )
    assert sealed.payload == expected.encode()
    assert sealed.body == json.loads(sealed.payload)
