"""A helper process the daemon starts ends with the daemon, however the daemon ends.

The daemon hands slow work to processes of their own (the archiver, the count of closed
days) and kills them when it stops. A daemon that is killed outright (SIGKILL, the OOM
killer, a watchdog) cannot: its helper ran on alone, reading the journal for seconds or
minutes beside the daemon that replaced it. Under systemd the unit's control group is killed
whole; anywhere else the kernel does it, asked by the helper itself at its start (Linux's
`PR_SET_PDEATHSIG`: a signal when the process that started it ends). A helper whose daemon
ended before it could ask ends at once: it was started for a daemon that is gone.

The helper is told its daemon's process id in its job (`parent`): a helper started by hand,
or by a test, with no such field runs as before.
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import signal
from typing import Final

_PR_SET_PDEATHSIG: Final = 1  # <linux/prctl.h>


class ParentEnded(SystemExit):
    """The daemon that started this helper has ended: nothing is to be done for it."""

    def __init__(self, parent: int) -> None:
        super().__init__(f"the daemon that started this process ({parent}) has ended")


def end_with_parent(parent: int | None) -> None:
    """Be sent SIGTERM when the process that started this one ends; raise `ParentEnded` if
    it is no longer `parent` (it ended before this could ask). Nothing if `parent` is None."""
    if parent is None:
        return
    # A system call filter may refuse prctl (the unit's filter allows it: @process); then
    # the helper is as it was before, and the parent's check below still holds.
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_PDEATHSIG, int(signal.SIGTERM), 0, 0, 0)
    if os.getppid() != parent:
        raise ParentEnded(parent)
