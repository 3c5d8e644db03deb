"""Runs the whole reproduction: plan, one deduplicated sweep, tables, figures, summary.md."""

from __future__ import annotations

import math
import os
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from parsched.config import BarrierConfig
from parsched.display import markdown_table
from parsched.reproduce.gang.equations import grid_summary, grid_table, misses_text, reference_text
from parsched.reproduce.gang.experiments import experiment_tables, plot_experiments, twophase_table
from parsched.reproduce.gang.figure9 import (
    phase_agreement,
    phase_load_table,
    phase_table,
    plot_phase,
)
from parsched.reproduce.gang.params import (
    ALPHA,
    COARSE,
    EQ8_ROUNDS_PER_SEED,
    FINE,
    PHASE_TW_MAX,
    TCS_GANG,
    TQ,
)
from parsched.reproduce.gang.plan import build_plan
from parsched.reproduce.gang.plots import plot_grid
from parsched.reproduce.gang.reference import reference_table
from parsched.reproduce.gang.regimes import EQUATIONS
from parsched.reproduce.gang.stats import _float_or_nan, idle_fraction
from parsched.reproduce.gang.summary import headlines

if TYPE_CHECKING:  # pragma: no cover
    import concurrent.futures as cf


#: The columns each experiment's table shows.
SHOWN = {
    1: ["GRAIN", "tp_plus_tw", "sim_gang_busy", "eq6", "sim_block", "eq12", "overhead_sim",
        "overhead_model"],
    2: ["GRAIN", "tp_plus_tw", "sim_gang_busy", "eq6", "sim_block", "eq12", "ratio_sim",
        "ratio_model"],
    3: ["load", "alpha", "sim_block", "eq12", "sim_block_compute", "sim_block_compute_min",
        "sim_block_compute_max", "eq13", "sim_block_compute_priority", "sim_gang_busy",
        "eq6"],
    4: ["load", "sim_gang_busy", "eq6", "sim_block", "eq12", "sim_uncoord_busy",
        "sim_uncoord_busy_min", "sim_uncoord_busy_max", "eq8"],
}


#: Each experiment's title.
TITLES = {
    1: "Experiment 1 (Fig. 4): LOAD 1, VAR 0 — blocking's constant overhead",
    2: "Experiment 2 (Figs. 5-6): LOAD 3, VAR = GRAIN — crossover and ratio",
    3: "Experiment 3 (Fig. 7): GRAIN = VAR = 1000 — blocking's altruism",
    4: "Experiment 4 (Fig. 8): n = 2, GRAIN = VAR = 100 — linear vs quadratic growth",
}


def _simulate(plan, executor, progress: bool):
    """The plan's configurations as one deduplicated sweep; returns ``(configs,
    the sweep's DataFrame, per-config results, distinct runs, simulation seconds)``."""
    from parsched.sim.api import sweep

    configs = plan.configs()
    df = sweep(configs, executor=executor, progress=progress)
    runs: dict[BarrierConfig, dict[str, Any]] = {}
    for cfg, (_, row) in zip(configs, df.iterrows(), strict=True):
        runs[cfg] = {"time_per_iteration": float(row["time_per_iteration"]),
                     "useful_utilization": float(row["useful_utilization"]),
                     "ci90_half_width": float(row["ci90_half_width"]),
                     "idle_fraction": idle_fraction(row),
                     "alpha_measured": _float_or_nan(row.get("alpha_measured"))}
    unique = len(set(configs))
    sim_seconds = float(df.drop_duplicates(subset=list(BarrierConfig.defaults()))
                        ["wall_seconds"].sum())
    return configs, df, runs, unique, sim_seconds


