"""The shipped broker example (docs/mosquitto/) enforces who may do what, with the real daemon.

Mosquitto 2.0 semantics these tests rely on, checked against 2.0.11: a PUBLISH the ACL does
not allow is acknowledged (QoS 1) and dropped, and logged at debug as "Denied PUBLISH";
`acl_file` does not check SUBSCRIBE at all (mosquitto 2.0's security_default.c grants every
subscription: "FIXME - implement ACL subscription strings"), so a display may subscribe to
`#`, but the broker checks read access on every message it delivers, and a request never
reaches anyone but the daemon. Ordering makes a refusal observable: a broker handles one
client's packets in order, so once a later, allowed request is answered, a refused one
published before it would have been answered too.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import re
import socket
import ssl
import stat
import subprocess
from typing import TYPE_CHECKING

import aiomqtt
import pytest
from paho.mqtt.reasoncodes import ReasonCode

from daemon.mqtt import LinkState
from daemon.mqtt.client import connected
from daemon.testing import STEP_TIMEOUT
from tests.security.conftest import (
    BASE,
    CONSOLE_1,
    CONSOLE_2,
    DAEMON,
    DISPLAY,
    DISPLAY_FILTERS,
    NODE,
    WATCH,
    SecureBroker,
)
from tests.security.secure_pit import SecurePit, running_secure_pit

if TYPE_CHECKING:
    from collections.abc import MutableMapping
    from pathlib import Path
    from typing import Any

HOLE = "QC"  # the dealer's hole card in every script here: in no other seat's hand
# Seat 1: KD KH (any 20); dealer: 7S up, the hole card down.
ROUND = f"KD 7S KH {HOLE}"
IDLE = "2C"  # a shoe that is never asked to deal
WAGERS = (
    {"seat": 1, "kind": "blackjack", "amount": "25.00"},
    {"seat": 1, "kind": "twenty_point_bonus", "amount": "10.00"},
)


def _hole_card_in(payload: bytes) -> bool:
    return re.search(rb"(?<![0-9A-Z])" + HOLE.encode() + rb"(?![0-9A-Z])", payload) is not None


async def _wager(pit: SecurePit, table: str) -> None:
    for wager in WAGERS:
        response = await pit.request(table, "wager", **wager)
        assert response["status"] == "ok", response
    response = await pit.request(table, "close_betting")
    assert response["status"] == "ok", response


async def _until_denied(broker: SecureBroker, user: str, topic: str) -> str:
    """The broker's log line for a refused publish (it may be written a moment later); the
    broker names each client by its user name (`use_username_as_clientid`)."""
    pattern = re.compile(rf"Denied PUBLISH from {re.escape(user)} .*'{re.escape(topic)}'")
    deadline = asyncio.get_running_loop().time() + STEP_TIMEOUT
    while not (found := pattern.search(broker.log())):
        assert asyncio.get_running_loop().time() < deadline, f"no {pattern.pattern!r} in the log"
        await asyncio.sleep(0.02)  # polling a file that another process writes
    return found.group(0)


# ---------------------------------------------------------------- (a) the daemon over TLS
async def test_the_daemon_over_tls_with_its_password_reaches_the_display(
    secure_broker: SecureBroker, tmp_path: Path
) -> None:
    async with running_secure_pit(secure_broker, {"bj-1": ROUND, "bj-2": IDLE}, tmp_path) as pit:
        await _wager(pit, "bj-1")
        for _ in range(4):
            await pit.deal("bj-1")
        [settlement] = pit.of("bj-1", "settlement")
        paid = (settlement["seat"], settlement["outcome"], settlement["won"])
        assert paid == (1, "any_20", "40.00")
        revealed_at = len(pit.messages)
        stand = await pit.request("bj-1", "action", seat=1, action="stand")
        assert stand["status"] == "ok", stand
        reveal = await pit.wait(lambda m: m.topic.endswith("/event/hole_card_revealed"))
    assert reveal.body["card"] == HOLE
    assert not any(_hole_card_in(m.payload) for m in pit.messages[:revealed_at])
    log = secure_broker.log()
    assert f"u'{DAEMON}'" in log  # the daemon logged in as its own user, over the TLS listener
    assert "Denied" not in log  # and the ACL let it do everything it does


# ---------------------------------------------------------------- (b) a display's request
async def test_a_display_request_is_dropped_by_the_broker(
    secure_broker: SecureBroker, tmp_path: Path
) -> None:
    async with (
        running_secure_pit(secure_broker, {"bj-1": ROUND, "bj-2": IDLE}, tmp_path) as pit,
        secure_broker.client(WATCH) as display,
    ):
        table = pit.daemon.tables["bj-1"].service
        before, seq = table.engine.public_view(), table.envelopes.next_seq
        refused = await pit.publish_request(
            display, "bj-1", "wager", seat=2, kind="blackjack", amount="25.00"
        )
        barrier = await pit.request("bj-1", "status")  # the console's, after the display's
        assert barrier["status"] == "ok"
        assert pit.responses_to(refused) == []
        assert table.engine.public_view() == before
        assert table.envelopes.next_seq == seq + 1  # the status response, nothing else
        line = await _until_denied(secure_broker, WATCH, f"{BASE}/bj-1/request/wager")
    assert "(d0, q1, r0," in line


# ---------------------------------------------------------------- (c) nobody else reads requests
@pytest.mark.parametrize("spy_user", [WATCH, CONSOLE_1])  # CONSOLE_1: the table's own console
async def test_only_the_daemon_reads_a_hole_card_entered_by_hand(
    secure_broker: SecureBroker, tmp_path: Path, spy_user: str
) -> None:
    spy_filters = [
        "#",
        f"{BASE}/#",
        f"{BASE}/+/request/#",
        f"{BASE}/bj-1/request/card",
        f"$share/spies/{BASE}/bj-1/request/#",
    ]
    script = ROUND.replace(HOLE, "??")  # the reader cannot read the hole card
    async with (
        running_secure_pit(secure_broker, {"bj-1": script, "bj-2": IDLE}, tmp_path) as pit,
        contextlib.AsyncExitStack() as stack,
    ):
        spy = (
            pit.consoles["bj-1"]  # one connection per user: the console the pit runs
            if spy_user == CONSOLE_1
            else await stack.enter_async_context(secure_broker.client(spy_user))
        )
        # Whatever SUBACK says (mosquitto 2.0's acl_file grants every subscription; the
        # dynamic-security plugin would refuse these with 0x80), nothing may be delivered.
        await spy.subscribe([(topic_filter, 1) for topic_filter in spy_filters])
        await _wager(pit, "bj-1")
        for _ in range(3):
            await pit.deal("bj-1")
        unreadable = await pit.deal("bj-1")
        assert unreadable["kind"] == "card_unreadable"
        entered = await pit.request("bj-1", "card", card=HOLE)
        assert entered["status"] == "ok", entered
        revealed_at = len(pit.messages)
        await pit.request("bj-1", "action", seat=1, action="stand")
        await pit.wait(lambda m: m.topic.endswith("/event/hole_card_revealed"))
        spied: list[aiomqtt.Message] = []
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(0.5):
                # A loop, not a comprehension: cancelled by the timeout, it keeps what it had.
                async for message in spy.messages:
                    spied.append(message)  # noqa: PERF401 - see above
    assert [m.topic.value for m in spied if "/request/" in m.topic.value] == []
    assert any("/response/" in m.topic.value for m in spied)  # the spy was listening
    assert not any(_hole_card_in(m.payload) for m in pit.messages[:revealed_at])
    [dealt] = [b for b in pit.of("bj-1", "event/card_dealt") if b.get("face_up") is False]
    assert dealt["card"] is None


# ---------------------------------------------------------------- (d) a console and its table
async def test_a_console_commands_its_own_table_only(
    secure_broker: SecureBroker, tmp_path: Path
) -> None:
    async with running_secure_pit(secure_broker, {"bj-1": IDLE, "bj-2": IDLE}, tmp_path) as pit:
        other = pit.daemon.tables["bj-2"].service
        before, seq = other.engine.public_view(), other.envelopes.next_seq
        console_1 = pit.consoles["bj-1"]
        refused = await pit.publish_request(
            console_1, "bj-2", "wager", seat=1, kind="blackjack", amount="25.00"
        )
        own = await pit.request("bj-1", "wager", seat=1, kind="blackjack", amount="25.00")
        assert own["status"] == "ok", own  # published after the refused one, answered
        assert pit.responses_to(refused) == []
        assert other.engine.public_view() == before
        assert other.envelopes.next_seq == seq
        assert pit.daemon.tables["bj-1"].service.engine.public_view()["round"] is not None
        await _until_denied(secure_broker, CONSOLE_1, f"{BASE}/bj-2/request/wager")
        # And the other table's own console still commands it.
        theirs = await pit.request("bj-2", "wager", seat=1, kind="blackjack", amount="25.00")
        assert theirs["status"] == "ok", theirs


# ---------------------------------------------------------------- (e) who may connect
@pytest.mark.parametrize(
    ("user", "password"),
    [(None, None), (DISPLAY, "not-the-password"), ("nobody", "whatever"), (DAEMON, "")],
    ids=["anonymous", "wrong-password", "unknown-user", "empty-password"],
)
async def test_only_users_with_their_password_may_connect(
    secure_broker: SecureBroker, user: str | None, password: str | None
) -> None:
    client = secure_broker.client(user, password)
    with pytest.raises(aiomqtt.MqttCodeError) as refused:
        async with connected(client):
            pass
    rc = refused.value.rc
    code = rc.value if isinstance(rc, ReasonCode) else rc
    # CONNACK "bad user name or password" or "not authorised": 4 or 5 in MQTT 3.1.1,
    # 0x86 or 0x87 as paho maps them to reason codes.
    assert code in (4, 5, 0x86, 0x87), rc
    assert "not authorised" in secure_broker.log()


async def test_there_is_no_plain_text_mqtt_and_no_unverified_broker(
    secure_broker: SecureBroker,
) -> None:
    # An MQTT CONNECT in clear text is no TLS ClientHello: the broker closes the connection.
    plain = aiomqtt.Client(
        secure_broker.host,
        secure_broker.port,
        username=DISPLAY,
        password=secure_broker.passwords[DISPLAY],
        timeout=2,
    )
    with pytest.raises(aiomqtt.MqttError):
        async with connected(plain):
            pass
    # A client that checks the broker against the system's CAs does not trust the test CA.
    untrusting = aiomqtt.Client(
        secure_broker.host,
        secure_broker.port,
        username=DISPLAY,
        password=secure_broker.passwords[DISPLAY],
        tls_params=aiomqtt.TLSParameters(),
        timeout=2,
    )
    with pytest.raises(aiomqtt.MqttError):
        async with connected(untrusting):
            pass


TLS_1_1_CIPHERS = ("-cipher", "DEFAULT:@SECLEVEL=0")  # OpenSSL 3 refuses 1.1 at level 1


def test_the_listener_speaks_tls_1_2_and_up_only(secure_broker: SecureBroker) -> None:
    context = ssl.create_default_context(cafile=secure_broker.ca)
    with (
        socket.create_connection((secure_broker.host, secure_broker.port), timeout=5) as raw,
        context.wrap_socket(raw, server_hostname=secure_broker.host) as tls,
    ):
        assert tls.version() in ("TLSv1.2", "TLSv1.3")
    # Python's ssl will not offer TLS 1.1 any more; openssl s_client still can, if asked.
    endpoint = f"{secure_broker.host}:{secure_broker.port}"
    old = subprocess.run(  # noqa: S603 - a fixed binary and arguments
        [*("/usr/bin/openssl", "s_client", "-connect", endpoint, "-tls1_1"), *TLS_1_1_CIPHERS],
        input=b"",
        capture_output=True,
        timeout=10,
        check=False,
    )
    assert old.returncode != 0
    assert b"alert protocol version" in old.stderr  # the broker's answer: not this version
    assert "unsupported protocol" in secure_broker.log()


# ---------------------------------------------------------------- (f) the daemon's own user
async def test_the_daemon_user_cannot_publish_outside_its_tables(
    secure_broker: SecureBroker,
) -> None:
    forbidden = [
        f"{BASE}/bj-9/settlement",  # a table of another pit
        f"{BASE}/bj-9/round",
        f"{BASE}/bridge/other",
        f"{BASE}/bridge/pit-b/state",  # another daemon's availability
        f"{BASE}/bridge/pit-b/info",  # and what it says it is
        f"{BASE}/bj-9/availability",
        f"{BASE}/bj-1/request/void",  # not even requests to its own table
        f"{BASE}/bj-1/elsewhere",
        "other/topic",
    ]
    barrier = f"{BASE}/bj-1/notice/barrier"
    async with secure_broker.client(DISPLAY) as display, secure_broker.client(DAEMON) as daemon:
        await display.subscribe([(topic_filter, 1) for topic_filter in DISPLAY_FILTERS])
        await daemon.subscribe(f"{BASE}/bj-1/request/+", qos=1)  # it reads its own requests
        for topic in forbidden:
            await daemon.publish(topic, b"{}", qos=1)
        await daemon.publish(barrier, b"{}", qos=1)
        async with asyncio.timeout(STEP_TIMEOUT):
            first = await anext(display.messages)
        assert first.topic.value == barrier  # nothing forbidden arrived before it
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(0.2):
                own = await anext(daemon.messages)
                pytest.fail(f"the daemon user published a request: {own.topic}")
    for topic in forbidden:
        await _until_denied(secure_broker, DAEMON, topic)


# ---------------------------------------------------------------- secrets and hidden cards
async def test_no_log_line_or_journal_holds_the_password_nor_a_log_line_the_hole_card(
    secure_broker: SecureBroker,
    tmp_path: Path,
    debug_logs: list[MutableMapping[str, Any]],
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    password = secure_broker.passwords[DAEMON]
    script = ROUND.replace(HOLE, "??")
    async with (
        running_secure_pit(secure_broker, {"bj-1": script, "bj-2": IDLE}, tmp_path) as pit,
        secure_broker.client(WATCH) as display,
    ):
        await _wager(pit, "bj-1")
        for _ in range(4):
            await pit.deal("bj-1")
        await pit.publish_request(display, "bj-1", "card", card=HOLE)  # refused by the broker
        entered = await pit.request("bj-1", "card", card=HOLE)
        assert entered["status"] == "ok", entered
        logged_before_reveal = (list(debug_logs), caplog.text)
        await pit.request("bj-1", "action", seat=1, action="stand")
        await pit.wait(lambda m: m.topic.endswith("/event/hole_card_revealed"))
    events, records = logged_before_reveal
    assert events  # the daemon did log (info and debug lines included)
    for event in events:
        assert not _hole_card_in(repr(event).encode()), event
    assert not _hole_card_in(records.encode())
    everything = repr(list(debug_logs)) + caplog.text + secure_broker.log()
    assert password not in everything
    state = tmp_path / "state"
    assert stat.S_IMODE(state.stat().st_mode) == 0o700
    for path in state.iterdir():
        assert stat.S_IMODE(path.stat().st_mode) == 0o600, path
        assert password.encode() not in path.read_bytes(), path


# ---------------------------------------------------------------- (g) client ids are users'
@pytest.mark.parametrize("intruder", [WATCH, CONSOLE_2])
async def test_no_other_user_can_throw_the_daemon_off_with_its_client_id(
    secure_broker: SecureBroker, tmp_path: Path, intruder: str
) -> None:
    """Measured on a broker without `use_username_as_clientid`: the display's user connecting
    as `shoe2mqtt-pit-a` 37 times in 20 s threw the daemon off 6 times. The example broker
    names every connection by its user, so the intruder only ever replaces itself (with
    CONSOLE_2: the pit's own bj-2 console, connected as that user)."""
    daemon_id = f"shoe2mqtt-{NODE}"
    async with running_secure_pit(secure_broker, {"bj-1": IDLE, "bj-2": IDLE}, tmp_path) as pit:
        for _ in range(10):
            async with connected(secure_broker.client(intruder, identifier=daemon_id)):
                pass
        answer = await pit.request("bj-1", "status")  # the daemon heard and answered since
        assert answer["status"] == "ok", answer
        assert pit.daemon.link.state is LinkState.CONNECTED
        bridge = [m.payload for m in pit.messages if m.topic == f"{BASE}/bridge/{NODE}/state"]
    assert bridge == [b"online"]  # the pit never saw it flap
    log = secure_broker.log()
    assert f"Client {daemon_id} already connected" not in log, log
    assert log.count(f"as {intruder} ") >= 10  # the broker named each attempt by its user
    assert log.count(f"as {daemon_id} ") == 1  # and the daemon connected once
