"""The `dealer` request: a console (or a supervisor) says who deals at the table from now on.

It changes nothing at the table: it is journaled like every request, and the numbers read
the dealer of each round from it (`daemon.numbers.records.dealer_named`). Its one field,
`dealer`, is a name of 1 to 64 printable characters (a login, a badge number).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Final

from daemon.wire.requests import RequestError

if TYPE_CHECKING:
    from daemon.wire.requests import Request

MAX_NAME: Final = 64


def dealer_request(request: Request) -> dict[str, str]:
    """The answer's data: the dealer named; a request of another shape is refused."""
    fields = request.fields
    name = fields.get("dealer")
    if set(fields) != {"dealer"} or not isinstance(name, str):
        raise RequestError("malformed_request", 'dealer: give {"dealer": "<name>"} only')
    name = name.strip()
    if not 1 <= len(name) <= MAX_NAME or not name.isprintable():
        raise RequestError(
            "malformed_request", f"dealer: a name of 1 to {MAX_NAME} printable characters"
        )
    return {"dealer": name}
