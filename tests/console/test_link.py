"""What the console's link makes of the table's messages (daemon/dealer_console/link.py):
under console contract 4 the answer to a request rides on the round message it made."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING

from daemon.dealer_console.contract import Contract
from daemon.dealer_console.link import ConsoleLink
from daemon.display.model import PitModel
from daemon.mqtt.settings import MqttSettings
from tests.daemon.tables import SEEN, make_service

if TYPE_CHECKING:
    from daemon.dealer_console.contract import Sent
    from daemon.wire.envelope import Outbound


def _link() -> tuple[ConsoleLink, list[int]]:
    changes: list[int] = []
    link = ConsoleLink(
        MqttSettings.from_mapping({"host": "127.0.0.1"}),
        "bj1",
        PitModel("casino", only_table="bj1"),
        Contract("c"),
        lambda: changes.append(1),
    )  # never connected: it is handed what the broker would deliver
    return link, changes


def _a_wager_under(contract: int) -> tuple[ConsoleLink, list[int], Sent, list[Outbound]]:
    """The console's link, a wager it sent, and what a table under `contract` answered."""
    link, changes = _link()
    sent = link.contract.request("wager", {"seat": 1, "kind": "blackjack", "amount": "25"}, "ann")
    service = make_service()
    service.apply_body("start", {"protocol": "reference", "contract": contract}, SEEN)
    record = {"command": "wager", "payload": sent.payload.decode()}
    return link, changes, sent, service.apply_body("request", record, SEEN)


def test_under_contract_4_the_answer_and_the_round_come_in_one_message() -> None:
    link, changes, sent, [message] = _a_wager_under(4)
    assert message.topic == "casino/bj1/round"
    link._take(message.topic, message.payload)  # what the broker would hand it
    assert sent.answered
    assert sent.answer is not None
    assert sent.answer["status"] == "ok"
    assert link.contract.seen == message.seq
    assert link.model.tables["bj1"].round is not None
    assert link.model.tables["bj1"].round["seats"][0]["wagers"] == {"blackjack": "25.00"}
    assert changes


def test_under_contract_3_the_answer_comes_on_its_response_topic() -> None:
    link, _, sent, out = _a_wager_under(3)
    [response] = [m for m in out if "/response/" in m.topic]
    link._take(response.topic, response.payload)  # what the broker would hand it
    assert sent.answer == json.loads(response.payload)
