"""How long `shoe2mqtt --version` and `shoe2mqtt --help` take, as a user runs them.

    uv run python bench/cli_startup.py [--runs N]

Runs the installed script (the one pyproject.toml puts beside this Python) N times for each
line, a new process each, and prints the fastest, the median and the slowest wall-clock
time: the median is what a person waits, the fastest what the machine can do unloaded.
The goal is under 0.15 s.
"""

from __future__ import annotations

import argparse
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

SHOE2MQTT = Path(sys.executable).parent / "shoe2mqtt"
LINES = (("--version",), ("--help",), ("check-config", "--help"))


def timings(words: tuple[str, ...], runs: int) -> list[float]:
    """Seconds for each of `runs` runs of `shoe2mqtt WORDS`, start to exit."""
    seconds = []
    for _ in range(runs):
        started = time.perf_counter()
        subprocess.run([SHOE2MQTT, *words], capture_output=True, check=True)  # noqa: S603 - our own script
        seconds.append(time.perf_counter() - started)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10, help="runs of each line (default 10)")
    args = parser.parse_args()
    print(f"{platform.python_implementation()} {platform.python_version()}, {args.runs} runs each")
    for words in LINES:
        seconds = timings(words, args.runs)
        print(
            f"shoe2mqtt {' '.join(words):<20} fastest {min(seconds):.3f} s, "
            f"median {statistics.median(seconds):.3f} s, slowest {max(seconds):.3f} s"
        )


if __name__ == "__main__":
    main()
