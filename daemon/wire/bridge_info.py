"""The retained `<base>/bridge/<node>/info`: which shoe2mqtt a daemon is, what it serves, since
when, and from which configuration (docs/mqtt.md, "Bridge info").

Beside the daemon's `bridge/<node>/state` (decision D1) and in the manner of zigbee2mqtt's
`bridge/info`: what a site's engineer asks first of a PC on the floor, answered from the
broker without logging in to it. Published retained on every (re)connect, published again
when a reload (SIGHUP) changed what it says, and left in place on a clean stop: it says what
ran there last, and the state beside it says whether it runs.

The configuration is named by the SHA-256 of its file's bytes, so `sha256sum` of the file on
the PC (or a copy kept by the site) tells whether the daemon runs that one. The file never
holds a secret: the daemon refuses a `password` there (the password is in `password_file`
or `password_env`), so neither does the hash, and the hash is published, never the file.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Sequence


@dataclass(frozen=True, slots=True)
class BridgeInfo:
    """The body of `<base>/bridge/<node>/info`. A state, like the bridge state: no envelope."""

    version: str
    node: str
    tables: Sequence[str]  # the ids of the tables this daemon serves, in configuration order
    started: str  # when this process started, UTC, ISO 8601 with milliseconds
    # Of the file the running settings were last taken from: read at start, or at the last
    # reload that accepted it (a refused file is never named here).
    config_sha256: str | None
    # What of that file does not run yet and waits for a restart
    # (daemon.configuration.reload): while this is empty the daemon runs that file exactly.
    restart_needed: Sequence[str] = ()

    def to_mapping(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "node": self.node,
            "tables": list(self.tables),
            "started": self.started,
            "config_sha256": self.config_sha256,
            "restart_needed": list(self.restart_needed),
        }

    def payload(self) -> bytes:
        return json.dumps(self.to_mapping(), separators=(",", ":")).encode()
