"""The daemon's process and its heap (daemon/system/heap.py), each in a process of its own:
freezing this one would keep the suite's cycles from ever being collected, and the C
library's threshold is the process's."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap
from typing import Any

MiB = 1 << 20


def _run(script: str, *args: str) -> dict[str, Any]:
    """`script` run by this Python in a process of its own; what it printed, read as JSON."""
    run = subprocess.run(  # noqa: S603 - our own script
        [sys.executable, "-c", textwrap.dedent(script), *args],
        capture_output=True, text=True, timeout=60, check=True,
    )  # fmt: skip
    result: dict[str, Any] = json.loads(run.stdout)
    return result


def test_what_start_up_made_is_frozen_and_what_comes_later_is_collected() -> None:
    result = _run(
        """
        import gc, json, weakref
        from daemon.system.heap import settle_the_heap

        class Node:
            pass

        kept = [Node() for _ in range(1000)]  # start-up's own, kept for the process's life
        settle_the_heap()
        frozen = gc.get_freeze_count()
        later = Node()
        later.cycle = later  # garbage made after start-up, in a cycle
        gone = weakref.ref(later)
        del later
        gc.collect()
        print(json.dumps({"frozen": frozen, "later_collected": gone() is None}))
        """
    )
    assert result["frozen"] >= 1000
    assert result["later_collected"] is True


# Thirty blocks of a mebibyte, each followed by a small block of the C heap that outlives it
# (a console's oversized requests, and what the daemon allocates between them), once one
# block of that size has been freed: glibc has raised its threshold, the blocks come from
# the heap, and the small ones pin them there.
_LARGE_BLOCKS = """
    import json, sys
    import psutil
    from daemon.system.heap import hand_large_blocks_back

    def rss():
        return psutil.Process().memory_info().rss

    held = hand_large_blocks_back() if sys.argv[1:] == ["held"] else None
    first = b"\\xff" * (1 << 20)
    del first  # glibc raises its threshold to this block's size, unless it is held
    before = rss()
    blocks, pins = [], []
    for i in range(30):
        blocks.append(bytes([i % 256]) * (1 << 20))
        pins.append(bytes([i % 256]) * 1000)  # above pymalloc's 512 bytes: the C heap's
    del blocks
    print(json.dumps({"held": held, "kept": rss() - before}))
"""


def test_a_large_block_freed_goes_back_to_the_kernel() -> None:
    held = _run(_LARGE_BLOCKS, "held")
    assert held["held"] is True
    assert held["kept"] < 4 * MiB, f"{held['kept']:,} bytes kept"


def test_without_it_the_freed_blocks_stay_in_the_process() -> None:
    """The control: the same allocations with glibc's own threshold (Debian's C library, the
    daemon's) keep what was freed, so the test above can fail."""
    assert _run(_LARGE_BLOCKS)["kept"] > 20 * MiB


# Sixty blocks of 64 KiB from the heap (below the mmap threshold), every other one freed and
# the rest kept: the freed ones' pages lie below blocks in use, where glibc's free leaves them.
_FREE_PAGES = """
    import gc, json, sys
    import psutil
    from daemon.system.heap import hand_large_blocks_back, trim_after_full_collections

    def rss():
        return psutil.Process().memory_info().rss

    hand_large_blocks_back()
    trimming = trim_after_full_collections() if sys.argv[1:] == ["trimming"] else None
    blocks = [bytes([i % 256]) * (64 << 10) for i in range(60)]
    kept = blocks[1::2]
    del blocks
    before = rss()
    gc.collect()  # a full collection
    print(json.dumps({"trimming": trimming, "handed_back": before - rss(), "kept": len(kept)}))
"""


def test_free_pages_inside_the_heap_go_back_after_a_full_collection() -> None:
    trimmed = _run(_FREE_PAGES, "trimming")
    assert trimmed["trimming"] is True
    assert trimmed["handed_back"] > 1 * MiB, f"{trimmed['handed_back']:,} bytes handed back"


def test_without_the_trim_the_free_pages_stay() -> None:
    """The control: the same blocks, no trim after the collection: nothing goes back."""
    assert _run(_FREE_PAGES)["handed_back"] < MiB // 4
