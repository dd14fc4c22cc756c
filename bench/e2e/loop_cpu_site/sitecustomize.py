"""Imported by Python at every start while this folder is on PYTHONPATH (bench.e2e.loop_cpu
puts it there for one open-loop run): installs that benchmark's probe in `shoe2mqtt run` alone,
and only when SHOE2MQTT_LOOP_CPU names where its totals go. Then, in every process, it runs
the `sitecustomize` this folder hides (the next one on the path, e.g. Debian's), so that every
other process (the bench, the relay, `shoe2mqtt replay`) starts as it would without it."""

import importlib.machinery
import importlib.util
import os
import sys

_OUTPUT = os.environ.get("SHOE2MQTT_LOOP_CPU")
if _OUTPUT and "run" in sys.argv and "--config" in sys.argv:
    from bench.e2e.loop_cpu import install

    install(_OUTPUT)

_HERE = os.path.dirname(os.path.abspath(__file__))  # noqa: PTH100, PTH120 - os, not pathlib: every process of the run starts here
_OTHERS = [p for p in sys.path if os.path.abspath(p or os.curdir) != _HERE]  # noqa: PTH100
_HIDDEN = importlib.machinery.PathFinder.find_spec("sitecustomize", _OTHERS)
if _HIDDEN is not None and _HIDDEN.loader is not None:
    _module = importlib.util.module_from_spec(_HIDDEN)
    _HIDDEN.loader.exec_module(_module)
