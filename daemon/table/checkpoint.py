"""A table's whole state as data and back (`checkpoint`, `restore`): what the daemon keeps
beside the journal so that a restart replays only the events after it."""

from __future__ import annotations

from typing import Any, Final

from daemon.table.crossing import RoundHistory
from daemon.table.custody import Custody
from daemon.table.reader_state import ReaderState
from daemon.table.records import event_of_body
from daemon.table.redelivery import Answered
from daemon.table.state import TableState, policy_for
from drivers import events as shoe
from drivers.receiver import FrameReceiver
from rules.config import TableConfig
from rules.engine_state import engine_state, restore_engine
from rules.errors import RulesError

# The version of `TableService.checkpoint()`'s data; `restore` reads this one only.
CHECKPOINT_VERSION: Final = 1


class CheckpointError(Exception):
    """A checkpoint this code cannot restore (another version, or damaged data)."""


class Checkpointing(TableState):
    """The table's state as data (`checkpoint`) and back (`restore`)."""

    def checkpoint(self) -> dict[str, Any]:
        """The table's whole state as data: what `restore` needs to go on exactly here.

        The engine (its shoe, barred seats, round numbering and the current or last round),
        the settings (and any waiting for the round's end), the reader, the cards in custody
        (held behind an unreadable one, for a declaration or for a doubt, and why), the
        round's history (for a request that crossed a card), its review, settlements and
        notices (the snapshot shows them until the next round opens), what the table holds of
        the shoe's numbering (decision D3: its last frame and identity) and its protocol, the
        node, the shoe's silence and the next message number. Not the log switch, the
        recorder or the observer: they are the caller's, not the table's.
        """
        pending = self.pending_config
        return {
            "version": CHECKPOINT_VERSION,
            "config": self.config.to_mapping(),
            "pending_config": None if pending is None else pending.to_mapping(),
            "engine": engine_state(self.engine),
            "reader": self.reader.state(),
            "custody": self.custody.state(),
            "history": self.history.state(),
            "answered": self.answered.state(),
            "review": list(self.review),
            "round_settlements": list(self.round_settlements),
            "round_notices": list(self.round_notices),
            "receiver": self.receiver.state(),
            "protocol": self.protocol,
            "node": self.node,
            "contract": self.contract,
            "shoe_events": self.shoe_events,
            "link_fresh": self.link_fresh,
            "silence_noticed": self.silence_noticed,
            "next_seq": self.envelopes.next_seq,
            "surveillance": self.surveillance.state(),  # surveillance hook
        }

    def restore(self, state: dict[str, Any]) -> None:
        """Become the table `state` describes (from `checkpoint`, or a checkpoint of an
        earlier version of this code); `CheckpointError` when it cannot be read, leaving
        this service as it was."""
        if state.get("version") != CHECKPOINT_VERSION:
            raise CheckpointError(
                f"checkpoint version {state.get('version')!r}; "
                f"this shoe2mqtt reads {CHECKPOINT_VERSION}"
            )
        try:
            config = TableConfig.from_mapping(state["config"])
            pending = state["pending_config"]
            pending_config = None if pending is None else TableConfig.from_mapping(pending)
            engine = restore_engine(config, state["engine"])
            reader = ReaderState.from_state(state["reader"])
            # Checkpoints written before declarations keep `held`, `doubt` and `doubt_at` at
            # the top level.
            custody = Custody.from_state(state.get("custody", state))
            history = RoundHistory.from_state(state.get("history"))
            answered = Answered.from_state(state.get("answered"))
            receiver = _receiver(state["protocol"], state["receiver"])
            self.surveillance.restore(config, state.get("surveillance"))  # surveillance hook
        except (KeyError, TypeError, ValueError, RulesError) as exc:
            raise CheckpointError(f"checkpoint: {type(exc).__name__}: {exc}") from None
        self.config, self.engine, self.reader = config, engine, reader
        self.custody, self.history, self.answered = custody, history, answered
        self.pending_config = pending_config
        self.review = list(state["review"])
        self.round_settlements = list(state["round_settlements"])
        self.round_notices = list(state["round_notices"])
        self.protocol = state["protocol"]
        self.receiver.load(receiver)  # in place: the table's driver pumps the same session
        self.node = state.get("node")
        self.contract = int(state.get("contract", 1))  # a checkpoint from before contract 2
        self.shoe_events = int(state.get("shoe_events", 1))  # unknown before: assume heard
        self.link_fresh = bool(state.get("link_fresh", False))
        self.silence_noticed = state.get("silence_noticed")
        self.envelopes.next_seq = int(state["next_seq"])


def _receiver(protocol: str, state: dict[str, Any]) -> FrameReceiver:
    """The receiver a checkpoint kept; one written before the receiver kept the last frame's
    content holds its number and device only (a repeat is then judged by number alone)."""
    if "held" in state:
        return FrameReceiver.from_state(policy_for(protocol), state)
    receiver = FrameReceiver(policy_for(protocol))
    receiver.last = state["last"]
    device = state["device"]
    if device is not None:
        identity = event_of_body(device)
        if not isinstance(identity, shoe.DeviceIdentity):
            raise TypeError(f"not a device identity: {device.get('event')!r}")
        receiver.device = identity
    return receiver
