"""The daemon's process and its heap: large blocks handed back, start-up's objects frozen.

**Large blocks.** glibc's malloc serves a block of 128 KiB or more from a mapping of its own,
unmapped when freed, until the first such block is freed: from then on it raises that
threshold to the freed block's size, and blocks below it come from the heap, where a freed
one is only returned to the kernel if nothing above it is still in use. A console that sends
forty requests of a mebibyte (each refused unread) left the daemon 18-24 MiB larger in 5 of
18 runs on main, and that memory stayed; with the threshold held at 256 KiB, 14 of 14 grew
by 0.1-0.2 MiB (docs/performance.md, "Start-up's heap frozen, large blocks handed
back"). `hand_large_blocks_back` holds it at 256 KiB: a block that large is mapped and
unmapped on its own. The daemon's own largest blocks are below it (a table's `stats`, at a
shift's end, is about 150 KiB): what is above it is oversized input, a console's or a
broker's. A C library without `mallopt` (musl) is left as it is.

**Free pages inside the heap.** A block below the threshold comes from the heap, and a freed
one goes back to the kernel only at the heap's top: the pages of a free block below a block
still in use stay in the process. After ten minutes of a floor, 3.5 MiB of the daemon's heap
was such pages (`malloc_trim` through gdb handed them back). `trim_after_full_collections`
hands them back after each full collection (about one a minute on a floor, when the most
has just been freed). The trim walks the free blocks: 3.6 ms the first time on a heap with
40 MiB of 600 B-60 KiB blocks freed between kept ones, 0.3 ms after, where a floor's full
collection holds the loop 40-120 ms.

**Start-up's objects.** Python's cyclic collector walks every object it tracks at a full
(generation 2) collection, and holds the event loop while it does; two thirds of what a
floor's daemon tracks start-up made (modules, paytables and their exact analyses, every
table rebuilt from its journal), and each full collection held every table's card 120-200 ms
on a floor of 256 tables. Once READY=1 is sent, `settle_the_heap` collects once (start-up's
own garbage goes) and freezes what is left (`gc.freeze`): those objects are never walked
again. What the tables make from then on is collected as before; an object frozen at start
that is let go later is still freed by its reference count; only a reference cycle among
frozen objects, let go later, would outlive its use, and what start-up makes (the modules,
the paytables, the tables and their parts) is kept for the process's life.
"""

from __future__ import annotations

import ctypes
import gc
from typing import Any, Final

import structlog

log = structlog.get_logger("daemon")

M_MMAP_THRESHOLD: Final = -3  # glibc's malloc.h
LARGE_BLOCK: Final = 256 * 1024  # bytes: a block this large or larger is mapped on its own


def _c_function(name: str, *argtypes: type[ctypes._SimpleCData[Any]]) -> Any:  # noqa: ANN401 - a ctypes function
    """The C library's function `name` taking `argtypes` and returning an int; None where
    the C library has none (not glibc)."""
    try:
        function = getattr(ctypes.CDLL(None), name)
    except (OSError, AttributeError):
        log.info("heap.c_function_unavailable", function=name)
        return None
    function.argtypes = argtypes
    function.restype = ctypes.c_int
    return function


def hand_large_blocks_back(threshold: int = LARGE_BLOCK) -> bool:
    """Hold the C library's mmap threshold at `threshold`: each block that large is unmapped
    (its memory back to the kernel) when freed. False where the C library has no `mallopt`
    or refuses."""
    mallopt = _c_function("mallopt", ctypes.c_int, ctypes.c_int)
    if mallopt is None:
        return False
    held = bool(mallopt(M_MMAP_THRESHOLD, threshold))
    if not held:
        log.warning("heap.mmap_threshold_refused", threshold=threshold)
    return held


def manage_the_heap() -> None:
    """The daemon's own process, from its start: large blocks handed back when freed, and
    free pages inside the heap after each full collection."""
    hand_large_blocks_back()
    trim_after_full_collections()


def trim_after_full_collections() -> bool:
    """After each full collection, hand the heap's free pages back (`malloc_trim(0)`). False
    where the C library has no `malloc_trim`."""
    malloc_trim = _c_function("malloc_trim", ctypes.c_size_t)
    if malloc_trim is None:
        return False

    def after(phase: str, info: dict[str, int]) -> None:
        if phase == "stop" and info["generation"] == 2:
            malloc_trim(0)

    gc.callbacks.append(after)
    return True


def settle_the_heap() -> None:
    """Collect start-up's garbage, then freeze what is left out of later collections."""
    gc.collect()
    gc.freeze()
