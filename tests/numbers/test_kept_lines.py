"""The shift's last rounds kept compressed (daemon/numbers/kept_lines.py): the same lines back,
in order, as a bounded deque would keep them, for far fewer bytes."""

from __future__ import annotations

import collections
import json
import sys

import pytest
from hypothesis import given
from hypothesis import strategies as st

from daemon.numbers.kept_lines import BLOCK, KeptLines

_LINES = st.binary(max_size=40).map(lambda b: b.replace(b"\n", b"")) | st.just(b"")


@given(
    limit=st.integers(1, 3 * BLOCK + 5),
    steps=st.lists(st.one_of(_LINES, st.none()), max_size=8 * BLOCK),
)
def test_it_keeps_what_a_bounded_deque_keeps(limit: int, steps: list[bytes | None]) -> None:
    """Appends and clears (None) in any order: after each, the same lines as the oracle, a
    deque of at most `limit` lines, and as many."""
    kept, oracle = KeptLines(limit), collections.deque[bytes](maxlen=limit)
    for step in steps:
        if step is None:
            kept.clear()
            oracle.clear()
        else:
            kept.append(step)
            oracle.append(step)
        assert list(kept.lines()) == list(oracle)
        assert len(kept) == len(oracle)


def _round(n: int) -> bytes:
    """A round as `<table>/stats` carries it: some 300 bytes, its numbers its own."""
    summary = {
        "round": n, "started": f"2026-12-01T{6 + n // 60:02d}:{n % 60:02d}:07+00:00",
        "seconds": 40.0 + n % 23 / 10, "seats": 1 + n % 7, "dealer": "ana",
        "handle_cents": 500 * (n % 40), "house_win_cents": 500 * (n % 7 - 3), "voided": False,
        "holds": {"first_attack": [0.1 + n / 7919, None, None, None]},
    }  # fmt: skip
    return json.dumps(summary, separators=(",", ":")).encode()


def test_a_shifts_rounds_are_held_in_a_fraction_of_their_bytes() -> None:
    """500 rounds: a fifth of their bytes or less, where a deque held each line whole."""
    lines = [_round(n) for n in range(1, 501)]
    kept = KeptLines(500)
    for line in lines:
        kept.append(line)
    blocks, open_lines = kept._blocks, kept._open  # its bytes, read where they are
    held = sum(map(sys.getsizeof, blocks)) + sum(map(sys.getsizeof, open_lines))
    assert list(kept.lines()) == lines
    assert held < sum(map(sys.getsizeof, lines)) / 5, held


def test_a_line_with_a_newline_is_refused_and_changes_nothing() -> None:
    kept = KeptLines(3)
    kept.append(b"a")
    with pytest.raises(ValueError, match="newline"):
        kept.append(b"b\nc")
    assert list(kept.lines()) == [b"a"]
    with pytest.raises(ValueError, match="at least 1"):
        KeptLines(0)


_TEXT_LINES = st.text(max_size=30).map(lambda t: t.replace("\n", "").encode())


@given(
    limit=st.integers(1, 3 * BLOCK + 5),
    before=st.lists(_TEXT_LINES, max_size=5 * BLOCK),
    after=st.lists(_TEXT_LINES, max_size=2 * BLOCK),
)
def test_what_it_keeps_comes_back_from_its_parts_through_json(
    limit: int, before: list[bytes], after: list[bytes]
) -> None:
    """Lines of text (as `<table>/stats` keeps JSON), saved as `parts()` through JSON and
    restored into a fresh one: the same lines as the oracle, and the same after more."""
    kept, oracle = KeptLines(limit), collections.deque[bytes](maxlen=limit)
    for line in before:
        kept.append(line)
        oracle.append(line)
    again = KeptLines(limit)
    again.restore(json.loads(json.dumps(kept.parts())))
    assert list(again.lines()) == list(oracle)
    for line in after:
        again.append(line)
        oracle.append(line)
    assert list(again.lines()) == list(oracle)
    assert len(again) == len(oracle)
