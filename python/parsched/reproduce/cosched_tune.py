"""Seed 003's free parameters chosen by stated procedures, never by the tables.

Nagar et al. (SPAA 1999, §2) chose each application's spin time "by an
empirical approach to quantify the optimal spin time for a given
application". parsched runs that procedure itself, on the model, before
any of Tables 3-5 is computed:

- **Spin times.** For each application, Spin-Block (SB) runs the
  application's own homogeneous workload — four copies of it, the study's
  four processes per workstation — once for each spin time of
  :data:`SPIN_GRID_US`; the spin giving the lowest completion time (mean over
  the reproduction's replications; ties: the shorter spin) is that
  application's spin for every scheme. The paper's completion times are not
  read.
- **Solo calibration check.** Each application runs alone; its share of time
  in communication is set beside Table 2's (:data:`TABLE2_SHARE`).

``parsched tune cosched`` prints both; ``parsched reproduce cosched`` runs them
first and writes ``tuning.csv`` and ``calibration.csv``.
"""

from __future__ import annotations

import concurrent.futures as cf
import math
from typing import Any

from .cosched_tasks import simulate_tasks

APPS = ("LIFE3.5", "LIFE12", "MG", "LU", "EP")
"""The applications, in the order of the ``app_spin_us`` key."""

SPIN_GRID_US = (100.0, 300.0, 1_000.0, 3_000.0, 10_000.0, 30_000.0, 100_000.0, 300_000.0)
"""The spin times tried (µs): half-decades from 0.1 ms (a few message
latencies) to 300 ms (longer than any quantum of the stock table), fixed
before any comparison with the paper."""

TUNE_SCHEME = "SB"

TABLE2_SHARE = {"LIFE3.5": 3.5, "LIFE12": 12.0, "MG": 26.0, "LU": 16.0, "EP": 1.0}
"""Table 2: % of time spent communicating (EP: "< 1")."""

SHARE_TOLERANCE = 0.15
"""A solo share within 15% (relative) of Table 2's is "as the paper"; EP's
only has to stay below 1%."""


def _tasks(scale: float, reps: int, seed: int, base: dict[str, Any]) -> list[dict[str, Any]]:
    out = []
    for app in APPS:
        for spin in SPIN_GRID_US:
            out.append({"part": "tune", "app": app, "spin_us": spin, "scheme": TUNE_SCHEME,
                        "workload": 0, "scale": scale,
                        "config": {**base, "seed": seed, "reps": reps, "scale": scale,
                                   "max_time_s": 20_000.0 * scale, "scheme": TUNE_SCHEME,
                                   "jobs": [app] * 4, "spin_time_us": spin}})
        out.append({"part": "solo", "app": app, "scheme": "Local", "workload": 0,
                    "scale": scale,
                    "config": {**base, "seed": seed, "reps": 1, "scale": scale,
                               "scheme": "Local", "jobs": [app]}})
    return out


def choose(times: dict[float, float]) -> float:
    """The spin with the lowest time (ties and unfinished runs: the shorter
    spin wins; NaN counts as unfinished)."""
    best = None
    for spin in sorted(times):
        t = times[spin]
        if t != t:
            continue
        if best is None or t < times[best]:
            best = spin
    return best if best is not None else min(times)


def run(*, scale: float, reps: int, seed: int = 1, base: dict[str, Any] | None = None,
        executor: cf.Executor | None = None, progress: bool = True) -> dict[str, Any]:
    """Runs the procedures; returns ``spins`` (µs, in :data:`APPS` order, for
    ``app_spin_us``), ``tuning`` and ``calibration`` DataFrames."""
    import pandas as pd

    tasks = _tasks(scale, reps, seed, dict(base or {}))
    results = simulate_tasks(tasks, executor, progress)
    tune_rows, cal_rows = [], []
    for t, r in zip(tasks, results, strict=True):
        if t["part"] == "tune":
            time = math.nan if r["livelock"] else r["completion_time"] / scale
            tune_rows.append({"app": t["app"], "spin_us": t["spin_us"], "scheme": TUNE_SCHEME,
                              "jobs": f"4 x {t['app']}", "completion_s": time})
        else:
            share = 100.0 * float(r["comm_share"][0]) if not r["livelock"] else math.nan
            paper = TABLE2_SHARE[t["app"]]
            ok = share < 1.0 if t["app"] == "EP" else abs(share / paper - 1) <= SHARE_TOLERANCE
            sized = _sizes()[t["app"]]
            cal_rows.append({"app": t["app"], "size": sized["size"],
                             "iterations": sized["iterations"],
                             "compute_ms_per_iteration": sized["compute_us"] / 1000,
                             "alone_s": r["completion_time"] / scale,
                             "comm_share_pct": share, "table2_pct": paper,
                             "as_table2": bool(ok)})
    tuning = pd.DataFrame(tune_rows)
    spins = []
    for app in APPS:
        rows = tuning[tuning["app"] == app]
        spins.append(choose(dict(zip(rows["spin_us"], rows["completion_s"], strict=True))))
    tuning["chosen"] = [s == spins[APPS.index(a)]
                        for a, s in zip(tuning["app"], tuning["spin_us"], strict=True)]
    return {"spins": spins, "tuning": tuning, "calibration": pd.DataFrame(cal_rows)}


