"""Ground truth under every interleaving: the real table service, fed the two streams of a
table (the shoe's frames, the console's requests) in every order their delays allow, with
faults, and held to what physically happened (docs/testing.md).

`run(seed, MIXES[name], rounds=...)` plays a table; `check(outcome)` is the invariant.
"""

from daemon.testing.interleaving.invariant import Verdict, check
from daemon.testing.interleaving.mixes import MIXES, REALISTIC, WIDE, Mix, run
from daemon.testing.interleaving.session import Outcome, Session

__all__ = ["MIXES", "REALISTIC", "WIDE", "Mix", "Outcome", "Session", "Verdict", "check", "run"]
