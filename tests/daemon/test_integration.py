"""The daemon end to end: a real mosquitto, the emulated shoe on a pty, requests over MQTT.

Each example round log is played at a real table: its wagers and actions are published on
the request topics and its cards are dealt by the emulated shoe. What the daemon publishes
must be exactly what `shoe2mqtt replay` decides for the same log, on the right topics, in
the same order.
"""

from __future__ import annotations

import json
import signal
from typing import TYPE_CHECKING, Any

import pytest

from daemon.round_log import replay
from daemon.simulator.tables import DEMO_TABLES
from daemon.testing import DaemonProcess, write_service_config
from daemon.wire.round_message import ROUND_CONTRACT, STATE_CONTRACT
from drivers.emulator import EmulatedShoe, EmulatorSettings
from rules.games import Game
from tests.daemon.pit import BASE, play, read_example, running_pit, shoe_script

if TYPE_CHECKING:
    from pathlib import Path

    from daemon.testing import Mosquitto

ENVELOPE = ("schema", "id", "table", "seq", "ts")


def _stripped(body: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in body.items() if k not in (*ENVELOPE, "review")}


@pytest.mark.parametrize(
    "example",
    [
        "blackjack-queen-of-hearts.jsonl",
        "double-attack-three-eights.jsonl",
        "triple-attack-dealer-22.jsonl",
    ],
)
@pytest.mark.parametrize("contract", [STATE_CONTRACT, ROUND_CONTRACT])
async def test_a_round_at_the_table_publishes_what_the_rules_decide(
    example: str, contract: int, mosquitto: Mosquitto
) -> None:
    """Under either console contract: contract 4's round messages carry what contract 3
    publishes on its own topics (read here through what they carried)."""
    table, events, lines = read_example(example)
    expected = list(replay(lines))
    async with running_pit(table, shoe_script(events), mosquitto, contract=contract) as pit:
        errors = await play(pit, events)
    settlements = pit.settlements()
    assert [_stripped(s) for s in settlements] == [r for r in expected if r["type"] == "settlement"]
    assert all(s["review"] is False for s in settlements)
    floor = [_stripped(n) for n in pit.of("notice/floorperson_required")]
    assert floor == [r for r in expected if r["type"] == "notice"]
    rejected = [r for r in expected if r["type"] == "rejected"]
    refused_cards = pit.of("notice/card_rejected")
    assert [e["message"] for e in errors] + [n["message"] for n in refused_cards] == [
        r["message"] for r in rejected
    ]
    published = [
        m
        for m in pit.messages
        if m.topic.startswith(f"{BASE}/{table['id']}/")
        and "/request/" not in m.topic
        and not m.carried
        and "seq" in m.body  # not a state without an envelope (docs/mqtt.md)
    ]
    sequence = [m.body["seq"] for m in published]
    assert sequence == sorted(sequence)  # the daemon's order: QoS 1 over one connection
    assert len(set(sequence)) == len(sequence)
    rounds = [m for m in published if m.topic.endswith("/round")]
    assert bool(rounds) == (contract == ROUND_CONTRACT)  # numbered under contract 4 only


async def test_the_hole_card_is_on_no_topic_before_its_reveal(mosquitto: Mosquitto) -> None:
    table, events, _ = read_example(
        "triple-attack-dealer-22.jsonl"
    )  # hole card QC, unique in the round
    async with running_pit(table, shoe_script(events), mosquitto) as pit:
        await play(pit, events)
    payloads = [m.payload for m in pit.messages]
    [reveal] = [
        i for i, m in enumerate(pit.messages) if m.topic.endswith("/event/hole_card_revealed")
    ]
    assert all(b"QC" not in payload for payload in payloads[:reveal])
    assert b'"card":"QC"' in payloads[reveal]
    for message in pit.messages[:reveal]:
        if message.topic.endswith("/round") and message.body["round"]:
            dealer = message.body["round"]["dealer"]["cards"]
            assert dealer[1:2] in ([], [None])


