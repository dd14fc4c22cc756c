"""A dealer console's request as the table reads it: its JSON, its shape, its answer.

The request gate (daemon.request_gate) judges the shape before a request costs anything;
the table judges what it means against the round. Both read it here, once.

Every request may say what the console had seen of the table when it sent it (`seen`: the
highest `seq` of the table's messages it had received), so that the table recognises a
request that crossed one of the shoe's cards on its way (daemon.table.crossing); and carries
`transaction`, which its response repeats (docs/mqtt.md, "Requests and responses"); and
may say who sent it (`by`: the dealer logged in at the console), which the journal keeps with
the request's bytes and the table otherwise ignores.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any, Final

MAX_REQUEST_BYTES: Final = 4096  # a request is a few fields; more is a mistake or an attack
MAX_SENDER: Final = 64  # characters of `by`: a dealer's name or a console's id


class RequestError(Exception):
    def __init__(self, code: str, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


@dataclass(frozen=True, slots=True)
class Request:
    """A request's fields, its transaction and what the console had seen taken apart."""

    fields: dict[str, Any]
    transaction: object = None
    seen: int | None = None  # None: the console did not say
    by: str | None = None  # who sent it (None: the console did not say); journaled, not judged


def parse_request(payload: bytes) -> Request:
    """The request's JSON object, its shape checked (`daemon.request_gate` uses it too)."""
    if not payload.strip():
        return Request({})
    if len(payload) > MAX_REQUEST_BYTES:
        raise RequestError("malformed_request", f"a request is at most {MAX_REQUEST_BYTES} bytes")
    try:
        fields = json.loads(payload)
    except (ValueError, RecursionError):
        # ValueError covers bad JSON, bad UTF-8 and integers past Python's digit limit;
        # RecursionError, nesting deep enough to exhaust the parser: a console's bytes must
        # never reach further than this answer.
        raise RequestError("malformed_request", "the payload is not a JSON request") from None
    if not isinstance(fields, dict):
        raise RequestError("malformed_request", "the payload is a JSON object")
    transaction = fields.pop("transaction", None)
    if transaction is not None and not isinstance(transaction, str | int):
        raise RequestError("malformed_request", "transaction: a string or an integer")
    seen = fields.pop("seen", None)
    if seen is not None and (isinstance(seen, bool) or not isinstance(seen, int) or seen < 0):
        raise RequestError(
            "malformed_request",
            "seen: the highest seq of this table's messages the console had received, "
            "a whole number from 0",
        )
    return Request(fields, transaction, seen, _sender(fields.pop("by", None)))


def _sender(by: object) -> str | None:
    """`by`: who at the console sent the request, kept in the journal with it."""
    if by is None:
        return None
    if not isinstance(by, str) or not 0 < len(by) <= MAX_SENDER or not by.isprintable():
        raise RequestError(
            "malformed_request",
            f"by: who sent the request, 1 to {MAX_SENDER} printable characters",
        )
    return by


def response_body(
    command: str, transaction: object, node: str | None, answer: dict[str, Any]
) -> dict[str, Any]:
    """The answer to a request: it repeats the transaction and names the node that answered
    (two daemons answering one table show as two nodes); `answer` is its `status` with its
    `data` (ok) or `error` (`refusal`)."""
    head = {"type": "response", "command": command, "transaction": transaction, "node": node}
    return head | answer


def refusal(error: RequestError) -> dict[str, Any]:
    return {"status": "error", "error": {"code": error.code, "message": error.message}}


def request_record(command: str, payload: bytes) -> dict[str, Any]:
    """A request as the journal keeps it: latin-1 maps every byte to one character, so the
    payload comes back byte for byte."""
    return {"command": command, "payload": payload.decode("latin-1")}


def no_fields(request: Request) -> None:
    if request.fields:
        raise RequestError(
            "malformed_request", f"{min(request.fields)}: this command takes no fields"
        )
