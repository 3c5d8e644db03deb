"""Part (c): Figure 9, the phase diagram from eqs. (15)/(16) and from simulation."""

from __future__ import annotations

import math
from typing import TYPE_CHECKING

import numpy as np

from parsched.config import tw_per_unit_var
from parsched.display import pyplot, save_figure
from parsched.models import feitelson_rudolph as fr
from parsched.reproduce.gang.params import ALPHA, PHASE_TP_MAX, PHASE_TW_MAX, SIGMA, TCS_GANG, TQ
from parsched.reproduce.gang.reference import reference_for

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from parsched.reproduce.gang.plan import Plan


def phase_table(plan: Plan, runs) -> pd.DataFrame:
    import pandas as pd

    rows = []
    for p in plan.phase:
        tp, tw = p["tp"], p["tw"]
        model_region = fr.classify(tp, tw, SIGMA, 10, ALPHA, TQ, TCS_GANG)
        r = {"tp": tp, "tw": tw, "model_region": model_region,
             "model_ratio": float(fr.t_gang_busy(tp, tw, 10, 3, TQ, TCS_GANG)
                                  / fr.t_block_same(tp, tw, 10, 3, TQ, TCS_GANG, ALPHA)),
             "reachable": bool(p["gang_busy"]), "dist": p.get("dist") or ""}
        if p["gang_busy"]:
            bw = runs[p["gang_busy"][0]]["time_per_iteration"]
            blk = runs[p["local_block_same"][0]]["time_per_iteration"]
            ratio = bw / blk
            r.update(sim_gang_busy=bw, sim_block=blk, sim_ratio=ratio,
                     sim_block_idle=runs[p["local_block_same"][0]].get("idle_fraction",
                                                                      math.nan),
                     sim_region="gang-busy" if ratio <= SIGMA
                     else "blocking" if ratio >= 1 / SIGMA else "neither")
            r["agree"] = r["sim_region"] == model_region
            r["reference_block"] = reference_for(p["local_block_same"][0], plan.quick) \
                if model_region == "blocking" else math.nan
        else:
            r.update(sim_gang_busy=math.nan, sim_block=math.nan, sim_ratio=math.nan,
                     sim_block_idle=math.nan, sim_region="unreachable", agree=None,
                     reference_block=math.nan)
        rows.append(r)
    return pd.DataFrame(rows)


def phase_load_table(plan: Plan, runs) -> pd.DataFrame:
    """The blocking-region check point at several loads: simulated and eq. (6)/(12) ratio."""
    import pandas as pd

    rows = []
    for p in plan.phase_load:
        tp, tw, ld = p["tp"], p["tw"], p["l"]
        bw = runs[p["gang_busy"][0]]["time_per_iteration"]
        blk_run = runs[p["local_block_same"][0]]
        blk = blk_run["time_per_iteration"]
        eq12 = float(fr.t_block_same(tp, tw, 10, ld, TQ, TCS_GANG, ALPHA))
        rows.append({"tp": tp, "tw": tw, "l": ld, "dist": p["dist"], "sim_gang_busy": bw,
                     "eq6": float(fr.t_gang_busy(tp, tw, 10, ld, TQ, TCS_GANG)),
                     "sim_block": blk, "eq12": eq12,
                     "reference_block": reference_for(p["local_block_same"][0], plan.quick),
                     "sim_block_idle": blk_run.get("idle_fraction", math.nan),
                     "eq12_over_busy": eq12 / (1.0 - blk_run.get("idle_fraction", math.nan)),
                     "sim_ratio": bw / blk,
                     "model_ratio": float(fr.t_gang_busy(tp, tw, 10, ld, TQ, TCS_GANG)) / eq12})
    return pd.DataFrame(rows)


