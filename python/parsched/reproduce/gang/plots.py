"""The grid figure of part (a)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from parsched.display import log_ticks, pyplot, save_figure
from parsched.reproduce.gang.params import FINE, TQ
from parsched.reproduce.gang.regimes import EQUATIONS

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd


def plot_grid(table: pd.DataFrame, path: str) -> None:
    plt = pyplot()
    keys = [e[0] for e in EQUATIONS]
    ns = sorted(table["n"].unique())
    fg, axes = plt.subplots(len(keys), len(ns), figsize=(4.0 * len(ns), 2.3 * len(keys)),
                            sharex=True, squeeze=False)
    for i, key in enumerate(keys):
        label = next(e[1] for e in EQUATIONS if e[0] == key)
        for j, n in enumerate(ns):
            ax = axes[i][j]
            g = table[(table["equation"] == key) & (table["n"] == n)]
            for l, gl in g.groupby("l"):
                ax.plot(gl["tp"], gl["sim"] / gl["model"], marker="o", ms=3, label=f"ℓ={l}")
                ins = gl[gl["in_regime"]]
                ax.plot(ins["tp"], ins["sim"] / ins["model"], "ko", ms=5, mfc="none")
            ax.axhspan(0.95, 1.05, color="green", alpha=0.12)
            ax.axvspan(1e-3, FINE * TQ, color="blue", alpha=0.05)
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.set_xlim(table["tp"].min() * 0.8, table["tp"].max() * 1.25)
            log_ticks(ax, "y", most=6)
            log_ticks(ax, "x", most=6)
            ax.grid(True, alpha=0.3)
            if i == 0:
                ax.set_title(f"n = {n}", fontsize=9)
            if j == 0:
                ax.set_ylabel(f"{key}\nsimulated / equation (ratio)", fontsize=8)
                ax.text(0.02, 0.95, label, transform=ax.transAxes, fontsize=6, va="top")
            if i == len(keys) - 1:
                ax.set_xlabel("t_p, compute per iteration (ms)")
            if i == 0 and j == len(ns) - 1:
                ax.legend(fontsize=6)
    fg.suptitle("Simulation / equation (circled: inside the equation's regime; green: ±5%; "
                "blue: fine grain t_p <= 0.1 τq)", fontsize=9)
    save_figure(fg, path, dpi=110)
    plt.close(fg)
