"""`shoe2mqtt emulate` and `shoe2mqtt listen` as a user runs them: two processes on a pty.

The two commands of docs/protocol.md's walk-through, as typed (the link in a directory of the test's
own, so that tests running side by side never share it):

    shoe2mqtt emulate --protocol reference --link /tmp/shoeA --cards "AS 10H QH QH 8C" --pace 2 &
    shoe2mqtt listen --driver reference /tmp/shoeA --count 5

must give the five cards, in order, once each; `listen` then ends by itself, and `emulate`,
a shoe left on the table, once the host took every card, stays plugged in until Ctrl-C,
which ends it cleanly. The same with `--protocol enq`, and with line faults on: every
scripted card comes back once, in order.
"""

from __future__ import annotations

import asyncio
import json
import signal
import subprocess
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Final

import pytest

from daemon.cli.listen import SILENCE_HINT
from drivers.captures import read_capture
from tests.drivers.capture_cases import CAPTURES, EXPECTED, cards_in, record_token

if TYPE_CHECKING:
    from collections.abc import AsyncIterator

SHOE2MQTT: Final = Path(sys.executable).with_name("shoe2mqtt")  # the installed command
WALK_THROUGH_CARDS: Final = "AS 10H QH QH 8C"
TAKEN: Final = "the host has taken every card"
TIMEOUT: Final = 20.0