def phase_agreement(phase: pd.DataFrame) -> pd.DataFrame:
    """Per formula region (eqs. 15/16) and compute distribution: simulated points and
    how many the simulation classifies alike; a last row ``all``."""
    import pandas as pd

    reach = phase[phase["reachable"]]
    rows = []
    for region in ("gang-busy", "neither", "blocking"):
        g = reach[reach["model_region"] == region]
        row = {"model_region": region, "points": len(phase[phase["model_region"] == region]),
               "simulated": len(g), "agree": int(g["agree"].astype(bool).sum())}
        for dist in ("uniform", "exponential"):
            d = g[g["dist"] == dist]
            row[f"{dist}_simulated"] = len(d)
            row[f"{dist}_agree"] = int(d["agree"].astype(bool).sum())
        row["sim_regions"] = ", ".join(f"{k} {v}" for k, v in
                                       g["sim_region"].value_counts().sort_index().items())
        rows.append(row)
    tot = {"model_region": "all", "points": len(phase), "simulated": len(reach),
           "agree": int(reach["agree"].astype(bool).sum())}
    for dist in ("uniform", "exponential"):
        d = reach[reach["dist"] == dist]
        tot[f"{dist}_simulated"] = len(d)
        tot[f"{dist}_agree"] = int(d["agree"].astype(bool).sum())
    tot["sim_regions"] = ""
    rows.append(tot)
    out = pd.DataFrame(rows)
    out["fraction"] = out["agree"] / out["simulated"].where(out["simulated"] > 0)
    return out


def plot_phase(table: pd.DataFrame, path: str) -> None:
    plt = pyplot()
    fg, axes = plt.subplots(1, 2, figsize=(11, 6.2), sharey=True)
    colors = {"gang-busy": "tab:blue", "blocking": "tab:red", "neither": "lightgrey",
              "unreachable": "white"}
    tp_max = float(table["tp"].max()) if len(table) else PHASE_TP_MAX
    tw_max = float(table["tw"].max()) if len(table) else PHASE_TW_MAX
    grid = fr.phase_diagram(sigma=SIGMA, n=10, alpha=ALPHA, tq=TQ, tcs=TCS_GANG, num=81,
                            tp_max=tp_max, tw_max=tw_max)
    b = fr.phase_boundaries(SIGMA, 10, ALPHA, TQ, TCS_GANG)
    xs = np.linspace(0, tp_max, 50)
    for ax, title in zip(axes, ("formulas: eqs. (15), (16)", "simulation: gang busy vs "
                                "local blocking, ℓ = 3 (circled: disagrees)"), strict=True):
        ax.plot(xs, b.gang_busy(xs), "b-", lw=1)
        ax.plot(xs, b.blocking(xs), "r-", lw=1)
        ax.plot(xs, tw_per_unit_var(10, "uniform") * 2 * xs, "k--", lw=0.8,
                label="reach of uniform compute (9/11·t_p)")
        ax.plot(xs, tw_per_unit_var(10, "exponential") * xs, "k:", lw=0.8,
                label="reach of exponential compute (1.93·t_p)")
        ax.set_xlim(0, tp_max)
        ax.set_ylim(0, tw_max)
        ax.set_xlabel("t_p (ms)")
        ax.set_title(title, fontsize=9)
    ax = axes[0]
    for reg, g in grid.groupby("region"):
        ax.scatter(g["tp"], g["tw"], s=5, c=colors[reg], label=reg, marker="s")
    ax.set_ylabel("t_w (ms)")
    ax.legend(fontsize=7, loc="upper right")
    ax = axes[1]
    for reg, g in table.groupby("sim_region"):
        for dist, marker in (("uniform", "s"), ("exponential", "D"), ("", "s")):
            gd = g[g["dist"] == dist]
            if not len(gd):
                continue
            lab = reg if reg == "unreachable" else f"{reg} ({dist})"
            ax.scatter(gd["tp"], gd["tw"], s=10 if reg == "unreachable" else 45,
                       c=colors[reg], edgecolors="lightgrey" if reg == "unreachable" else "k",
                       linewidths=0.3, label=lab, marker=marker)
    bad = table[table["reachable"] & (table["sim_region"] != table["model_region"])]
    if len(bad):
        ax.scatter(bad["tp"], bad["tw"], s=140, facecolors="none", edgecolors="k",
                   linewidths=1.0, label="disagrees with the formulas")
    ax.legend(fontsize=6, loc="upper left")
    fg.suptitle("Figure 9 (σ = 1/2; τq = 50, τcs = 0.2, α = 1.5, n = 10): busy waiting with "
                "gang scheduling at least 2× faster (blue) / blocking at least 2× faster (red)",
                fontsize=9)
    save_figure(fg, path, dpi=110)
    plt.close(fg)
