"""What a table says: engine outputs, notices and responses sealed on their topics, and the
retained round snapshot and table state (docs/mqtt.md)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from daemon.table.round_state import (
    CARRIED,
    ROUND_CHANGED,
    ROUND_CONTRACT,
    STATE_CONTRACT,
    state_message,
)
from daemon.table.state import MAX_ROUND_NOTICES, TableState
from daemon.wire.requests import response_body
from rules.outputs import Notice, Settlement

if TYPE_CHECKING:
    from daemon.wire.envelope import Outbound
    from rules.outputs import Output


class Publishing(TableState):
    """A table's messages: what it seals, on which topic, and what it keeps for the snapshot."""

    def _seal_outputs(self, outputs: list[Output]) -> tuple[list[Outbound], bool]:
        """The engine's outputs as messages, the round's settlements and notices kept for its
        snapshot; and whether the round ended."""
        out: list[Outbound] = []
        ended = False
        for output in outputs:
            body = output.to_mapping()
            kind = body["type"]
            if kind == "round_opened":
                self.review.clear()
                self.round_settlements.clear()
                self.round_notices.clear()
                if self.custody.doubt is not None:  # raised before the round, over its cards
                    self.review.append(self.custody.doubt)
            if kind == "round_ended":
                ended = True
            if isinstance(output, Settlement):
                body["review"] = bool(self.review)
                self._told.settled(self.table_id, output.result.value)
                self.round_settlements.append(body)
                out.append(self._numbered(self.topics.settlement(self.table_id), body))
                self._hold_info(  # written once the commit has published it
                    "table.settled",
                    table=self.table_id,
                    round=output.round_id,
                    seat=output.seat,
                    wager=output.wager.value,
                    outcome=output.outcome,
                    result=output.result.value,
                    won=body["won"],
                )
            elif isinstance(output, Notice):
                self._told.noticed(self.table_id, output.kind)
                self._keep_notice(body)
                out.append(self._numbered(self.topics.notice(self.table_id, output.kind), body))
            else:
                out.append(self._numbered(self.topics.event(self.table_id, kind), body))
        return out, ended

    def _flag(self, reason: str, message: str) -> list[Outbound]:
        if self.engine.round_open:
            self.review.append(reason)
        out = [self.notice(reason, message)]
        return [*out, self.snapshot()] if self.engine.round_open or self.custody.holding else out

    def notice(self, kind: str, message: str) -> Outbound:
        """A notice of the daemon's own to the pit: the reader, the link, the outbox."""
        body = Notice(self.round_id, kind, None, message).to_mapping()
        if self.engine.round_open:
            self._keep_notice(body)
        self._told.noticed(self.table_id, kind)
        self._log_info(
            "table.notice", table=self.table_id, round=self.round_id, kind=kind, message=message
        )
        return self._numbered(self.topics.notice(self.table_id, kind), body)

    def _numbered(self, topic: str, body: dict[str, Any]) -> Outbound:
        """A round event, settlement or notice: its own numbered message on `topic`; under
        contract 4, while an input is applied, carried by the input's one message."""
        if self._applying and self.contract >= ROUND_CONTRACT:
            self._carried.append(body)
            return CARRIED
        return self.envelopes.seal(topic, body)

    def one_message(self, out: list[Outbound]) -> list[Outbound]:
        """Under contract 4, what an input caused (`out`, as `apply` made it) as one numbered
        message on `<table>/round`, retained: the round as it stands after the input, `as_of`
        its own `seq`, with `events` (what it caused, in order) and, for a request, `response`.
        The table's reader state and the surveillance's messages keep their own topics (their
        own retained value; their ACL) and come first: the round message is sealed last, so
        `seq` follows the order the outbox sends them in. Nothing changed, nothing is sent."""
        carried, self._carried = self._carried, []
        response, self._response = self._response, None
        own = [m for m in out if m is not CARRIED and m is not ROUND_CHANGED]
        if len(own) == len(out) and response is None:
            return out
        seq = self.envelopes.next_seq
        body: dict[str, Any] = {"type": "round_snapshot", "as_of": seq, **self._snapshot_body()}
        body["events"] = carried
        if response is not None:
            body["response"] = response
        return [
            *own,
            self.envelopes.seal(self.topics.round_snapshot(self.table_id), body, retain=True),
        ]

    def _keep_notice(self, body: dict[str, Any]) -> None:
        """For the snapshot, which shows the latest only: a round a console fills with
        refused wagers must not grow the daemon's memory either."""
        self.round_notices.append(body)
        del self.round_notices[:-MAX_ROUND_NOTICES]

    def _snapshot_body(self) -> dict[str, Any]:
        view = self.engine.public_view()
        custody = self.custody
        view["review"] = list(self.review)
        view["awaiting_card_entry"] = custody.awaiting_entry
        view["doubt"] = custody.doubt
        view["cards_held"] = custody.cards_held
        wait = custody.wait
        view["awaiting"] = (
            None if wait is None else {**wait.awaiting.to_mapping(), "since": wait.since}
        )
        view["settlements"] = list(self.round_settlements)
        view["notices"] = self.round_notices[-MAX_ROUND_NOTICES:]
        return view

    def snapshot(self) -> Outbound:
        """The round snapshot: under contract 3 a state outside the numbering, `as_of` the
        last `seq` sealed (daemon.table.round_state); before, the next numbered message."""
        # What the first held card waits for, as of this event (the wait's timer with it).
        self.custody.follow_wait(self._awaiting(), self.envelopes.time())
        if self.contract >= STATE_CONTRACT:
            if self._applying:  # the daemon makes the state when it sends one: the latest
                return ROUND_CHANGED
            as_of, at = self.envelopes.next_seq - 1, self.envelopes.time()
            topic = self.topics.round_snapshot(self.table_id)
            return state_message(topic, self._snapshot_body(), as_of=as_of, ts=at)
        body = {"type": "round_snapshot", **self._snapshot_body()}
        return self.envelopes.seal(self.topics.round_snapshot(self.table_id), body, retain=True)

    def state(self) -> Outbound:
        """The retained table state message (reader link, faults, identity)."""
        body = {
            "type": "table_state",
            "game": self.config.game.value,
            "reader": self.reader.to_mapping(),
        }
        return self.envelopes.seal(self.topics.table_state(self.table_id), body, retain=True)

    def _answer(self, command: str, transaction: object, answer: dict[str, Any]) -> Outbound:
        """The response: `answer` is its status with its data or error (and `duplicate`)."""
        body = response_body(command, transaction, self.node, answer)
        if self._applying and self.contract >= ROUND_CONTRACT:  # carried: `one_message`
            self._response = body
            return CARRIED
        return self.envelopes.seal(self.topics.response(self.table_id, command), body)