def _write_outputs(out: str, df, grid, gsum, exps, phase, pag, ploads, twop, head_df) -> None:
    """Every CSV and figure of the run into ``out``."""
    df.to_csv(os.path.join(out, "all_runs.csv"), index=False)
    grid.to_csv(os.path.join(out, "equations.csv"), index=False)
    gsum.to_csv(os.path.join(out, "equations_summary.csv"), index=False)
    for e, t in exps.items():
        t.to_csv(os.path.join(out, f"exp{e}.csv"), index=False)
    phase.to_csv(os.path.join(out, "fig9.csv"), index=False)
    pag.to_csv(os.path.join(out, "fig9_agreement.csv"), index=False)
    ploads.to_csv(os.path.join(out, "fig9_loads.csv"), index=False)
    twop.to_csv(os.path.join(out, "twophase.csv"), index=False)
    head_df.to_csv(os.path.join(out, "headlines.csv"), index=False)
    plot_grid(grid, os.path.join(out, "equations.png"))
    plot_experiments(exps, os.path.join(out, "experiments.png"))
    plot_phase(phase, os.path.join(out, "fig9.png"))


def _header(plan, quick: bool, runs: int, unique: int, sim_seconds: float) -> str:
    """The run's one-paragraph description (mode, sizes, seeds)."""
    mode = "quick" if quick else "full"
    L = plan.length
    return (
        f"mode {mode}: {runs} runs, {unique} distinct simulations "
        f"({sim_seconds:.1f} s of simulation); runs aim at {L.rounds} scheduling rounds "
        f"(k between {L.k_min} and {L.k_max}); uncoordinated busy waiting pools {L.seeds} seeds, "
        f"{L.seeds_eq8} seeds of {EQ8_ROUNDS_PER_SEED} rounds at eq. (8)'s in-regime points "
        "with ℓ >= 2 (harmonic mean of the time per iteration = mean iteration rate)."
    )


def _md_equations(header: str, head_df, grid, gsum) -> list[str]:
    """summary.md: the headlines and part (a), the equations against simulation."""
    md = [
        "# Seed 001 (Feitelson & Rudolph 1992): gang scheduling and fine-grain "
        "synchronization, reproduced by parsched", "", header, "",
        "## Headlines: paper, formula, simulation", "",
        markdown_table(head_df), "",
        "## (a) Equations against simulation", "",
        "Grid: t_p in " + ", ".join(f"{x:g}" for x in sorted(set(grid['tp']))) + " ms "
        "(VAR = GRAIN, so t_w = t_p·(n−1)/(3(n+1)); barrier cost 0), ℓ in "
        + ", ".join(str(x) for x in sorted(set(grid['l']))) + ", n in "
        + ", ".join(str(x) for x in sorted(set(grid['n'])))
        + f"; τq = {TQ:g}, τcs = {TCS_GANG:g}, α = {ALPHA:g}. Regimes: fine grain t_p <= "
        f"{FINE:g}·τq = {FINE * TQ:g} ms, coarse grain t_p + t_w >= {COARSE:g}·τq = "
        f"{COARSE * TQ:g} ms. `in_regime` marks the points where the seed says the equation "
        "holds (for eqs. 10, 12 and 13 also ℓ >= 2: they need other threads on the "
        "processor; `out_of_regime_because` gives the reason per point); rel_error = "
        "(sim − model)/model. Columns named parsched_* are parsched's checks, not the "
        "paper's formulas, and never count in within_5pct.", "",
        "![equations](equations.png)", "",
        markdown_table(gsum), "",
        "Where and why they part (the figures quoted are the full run's):", "",
    ]
    for key, label, _s, where, why in EQUATIONS:
        reg_txt = f"{where} grain, ℓ >= 2" if key in ("eq10", "eq12", "eq13") else \
            "every grain" if where == "both" else f"{where} grain"
        why = why.replace("{REF}", reference_text(grid, key))
        md.append(f"* **{key}** — {label}; regime: {reg_txt}. {why} {misses_text(grid, key)}")
    md += ["", "Every point (`equations.csv` has them all), in-regime rows only:", ""]
    cols = ["equation", "n", "l", "tp", "tw", "grain_regime", "sim", "model", "rel_error",
            "within_5pct", "sim_idle", "reference", "parsched_rel_error"]
    md += [markdown_table(grid[grid["in_regime"]], cols), ""]
    return md


