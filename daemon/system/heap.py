"""What start-up made is kept for the process's life: out of every later full collection.

Python's cyclic collector walks every object it tracks at a full (generation 2) collection,
which it runs whenever the objects that survived collections have grown by a quarter. A
floor's daemon holds some 200,000 of them once started (modules, paytables and their exact
analyses, every table rebuilt from its journal) and grows from there; measured on a floor
of 256 tables, each full collection held the event loop 110-170 ms, once a minute, and every
table's card waited behind it (docs/performance.md, "A floor's hour after the memory work").

Once READY=1 is sent, `settle_the_heap` collects once (start-up's own garbage goes) and
freezes what is left (`gc.freeze`): those objects are never walked again. What the tables
make from then on is collected as before; an object frozen at start that is let go later is
still freed by its reference count, and only a reference cycle among frozen objects would
outlive its use, which start-up's long-lived state does not make.
"""

from __future__ import annotations

import gc


def settle_the_heap() -> None:
    """Collect start-up's garbage, then freeze what is left out of later collections."""
    gc.collect()
    gc.freeze()
