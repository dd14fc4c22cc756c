"""Captures (docs/captures.md): the file format, the capture transport, the playback onto a
pty, and the ENQ example captures, each decoded and judged to what its case describes."""

from __future__ import annotations

import asyncio
import errno
import io
import json
import math
from typing import TYPE_CHECKING, Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from bench import enq_captures
from drivers.captures import (
    FORMAT,
    Capture,
    CaptureError,
    CaptureHeader,
    CaptureWriter,
    Chunk,
    LinkNote,
    parse_capture,
    read_capture,
)
from drivers.codecs import enq
from drivers.emulator import CapturePlayback, EmulatorError
from drivers.transports import (
    CaptureSettings,
    CaptureTransport,
    LinkLost,
    OpenFailed,
    SerialSettings,
    SerialTransport,
    SettingsError,
)
from drivers.transports.capture import CaptureEnded
from tests.drivers.capture_cases import CAPTURES, EXPECTED, token
from tests.drivers.helpers import PROPERTY_SETTINGS, Receipts

if TYPE_CHECKING:
    from collections.abc import Callable
    from pathlib import Path

HEADER = CaptureHeader(protocol="enq", transport={"kind": "serial", "baudrate": 4800})


def capture_text(*lines: dict[str, Any], header: dict[str, Any] | None = None) -> str:
    first = header if header is not None else HEADER.to_mapping()
    return "\n".join(json.dumps(line) for line in (first, *lines)) + "\n"


def write_capture(path: Path, chunks: list[tuple[float, bytes]]) -> Path:
    with path.open("w", encoding="utf-8") as file:
        writer = CaptureWriter(file, HEADER)
        for t, data in chunks:
            writer.chunk("rx", data, t=t)
    return path


# ---------------------------------------------------------------- the format


@PROPERTY_SETTINGS
@given(
    items=st.lists(
        st.tuples(
            st.floats(0, 100, allow_nan=False),
            st.sampled_from(["rx", "tx"]),
            st.binary(max_size=64),
        ),
        max_size=30,
    )
)
def test_any_bytes_at_all_read_back_as_they_were_written(
    items: list[tuple[float, str, bytes]],
) -> None:
    """Line noise included: every byte sequence is a valid capture, chunking kept."""
    out = io.StringIO()
    writer = CaptureWriter(out, HEADER)
    t = 0.0
    for gap, direction, data in items:
        t += gap
        writer.chunk(direction, data, t=t)  # type: ignore[arg-type]  # drawn from DIRECTIONS
    capture = parse_capture(out.getvalue().splitlines())
    expected = [(direction, data) for _, direction, data in items if data]
    assert [(c.direction, c.data) for c in capture.chunks] == expected
    assert all(c.t >= 0 and math.isfinite(c.t) for c in capture.chunks)
    assert capture.header == HEADER


def test_a_writer_flushes_every_line_as_it_goes_and_notes_the_link(tmp_path: Path) -> None:
    """What is on disk is whole at every moment: a capture survives the recorder's end."""
    path = tmp_path / "shoe.jsonl"
    clock = iter([10.0, 10.5, 11.25, 12.0]).__next__
    with path.open("x", encoding="utf-8") as file:
        writer = CaptureWriter(file, HEADER, clock=clock)
        writer.link("opened")
        writer.received(b"\x05\x30S\x03")
        assert read_capture(path).chunks == (Chunk(1.25, "rx", b"\x05\x30S\x03"),)
        writer.sent(b"\x02OP")
        capture = read_capture(path)
    assert capture.chunks[-1] == Chunk(2.0, "tx", b"\x02OP")
    assert capture.notes == (LinkNote(0.5, "opened"),)
    assert capture.received == capture.chunks[:1]
    first = json.loads(path.read_text(encoding="utf-8").splitlines()[0])
    assert (first["format"], first["version"], first["protocol"]) == (FORMAT, 1, "enq")


