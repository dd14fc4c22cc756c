"""A request the broker delivers again is answered again, never obeyed again.

MQTT delivers a QoS 1 message again when its acknowledgement is lost (a broker restarted,
a link that dropped at the wrong moment), and no console can prevent it. Obeyed twice, a
`hit` would declare a second card and a `close_betting` would close the next wager window.
So the table remembers its latest answers by request: a request with a `transaction`
whose command and bytes are exactly those of one it answered is answered again, as it was
then, marked `duplicate`, and changes nothing (docs/mqtt.md). A request without a
`transaction` is taken each time: nothing tells a repeat from a second tap.

Part of the table's state, journaled by its effect: a replay remembers what the live table
remembered (its checkpoint carries it).
"""

from __future__ import annotations

import collections
import hashlib
import json
from typing import Any, Final

KEPT: Final = 64  # answers remembered per table: a redelivery comes within seconds


class Answered:
    """The table's latest answers, by the request they answered.

    Each is kept as its JSON text: a dict that holds a dict is an object Python's cycle
    collector walks at every full collection, for as long as it lives, and a floor of 256
    tables keeps 16,000 (14,000 of the daemon's 178,000 tracked objects three minutes into
    a floor's run, measured); text is not walked. A redelivery, the rare case, pays for
    reading it again."""

    def __init__(self) -> None:
        self._answers: collections.OrderedDict[str, bytes] = collections.OrderedDict()

    @staticmethod
    def key(command: str, payload: bytes) -> str:
        return hashlib.sha256(command.encode() + b"\0" + payload).hexdigest()[:32]

    def get(self, key: str) -> dict[str, Any] | None:
        kept = self._answers.get(key)
        if kept is None:
            return None
        answer: dict[str, Any] = json.loads(kept)  # read afresh: a caller's change is its own
        return answer

    def keep(self, key: str, answer: dict[str, Any]) -> None:
        """`answer`: the response's `status` with its `data` or `error`."""
        self._answers[key] = json.dumps(answer, separators=(",", ":")).encode()
        self._answers.move_to_end(key)
        while len(self._answers) > KEPT:
            self._answers.popitem(last=False)

    def state(self) -> list[list[Any]]:
        return [[key, json.loads(answer)] for key, answer in self._answers.items()]

    @classmethod
    def from_state(cls, data: list[list[Any]] | None) -> Answered:
        answered = cls()
        for key, answer in data or []:
            answered.keep(str(key), dict(answer))
        return answered
