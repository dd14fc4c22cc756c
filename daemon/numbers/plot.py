"""The numbers as a PNG chart (matplotlib, the `plot` extra): for each group, the hold of each
wager with exact figures inside its band around the theoretical hold, and the pace."""

from __future__ import annotations

from typing import TYPE_CHECKING

import matplotlib as mpl

mpl.use("Agg")  # a file, never a window
import matplotlib.pyplot as plt

if TYPE_CHECKING:
    from pathlib import Path

    from daemon.numbers.tally import Numbers

_MAX_GROUPS = 60  # labels beyond this many no longer read: the last ones are drawn


def draw(groups: list[Numbers], confidence: float, path: Path) -> None:
    shown = groups[-_MAX_GROUPS:]
    labels = [" ".join(n.key.values()) for n in shown]
    figure, (holds, pace) = plt.subplots(
        2, 1, figsize=(max(8.0, 0.35 * len(shown) + 4), 8), sharex=True
    )
    wagers = sorted({w for n in shown for w in n.wagers})
    for offset, wager in enumerate(wagers):
        xs, ys, lows, highs, theory = [], [], [], [], []
        for index, numbers in enumerate(shown):
            money = numbers.wagers.get(wager)
            if money is None or money.hold is None:
                continue
            xs.append(index + 0.15 * offset)
            ys.append(100 * money.hold)
            found = money.band(confidence)
            if found is not None:
                lows.append(100 * (money.hold - found.low))
                highs.append(100 * (found.high - money.hold))
                theory.append(100 * found.theoretical)
        if len(lows) == len(xs):
            holds.errorbar(xs, ys, yerr=[lows, highs], fmt="o", capsize=3, label=f"{wager} hold")
            holds.plot(xs, theory, "_", markersize=14, color="black")
        else:
            holds.plot(xs, ys, "o", label=f"{wager} hold (no exact figures)")
    holds.set_ylabel("hold %")
    holds.set_title(
        f"Hold per wager, with its {confidence:.1%} band; a black dash: the theoretical hold"
    )
    holds.axhline(0, color="grey", linewidth=0.5)
    if wagers:
        holds.legend(loc="best", fontsize="small")
    pace.bar(range(len(shown)), [n.rounds_per_hour or 0 for n in shown], color="#4a7ab5")
    pace.set_ylabel("rounds an hour")
    pace.set_xticks(range(len(shown)), labels, rotation=60, ha="right", fontsize="small")
    figure.tight_layout()
    figure.savefig(path, dpi=100)
    plt.close(figure)
