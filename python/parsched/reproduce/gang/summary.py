"""The paper's (and the formulas') headline numbers beside the simulation's."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from parsched.models import feitelson_rudolph as fr
from parsched.reproduce.gang.figure9 import phase_agreement
from parsched.reproduce.gang.params import PAPER_CROSSOVER_MS, PAPER_RATIO, PAPER_RATIO_AT_MS
from parsched.reproduce.gang.stats import crossover, fit_exponent, interp

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd


def headlines(grid_sum, exps, phase, twop=None) -> tuple[pd.DataFrame, dict[str, Any]]:
    """The paper's (and the formulas') numbers beside the simulation's."""
    import pandas as pd

    t1, t2, t3, t4 = exps[1], exps[2], exps[3], exps[4]
    head = fr.experiment2_headlines()
    x_sim = crossover(t2["tp_plus_tw"], t2["ratio_sim"])
    r_sim = interp(PAPER_RATIO_AT_MS, t2["tp_plus_tw"], t2["ratio_sim"])
    ov = t1["overhead_sim"]
    b_gang = fit_exponent(t4["load"], t4["sim_gang_busy"])
    b_blk = fit_exponent(t4["load"], t4["sim_block"])
    b_unc = fit_exponent(t4["load"], t4["sim_uncoord_busy"])
    b_unc_model = fit_exponent(t4["load"], t4["eq8"])
    x_yield = crossover(t2["tp_plus_tw"], t2["ratio_yield"])
    r_yield = interp(PAPER_RATIO_AT_MS, t2["tp_plus_tw"], t2["ratio_yield"])
    in_range = t2[t2["GRAIN"] <= 1000]
    a2 = (float(in_range["alpha_measured"].min()), float(in_range["alpha_measured"].max()))
    # the seed's procedure: predictions from eq. (12) with the α the run measured
    e12am = float(((in_range["sim_yield"] - in_range["eq12_alpha_measured"])
                   / in_range["eq12_alpha_measured"]).abs().max())
    pag = phase_agreement(phase)
    tot = pag[pag["model_region"] == "all"].iloc[0]
    agree = float(tot["fraction"])
    by_region = {str(r["model_region"]): (int(r["agree"]), int(r["simulated"]))
                 for _, r in pag.iterrows()}
    fig9_text = "; ".join(f"{reg} {a}/{m}" for reg, (a, m) in by_region.items()
                          if reg != "all")
    fig9_text = (f"{int(tot['agree'])}/{int(tot['simulated'])} simulated points "
                 f"({fig9_text}; exponential compute: {int(tot['exponential_agree'])}/"
                 f"{int(tot['exponential_simulated'])})")
    rows = [
        ("Exp. 1: blocking overhead per iteration at load 1, ms (mean over grains)",
         "constant", float(t1["overhead_model"].mean()), float(ov.mean())),
        ("Exp. 1: spread of that overhead over grains (max − min), ms", "≈ 0", 0.0,
         float(ov.max() - ov.min())),
        ("Exp. 2: crossover gang busy = blocking, t_p + t_w (ms)", PAPER_CROSSOVER_MS,
         head["crossover_ms"], x_sim),
        ("Exp. 2: blocking / gang busy at t_p + t_w = 0.16 ms", PAPER_RATIO, head["ratio_at"],
         r_sim),
        ("Exp. 2 with yield-blocking (α measured): crossover t_p + t_w (ms)",
         PAPER_CROSSOVER_MS, "", x_yield),
        ("Exp. 2 with yield-blocking: blocking / gang busy at t_p + t_w = 0.16 ms",
         PAPER_RATIO, "", r_yield),
        ("Exp. 2: α measured (yields per wait), GRAIN 0-1000", "1.1-2.1", "",
         f"{a2[0]:.2f}-{a2[1]:.2f}"),
        ("Exp. 2: yield-blocking vs eq. 12 with the measured α, GRAIN 0-1000: largest error",
         "", "", f"{e12am:.2%}"),
        ("Exp. 3: α measured at load 1 / load 4, compute competitors", "≈ 4 / ≈ 1.2", "",
         f"{t3['alpha_measured_compute'].iloc[0]:.2f} / "
         f"{t3['alpha_measured_compute'].iloc[-1]:.2f}"),
        ("Exp. 3: α measured at load 1 / load 4, competitors alike", "", "",
         f"{t3['alpha_measured'].iloc[0]:.2f} / {t3['alpha_measured'].iloc[-1]:.2f}"),
        ("Exp. 3: blocking, compute competitors, load 4 (ms)",
         "≈ competing gangs × τq",
         float(t3["eq13"].iloc[-1]), float(t3["sim_block_compute"].iloc[-1])),
        ("Exp. 3: blocking, competitors alike, load 4 (ms)", "", float(t3["eq12"].iloc[-1]),
         float(t3["sim_block"].iloc[-1])),
        ("Exp. 3: gang busy-waiting, load 4 (ms): blocking alike is faster (altruism pays)", "",
         float(t3["eq6"].iloc[-1]), float(t3["sim_gang_busy"].iloc[-1])),
        ("Exp. 3: compute competitors with priority wakeup, load 4 (ms; §2.2's smart "
         "scheduler)", "", "", float(t3["sim_block_compute_priority"].iloc[-1])),
        ("Exp. 4: exponent b of t ∝ ℓ^b, gang busy", "linear (1)",
         fit_exponent(t4["load"], t4["eq6"]), b_gang),
        ("Exp. 4: exponent b, blocking (τcs = 0.07 + 0.14/ℓ falls with ℓ)", "linear (1)",
         fit_exponent(t4["load"], t4["eq12"]), b_blk),
        ("Exp. 4: exponent b, uncoordinated busy", "quadratic (2)", b_unc_model, b_unc),
        ("Fig. 9 (σ = 1/2): simulated grid points classified as the formulas do, per "
         "formula region", "", "", fig9_text),
    ]
    if twop is not None and len(twop):
        t0 = twop.iloc[0]
        rows.append(("Two-phase at t_p + t_w = 0.16 ms: gang two-phase / gang busy",
                     "= (only the spin phase runs)", "", float(t0["gang_twophase"]
                                                          / t0["gang_busy"])))
        rows.append(("Two-phase at t_p + t_w = 0.16 ms: local two-phase / blocking",
                     "≈ 1, larger overhead", "", float(t0["local_twophase"]
                                                        / t0["local_block"])))
    for _, g in grid_sum.iterrows():
        text = (f"{int(g['within_5pct'])}/{int(g['points_in_regime'])}, median abs. "
                f"error {g['median_abs_err_in']:.1%}")
        if g["equation"] == "eq8":
            text += (f"; {int(g['within_5pct_or_ci90'])} within 5% or the seed pool's 90% CI; "
                     f"ℓ = 1: {int(g['l1_within_5pct'])}/{int(g['l1_in_regime'])}")
        if g["equation"] in ("eq10", "eq12"):
            text += (f"; parsched's idle-corrected form, eq/(1 − idle): "
                     f"{int(g['parsched_idle_corrected_within_5pct'])}/"
                     f"{int(g['points_in_regime'])}")
        if g["equation"] == "eq13":
            text += (f"; n = 10: {int(g['n10_within_5pct'])}/{int(g['n10_in_regime'])}; with "
                     f"parsched's residual-quantum form: {int(g['parsched_residual_within_5pct'])}/"
                     f"{int(g['points_in_regime'])}")
        rows.append((f"(a) {g['label']}: in-regime points within 5%", "",
                     f"{int(g['points_in_regime'])} points", text))
    df = pd.DataFrame(rows, columns=["quantity", "paper", "formula", "simulation"])
    js = {
        "exp1_overhead_ms": float(ov.mean()),
        "exp2_crossover_ms": {"paper": PAPER_CROSSOVER_MS, "formula": head["crossover_ms"],
                              "simulation": x_sim},
        "exp2_ratio_at_0.16ms": {"paper": PAPER_RATIO, "formula": head["ratio_at"],
                                 "simulation": r_sim},
        "exp2_yield": {"crossover_ms": x_yield, "ratio_at_0.16ms": r_yield,
                       "alpha_measured_range": list(a2),
                       "eq12_alpha_measured_max_abs_error": e12am},
        "exp3_alpha_measured": {
            "compute": dict(zip(map(str, t3["load"]), map(float, t3["alpha_measured_compute"]),
                                strict=True)),
            "alike": dict(zip(map(str, t3["load"]), map(float, t3["alpha_measured"]),
                              strict=True))},
        "exp3_block_compute_ms": dict(zip(map(str, t3["load"]),
                                          map(float, t3["sim_block_compute"]), strict=True)),
        "exp4_exponents": {"gang_busy": b_gang, "block": b_blk, "uncoord_busy": b_unc,
                           "uncoord_busy_eq8": b_unc_model},
        "fig9_agreement": agree,
        "fig9_by_region": {k: {"agree": a, "simulated": m} for k, (a, m) in by_region.items()},
        "equations": {str(g["equation"]): {"in_regime": int(g["points_in_regime"]),
                                           "within_5pct": int(g["within_5pct"])}
                      for _, g in grid_sum.iterrows()},
    }
    return df, js