def _md_experiments(exps) -> list[str]:
    """summary.md: part (b), experiments 1-4."""
    md = [
        "## (b) Experiments 1-4 (§3.3), Makbilan parameters", "",
        "Eq. (14): grain = 0.00141·GRAIN ms, var = 0.00141·VAR ms, barrier cost 0.137 ms "
        "(so t_p = 0.137 + 0.00141·(GRAIN + VAR/2)); t_w = var·(n−1)/(2(n+1)) = 0.000577·VAR "
        "at n = 10 (printed 0.00058). Table 1: gang busy-waiting uses the gang library's "
        "τcs = 0.2 ms, blocking and uncoordinated busy-waiting the default library's "
        "τcs = 0.07 + 0.14/ℓ ms. α = 1.5 (Fig. 9's value; experiment 2 measured 1.1-2.1) "
        "except experiment 3, α(ℓ) = 4, 3.07, 2.13, 1.2 (the paper: about 4 at load 1 down to "
        "about 1.2 at load 4). τq = 50 ms; n = 10 (experiment 4: n = 2).", "",
        "![experiments](experiments.png)", "",
    ]
    for e in (1, 2, 3, 4):
        md += [f"### {TITLES[e]}", "", markdown_table(exps[e], SHOWN[e]), ""]
    return md


def _md_phase(phase, pag, ploads) -> list[str]:
    """summary.md: part (c), Figure 9's phase diagram and where it parts."""
    import pandas as pd

    blk_region = phase[phase["reachable"] & (phase["model_region"] == "blocking")]
    max_idle = float(blk_region["sim_block_idle"].max()) if len(blk_region) else math.nan
    ref_rel = pd.concat([
        (blk_region["reference_block"] - blk_region["sim_block"]) / blk_region["sim_block"],
        (ploads["reference_block"] - ploads["sim_block"]) / ploads["sim_block"]])
    ref_fig9 = float(ref_rel.abs().max()) if len(ref_rel) else math.nan
    return [
        "## (c) Figure 9: phase diagram (σ = 1/2)", "",
        "Formulas: eqs. (15) and (16) with τq = 50, τcs = 0.2, α = 1.5, n = 10. Simulation: at "
        "each grid point gang busy-waiting and local blocking (competitors alike, ℓ = 3, the "
        "same τcs, barrier cost 0) are simulated and the point is classified by the same rule "
        "on the simulated ratio t_BW/t_BLK (<= σ: gang-busy, >= 1/σ: blocking). "
        "`BarrierConfig.for_tp_tw` maps each (t_p, t_w) to a program: per-iteration compute "
        "U(grain, grain + var) (§3.3's program) where it reaches, t_w <= (n−1)/(n+1)·t_p = "
        "9/11·t_p; above that line grain + Exp(mean var) (`dist = exponential`, t_p = grain + "
        "var, t_w = var·(H_10 − 1) = 1.93·var), which reaches t_w <= 1.93·t_p. The blocking "
        "region (above eq. 16's line, t_w >= 0.538 + 0.992·t_p) meets that reach at t_p = "
        "0.57 ms, t_w = 1.11 ms, so the grid runs to t_w = "
        f"{PHASE_TW_MAX:g} ms; points above 1.93·t_p (grain would be negative) are out of "
        "reach of any program with mean compute t_p and are left blank.", "",
        "![Figure 9](fig9.png)", "",
        "Agreement per formula region (simulated points classified alike; by compute "
        "distribution):", "",
        markdown_table(pag), "",
        "Where they part: eq. (12), the blocking time on which both lines rest, assumes the "
        "ℓ − 1 other threads of a processor fill every wait; with t_w comparable to t_p a "
        "processor idles whenever all its ℓ = 3 threads are blocked at once "
        f"(`sim_block_idle`: up to {max_idle:.0%} of processor time in the blocking "
        "region), so simulated blocking is slower than eq. (12) there, by 1/(1 − idle), "
        "and points above the eq. (16) line fall into 'neither' (blocking faster, but not "
        "2×). Eq. (16) does not depend on ℓ; the idle time does (more threads fill more "
        "waits). The independent reference model (`reference_block`, see (a)) gives the "
        f"same blocking times (within {ref_fig9:.1%} at these points), so it is eq. (12) "
        "that parts. The same blocking-region point at larger loads:", "",
        markdown_table(ploads), "",
        markdown_table(phase[phase["reachable"]],
                       ["tp", "tw", "dist", "model_ratio", "sim_ratio", "sim_block_idle",
                        "reference_block", "model_region", "sim_region", "agree"]), "",
    ]