async def start(*argv: str) -> asyncio.subprocess.Process:
    return await asyncio.create_subprocess_exec(
        SHOE2MQTT,
        *argv,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


async def lines_until(stream: asyncio.StreamReader, text: str) -> list[str]:
    """Lines read until one holds `text` (that one included)."""
    lines: list[str] = []
    while not lines or text not in lines[-1]:
        line = await stream.readline()
        assert line, f"the stream ended before {text!r}: {lines}"
        lines.append(line.decode())
    return lines


class Emulator:
    """`shoe2mqtt emulate` running in the background, as after `&`."""

    def __init__(self, process: asyncio.subprocess.Process) -> None:
        self.process = process
        assert process.stdout is not None
        assert process.stderr is not None
        self.stdout, self.stderr = process.stdout, process.stderr

    async def interrupt(self) -> tuple[int | None, str]:
        """Ctrl-C, and its exit: the code and what it said on stderr."""
        self.process.send_signal(signal.SIGINT)
        _, rest = await self.process.communicate()
        return self.process.returncode, rest.decode()


@pytest.fixture
async def emulator_processes() -> AsyncIterator[list[asyncio.subprocess.Process]]:
    """Every process a test starts is gone when it ends, whatever failed."""
    processes: list[asyncio.subprocess.Process] = []
    yield processes
    for process in processes:
        if process.returncode is None:
            process.kill()
            await process.wait()


async def emulate(
    processes: list[asyncio.subprocess.Process], *argv: str
) -> tuple[Emulator, list[str]]:
    """Start `emulate`, and read what it prints first (as the user sees it before going on)."""
    process = await start("emulate", *argv)
    processes.append(process)
    emulator = Emulator(process)
    head = [(await emulator.stdout.readline()).decode() for _ in range(3)]
    return emulator, head


async def listen(
    processes: list[asyncio.subprocess.Process], *argv: str
) -> tuple[int | None, list[dict[str, object]], str]:
    process = await start("listen", *argv)
    processes.append(process)
    out, err = await process.communicate()
    records = [json.loads(line) for line in out.decode().splitlines()]
    return process.returncode, records, err.decode()


def cards(records: list[dict[str, object]]) -> list[object]:
    return [r["card"] for r in records if r["type"] == "CardDrawn"]


@pytest.mark.parametrize("protocol", ["reference", "enq"])
@pytest.mark.timeout(40)
async def test_the_walk_throughs_two_commands_give_every_card_in_order_and_end_cleanly(
    tmp_path: Path, protocol: str, emulator_processes: list[asyncio.subprocess.Process]
) -> None:
    link_path = tmp_path / "shoeA"
    link = str(link_path)
    async with asyncio.timeout(TIMEOUT):
        emulator, head = await emulate(
            emulator_processes,
            *("--protocol", protocol, "--link", link, "--cards", WALK_THROUGH_CARDS, "--pace", "2"),
        )
        assert head[1] == f"link: {link}\n"
        said = await lines_until(emulator.stderr, "before dealing")  # nothing dealt yet
        assert f"emulating a shoe ({protocol} protocol)" in "".join(said)
        code, records, err = await listen(
            emulator_processes, "--driver", protocol, link, "--count", "5"
        )
        assert code == 0, err
        assert cards(records) == WALK_THROUGH_CARDS.split()
        # The shoe stays on the table once the host has every card ...
        await lines_until(emulator.stderr, TAKEN)
        assert emulator.process.returncode is None
        assert link_path.is_symlink()
        # ... until Ctrl-C.
        code, rest = await emulator.interrupt()
    assert code == 0, rest
    assert "Traceback" not in rest
    assert not link_path.exists()


@pytest.mark.parametrize(
    ("protocol", "copies"),
    [("reference", "1"), ("enq", "3")],  # ENQ shoes are said to send everything three times
)
@pytest.mark.timeout(40)
async def test_a_faulty_line_still_gives_every_card_once_in_order_and_exits_at_the_end(
    tmp_path: Path, protocol: str, copies: str, emulator_processes: list[asyncio.subprocess.Process]
) -> None:
    """A reference shoe sends again what the noise took; an ENQ shoe's copies survive a bad
    checksum on the first; repeats are taken once either way."""
    script = "7C QH 10S AS 2D KH 9S 5C JD 3H 8D QS 4C 6H 10D KC 2S 9H AD 7S"
    link_path = tmp_path / "shoe0"
    link = str(link_path)
    faults = ("--noise", "0.3", "--split", "0.3", "--repeat", "0.2", "--bad-checksum", "0.2")
    async with asyncio.timeout(TIMEOUT):
        emulator, _ = await emulate(
            emulator_processes,
            *("--protocol", protocol, "--link", link, "--cards", script, "--pace", "0"),
            *("--seed", "3", "--copies", copies, *faults, "--exit-at-end"),
        )
        code, records, err = await listen(
            emulator_processes, "--protocol", protocol, link, "--count", "20"
        )
        assert code == 0, err
        assert cards(records) == script.split()
        await emulator.process.wait()  # --exit-at-end: by itself, once every card is taken
        said = (await emulator.stderr.read()).decode()
    assert emulator.process.returncode == 0, said
    assert TAKEN in said
    assert not link_path.exists()


# ================================================================ captures (docs/captures.md)


def tokens(records: list[dict[str, object]]) -> list[str]:
    return [t for t in map(record_token, records) if t is not None]


@pytest.mark.parametrize("case", sorted(EXPECTED))
@pytest.mark.timeout(40)
async def test_each_example_capture_through_listen_as_fast_as_it_reads(
    case: str, emulator_processes: list[asyncio.subprocess.Process]
) -> None:
    """`listen --capture` takes the ENQ examples as the shoe: every card once, a conflict as
    such, errors by name, the count starting over after an `S`. As docs/captures.md types
    it, with no `--count`: it stops by itself at the capture's end, and says so."""
    capture = str(CAPTURES / f"{case}.jsonl")
    async with asyncio.timeout(TIMEOUT):
        code, records, err = await listen(
            emulator_processes, "--protocol", "enq", "--capture", capture, "--speed", "0"
        )
    assert code == 0, err
    assert tokens(records) == EXPECTED[case]
    assert records[1] == {"type": "Connected", "endpoint": f"capture:{capture}"}
    assert records[-1] == {
        "type": "Disconnected",
        "endpoint": f"capture:{capture}",
        "reason": "the capture is played to its end: every chunk is read",
        "errno": None,
    }


@pytest.mark.timeout(40)
async def test_a_capture_read_as_another_protocol_ends_with_a_word_and_exit_1(
    emulator_processes: list[asyncio.subprocess.Process],
) -> None:
    """An ENQ capture read as the reference protocol: nothing in it is a frame, so the end
    comes with no event, and listen says what may be wrong instead of exiting 0 in silence."""
    capture = str(CAPTURES / "clean-round.jsonl")
    async with asyncio.timeout(TIMEOUT):
        code, records, err = await listen(
            emulator_processes, "--protocol", "reference", "--capture", capture, "--speed", "0"
        )
    assert code == 1, err
    assert [r["type"] for r in records] == ["Connecting", "Connected", "Disconnected"]
    assert "nothing in the capture read as the reference protocol" in err


@pytest.mark.parametrize("case", sorted(EXPECTED))
@pytest.mark.timeout(40)
async def test_each_example_capture_over_a_pty_at_its_recorded_speed(
    tmp_path: Path, case: str, emulator_processes: list[asyncio.subprocess.Process]
) -> None:
    """`emulate --playback` puts the capture on a virtual serial port at speed 1; `listen`
    reads it through the tty as it reads a shoe, and takes the very same events."""
    link = str(tmp_path / "shoe0")
    capture = str(CAPTURES / f"{case}.jsonl")
    async with asyncio.timeout(TIMEOUT):
        emulator, head = await emulate(
            emulator_processes, "--playback", capture, "--link", link, "--speed", "1"
        )
        assert head[1:] == [f"link: {link}\n", f"capture: {capture}\n"]
        await lines_until(emulator.stderr, "before playing")
        code, records, err = await listen(
            emulator_processes,
            *("--protocol", "enq", link, "--baud", "4800", "--count", str(cards_in(case))),
        )
        assert code == 0, err
        assert tokens(records) == EXPECTED[case]
        # Every chunk went out (the last card's copies may stay unread: listen had its count).
        await lines_until(emulator.stderr, "chunks are played")
        code, rest = await emulator.interrupt()
    assert code == 0, rest


@pytest.mark.timeout(40)
async def test_raw_shows_each_repeat_the_receiver_judged(
    emulator_processes: list[asyncio.subprocess.Process],
) -> None:
    capture = str(CAPTURES / "exact-repeats.jsonl")
    async with asyncio.timeout(TIMEOUT):
        code, records, err = await listen(
            emulator_processes,
            *("--protocol", "enq", "--capture", capture, "--speed", "0", "--raw"),
            *("--count", str(cards_in("exact-repeats"))),
        )
    assert code == 0, err
    repeats = [r for r in records if r["type"] == "repeat"]
    # Two copies of every frame before the last card, whose copies come after listen stops.
    assert len(repeats) == 2 * (len(EXPECTED["exact-repeats"]) - 1)
    assert repeats[0] == {"type": "repeat", "seq": 0x30, "of": "CommunicationStarted"}
    assert tokens(records) == EXPECTED["exact-repeats"]


@pytest.mark.timeout(60)
async def test_a_recorded_capture_plays_back_as_the_same_events(
    tmp_path: Path, emulator_processes: list[asyncio.subprocess.Process]
) -> None:
    """What `listen --record` kept of an emulated ENQ shoe (every frame sent three times,
    line noise between) is taken again, card for card, from the capture alone."""
    link, recorded = str(tmp_path / "shoe0"), tmp_path / "shoe.jsonl"
    script = "9H 10C KH KS 6S"
    async with asyncio.timeout(TIMEOUT):
        await emulate(
            emulator_processes,
            *("--protocol", "enq", "--link", link, "--cards", script, "--pace", "0"),
            *("--copies", "3", "--noise", "0.3", "--seed", "5"),
        )
        code, live, err = await listen(
            emulator_processes,
            *("--protocol", "enq", link, "--baud", "4800", "--count", "5"),
            *("--record", str(recorded)),
        )
        assert code == 0, err
        code, again, err = await listen(
            emulator_processes,
            *("--protocol", "enq", "--capture", str(recorded), "--speed", "0", "--count", "5"),
        )
    assert code == 0, err
    assert cards(again) == cards(live) == script.split()
    assert tokens(again) == tokens(live)
    capture = read_capture(recorded)
    assert capture.header.protocol == "enq"
    assert capture.header.endpoint == link
    assert capture.header.transport["baudrate"] == 4800
    assert capture.notes[0].link == "opened"


@pytest.mark.timeout(40)
async def test_a_capture_being_recorded_survives_sigterm_and_is_never_overwritten(
    tmp_path: Path, emulator_processes: list[asyncio.subprocess.Process]
) -> None:
    link, recorded = str(tmp_path / "shoe0"), tmp_path / "shoe.jsonl"
    async with asyncio.timeout(TIMEOUT):
        await emulate(
            emulator_processes, "--protocol", "enq", "--link", link, "--pace", "20", "--seed", "2"
        )
        process = await start("listen", "--protocol", "enq", link, "--record", str(recorded))
        emulator_processes.append(process)
        assert process.stdout is not None
        await lines_until(process.stdout, '"CardDrawn"')
        process.send_signal(signal.SIGTERM)
        _, err = await process.communicate()
        assert process.returncode == 0, err.decode()
        capture = read_capture(recorded)  # whole lines only, up to the end
        assert capture.received
        code, _, err_text = await listen(
            emulator_processes, "--protocol", "enq", link, "--record", str(recorded)
        )
    assert code == 2
    assert "exists" in err_text
    assert read_capture(recorded) == capture


@pytest.mark.timeout(40)
async def test_a_capture_whose_port_never_opened_is_not_kept_and_the_retry_records(
    tmp_path: Path, emulator_processes: list[asyncio.subprocess.Process]
) -> None:
    """The first try names a port that is not there (the README's `--record` line before the
    shoe is plugged in): it fails, and keeps no header-only file whose name the retry, once
    the port is right, would find taken."""
    link, recorded = str(tmp_path / "shoeR"), tmp_path / "shoe.jsonl"
    async with asyncio.timeout(TIMEOUT):
        code, records, err = await listen(
            emulator_processes, "--protocol", "enq", link, "--baud", "4800", "--record",
            str(recorded),
        )  # fmt: skip
        assert code == 1, err
        assert [r["type"] for r in records] == ["Connecting", "LinkFault"]
        fault = records[-1]
        assert "retry_in" not in fault  # listen stops: it retries in no time at all
        assert f"--record {recorded}: the link never opened; no capture kept" in err
        assert not recorded.exists()
        await emulate(
            emulator_processes, "--protocol", "enq", "--link", link, "--cards", "AS KH", "--pace",
            "20",
        )  # fmt: skip
        code, records, err = await listen(
            emulator_processes, "--protocol", "enq", link, "--baud", "4800", "--record",
            str(recorded), "--count", "2",
        )  # fmt: skip
    assert code == 0, err
    assert cards(records) == ["AS", "KH"]
    capture = read_capture(recorded)
    assert capture.notes[0].link == "opened"
    assert capture.received


@pytest.mark.timeout(40)
async def test_a_shoe_that_says_nothing_in_the_protocol_asked_for_is_hinted_at(
    tmp_path: Path, emulator_processes: list[asyncio.subprocess.Process]
) -> None:
    """An ENQ shoe waits for a poll the reference host never sends: listen says what to check
    rather than print nothing."""
    link = str(tmp_path / "shoeM")
    async with asyncio.timeout(TIMEOUT + SILENCE_HINT):
        await emulate(emulator_processes, "--protocol", "enq", "--link", link, "--cards", "AS")
        process = await start("listen", "--protocol", "reference", link)
        emulator_processes.append(process)
        assert process.stderr is not None
        said = await lines_until(process.stderr, "nothing heard")
    assert said[-1] == (
        f"shoe2mqtt listen: nothing heard in {SILENCE_HINT:g} s since the port opened; is the "
        "shoe dealing, and does it speak the reference protocol (--protocol)? --raw shows "
        "every byte that arrives\n"
    )
