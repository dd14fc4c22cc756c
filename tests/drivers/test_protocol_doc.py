"""docs/protocol.md's example tables are executable: the frames decode to what the doc says.

The doc is what a vendor implements from, so a drift between it and the code is a bug in
one of them; this test is what notices.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import TYPE_CHECKING, cast

import pytest

from drivers.codecs import enq, reference, template

if TYPE_CHECKING:
    from types import ModuleType

    from drivers.codecs.base import Decoder
    from drivers.codecs.reference import DeviceMessage, HostMessage
    from drivers.events import Event, VendorCommand

DOC = Path(__file__).parents[2] / "docs" / "protocol.md"
_TABLE = re.compile(r"<!-- examples: (\w+) -->\n(.*?)<!-- /examples -->", re.DOTALL)


def example_rows(table_name: str) -> list[list[str]]:
    tables: dict[str, str] = dict(_TABLE.findall(DOC.read_text(encoding="utf-8")))
    rows = []
    for line in tables[table_name].splitlines()[2:]:  # skip the header and its rule
        cells = [cell.strip().strip("`") for cell in line.strip().strip("|").split("|")]
        rows.append(cells)
    assert rows, f"no examples found for {table_name}"
    return rows


REFERENCE_ROWS = example_rows("reference")
ENQ_ROWS = example_rows("enq")


def decode_one(decoder: Decoder, frame: bytes) -> Event:
    events = decoder.feed(frame)
    assert len(events) == 1, events
    counters = decoder.counters
    assert (counters.frames_ok, counters.garbage_bytes) == (1, 0), counters
    return events[0]


@pytest.mark.parametrize(("direction", "seq", "frame_hex", "decodes_to"), REFERENCE_ROWS)
def test_reference_example_decodes_and_encodes_as_documented(
    direction: str, seq: str, frame_hex: str, decodes_to: str
) -> None:
    frame = bytes.fromhex(frame_hex)
    if direction == "device → host":
        event = decode_one(reference.DeviceFrameDecoder(), frame)
        assert repr(event) == decodes_to
        assert reference.encode_device_frame(cast("DeviceMessage", event), seq=int(seq)) == frame
    else:
        assert direction == "host → device"
        event = decode_one(reference.HostFrameDecoder(), frame)
        assert repr(event) == decodes_to
        assert reference.encode_host_frame(cast("HostMessage", event), seq=int(seq)) == frame


@pytest.mark.parametrize(("direction", "frame_hex", "decodes_to"), ENQ_ROWS)
def test_enq_example_decodes_and_encodes_as_documented(
    direction: str, frame_hex: str, decodes_to: str
) -> None:
    frame = bytes.fromhex(frame_hex)
    if direction == "host → shoe":
        event = decode_one(enq.HostFrameDecoder(), frame)
        assert repr(event) == decodes_to
        assert enq.encode_host_frame(cast("VendorCommand", event)) == frame
        return
    assert direction == "shoe → host"
    event = decode_one(enq.DeviceFrameDecoder(), frame)
    assert repr(event) == decodes_to
    seq = None if frame[0] in {enq.ACK, enq.NAK} else frame[1]  # ACK and NAK carry no SEQ
    assert enq.encode_device_frame(cast("enq.DeviceMessage", event), seq=seq) == frame


_SHAPE = re.compile(r"<!-- codec shape -->\n(.*?)<!-- /codec shape -->", re.DOTALL)


@pytest.mark.parametrize("codec", [reference, enq, template], ids=["reference", "enq", "template"])
def test_each_codec_offers_every_name_of_the_documented_shape(codec: ModuleType) -> None:
    [table] = _SHAPE.findall(DOC.read_text(encoding="utf-8"))
    names = [line.split("|")[1].strip().strip("`") for line in table.splitlines()[2:]]
    assert len(names) == 8, names
    assert [name for name in names if not hasattr(codec, name)] == []
    assert codec.DeviceFrameDecoder.sequence is codec.SEQUENCE
    assert codec.DeviceFrameDecoder.host_link is codec.HostLink


def test_the_worked_example_is_the_table_row() -> None:
    assert [r for r in REFERENCE_ROWS if r[1] == "1" and r[0] == "device → host"][1:] == [
        [
            "device → host",
            "1",
            "7E 02 02 00 01 02 3A 00 E8 E7 7E",
            "CardDrawn(rank='10', suit='S', seq=1, burned=False, origin='dealt')",
        ]
    ]
    assert "7E 02 02 00 01 02 3A 00 E8 E7 7E" in DOC.read_text(encoding="utf-8").split("### 1.8")[0]


def test_the_documented_link_constants_are_the_codecs() -> None:
    text = DOC.read_text(encoding="utf-8").split("### 1.5")[0]
    assert f"at least **{reference.KEPT_FRAMES_MIN} frames**" in text
    assert f"**{round(reference.RESEND_AFTER * 1000)} ms**" in text
    assert f"every\n  **{reference.RESEND_AFTER_MAX:g} s**" in text
    assert f"**{reference.HEARTBEAT_AFTER:g} s**" in text
