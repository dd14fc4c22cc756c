"""A request may say who sent it (`by`): the journal keeps it with the request's bytes, the
table obeys the request as if it were not there, and a `by` that names no one is refused."""

from __future__ import annotations

import pytest

from daemon.wire.requests import MAX_SENDER, RequestError, parse_request
from tests.daemon.tables import make_service, request, response


def test_by_is_taken_apart_from_the_fields() -> None:
    parsed = parse_request(b'{"transaction":"c-1","seen":4,"by":"alice","seat":1}')
    assert (parsed.by, parsed.fields, parsed.seen) == ("alice", {"seat": 1}, 4)
    assert parse_request(b"{}").by is None


@pytest.mark.parametrize(
    "by", ['""', "7", "null", '"' + "x" * (MAX_SENDER + 1) + '"', '"a\\nb"', '["alice"]']
)
def test_a_by_that_names_no_one_is_refused(by: str) -> None:
    if by == "null":  # null is the same as leaving it out
        assert parse_request(b'{"by":null}').by is None
        return
    with pytest.raises(RequestError) as refused:
        parse_request(('{"by":' + by + "}").encode())
    assert refused.value.code == "malformed_request"
    assert refused.value.message.startswith("by: ")


def test_a_request_with_by_is_obeyed_as_one_without() -> None:
    service = make_service()
    answered = response(
        request(service, "wager", seat=1, kind="blackjack", amount="25.00", by="alice")
    )
    assert answered["status"] == "ok", answered
    for command in ("close_betting", "status"):
        assert response(request(service, command, by="bob"))["status"] == "ok"
    refused = response(request(service, "status", by=""))
    assert refused["error"]["code"] == "malformed_request"