@pytest.mark.parametrize(
    ("text", "line", "says"),
    [
        ("", None, "empty"),
        ("[1]\n", 1, "not a JSON object"),
        ('{"format": "pcap"}\n', 1, "not a capture"),
        (capture_text(header={"format": FORMAT, "version": 2, "protocol": "enq"}), 1, "version 2"),
        (capture_text(header={"format": FORMAT, "version": 1}), 1, "protocol"),
        (capture_text({"t": 0, "rx": "05"}, {"t": 1, "rx": "zz"}), 3, "not bytes in hex"),
        (capture_text({"t": 1, "rx": "05"}, {"t": 0.5, "rx": "05"}), 3, "back in time"),
        (capture_text({"t": -1, "rx": "05"}), 2, "t: must be"),
        (capture_text({"t": True, "rx": "05"}), 2, "t: must be"),
        (capture_text({"t": 0, "rx": "05", "tx": "02"}), 2, "exactly one"),
        (capture_text({"t": 0}), 2, "exactly one"),
        (capture_text({"t": 0, "link": 3}), 2, "link: must be text"),
        (capture_text() + "{not json\n", 2, "not JSON"),
    ],
)
def test_a_file_that_is_not_a_capture_is_refused_with_its_line(
    text: str, line: int | None, says: str
) -> None:
    with pytest.raises(CaptureError) as raised:
        parse_capture(text.splitlines(), "x.jsonl")
    assert raised.value.line == line
    assert says in str(raised.value)
    assert str(raised.value).startswith("x.jsonl")


def test_a_file_that_is_not_text_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "binary.jsonl"
    path.write_bytes(b"\xff\xfe\x05\x30")
    with pytest.raises(CaptureError, match="not UTF-8"):
        read_capture(path)


# ---------------------------------------------------------------- the capture transport


async def read_all(transport: CaptureTransport, count: int) -> list[bytes]:
    return [await transport.read() for _ in range(count)]


async def test_the_transport_plays_each_chunk_then_stays_up_silent(tmp_path: Path) -> None:
    chunks = [(0.0, b"\x05\x30"), (5.0, b"S\x03"), (9.0, b"60")]
    path = write_capture(tmp_path / "c.jsonl", chunks)
    transport = CaptureTransport(CaptureSettings(str(path), speed=0))
    assert transport.endpoint == f"capture:{path}"
    async with transport:
        assert await read_all(transport, 3) == [data for _, data in chunks]
        await transport.write(b"\x02OPLK02\x03")  # taken and dropped
        with pytest.raises(TimeoutError):  # a shoe left plugged in: no byte, no loss
            await asyncio.wait_for(transport.read(), 0.2)


async def test_a_transport_that_ends_loses_its_link_once_every_chunk_is_read(
    tmp_path: Path,
) -> None:
    """`ends` (listen's): the last chunk still comes whole; the read after it is the end."""
    chunks = [(0.0, b"\x05\x30"), (5.0, b"S\x03")]
    path = write_capture(tmp_path / "c.jsonl", chunks)
    async with CaptureTransport(CaptureSettings(str(path), speed=0, ends=True)) as transport:
        assert await read_all(transport, 2) == [data for _, data in chunks]
        with pytest.raises(CaptureEnded) as ended:
            await transport.read()
    assert isinstance(ended.value, LinkLost)  # the driver's: a link lost, told as Disconnected
    assert ended.value.endpoint == f"capture:{path}"


async def test_the_transport_keeps_the_recorded_timing_at_its_speed(tmp_path: Path) -> None:
    path = write_capture(tmp_path / "c.jsonl", [(7.0, b"\x06"), (7.2, b"\x06"), (7.6, b"\x06")])
    async with CaptureTransport(CaptureSettings(str(path), speed=2)) as transport:
        loop = asyncio.get_running_loop()
        await transport.read()  # the first at once
        started = loop.time()
        await read_all(transport, 2)
        elapsed = loop.time() - started
    assert 0.29 <= elapsed < 2.0  # 0.6 s recorded, played twice as fast


