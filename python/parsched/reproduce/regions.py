"""``parsched reproduce regions``: seed 004 (Lee & Schwan, "Region
Scheduling", ASPLOS 2012) — Figure 9's gain maps of memlat's cache
unification on the Clovertown- and Westmere-like machines (simulated, in
three variants: the default timing with random access, a bandwidth-bound
timing, and sequential sweeps under exact LRU), the balancing experiment
(§5.2), the conditions 1-3 boundaries the simulation gives, the paper's
checkable findings, and (``--real``) the measurements on this machine when
``parsched.runtime.regions_real`` is present.

Figure 9 twice: on grids relative to each machine's cache (0.5-6 caches,
``fig9_*``), and on the paper's own axes (``fig9abs_*``): the same absolute
region sizes on both machines ("2^2 2MB means two 2MB regions") and access
times 2^8-2^20, where the paper's "Westmere has a greater range in which
improvements are seen" is read. On the paper's axes each machine also runs
two counterfactuals: the other machine's micro-schedule cost (the paper's
attribution of the wider band), and the effective cache capacity the
paper's Condition-2 thresholds imply (``effective_cache_mb``: 3.6 MB on
Clovertown, 8 MB on Westmere).

Writes ``fig9_<variant>_<machine>.csv``, ``fig9_<variant>.png``,
``fig9abs_<variant>_<machine>.csv`` (every setting), ``fig9abs_<variant>.png``,
``fig9abs_bands.csv``, ``balance.csv``, ``boundaries.csv``, ``findings.csv``
and ``summary.md``.
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from typing import Any

from parsched.display import markdown_table, pyplot, save_figure
from parsched.sim.regions import PAPER, simulate_regions

__all__ = ["ABS_SETTINGS", "CACHE_MB", "REGION_MB", "VARIANTS", "band", "run"]

#: Last-level cache per domain, MB.
CACHE_MB = {"clovertown": 4.0, "westmere": 12.0}

#: Working sets as multiples of one cache (the paper gives no grid values).
WSS_MULT = (0.5, 1.0, 1.25, 1.5, 2.0, 2.5, 3.0, 4.0, 6.0)

#: The paper's axes: MB per region (memlat has two; the same values on both
#: machines) and log2 access times. The quick grid keeps one size that fits
#: each machine's cache, one in each machine's band and one past both.
REGION_MB = (0.5, 1.0, 2.0, 3.0, 4.0, 6.0, 8.0, 12.0, 16.0, 24.0, 32.0)
REGION_MB_QUICK = (1.0, 3.0, 8.0, 16.0)
ABS_ACCESS = (8, 10, 12, 14, 16, 18, 20)
ABS_ACCESS_QUICK = (8, 12, 16, 20)
#: Exact-LRU variants on the paper's axes (full mode only): shorter runs.
ABS_ACCESS_EXACT = (8, 10, 12, 14, 16, 18)

#: The settings each machine runs on the paper's axes: (name, keys per
#: machine). ``mu_swapped``: the other machine's micro-schedule cost (§5.1);
#: ``effective``: each last-level cache's capacity set to the paper's
#: Condition-2 threshold (harmful at <= 2 x 1.8 MB on Clovertown, 2 x 4 MB on
#: Westmere: one cache's worth of it).
ABS_SETTINGS: tuple[tuple[str, dict[str, dict[str, Any]]], ...] = (
    ("nominal", {"clovertown": {}, "westmere": {}}),
    ("mu_swapped", {"clovertown": {"microschedule_us": PAPER["microschedule_us"]["westmere"]},
                    "westmere": {"microschedule_us": PAPER["microschedule_us"]["clovertown"]}}),
    ("effective", {m: {"effective_cache_mb": PAPER["condition2_harmful_at_or_below_mb"][m]}
                   for m in ("clovertown", "westmere")}),
    # filled per variant: the other machine's hit and miss times (its own
    # micro-schedule cost and caches)
    ("timing_swapped", {"clovertown": {}, "westmere": {}}),
)


def _timing(machine: str, keys: dict[str, Any]) -> dict[str, float]:
    """The hit and miss times a variant gives a machine (its overrides, else
    the machine's defaults)."""
    t = simulate_regions(machine=machine, workload="memlat", wss_mb=1, access_time=1024,
                         accesses=4096).timing
    return {k: float(keys.get(k, t[k])) for k in ("hit_ns", "miss_ns")}

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


def _abs_grid(machine: str, keys: dict[str, Any], other_keys: dict[str, Any], quick: bool,
              exact: bool) -> list[dict[str, Any]]:
    """One machine on the paper's axes, every setting of :data:`ABS_SETTINGS`
    (``other_keys``: the variant's keys for the other machine)."""
    other = "westmere" if machine == "clovertown" else "clovertown"
    sizes = REGION_MB_QUICK if quick else REGION_MB
    access = ABS_ACCESS_QUICK if quick else (ABS_ACCESS_EXACT if exact else ABS_ACCESS)
    accesses = 1 << (20 if exact else (21 if quick else 24))
    rows = []
    for setting, extra in ABS_SETTINGS:
        ex = dict(extra[machine])
        if setting == "timing_swapped":
            ex.update(_timing(other, other_keys))
        for mb in sizes:
            for k in access:
                n = max(accesses, 4 << k)
                r = simulate_regions(machine=machine, workload="memlat", wss_mb=2 * mb,
                                     access_time=1 << k, accesses=n,
                                     **{**keys, **ex})
                rows.append({
                    "machine": machine, "setting": setting, "region_mb": mb,
                    "wss_mb": 2 * mb, "access_time": 1 << k, "log2_access": k,
                    "normalized_performance": r.normalized_performance,
                    "microschedules_per_s": r.microschedules_per_s,
                    "microschedule_us": r.timing["microschedule_us"],
                    "hit_ns": r.timing["hit_ns"], "miss_ns": r.timing["miss_ns"],
                    "cache_mb": r.timing["cache_bytes"] / 2**20,
                })
    return rows


def _edge(ks: list[int], gs: list[float], i: int, j: int) -> float:
    """log2 access time where the gain crosses 1 between cells i and j
    (linear in log2 access time)."""
    gi, gj = gs[i], gs[j]
    return ks[i] + (1.0 - gi) / (gj - gi) * (ks[j] - ks[i])


def band(df: Any) -> dict[str, Any]:
    """The winning band (gain > 1) of one machine's grid on the paper's axes:
    how many cells, which working sets and access times, and the access-time
    edges interpolated where the gain crosses 1 (log2 access time; a column
    whose band reaches the grid's first or last access time counts that
    grid end as its edge). ``lower_edge_log2``: the lowest lower edge over
    the working sets (``nan`` without a band); ``upper_edge_log2`` the
    highest upper edge. The band's extent in access time is
    ``upper - lower`` octaves summed over the working sets
    (``access_octaves``): a cheaper micro-schedule lowers the lower edge."""
    win = df[df.normalized_performance > 1.0]
    lower, upper, octaves, cols = [], [], 0.0, {}
    kmin, kmax = int(df.log2_access.min()), int(df.log2_access.max())
    for _, col in df.groupby("region_mb"):
        col = col.sort_values("log2_access")
        ks = [int(k) for k in col.log2_access]
        gs = [float(g) for g in col.normalized_performance]
        inside = [i for i, g in enumerate(gs) if g > 1.0]
        if not inside:
            continue
        lo_i, hi_i = inside[0], inside[-1]
        lo = _edge(ks, gs, lo_i - 1, lo_i) if lo_i > 0 else float(kmin)
        hi = _edge(ks, gs, hi_i, hi_i + 1) if hi_i + 1 < len(ks) else float(kmax)
        lower.append(lo)
        upper.append(hi)
        octaves += hi - lo
        cols[float(col.region_mb.iloc[0])] = hi - lo
    return {
        "cells_with_gain": len(win), "cells": len(df),
        "wss_mb_min": float(win.wss_mb.min()) if len(win) else math.nan,
        "wss_mb_max": float(win.wss_mb.max()) if len(win) else math.nan,
        "wss_mb_extent": float(win.wss_mb.max() - win.wss_mb.min()) if len(win) else 0.0,
        "access_min": int(win.access_time.min()) if len(win) else None,
        "access_max": int(win.access_time.max()) if len(win) else None,
        "lower_edge_log2": min(lower) if lower else math.nan,
        "upper_edge_log2": max(upper) if upper else math.nan,
        "access_octaves": octaves,
        # per working set (MB per region): the band's octaves (not in the CSV)
        "_columns": cols,
        "peak": float(df.normalized_performance.max()),
        "rate_min_where_gain": float(win.microschedules_per_s.min()) if len(win) else math.nan,
        "rate_max_where_gain": float(win.microschedules_per_s.max()) if len(win) else math.nan,
    }


def _norm(values: Any) -> Any:
    """The heatmaps' colour scale: diverging at 1 (the standard machine's
    performance), reaching the data's own extremes (a fixed 0-2 scale
    coloured 5.04 like 2.0)."""
    import numpy as np
    from matplotlib.colors import TwoSlopeNorm

    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    lo = float(v.min()) if v.size else 0.5
    hi = float(v.max()) if v.size else 2.0
    return TwoSlopeNorm(vcenter=1.0, vmin=min(lo, 0.99), vmax=max(hi, 1.01))


def _plot_abs(df: Any, path: str, title: str) -> None:
    """Rows: the settings; columns: the machines; same axes everywhere."""
    plt = pyplot()
    settings = list(dict.fromkeys(df.setting))
    machines = list(dict.fromkeys(df.machine))
    fig, axes = plt.subplots(len(settings), len(machines),
                             figsize=(6.5 * len(machines), 3.4 * len(settings)),
                             squeeze=False)
    fig.subplots_adjust(left=0.06, right=0.84, top=0.94, bottom=0.04, hspace=0.45,
                        wspace=0.2)
    norm = _norm(df.normalized_performance)
    for i, s in enumerate(settings):
        for j, m in enumerate(machines):
            ax = axes[i][j]
            sub = df[(df.setting == s) & (df.machine == m)]
            piv = sub.pivot(index="log2_access", columns="region_mb",
                            values="normalized_performance")
            im = ax.imshow(piv.values, origin="lower", aspect="auto", cmap="RdYlGn",
                           norm=norm)
            ax.set_xticks(range(len(piv.columns)), [f"2x{x:g}" for x in piv.columns],
                          fontsize=7)
            ax.set_yticks(range(len(piv.index)), [f"2^{k}" for k in piv.index])
            for a in range(piv.shape[0]):
                for b in range(piv.shape[1]):
                    v = piv.values[a, b]
                    ax.text(b, a, f"{v:.2f}", ha="center", va="center", fontsize=6,
                            fontweight="bold" if v > 1 else "normal")
            mu = float(sub.microschedule_us.iloc[0])
            cache = float(sub.cache_mb.iloc[0])
            hit, miss = float(sub.hit_ns.iloc[0]), float(sub.miss_ns.iloc[0])
            ax.set_title(f"{m}, {s} ({cache:.3g} MB per cache, {mu:g} us, "
                         f"hit {hit:g} / miss +{miss:g} ns)", fontsize=8)
            ax.set_xlabel("working set (two regions of MB)")
            ax.set_ylabel("access time")
    fig.colorbar(im, ax=axes, label="normalized performance", shrink=0.6)
    fig.suptitle(title)
    save_figure(fig, path, layout=False)
    plt.close(fig)


def _plot(grids: dict[str, Any], path: str, title: str) -> None:
    import numpy as np

    plt = pyplot()
    fig, axes = plt.subplots(1, len(grids), figsize=(6.0 * len(grids), 4.2))
    norm = _norm(np.concatenate([g.normalized_performance.to_numpy() for g in grids.values()]))
    for ax, (machine, df) in zip(np.atleast_1d(axes), grids.items(), strict=True):
        piv = df.pivot(index="log2_access", columns="wss_caches", values="normalized_performance")
        im = ax.imshow(piv.values, origin="lower", aspect="auto", cmap="RdYlGn",
                       norm=norm)
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


def abs_findings(bands: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The paper's Figure 9 statements on its own axes, per variant."""
    by = {(b["variant"], b["machine"], b["setting"]): b for b in bands}
    out = []
    for v in dict.fromkeys(b["variant"] for b in bands):
        c, w = by[(v, "clovertown", "nominal")], by[(v, "westmere", "nominal")]
        out.append(_finding(
            f"{v}/abs/wider", "paper's axes: Westmere's winning band wider than Clovertown's "
            "(more cells with gain > 1)",
            w["cells_with_gain"] > c["cells_with_gain"],
            f"cells westmere {w['cells_with_gain']}, clovertown {c['cells_with_gain']} "
            f"(of {w['cells']}); MB with gain westmere {w['wss_mb_min']:g}-{w['wss_mb_max']:g},"
            f" clovertown {c['wss_mb_min']:g}-{c['wss_mb_max']:g}; access octaves westmere "
            f"{w['access_octaves']:.2f}, clovertown {c['access_octaves']:.2f}"))
        out.append(_finding(
            f"{v}/abs/wider_in_mb", "paper's axes: Westmere's band spans more MB "
            "(largest minus smallest working set with gain)",
            w["wss_mb_extent"] > c["wss_mb_extent"],
            f"westmere {w['wss_mb_extent']:g} MB, clovertown {c['wss_mb_extent']:g} MB"))
        shared = sorted(set(w["_columns"]) & set(c["_columns"]))
        wider = [r for r in shared if w["_columns"][r] > c["_columns"][r]]
        diff = [w["_columns"][r] - c["_columns"][r] for r in shared]
        out.append(_finding(
            f"{v}/abs/wider_where_both_gain", "paper's axes, at each working set where "
            "both machines gain: Westmere's band spans more access time",
            bool(shared) and len(wider) == len(shared),
            f"westmere wider at {len(wider)} of {len(shared)} shared working sets "
            f"({', '.join(f'2x{r:g}' for r in shared) or 'none'}); octaves westmere minus "
            f"clovertown {min(diff, default=math.nan):+.2f} to {max(diff, default=math.nan):+.2f}"))
        out.append(_finding(
            f"{v}/abs/wider_in_access", "paper's axes: Westmere's band spans more access "
            "time (octaves summed over the working sets)",
            w["access_octaves"] > c["access_octaves"],
            f"westmere {w['access_octaves']:.2f}, clovertown {c['access_octaves']:.2f}"))
        for m in ("clovertown", "westmere"):
            n, sw = by[(v, m, "nominal")], by[(v, m, "mu_swapped")]
            cheaper = m == "clovertown"  # swapped in: Westmere's cheaper micro-schedule
            grows = sw["access_octaves"] > n["access_octaves"]
            shrinks = sw["access_octaves"] < n["access_octaves"]
            out.append(_finding(
                f"{v}/abs/mu/{m}",
                f"{m} with the other machine's micro-schedule cost: the band "
                f"{'grows' if cheaper else 'shrinks'} in access time",
                grows if cheaper else shrinks,
                f"access octaves {n['access_octaves']:.2f} -> {sw['access_octaves']:.2f}; "
                f"lower edge 2^{n['lower_edge_log2']:.2f} -> 2^{sw['lower_edge_log2']:.2f}; "
                f"cells {n['cells_with_gain']} -> {sw['cells_with_gain']}"))
        cs, ws = by[(v, "clovertown", "mu_swapped")], by[(v, "westmere", "mu_swapped")]
        out.append(_finding(
            f"{v}/abs/wider_same_mu", "paper's axes, each machine with the other's "
            "micro-schedule cost: Westmere's band still spans more access time",
            ws["access_octaves"] > cs["access_octaves"],
            f"westmere at 15.86 us {ws['access_octaves']:.2f}, clovertown at 6.357 us "
            f"{cs['access_octaves']:.2f} octaves"))
        ct, wt = by[(v, "clovertown", "timing_swapped")], by[(v, "westmere", "timing_swapped")]
        out.append(_finding(
            f"{v}/abs/wider_same_timing", "paper's axes, Westmere with Clovertown's hit and "
            "miss times (its own micro-schedule cost and caches): its band spans more "
            "access time than Clovertown's",
            wt["access_octaves"] > c["access_octaves"],
            f"westmere {wt['access_octaves']:.2f} octaves (lower edge "
            f"2^{wt['lower_edge_log2']:.2f}), clovertown {c['access_octaves']:.2f} "
            f"(2^{c['lower_edge_log2']:.2f}); and clovertown with westmere's timing "
            f"{ct['access_octaves']:.2f} (2^{ct['lower_edge_log2']:.2f}) against westmere "
            f"{w['access_octaves']:.2f} (2^{w['lower_edge_log2']:.2f})"))
        ce, we = by[(v, "clovertown", "effective")], by[(v, "westmere", "effective")]
        out.append(_finding(
            f"{v}/abs/effective_wider", "paper's axes with the effective capacities "
            "(3.6 / 8 MB): Westmere's band wider (more cells with gain)",
            we["cells_with_gain"] > ce["cells_with_gain"],
            f"cells westmere {we['cells_with_gain']} (MB {we['wss_mb_min']:g}-"
            f"{we['wss_mb_max']:g}), clovertown {ce['cells_with_gain']} (MB "
            f"{ce['wss_mb_min']:g}-{ce['wss_mb_max']:g})"))
    return out


def _paper_lines() -> list[str]:
    """The paper's statements (``PAPER``) as a Markdown list."""
    p = PAPER
    mu, rates = p["microschedule_us"], p["fig9_rates_per_s"]
    c2, c3 = p["condition2_harmful_at_or_below_mb"], p["condition3_fits_unified_mb"]
    return [
        f"* micro-schedule cost: Clovertown {mu['clovertown']} us, "
        f"Westmere {mu['westmere']} us;",
        f"* Figure 9 peak gain: Clovertown {p['fig9_peak_gain']['clovertown']}, "
        f"Westmere {p['fig9_peak_gain']['westmere']};",
        f"* micro-schedules per second where unification gains: Clovertown "
        f"{rates['clovertown'][0]}-{rates['clovertown'][1]}, Westmere "
        f"{rates['westmere'][0]}-{rates['westmere'][1]};",
        f"* Condition 1: no gain at access times <= 2^"
        f"{p['condition1_no_gain_at_or_below_access_time'].bit_length() - 1} (marginal "
        f"from 2^{p['condition1_marginal_from_access_time_clovertown'].bit_length() - 1} "
        "on Clovertown);",
        f"* Condition 2: harmful at working sets <= {c2['clovertown']:g} MB (Clovertown), "
        f"{c2['westmere']:g} MB (Westmere);",
        f"* Condition 3: the unified working set fits {c3['clovertown']:g} MB (Clovertown), "
        f"{c3['westmere']:g} MB (Westmere);",
        f"* balancing: more than {p['balance_speedup_more_than']}x for all processes.",
    ]


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
    bands = []
    for name, keys, desc in VARIANTS:
        exact = name.startswith("sequential")
        if exact and quick:
            continue  # exact LRU on the paper's axes: full mode only (minutes)
        frames = []
        for machine in ("clovertown", "westmere"):
            say(f"Figure 9 on the paper's axes, {name}, {machine}")
            other = "westmere" if machine == "clovertown" else "clovertown"
            df = pd.DataFrame(_abs_grid(machine, keys[machine], keys[other], quick, exact))
            df.to_csv(os.path.join(out_dir, f"fig9abs_{name}_{machine}.csv"), index=False)
            frames.append(df)
            for setting, sub in df.groupby("setting", sort=False):
                bands.append({"variant": name, "machine": machine, "setting": setting,
                              "microschedule_us": float(sub.microschedule_us.iloc[0]),
                              "hit_ns": float(sub.hit_ns.iloc[0]),
                              "miss_ns": float(sub.miss_ns.iloc[0]),
                              "cache_mb": float(sub.cache_mb.iloc[0]), **band(sub)})
        if not quick or name == "default":  # figures cost seconds each
            _plot_abs(pd.concat(frames), os.path.join(out_dir, f"fig9abs_{name}.png"),
                      f"Figure 9 on the paper's axes ({desc})")
    bands_df = pd.DataFrame([{k: x for k, x in b.items() if k != "_columns"} for b in bands])
    bands_df.to_csv(os.path.join(out_dir, "fig9abs_bands.csv"), index=False)
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
    found = findings(bounds, balance) + abs_findings(bands)
    fdf = pd.DataFrame(found)
    fdf.to_csv(os.path.join(out_dir, "findings.csv"), index=False)
    real_note = "not run (pass --real)"
    if real:
        try:
            from parsched.runtime import regions_real as regions_real  # type: ignore[attr-defined]
        except ImportError:
            real_note = "parsched.runtime.regions_real is not present in this build"
        else:
            say("this machine (regions_real)")
            real_note = str(regions_real.run(out_dir, quick=quick, progress=progress))
    if echo:
        echo("boundaries", bnd[["variant", "machine", "peak", "min_access_with_gain",
                                "min_wss_mb_with_gain", "max_wss_mb_with_gain",
                                "rate_min_where_gain", "rate_max_where_gain"]])
        echo("paper's axes", bands_df[["variant", "machine", "setting", "cells_with_gain",
                                       "wss_mb_min", "wss_mb_max", "lower_edge_log2",
                                       "access_octaves", "peak"]])
        echo("balance", bdf)
        echo("findings", fdf)
    lines = ["# Region scheduling (seed 004) reproduced", "",
             f"Mode: {'quick' if quick else 'full'}.", "",
             "The paper's statements set beside the simulation:", "",
             *_paper_lines(), "",
             "## Figure 9 boundaries (cache-relative grids)", "", markdown_table(bnd), "",
             "## Figure 9 on the paper's axes (same MB on both machines)", "",
             "Settings: nominal; mu_swapped (the other machine's micro-schedule "
             "cost); effective (each cache's capacity at the paper's Condition-2 "
             "threshold); timing_swapped (the other machine's hit and miss times). "
             "Edges: log2 access time where the gain crosses 1.", "",
             markdown_table(bands_df), "",
             "## Balancing", "", markdown_table(bdf), "",
             "## Findings", "", markdown_table(fdf), "",
             f"## This machine\n\n{real_note}", ""]
    with open(os.path.join(out_dir, "summary.md"), "w") as fh:
        fh.write("\n".join(lines))
    head = {b["variant"] + "/" + b["machine"] + "/peak": b["peak"] for b in bounds}
    head.update({"balance/" + r["machine"]: r["speedup"] for r in balance})
    return {"headlines": head, "findings": found}