async def test_a_display_connecting_mid_round_gets_the_picture_at_once(
    mosquitto: Mosquitto, subscribe: Any
) -> None:
    table, events, _ = read_example("blackjack-queen-of-hearts.jsonl")
    async with running_pit(table, shoe_script(events), mosquitto) as pit:
        await play(pit, events[:17])  # the deal is done, seat 1's pair is paid; play goes on
        async with subscribe(f"{BASE}/{table['id']}/round", f"{BASE}/bridge/+/state") as display:
            first = await display.next_on(f"{BASE}/{table['id']}/round")
            assert first.retain is True
            body = json.loads(first.payload)
    round_ = body["round"]
    assert round_["stage"] == "playing"
    assert round_["dealer"]["cards"] == ["KS", None]
    assert [s["seat"] for s in round_["seats"]] == [1, 3, 5]
    assert [s["outcome"] for s in body["settlements"]] == [
        "no_20",
        "suited_20",
        "queen_of_hearts_pair",
    ]


async def test_every_command_good_and_bad_gets_its_response(mosquitto: Mosquitto) -> None:
    table, _, _ = read_example("blackjack-queen-of-hearts.jsonl")
    async with running_pit(table, "SHUFFLE BURN 2C 9D 8C 10H 7S", mosquitto) as pit:
        cases: list[tuple[str, dict[str, Any], str | None]] = [
            ("status", {}, None),
            ("shuffle", {}, None),
            ("wager", {"seat": 1, "kind": "blackjack", "amount": "25.00"}, None),
            ("wager", {"seat": 1, "kind": "blackjack", "amount": 25}, "malformed_request"),
            ("wager", {"seat": 8, "kind": "blackjack", "amount": "25.00"}, "wager_rejected"),
            ("withdraw", {"seat": 2, "kind": "blackjack"}, "wager_rejected"),
            ("action", {"seat": 1, "action": "stand"}, "action_rejected"),
            ("card", {"card": "QH"}, "no_unreadable_card"),
            ("void", {"reason": "misdeal"}, None),
            ("void", {}, "round_state"),
            ("fly", {}, "unknown_command"),
        ]
        for command, body, code in cases:
            response = await pit.request(command, **body)
            assert response["command"] == command
            assert response["status"] == ("ok" if code is None else "error"), response
            if code is not None:
                assert response["error"]["code"] == code
        status = await pit.request("status")
    assert status["data"]["reader"]["link"] == "connected"
    assert status["data"]["reader"]["identity"]["vendor"] == "shoe2mqtt"


@pytest.mark.parametrize(
    ("stop", "exit_code"), [(signal.SIGKILL, -signal.SIGKILL), (signal.SIGTERM, 0)]
)
async def test_availability_goes_offline_when_the_daemon_dies_or_stops(
    tmp_path: Path, mosquitto: Mosquitto, subscribe: Any, stop: signal.Signals, exit_code: int
) -> None:
    """SIGKILL: the broker publishes the will; SIGTERM: the daemon says offline itself."""
    async with EmulatedShoe(EmulatorSettings(protocol="reference", seed=1)) as shoe:
        config = write_service_config(
            tmp_path / "shoe2mqtt.toml",
            mosquitto,
            node="killed",
            state_directory=tmp_path / "state",
            tables=[(DEMO_TABLES[Game.TRIPLE_ATTACK], shoe.path)],
        )
        daemon = DaemonProcess(config, tmp_path / "daemon.log")
        await daemon.start()
        try:
            async with subscribe(f"{BASE}/bridge/killed/state") as display:
                while (await display.next(within=15)).payload != b"online":
                    pass
                daemon.send_signal(stop)
                assert (await display.next(within=15)).payload == b"offline"
        finally:
            returncode = await daemon.wait()
    assert returncode == exit_code, daemon.tail()