@pytest.mark.parametrize(
    ("content", "code"),
    [(None, errno.ENOENT), ('{"format": "pcap"}\n', errno.EINVAL)],
    ids=["missing", "not-a-capture"],
)
async def test_a_capture_that_cannot_be_read_fails_to_open(
    tmp_path: Path, content: str | None, code: int
) -> None:
    path = tmp_path / "c.jsonl"
    if content is not None:
        path.write_text(content, encoding="utf-8")
    transport = CaptureTransport(CaptureSettings(str(path)))
    with pytest.raises(OpenFailed) as raised:
        await transport.open()
    assert raised.value.errno == code
    assert str(path) in str(raised.value)
    await transport.close()


@pytest.mark.parametrize(
    ("settings", "field"),
    [
        (lambda: CaptureSettings("shoe.jsonl"), "path"),
        (lambda: CaptureSettings("/x.jsonl", speed=-1), "speed"),
        (lambda: CaptureSettings("/x.jsonl", speed=1001), "speed"),
        (lambda: CaptureSettings("/x.jsonl", speed=math.nan), "speed"),
        (lambda: CaptureSettings("/x.jsonl", speed=True), "speed"),
        (lambda: CaptureSettings("/x.jsonl", speed="1"), "speed"),  # type: ignore[arg-type]  # on purpose
        (lambda: CaptureSettings("/x.jsonl", ends=1), "ends"),  # type: ignore[arg-type]  # on purpose
    ],
)
def test_capture_settings_that_cannot_work_are_refused(
    settings: Callable[[], CaptureSettings], field: str
) -> None:
    with pytest.raises(SettingsError) as raised:
        settings()
    assert raised.value.field == field


# ---------------------------------------------------------------- the playback onto a pty


async def test_a_playback_on_a_pty_reads_as_the_shoe_it_recorded(tmp_path: Path) -> None:
    capture = read_capture(CAPTURES / "two-cards-one-seq.jsonl")
    link = tmp_path / "shoe0"
    async with CapturePlayback(capture, link=link, speed=0) as shoe:
        transport = SerialTransport(SerialSettings(str(link), baudrate=4800))
        async with transport:
            await asyncio.wait_for(shoe.wait_for_host(), 5)
            played = asyncio.create_task(shoe.play())
            received = b""
            wanted = b"".join(chunk.data for chunk in capture.received)
            async with asyncio.timeout(10):
                while len(received) < len(wanted):
                    received += await transport.read()
            assert await played == len(capture.received)
            await asyncio.wait_for(shoe.wait_read(), 5)
    assert received == wanted


def test_a_playback_speed_out_of_range_is_refused() -> None:
    with pytest.raises(EmulatorError):
        CapturePlayback(Capture(HEADER, ()), speed=-1)


# ---------------------------------------------------------------- the ENQ example captures


def test_the_example_captures_are_what_the_codec_makes_now(
    capsys: pytest.CaptureFixture[str],
) -> None:
    assert enq_captures.main(["--out", str(CAPTURES), "--check"]) == 0, capsys.readouterr().err
    assert sorted(path.stem for path in CAPTURES.glob("*.jsonl")) == sorted(EXPECTED)
    readme = (CAPTURES / "README.md").read_text(encoding="utf-8")
    for case in EXPECTED:
        assert f"`{case}.jsonl`" in readme, case


@pytest.mark.parametrize("case", sorted(EXPECTED))
def test_each_example_capture_decodes_and_judges_to_what_its_case_says(case: str) -> None:
    """In process: the capture's chunks through the ENQ decoder and a receiver, as `listen`
    and the daemon take them; `tests/daemon/test_emulate_listen.py` does it through `listen`."""
    capture = read_capture(CAPTURES / f"{case}.jsonl")
    assert capture.header.protocol == "enq"
    decoder, receipts = enq.DeviceFrameDecoder(), Receipts(enq.SEQUENCE)
    for chunk in capture.received:
        for event in decoder.feed(chunk.data):
            receipts.take(event)
    assert [token(event) for event in receipts.events] == EXPECTED[case]
    assert decoder.counters.garbage_bytes == decoder.counters.malformed == 0
