"""The last lines of a long list, most of them kept compressed: a shift's rounds in memory.

Sans-I/O. `<table>/stats` carries the shift's last 500 rounds, each a line of JSON of about
320 bytes; a floor of 256 tables held 40 MiB of them at a shift's end, and grew by them
every round from the shift's start (docs/performance.md). Here the lines are kept in blocks
of `BLOCK`: the newest block as it is, each full one as one zlib stream, about 55 bytes a
round (the lines of a table's rounds differ little but for their numbers). Reading them back
costs a decompression of each block, some 0.3 ms for 500 rounds: paid once a round's end, to
publish the state.

A line must not contain a newline (JSON without indentation never does): the blocks are
the lines joined by newlines.
"""

from __future__ import annotations

import base64
import collections
import zlib
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Iterator

BLOCK: Final = 32  # lines a block: larger saves little (55 → 52 bytes a line at 64)
_LEVEL: Final = 6  # zlib's default: 1 keeps 17 % more for 35 % less time, once a block


class KeptLines:
    """At most `limit` lines, the newest last; `lines()` gives them back as they came."""

    __slots__ = ("_blocks", "_open", "limit")

    def __init__(self, limit: int) -> None:
        if limit < 1:
            raise ValueError(f"limit must be at least 1, not {limit}")
        self.limit = limit
        self._blocks: collections.deque[bytes] = collections.deque()  # BLOCK lines each
        self._open: list[bytes] = []

    def append(self, line: bytes) -> None:
        if b"\n" in line:
            raise ValueError("a kept line must not contain a newline")
        self._open.append(line)
        if len(self._open) == BLOCK:
            self._blocks.append(zlib.compress(b"\n".join(self._open), _LEVEL))
            self._open = []
        # The oldest block goes once none of its lines is among the last `limit`.
        while self._blocks and (len(self._blocks) - 1) * BLOCK + len(self._open) >= self.limit:
            self._blocks.popleft()

    def clear(self) -> None:
        self._blocks.clear()
        self._open = []

    def parts(self) -> dict[str, list[str]]:
        """What is kept, as JSON data: each full block as it is (base64), the open lines."""
        return {
            "blocks": [base64.b64encode(block).decode("ascii") for block in self._blocks],
            "open": [line.decode() for line in self._open],
        }

    def restore(self, parts: dict[str, list[str]]) -> None:
        """Keep what `parts()` gave (of a `KeptLines` with the same limit) instead."""
        blocks = [base64.b64decode(block, validate=True) for block in parts["blocks"]]
        opened = [line.encode() for line in parts["open"]]
        if len(opened) >= BLOCK or any(b"\n" in line for line in opened):
            raise ValueError("kept lines: an open block of whole lines, fewer than a block")
        self._blocks = collections.deque(blocks)
        self._open = opened

    def __len__(self) -> int:
        return min(len(self._blocks) * BLOCK + len(self._open), self.limit)

    def lines(self) -> Iterator[bytes]:
        """The kept lines, oldest first."""
        # The older lines not yet dropped: fewer than a block, at the first block's start
        # (with no block, at the open one's: a limit below a block's lines).
        skip = len(self._blocks) * BLOCK + len(self._open) - len(self)
        for block in self._blocks:
            yield from zlib.decompress(block).split(b"\n")[skip:]
            skip = 0
        yield from self._open[skip:]
