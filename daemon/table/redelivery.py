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

import hashlib
import json
import sys
from typing import Any, Final

KEPT: Final = 64  # answers remembered per table: a redelivery comes within seconds
# `json.dumps(..., separators=(",", ":"))`, made once: an answer is kept for every request.
_COMPACT: Final = json.JSONEncoder(separators=(",", ":"))


class Answered:
    """The table's latest answers, by the request they answered.

    Each is kept as its JSON text: a dict that holds a dict is an object Python's cycle
    collector walks at every full collection, for as long as it lives, and a floor of 256
    tables keeps 16,000 (14,000 of the daemon's 178,000 tracked objects three minutes into
    a floor's run, measured); text is not walked. A redelivery, the rare case, pays for
    reading it again. The text is interned: nearly every answer is the same
    `{"status":"ok","data":{}}`, kept once for the floor instead of 16,000 times (0.9 MiB);
    an interned text no table keeps any longer is freed. Each is found by the first 16 bytes
    of its request's SHA-256, kept as bytes (a floor's 16,000 keys as hex text were 1.3 MiB,
    as bytes 0.8), in a plain dict, oldest first (an OrderedDict's links cost another
    0.8 MiB)."""

    def __init__(self) -> None:
        self._answers: dict[bytes, str] = {}

    @staticmethod
    def key(command: str, payload: bytes) -> bytes:
        return hashlib.sha256(command.encode() + b"\0" + payload).digest()[:16]

    def get(self, key: bytes) -> dict[str, Any] | None:
        kept = self._answers.get(key)
        if kept is None:
            return None
        answer: dict[str, Any] = json.loads(kept)  # read afresh: a caller's change is its own
        return answer

    def keep(self, key: bytes, answer: dict[str, Any]) -> None:
        """`answer`: the response's `status` with its `data` or `error`."""
        self._keep(key, _COMPACT.encode(answer))

    def _keep(self, key: bytes, text: str) -> None:
        self._answers.pop(key, None)  # kept again: the newest
        self._answers[key] = sys.intern(text)
        while len(self._answers) > KEPT:
            del self._answers[next(iter(self._answers))]

    def state(self) -> list[list[Any]]:
        """Each key in hex beside its answer's JSON text (a checkpoint at every round's end
        writes them, and text is written as it is kept)."""
        return [[key.hex(), answer] for key, answer in self._answers.items()]

    @classmethod
    def from_state(cls, data: list[list[Any]] | None) -> Answered:
        """From `state()`; checkpoints written before hold each answer as its mapping."""
        answered = cls()
        for key, answer in data or []:
            if isinstance(answer, str):
                if not isinstance(json.loads(answer), dict):
                    raise TypeError(f"an answer kept is not a JSON object: {answer[:40]!r}")
                answered._keep(bytes.fromhex(str(key)), answer)
            else:
                answered.keep(bytes.fromhex(str(key)), dict(answer))
        return answered
