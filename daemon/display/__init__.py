"""The pit display: a web page for the pit and for the dealer, live from MQTT (docs/display.md).

Offers the configuration (`[display]` of the TOML file) and the model of the pit built from
the broker's messages. The process itself is `daemon.display.service.serve` /
`run_display`, imported on its own so that loading a configuration does not load the web
server (`shoe2mqtt check-config` stays quick).
"""

from daemon.display.config import (
    DisplayConfig,
    DisplaySettings,
    Login,
    check_display,
    load_display_config,
)
from daemon.display.model import PitModel
from daemon.display.table_model import TableModel

__all__ = [
    "DisplayConfig",
    "DisplaySettings",
    "Login",
    "PitModel",
    "TableModel",
    "check_display",
    "load_display_config",
]
