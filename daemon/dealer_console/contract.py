"""The console's side of the dealer console's contract (docs/mqtt.md, version 2), sans I/O.

What every request the console sends carries, and what it may send again when the table did
not answer:

- `transaction`: the console's id, a number drawn when it starts (so a restarted console
  never repeats one) and a counter: unique for the table. A request sent again keeps its
  transaction: both answers are the answer to the one tap.
- `seen`: the highest `seq` of the table's messages the console had received (the round
  snapshot's `as_of` counts too), at the moment it sends.
- `by`: the dealer logged in, which the daemon journals with the request.

Sending again (`again`) follows the contract's rules: a `shuffle` goes again byte for byte
(it keeps the `seen` of its tap: the shoe was shuffled when the dealer tapped it, and a daemon
that obeyed it answers it as a duplicate); an `action` or a `card` only once a `status` asked
after it was answered (its snapshot shows whether the first was applied: an action twice is
two); anything else with its `seen` as it is now.
"""

from __future__ import annotations

import json
import secrets
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any, Final

KEPT: Final = 64  # requests remembered for an answer or a resend; a dealer taps a few a round
# An action or a card twice is two: sent again only once `status` shows the first was not applied.
NEEDS_STATUS: Final = frozenset({"action", "card"})


class NotYet(Exception):
    """A request that may not be sent again yet; the message says what to do."""


@dataclass(slots=True)
class Sent:
    """One request the console sent: what it said, and the table's answer once heard."""

    transaction: str
    command: str
    fields: dict[str, Any]
    by: str
    payload: bytes
    answer: dict[str, Any] | None = None
    status_checked: bool = False  # a `status` sent after it, answered: it may go again
    times: int = 1

    @property
    def answered(self) -> bool:
        return self.answer is not None


@dataclass(slots=True)
class Contract:
    console_id: str
    boot: str = field(default_factory=lambda: secrets.token_hex(3))
    seen: int = 0
    _count: int = 0
    _sent: OrderedDict[str, Sent] = field(default_factory=OrderedDict)

    def heard(self, body: dict[str, Any]) -> None:
        """A message of the table: its `seq` (and a snapshot's `as_of`) is now seen."""
        for key in ("seq", "as_of"):
            value = body.get(key)
            if isinstance(value, int) and not isinstance(value, bool) and value > self.seen:
                self.seen = value

    def request(self, command: str, fields: dict[str, Any], by: str) -> Sent:
        """A new request, its bytes ready to publish."""
        self._count += 1
        transaction = f"{self.console_id}-{self.boot}-{self._count}"
        sent = Sent(transaction, command, dict(fields), by, self._payload(transaction, fields, by))
        self._sent[transaction] = sent
        while len(self._sent) > KEPT:
            self._sent.popitem(last=False)
        return sent

    def answer(self, body: dict[str, Any]) -> Sent | None:
        """A response on the table's response topic: the request it answers, if ours. A
        `status` answered clears the way for the actions and cards unanswered before it."""
        sent = self._sent.get(str(body.get("transaction")))
        if sent is None or sent.command != body.get("command"):
            return None
        if sent.answer is None or not body.get("duplicate"):
            sent.answer = body
        if sent.command == "status":
            for earlier in self._sent.values():
                if earlier is sent:
                    break
                if not earlier.answered:
                    earlier.status_checked = True
        return sent

    def again(self, transaction: str) -> Sent:
        """The request `transaction`, to be published again by the contract's rules; raises
        `NotYet` (or KeyError for a transaction the console does not know)."""
        sent = self._sent[transaction]
        if sent.answered:
            raise NotYet("the table has answered it already")
        if sent.command in NEEDS_STATUS and not sent.status_checked:
            raise NotYet(
                "ask the table's status first: the round it shows says whether the first was "
                "applied (an action sent twice is two)"
            )
        if sent.command != "shuffle":  # a shuffle keeps the seen of its tap
            sent.payload = self._payload(transaction, sent.fields, sent.by)
        sent.status_checked = False
        sent.times += 1
        return sent

    def unanswered(self) -> list[Sent]:
        return [s for s in self._sent.values() if not s.answered and s.command != "status"]

    def forget(self, transaction: str) -> None:
        """The dealer let an unanswered request go (the round shows it was applied, or it is
        no longer wanted)."""
        self._sent.pop(transaction, None)

    def _payload(self, transaction: str, fields: dict[str, Any], by: str) -> bytes:
        body = {"transaction": transaction, "seen": self.seen, "by": by, **fields}
        return json.dumps(body, separators=(",", ":")).encode()
