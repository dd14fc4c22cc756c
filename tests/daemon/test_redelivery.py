"""The answers a table keeps for requests delivered again (daemon/table/redelivery.py)."""

from __future__ import annotations

import gc
import sys
import tracemalloc
from typing import TYPE_CHECKING

from daemon.table.redelivery import KEPT, Answered

if TYPE_CHECKING:
    from collections.abc import Callable


def _answer(n: int) -> dict[str, object]:
    return {"status": "ok", "data": {"round": n, "seats": [1, 2], "held": {"cards": n}}}


def test_an_answer_kept_is_given_again_as_it_was_live_and_after_a_checkpoint() -> None:
    answered = Answered()
    keys = [Answered.key("wager", f'{{"transaction":"t{n}"}}'.encode()) for n in range(KEPT + 5)]
    for n, key in enumerate(keys):
        answered.keep(key, _answer(n))
    restored = Answered.from_state(answered.state())
    for table in (answered, restored):
        assert [table.get(key) for key in keys[:5]] == [None] * 5  # the oldest, forgotten
        assert [table.get(key) for key in keys[5:]] == [_answer(n) for n in range(5, KEPT + 5)]
    given = answered.get(keys[-1])
    assert given is not None
    given["duplicate"] = True  # a caller's change is its own
    assert answered.get(keys[-1]) == _answer(KEPT + 4)


def test_the_answers_kept_are_not_walked_by_the_cycle_collector() -> None:
    """A floor of 256 tables keeps 64 answers at each: kept as text, they add no object the
    cycle collector walks at every full collection (as dicts holding dicts, each added one)."""
    Answered().keep(b"warm", _answer(0))  # what a first use makes once
    gc.collect()
    before = len(gc.get_objects())
    answered = Answered()
    for n in range(KEPT):
        answered.keep(f"key-{n}".encode(), _answer(n))
    gc.collect()
    assert len(gc.get_objects()) - before < KEPT // 4


def test_a_checkpoint_written_before_the_answers_were_kept_as_text_is_read() -> None:
    """Earlier checkpoints hold each answer as its mapping, by its key in hex."""
    key = Answered.key("wager", b'{"transaction":"t1"}')
    restored = Answered.from_state([[key.hex(), _answer(7)]])
    assert restored.get(key) == _answer(7)
    assert restored.state() == Answered.from_state(restored.state()).state()
    assert (
        restored.state()[0][1]
        == '{"status":"ok","data":{"round":7,"seats":[1,2],"held":{"cards":7}}}'
    )


def test_an_answer_kept_again_is_the_newest() -> None:
    answered = Answered()
    keys = [Answered.key("hit", f"{n}".encode()) for n in range(KEPT)]
    for n, key in enumerate(keys):
        answered.keep(key, _answer(n))
    answered.keep(keys[0], _answer(0))  # the oldest, kept again
    answered.keep(Answered.key("hit", b"new"), _answer(99))
    assert answered.get(keys[0]) == _answer(0)
    assert answered.get(keys[1]) is None  # the oldest now, so forgotten


def _floor_of_answers(answer: Callable[[int, int], dict[str, object]]) -> int:
    """The bytes 64 tables' answers take, the `n`-th answer at table `t` `answer(t, n)`."""
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        tables = []
        for t in range(64):
            answered = Answered()
            for n in range(KEPT):
                answered.keep(Answered.key("wager", f"{t}-{n}".encode()), answer(t, n))
            tables.append(answered)
        return tracemalloc.get_traced_memory()[0] - before
    finally:
        tracemalloc.stop()


def test_an_answer_every_table_gives_is_kept_once_for_the_floor() -> None:
    """Nearly every answer is `{"status":"ok","data":{}}`: kept once, not once a request
    (a floor of 256 tables: 2.2 MiB of answers, 1.3 with it kept once)."""
    same = _floor_of_answers(lambda _t, _n: {"status": "ok", "data": {}})
    distinct = _floor_of_answers(lambda t, n: {"status": "ok", "data": {"n": t * KEPT + n}})
    text_objects = 64 * KEPT * sys.getsizeof('{"status":"ok","data":{"n":1000}}')
    assert distinct - same > 0.9 * text_objects
