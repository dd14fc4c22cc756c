"""Start-up's heap frozen out of later collections (daemon/system/heap.py), in a process of
its own: freezing this one would keep the suite's cycles from ever being collected."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap


def test_what_start_up_made_is_frozen_and_what_comes_later_is_collected() -> None:
    script = textwrap.dedent(
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
    run = subprocess.run(  # noqa: S603 - our own script
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, check=True
    )
    result = json.loads(run.stdout)
    assert result["frozen"] >= 1000
    assert result["later_collected"] is True