def _md_twophase(twop) -> list[str]:
    """summary.md: part (d), two-phase waiting."""
    return [
        "## (d) Two-phase waiting (§2; conclusion 4)", "",
        "Spin up to α·τcs (the cost of one block), then block; Makbilan parameters as in "
        "(b), uncoordinated runs pooled over seeds (harmonic mean). The seed omits two-phase "
        "from its comparison because with gang scheduling at fine grain only the spinning "
        "phase runs (so it equals busy waiting) and without gang scheduling it is almost "
        "blocking with a larger overhead; and concludes that it limits the waste of "
        "uncoordinated busy waiting but brings no real benefit without gang scheduling.", "",
        markdown_table(twop), "",
    ]


def run(
    out: str,
    *,
    quick: bool = False,
    executor: cf.Executor | None = None,
    progress: bool = True,
    echo: Callable[[str, Any], None] | None = None,
) -> dict[str, Any]:
    """Simulates every part as one sweep and writes CSV/PNG/summary.md into ``out``."""
    plan = build_plan(quick=quick)
    configs, df, runs, unique, sim_seconds = _simulate(plan, executor, progress)

    refs = reference_table(plan, quick, executor)
    grid = grid_table(plan, runs, quick, refs)
    gsum = grid_summary(grid)
    exps = experiment_tables(plan, runs)
    phase = phase_table(plan, runs)
    twop = twophase_table(plan, runs)
    head_df, head_js = headlines(gsum, exps, phase, twop)
    pag = phase_agreement(phase)
    ploads = phase_load_table(plan, runs)

    _write_outputs(out, df, grid, gsum, exps, phase, pag, ploads, twop, head_df)
    header = _header(plan, quick, len(configs), unique, sim_seconds)
    md = (_md_equations(header, head_df, grid, gsum) + _md_experiments(exps)
          + _md_phase(phase, pag, ploads) + _md_twophase(twop))
    with open(os.path.join(out, "summary.md"), "w", encoding="utf-8") as fh:
        fh.write("\n".join(md))
    if echo:
        echo("Run", header)
        echo("Headlines: paper, formula, simulation", head_df)
        echo("(a) equations vs simulation (in-regime agreement; all columns in "
             "equations_summary.csv)",
             gsum[["equation", "regime", "points_in_regime", "within_5pct",
                   "median_abs_err_in", "max_abs_err_in", "median_abs_err_out"]])
        for e in (1, 2, 3, 4):
            echo(TITLES[e], exps[e][SHOWN[e]])
        echo("(c) Figure 9: agreement per formula region", pag)
        echo("(c) Figure 9: a blocking-region point at several loads", ploads)
    if echo:
        echo("(d) two-phase waiting", twop)
    head_js["runs"] = len(configs)
    head_js["distinct_simulations"] = unique
    head_js["simulation_seconds"] = sim_seconds
    return {"grid": grid, "grid_summary": gsum, "experiments": exps, "phase": phase,
            "phase_agreement": pag, "phase_loads": ploads,
            "twophase": twop,
            "headlines_table": head_df, "headlines": head_js, "runs": df}
