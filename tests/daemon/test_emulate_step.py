"""`shoe2mqtt emulate --step`: a person deals, one card each time Enter is pressed.

Run as a user runs it beside `shoe2mqtt listen`: one card a press, in the script's order,
without its face on the terminal; the input's end ends the dealing, and `--exit-at-end` then
exits once the host has every card dealt.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from pathlib import Path
    from typing import IO

SHOE2MQTT: Final = (sys.executable, "-m", "daemon.cli")
WAIT: Final = 20.0


def _cards(stream: IO[str], count: int) -> list[str]:
    cards: list[str] = []
    while len(cards) < count:
        line = stream.readline()
        assert line, f"listen ended after {cards}"
        event = json.loads(line)
        if event["type"] == "CardDrawn":
            cards.append(event["card"])
    return cards


def test_each_enter_deals_one_card(tmp_path: Path) -> None:
    link = tmp_path / "shoe"
    shoe = subprocess.Popen(  # noqa: S603 - our own command, as typed
        [*SHOE2MQTT, "emulate", "--step", "--cards", "AS KH QH", "--link", str(link),
         "--exit-at-end"],
        stdin=subprocess.PIPE, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    assert shoe.stdin is not None
    listen = None
    try:
        deadline = time.monotonic() + WAIT
        while not link.exists():
            assert time.monotonic() < deadline, "no link"
            time.sleep(0.05)
        listen = subprocess.Popen(  # noqa: S603 - our own command, as typed
            [*SHOE2MQTT, "listen", "--protocol", "reference", str(link), "--count", "3"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        )  # fmt: skip
        assert listen.stdout is not None
        shoe.stdin.write("\n")
        shoe.stdin.flush()
        first = _cards(listen.stdout, 1)
        shoe.stdin.write("\n\n")
        shoe.stdin.flush()
        rest = _cards(listen.stdout, 2)
        shoe.stdin.close()  # the input ends: no more cards, and the shoe exits once taken
        said = shoe.stderr.read() if shoe.stderr is not None else ""
        code = shoe.wait(timeout=WAIT)
    finally:
        for process in (listen, shoe):
            if process is not None and process.poll() is None:
                process.kill()
            if process is not None:
                process.wait()
                for stream in (process.stdout, process.stderr):
                    if stream is not None:
                        stream.close()
    assert [*first, *rest] == ["AS", "KH", "QH"]
    assert code == 0
    assert "Enter deals the next card" in said
    assert "card 3 dealt" in said
    assert "AS" not in said  # the faces are not printed (the hole card is among them)