def _sizes() -> dict[str, dict[str, Any]]:
    from parsched import _core

    return {a["app"]: a for a in _core.cosched_applications()["apps"]}


def spin_grid(tuning):
    """SB's time (s) per application (rows) and spin (columns, "0.1 ms" ...)."""
    grid = tuning.pivot(index="app", columns="spin_us", values="completion_s")
    grid.columns = [f"{c / 1000:g} ms" for c in grid.columns]
    return grid.round(0).reset_index()


def app_spin_arg(spins: list[float]) -> str:
    """The chosen spins as the value of ``--set app_spin_us=``."""
    return ",".join(f"{s:g}" for s in spins)


def fitted_parameters(spins: list[float]) -> list[dict[str, str]]:
    """Every free parameter of the reproduction and what it was fitted to."""
    rows = [{"parameter": f"spin time of {a}", "value": f"{s / 1000:g} ms",
             "fitted to": f"the model's own SB time on 4 x {a} (grid {_grid()}), "
                          "not the paper's tables"} for a, s in zip(APPS, spins, strict=True)]
    from parsched import _core

    cal = _core.cosched_applications()
    apps = {a["app"]: a for a in cal["apps"]}
    sizes = ", ".join(f"{a} {apps[a]['size']}" for a in APPS if apps[a]["size"])
    iters = ", ".join(f"{a} {apps[a]['iterations']}" for a in APPS)
    rows += [
        {"parameter": "compute jitter (each compute uniform within +-j)",
         "value": f"{100 * cal['jitter']:.2f} %",
         "fitted to": "LIFE(3.5)'s 3.5 % share alone (Table 2)"},
        {"parameter": "NPB sustained rate on a node",
         "value": f"{cal['mflops']:.1f} Mflop/s",
         "fitted to": f"MG's 26 % share alone (Table 2) at its {cal['mg_edge']}^3 grid"},
        {"parameter": "problem sizes (matrix or grid edge)", "value": sizes,
         "fitted to": "Table 2's shares: LIFE(3.5) the largest matrix in "
                      f"{cal['process_memory_mib']:g} MiB a process, LIFE(12) and LU "
                      "solved from 12 % and 16 %, MG class S"},
        {"parameter": "iterations", "value": iters,
         "fitted to": f"{cal['alone_s']:g} s alone (paper, section 3.1)"},
        {"parameter": "assumed, not fitted",
         "value": f"Life cell {cal['life_cell_us']} us, {cal['process_memory_mib']:g} MiB "
                  f"a process, MG {cal['mg_edge']}^3, LU sweeps {cal['lu_sweep_share']:g} of "
                  "its flops, 32 us latency (paper), 5 us overheads, 30 ns/B",
         "fitted to": "nothing: stated before any table was computed "
                      "(docs/policies/cosched.md)"},
    ]
    rows.append({"parameter": "boost period", "value": "10 ms",
                 "fitted to": "the paper's own value (§2)"})
    return rows


def markdown(tuned, fitted, fmt) -> str:
    """The tuning, the fitted parameters and the calibration check as markdown."""
    from parsched.display import markdown_table

    spins = ", ".join(f"{a} {s / 1000:g} ms"
                      for a, s in zip(APPS, tuned["spins"], strict=True))
    return "\n".join([
        "", "## Parameters and what they were fitted to", "",
        markdown_table(fitted, fmt=fmt), "",
        f"Spin times chosen by the paper's procedure (§2; SB on four copies of each "
        f"application, the lowest time wins): {spins}. SB's time (s) per spin:", "",
        markdown_table(spin_grid(tuned["tuning"]), fmt=fmt), "",
        "## The applications alone against Table 2 (% of time communicating)", "",
        markdown_table(tuned["calibration"], fmt=fmt), ""])


def _grid() -> str:
    return ", ".join(f"{s / 1000:g}" for s in SPIN_GRID_US) + " ms"
