"""``parsched reproduce regions``: seed 004 (Lee & Schwan, "Region
Scheduling", ASPLOS 2012) — Figure 9's gain maps of memlat's cache
unification on the Clovertown- and Westmere-like machines (simulated, in
three variants: the default timing with random access, a bandwidth-bound
timing, and sequential sweeps under exact LRU), the balancing experiment
(§5.2), the conditions 1-3 boundaries the simulation gives, the paper's
checkable findings, and (``--real``) the measurements on this machine when
``parsched.regions_real`` is present.

Writes ``fig9_<variant>_<machine>.csv``, ``fig9_<variant>.png``,
``balance.csv``, ``boundaries.csv``, ``findings.csv`` and ``summary.md``.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from typing import Any

from ._report import markdown_table, pyplot, save_figure
from .regions import PAPER, simulate_regions

__all__ = ["CACHE_MB", "VARIANTS", "run"]

#: Last-level cache per domain, MB.
CACHE_MB = {"clovertown": 4.0, "westmere": 12.0}

#: Working sets as multiples of one cache (the paper gives no grid values).
WSS_MULT = (0.5, 1.0, 1.25, 1.5, 2.0, 2.5, 3.0, 4.0, 6.0)

#: (name, keys per machine, description). Timings [ext]: the default is
#: latency-bound (Clovertown hit 8 ns, miss +100 ns; Westmere 18 / +55 ns);
#: "bandwidth" is the closed-form scan's only timing that meets both
#: Condition 1 and the peak (docs/policies/regions.md).
VARIANTS: tuple[tuple[str, dict[str, dict[str, Any]], str], ...] = (
    ("default", {"clovertown": {}, "westmere": {}},
     "uniform random access, footprint model, latency-bound timing"),
    ("bandwidth", {"clovertown": {"hit_ns": 8.0, "miss_ns": 7.0},
                   "westmere": {"hit_ns": 0.5, "miss_ns": 3.0}},
     "uniform random access, footprint model, bandwidth-bound miss cost"),
    ("sequential", {"clovertown": {"pattern": "sequential", "cache_model": "lru"},
                    "westmere": {"pattern": "sequential", "cache_model": "lru"}},
     "cyclic sequential sweeps, exact LRU, latency-bound timing"),
    ("sequential_bandwidth",
     {"clovertown": {"pattern": "sequential", "cache_model": "lru", "hit_ns": 8.0,
                     "miss_ns": 3.6},
      "westmere": {"pattern": "sequential", "cache_model": "lru", "hit_ns": 0.5,
                   "miss_ns": 1.5}},
     "cyclic sequential sweeps, exact LRU, miss cost set for Condition 1 and the peak"),
)


def _grid(machine: str, keys: dict[str, Any], quick: bool, exact: bool) -> list[dict[str, Any]]:
    c = CACHE_MB[machine]
    mults = (0.5, 1.5, 2.0, 3.0) if quick else WSS_MULT
    if exact:
        access = (8, 12, 16) if quick else (8, 10, 12, 14, 16, 18)
        accesses = 1 << (20 if quick else 22)
    else:
        access = (8, 12, 16, 20) if quick else (8, 10, 12, 14, 16, 18, 20)
        accesses = 1 << (22 if quick else 24)
    rows = []
    for m in mults:
        for k in access:
            n = max(accesses, 4 << k)
            r = simulate_regions(machine=machine, workload="memlat", wss_mb=m * c,
                                 access_time=1 << k, accesses=n, **keys)
            rows.append({
                "machine": machine, "wss_mb": m * c, "wss_caches": m, "access_time": 1 << k,
                "log2_access": k, "normalized_performance": r.normalized_performance,
                "microschedules_per_s": r.microschedules_per_s,
                "miss_standard": r.miss_ratio_standard, "miss_region": r.miss_ratio_region,
            })
    return rows


def _plot(grids: dict[str, Any], path: str, title: str) -> None:
    import numpy as np

    plt = pyplot()
    fig, axes = plt.subplots(1, len(grids), figsize=(6.0 * len(grids), 4.2))
    for ax, (machine, df) in zip(np.atleast_1d(axes), grids.items(), strict=True):
        piv = df.pivot(index="log2_access", columns="wss_caches", values="normalized_performance")
        im = ax.imshow(piv.values, origin="lower", aspect="auto", cmap="RdYlGn",
                       vmin=0.0, vmax=2.0)
        ax.set_xticks(range(len(piv.columns)),
                      [f"{m * CACHE_MB[machine]:g}" for m in piv.columns])
        ax.set_yticks(range(len(piv.index)), [f"2^{k}" for k in piv.index])
        for i in range(piv.shape[0]):
            for j in range(piv.shape[1]):
                v = piv.values[i, j]
                ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=7,
                        fontweight="bold" if v > 1 else "normal")
        ax.set_xlabel("total working set (MB; both regions)")
        ax.set_ylabel("access time (accesses per visit)")
        ax.set_title(f"{machine} ({CACHE_MB[machine]:g} MB per cache)")
        fig.colorbar(im, ax=ax, label="normalized performance")
    fig.suptitle(title)
    save_figure(fig, path)
    plt.close(fig)


def _boundaries(df: Any, machine: str, variant: str) -> dict[str, Any]:
    win = df[df.normalized_performance > 1.0]
    c = CACHE_MB[machine]
    return {
        "variant": variant, "machine": machine,
        "peak": float(df.normalized_performance.max()),
        "min_access_with_gain": int(win.access_time.min()) if len(win) else None,
        "min_wss_mb_with_gain": float(win.wss_mb.min()) if len(win) else None,
        "max_wss_mb_with_gain": float(win.wss_mb.max()) if len(win) else None,
        "max_gain_at_or_below_2_12": float(df[df.access_time <= 4096].normalized_performance.max()),
        "max_gain_fits_one_cache": float(df[df.wss_caches <= 1.0].normalized_performance.max()),
        "max_gain_past_two_caches": float(df[df.wss_caches > 2.0].normalized_performance.max()),
        "cells_with_gain": len(win), "cells": len(df),
        "rate_min_where_gain": float(win.microschedules_per_s.min()) if len(win) else math.nan,
        "rate_max_where_gain": float(win.microschedules_per_s.max()) if len(win) else math.nan,
        "paper_condition2_mb": PAPER["condition2_harmful_at_or_below_mb"][machine],
        "paper_condition3_mb": 2 * c,
    }


def _finding(fid: str, claim: str, holds: bool, measured: str) -> dict[str, Any]:
    return {"id": fid, "claim": claim, "holds": bool(holds), "measured": measured}


def findings(bounds: list[dict[str, Any]], balance: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for b in bounds:
        v, m = b["variant"], b["machine"]
        out.append(_finding(f"{v}/{m}/cond1", "no gain at access time <= 2^12",
                            b["max_gain_at_or_below_2_12"] <= 1.0,
                            f"max gain there {b['max_gain_at_or_below_2_12']:.3f}"))
        out.append(_finding(f"{v}/{m}/cond2", "no gain when the working set fits one cache",
                            b["max_gain_fits_one_cache"] <= 1.0,
                            f"max gain there {b['max_gain_fits_one_cache']:.3f}"))
        out.append(_finding(f"{v}/{m}/cond3", "no gain when the working set exceeds two caches",
                            b["max_gain_past_two_caches"] <= 1.0,
                            f"max gain there {b['max_gain_past_two_caches']:.3f}"))
        lo, hi = PAPER["fig9_rates_per_s"][m]
        rmin, rmax = b["rate_min_where_gain"], b["rate_max_where_gain"]
        out.append(_finding(f"{v}/{m}/rates",
                            f"micro-schedule rates where it gains: the paper's order ({lo}-{hi}/s)",
                            not math.isnan(rmin) and rmin >= lo / 3 and rmax <= hi * 3,
                            f"{rmin:.0f}-{rmax:.0f}/s"))
    by = {(b["variant"], b["machine"]): b for b in bounds}
    for v, _, _ in VARIANTS:
        c, w = by.get((v, "clovertown")), by.get((v, "westmere"))
        if c and w:
            out.append(_finding(f"{v}/wider", "Westmere's winning band wider than Clovertown's",
                                w["cells_with_gain"] > c["cells_with_gain"],
                                f"cells with gain: westmere {w['cells_with_gain']}/{w['cells']}, "
                                f"clovertown {c['cells_with_gain']}/{c['cells']}"))
    for r in balance:
        out.append(_finding(f"balance/{r['machine']}", "pairing large with small > 50% faster",
                            r["speedup"] > PAPER["balance_speedup_more_than"],
                            f"speedup {r['speedup']:.3f}"))
    return out


def run(out_dir: str, *, quick: bool = False, real: bool = False,
        progress: Callable[[str], None] | None = None,
        echo: Callable[[str, Any], None] | None = None) -> dict[str, Any]:
    """Runs the reproduction into ``out_dir``; returns headlines and findings."""
    import pandas as pd

    say = progress or (lambda _m: None)
    bounds = []
    for name, keys, desc in VARIANTS:
        grids = {}
        for machine in ("clovertown", "westmere"):
            say(f"Figure 9, {name}, {machine}")
            df = pd.DataFrame(_grid(machine, keys[machine], quick,
                                       name.startswith("sequential")))
            df.to_csv(os.path.join(out_dir, f"fig9_{name}_{machine}.csv"), index=False)
            grids[machine] = df
            bounds.append(_boundaries(df, machine, name))
        _plot(grids, os.path.join(out_dir, f"fig9_{name}.png"), f"Figure 9 ({desc})")
    say("balancing (§5.2)")
    balance = []
    for machine in ("clovertown", "westmere"):
        r = simulate_regions(machine=machine, workload="balance",
                             accesses=1 << (21 if quick else 24))
        balance.append({"machine": machine, "speedup": r.speedup,
                        "speedup_large": r.speedup_per_program[0],
                        "speedup_small": r.speedup_per_program[2],
                        "loads_region_mb": " ".join(f"{x / 2**20:.3f}" for x in r.cache_loads),
                        "loads_standard_mb": " ".join(f"{x / 2**20:.3f}"
                                                      for x in r.cache_loads_standard),
                        "paper": "> 1.5 (all processes)"})
    bdf = pd.DataFrame(balance)
    bdf.to_csv(os.path.join(out_dir, "balance.csv"), index=False)
    bnd = pd.DataFrame(bounds)
    bnd.to_csv(os.path.join(out_dir, "boundaries.csv"), index=False)
    found = findings(bounds, balance)
    fdf = pd.DataFrame(found)
    fdf.to_csv(os.path.join(out_dir, "findings.csv"), index=False)
    real_note = "not run (pass --real)"
    if real:
        try:
            from . import regions_real  # type: ignore[attr-defined]
        except ImportError:
            real_note = "parsched.regions_real is not present in this build"
        else:
            say("this machine (regions_real)")
            real_note = str(regions_real.run(out_dir, quick=quick, progress=progress))
    if echo:
        echo("boundaries", bnd[["variant", "machine", "peak", "min_access_with_gain",
                                "min_wss_mb_with_gain", "max_wss_mb_with_gain",
                                "rate_min_where_gain", "rate_max_where_gain"]])
        echo("balance", bdf)
        echo("findings", fdf)
    lines = ["# Region scheduling (seed 004) reproduced", "",
             f"Mode: {'quick' if quick else 'full'}. Paper: {PAPER}", "",
             "## Figure 9 boundaries", "", markdown_table(bnd), "",
             "## Balancing", "", markdown_table(bdf), "",
             "## Findings", "", markdown_table(fdf), "",
             f"## This machine\n\n{real_note}", ""]
    with open(os.path.join(out_dir, "summary.md"), "w") as fh:
        fh.write("\n".join(lines))
    head = {b["variant"] + "/" + b["machine"] + "/peak": b["peak"] for b in bounds}
    head.update({"balance/" + r["machine"]: r["speedup"] for r in balance})
    return {"headlines": head, "findings": found}
