"""The console keeps the dealer console's contract (docs/mqtt.md, version 2) on every request
it sends and every one it sends again (daemon/dealer_console/contract.py)."""

from __future__ import annotations

import json

import pytest

from daemon.dealer_console.contract import KEPT, Contract, NotYet


def _body(payload: bytes) -> dict[str, object]:
    body: dict[str, object] = json.loads(payload)
    return body


def _answer(contract: Contract, command: str, transaction: str, **more: object) -> None:
    contract.answer({"command": command, "transaction": transaction, "status": "ok", **more})


def test_every_request_has_a_fresh_transaction_what_was_seen_and_who_sent_it() -> None:
    contract = Contract("console-bj-1")
    contract.heard({"seq": 41})
    contract.heard({"seq": 0, "as_of": 42})  # a snapshot outside the numbering
    contract.heard({"seq": 7})  # older: seen never goes back
    first = contract.request("wager", {"seat": 3, "kind": "blackjack", "amount": "25.00"}, "ann")
    second = contract.request("close_betting", {}, "ann")
    assert _body(first.payload) == {
        "transaction": first.transaction, "seen": 42, "by": "ann",
        "seat": 3, "kind": "blackjack", "amount": "25.00",
    }  # fmt: skip
    assert first.transaction != second.transaction
    assert first.transaction.startswith("console-bj-1-")
    # A console started again draws another number: no transaction of the table repeats.
    assert Contract("console-bj-1").request("status", {}, "ann").transaction != first.transaction


def test_a_shuffle_goes_again_byte_for_byte() -> None:
    contract = Contract("c")
    sent = contract.request("shuffle", {}, "ann")
    tapped = sent.payload
    contract.heard({"seq": 99})
    assert contract.again(sent.transaction).payload == tapped  # the seen of its tap


def test_an_action_goes_again_only_after_a_status_asked_after_it_was_answered() -> None:
    contract = Contract("c")
    hit = contract.request("action", {"seat": 1, "action": "hit"}, "ann")
    with pytest.raises(NotYet):
        contract.again(hit.transaction)
    status = contract.request("status", {}, "ann")
    with pytest.raises(NotYet):  # asked, not yet answered
        contract.again(hit.transaction)
    contract.heard({"seq": 12})
    _answer(contract, "status", status.transaction)
    again = contract.again(hit.transaction)
    assert _body(again.payload)["seen"] == 12  # with its seen as it is now
    assert again.transaction == hit.transaction
    with pytest.raises(NotYet):  # and once more only after another status
        contract.again(hit.transaction)


def test_a_wager_goes_again_with_its_seen_as_now_and_an_answered_one_never() -> None:
    contract = Contract("c")
    wager = contract.request("wager", {"seat": 1, "kind": "blackjack", "amount": "10"}, "ann")
    contract.heard({"seq": 5})
    assert _body(contract.again(wager.transaction).payload)["seen"] == 5
    _answer(contract, "wager", wager.transaction)
    with pytest.raises(NotYet):
        contract.again(wager.transaction)
    assert contract.unanswered() == []


def test_a_duplicate_answer_keeps_the_first_and_another_command_is_not_ours() -> None:
    contract = Contract("c")
    sent = contract.request("void", {}, "ann")
    assert contract.answer({"command": "wager", "transaction": sent.transaction}) is None
    _answer(contract, "void", sent.transaction, data={"first": True})
    _answer(contract, "void", sent.transaction, duplicate=True)
    assert sent.answer is not None
    assert sent.answer["data"] == {"first": True}


def test_what_the_console_remembers_is_bounded() -> None:
    contract = Contract("c")
    for _ in range(KEPT * 3):
        contract.request("wager", {}, "ann")
    assert len(contract.unanswered()) == KEPT
