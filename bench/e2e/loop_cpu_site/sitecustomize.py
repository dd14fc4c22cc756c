"""Imported by Python at every start while this folder is on PYTHONPATH (bench.e2e.loop_cpu
puts it there for one open-loop run): installs that benchmark's probe in `shoe2mqtt run` alone,
and only when SHOE2MQTT_LOOP_CPU names where its totals go. Every other process (the bench,
the relay, mosquitto's clients, `shoe2mqtt replay`) starts as it would without it."""

import os
import sys

_OUTPUT = os.environ.get("SHOE2MQTT_LOOP_CPU")
if _OUTPUT and "run" in sys.argv and "--config" in sys.argv:
    from bench.e2e.loop_cpu import install

    install(_OUTPUT)
