"""When a table's state is checkpointed beside the journal: what a restart replays at most.

At the end of every round; between rounds after `CHECKPOINT_BETWEEN_ROUNDS` events without
one (a shoe left unplugged journals its link, a round never opens); in any state after
`CHECKPOINT_ALWAYS` (a round left open for days). The checkpoint rides along with the next
commit (daemon.parts.commits).
"""

from __future__ import annotations

from typing import Final

CHECKPOINT_BETWEEN_ROUNDS: Final = 500
CHECKPOINT_ALWAYS: Final = 5000


def checkpoint_due(since: int, *, round_open: bool, round_ended: bool) -> bool:
    """Whether to checkpoint now, `since` events after the table's last checkpoint."""
    return (
        round_ended
        or (not round_open and since >= CHECKPOINT_BETWEEN_ROUNDS)
        or since >= CHECKPOINT_ALWAYS
    )
