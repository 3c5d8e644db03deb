"""The plan: every simulated configuration of the four parts, keyed by role."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import numpy as np

from parsched.config import BarrierConfig
from parsched.errors import ConfigError
from parsched.models import feitelson_rudolph as fr
from parsched.reproduce.gang.params import (
    ALPHA,
    EQ8_ROUNDS_PER_SEED,
    FULL,
    GRID_L_FULL,
    GRID_L_QUICK,
    GRID_N_FULL,
    GRID_N_QUICK,
    GRID_TP_FULL,
    GRID_TP_QUICK,
    PHASE_LOAD_POINT,
    PHASE_LOADS,
    PHASE_TP_MAX,
    PHASE_TW_MAX,
    QUICK,
    TCS_GANG,
    TQ,
    _k,
)
from parsched.reproduce.gang.regimes import eq8_pooled

if TYPE_CHECKING:  # pragma: no cover
    from parsched.reproduce.gang.params import Length


@dataclass
class Plan:
    """Every configuration of the three parts, keyed by role."""

    quick: bool
    length: Length
    grid: list[dict[str, Any]]
    exp: dict[int, list[dict[str, Any]]]
    phase: list[dict[str, Any]]
    twophase: list[dict[str, Any]]
    #: Figure 9 check: one blocking-region point at several loads ℓ (eq. 16 does not
    #: depend on ℓ; the simulation's idle processors do)
    phase_load: list[dict[str, Any]] = field(default_factory=list)

    def configs(self) -> list[BarrierConfig]:
        out: list[BarrierConfig] = []
        for row in self.grid:
            out += row["gang_busy"] + row["local_busy"] + row["local_block_same"]
            out += row["local_block_compute"]
        for rows in self.exp.values():
            for row in rows:
                for v in row["runs"].values():
                    out += v
        for row in self.phase:
            out += row["gang_busy"] + row["local_block_same"]
        for row in self.twophase:
            for v in row["runs"].values():
                out += v
        for row in self.phase_load:
            out += row["gang_busy"] + row["local_block_same"]
        return out


def _seeds(cfg: BarrierConfig, count: int) -> list[BarrierConfig]:
    return [cfg.with_(seed=s) for s in range(1, count + 1)]


def build_plan(quick: bool = False) -> Plan:
    length = QUICK if quick else FULL
    tps = GRID_TP_QUICK if quick else GRID_TP_FULL
    loads = GRID_L_QUICK if quick else GRID_L_FULL
    ns = GRID_N_QUICK if quick else GRID_N_FULL

    # (a) grid: VAR = GRAIN, barrier cost 0, t_p = 1.5 grain
    grid = []
    for n in ns:
        for l in loads:
            for tp in tps:
                base = BarrierConfig(n=n, l=l, grain=tp / 1.5, var=tp / 1.5, barrier_cost=0.0,
                                     tq=TQ, tcs=TCS_GANG, alpha=ALPHA)
                model = fr.barrier_model(base)
                tp_, tw_ = model["t_p"], model["t_w"]
                e6, e8, e12, e13 = model["eq6"], model["eq8"], model["eq12"], model["eq13"]
                pooled = eq8_pooled(tp_, tw_, n, l)
                grid.append({
                    "n": n, "l": l, "tp": tp_, "tw": tw_,
                    "gang_busy": [base.with_(sched="gang", wait="busy", k=_k(e6, l, length))],
                    # Compute-bound competitors: with busy waiting they give the
                    # measured gang exactly the times alike gangs do (a Rust test
                    # checks it) at a fraction of the cost, which pays for the
                    # many seeds (patterns) eq. (8)'s expectation needs.
                    "local_busy": _seeds(
                        base.with_(sched="local", wait="busy", competitors="compute",
                                   k=_k(e8, l, length,
                                        rounds=EQ8_ROUNDS_PER_SEED if pooled
                                        else length.rounds // 30)),
                        length.seeds_eq8 if pooled else length.seeds),
                    "local_block_same": [base.with_(sched="local", wait="block",
                                                    k=_k(min(e12, e6), l, length))],
                    "local_block_compute": [base.with_(sched="local", wait="block",
                                                       competitors="compute",
                                                       k=_k(e13, l, length))],
                })

    # (b) experiments
    exp: dict[int, list[dict[str, Any]]] = {}
    kk = 6000 if quick else 50000  # the paper measured 30000-50000 iterations
    # Experiment 1: LOAD 1, VAR 0
    g1 = fr.EXPERIMENT_DEFAULTS[1]["grains"]
    if quick:
        g1 = (0, 100, 700, 2000)
    exp[1] = [_exp_point(1, g, 0.0, 1, 10, ALPHA, kk, length) for g in g1]
    # Experiment 2: LOAD 3, VAR = GRAIN (dense enough to locate the crossover)
    head = fr.experiment2_headlines()
    g2 = sorted(set(fr.EXPERIMENT_DEFAULTS[2]["grains"]) | {
        5, 15, 35, 75, 125, 175, 225, 250, 285, 350, 500, 700, 1200, 2000,
        round(head["at_grain"], 3)})
    if quick:
        g2 = [0, round(head["at_grain"], 3), 100, 200, 265, 300, 400, 800]
    exp[2] = [_exp_point(2, g, g, 3, 10, ALPHA, kk, length) for g in g2]
    # Experiment 3: GRAIN = VAR = 1000, loads 1-4, α per load
    loads3 = (1, 2, 3, 4)
    exp[3] = [_exp_point(3, 1000, 1000, ld, 10, float(fr.exp3_alpha(ld)), kk // 10, length)
              for ld in loads3]
    # Experiment 4: n = 2, GRAIN = VAR = 100, loads 1-6
    loads4 = (1, 2, 3, 4, 5, 6) if not quick else (1, 2, 4, 6)
    exp[4] = [_exp_point(4, 100, 100, ld, 2, ALPHA, kk, length) for ld in loads4]

    # (c) phase diagram, Fig. 9 parameters, ℓ = 3, barrier cost folded into t_p (0 here).
    # t_w reaches PHASE_TW_MAX (beyond the eq. 16 line, which leaves the unit square at
    # t_p ≈ 0.46): the uniform compute of §3.3 where it reaches (t_w <= 9/11·t_p),
    # exponential compute above it (t_w <= (H_10 − 1)·t_p = 1.93·t_p); the rest is
    # out of reach of any compute with mean t_p (grain >= 0) and left blank.
    step = 0.25 if quick else 0.1
    tps_c = [0.05] + [round(x, 3) for x in np.arange(step, PHASE_TP_MAX + 1e-9, step)]
    tws_c = [round(x, 3) for x in np.arange(0.0, PHASE_TW_MAX + 1e-9, step)]
    phase = []
    n = 10
    for tp in tps_c:
        for tw in tws_c:
            row: dict[str, Any] = {"tp": tp, "tw": tw, "dist": None, "gang_busy": [],
                                   "local_block_same": []}
            try:
                base = BarrierConfig.for_tp_tw(tp, tw, n=n, l=3, barrier_cost=0.0, tq=TQ,
                                               tcs=TCS_GANG, alpha=ALPHA,
                                               k=3000 if quick else 20000)
            except ConfigError:
                base = None
            if base is not None:
                row["dist"] = base.dist
                row["gang_busy"] = [base.with_(sched="gang", wait="busy")]
                row["local_block_same"] = [base.with_(sched="local", wait="block")]
            phase.append(row)
    phase_load = []
    for ld in PHASE_LOADS:
        base = BarrierConfig.for_tp_tw(*PHASE_LOAD_POINT, n=n, l=ld, barrier_cost=0.0, tq=TQ,
                                       tcs=TCS_GANG, alpha=ALPHA, k=3000 if quick else 20000)
        phase_load.append({"tp": PHASE_LOAD_POINT[0], "tw": PHASE_LOAD_POINT[1], "l": ld,
                           "dist": base.dist,
                           "gang_busy": [base.with_(sched="gang", wait="busy")],
                           "local_block_same": [base.with_(sched="local", wait="block")]})
    # (d) two-phase waiting (§2 and conclusion 4), spin limit = α·τcs (the cost of a block)
    twophase = []
    cases = [("exp. 2, finest grain (t_p + t_w = 0.16 ms)", head["at_grain"], 3, 10),
             ("exp. 2, GRAIN = VAR = 1000 (t_p + t_w = 2.8 ms)", 1000, 3, 10),
             ("exp. 4, n = 2, load 4", 100, 4, 2)]
    for label, g, ld, n in cases:
        pt = _exp_point(2, g, g, ld, n, ALPHA, kk, length)
        gang = pt["runs"]["gang_busy"][0]
        block = pt["runs"]["block"][0]
        spin = ALPHA * block.tcs
        busy_local = block.with_(wait="busy")
        twophase.append({
            "case": label, "GRAIN": g, "load": ld, "n": n, "spin_limit": spin,
            "runs": {
                "gang_busy": [gang],
                "gang_twophase": [gang.with_(wait="twophase", spin_limit=spin)],
                "local_busy": _seeds(busy_local, length.seeds),
                "local_twophase": _seeds(busy_local.with_(wait="twophase", spin_limit=spin),
                                         length.seeds),
                "local_block": [block],
            },
        })
    return Plan(quick=quick, length=length, grid=grid, exp=exp, phase=phase,
                twophase=twophase, phase_load=phase_load)


def _exp_point(exp: int, grain: float, var: float, load: int, n: int, alpha: float, k: int,
               length: Length) -> dict[str, Any]:
    """One data point of an experiment: GRAIN/VAR -> ms by eq. (14), Table 1 costs."""
    common = {"n": n, "l": load, "grain": fr.MS_PER_GRAIN * grain,
              "var": fr.MS_PER_GRAIN * var, "barrier_cost": fr.SYNC_MS_10, "tq": TQ,
              "alpha": alpha, "k": k}
    tcs_default = float(fr.default_library_switch_ms(load))
    gang = BarrierConfig(**common, tcs=TCS_GANG, sched="gang", wait="busy")
    block = BarrierConfig(**common, tcs=tcs_default, sched="local", wait="block")
    # Blocking as Makbilan ran it (yield to the run queue; α measured, §3.3)
    yld = block.with_(wait="yield")
    runs: dict[str, list[BarrierConfig]] = {"gang_busy": [gang], "block": [block],
                                            "yield": [yld]}
    if exp == 3:
        seeds = max(2, length.seeds // 2)
        runs["block"] = _seeds(block, seeds)
        runs["block_compute"] = _seeds(block.with_(competitors="compute"), seeds)
        runs["block_compute_priority"] = _seeds(
            block.with_(competitors="compute", wakeup="priority"), seeds)
        runs["yield"] = _seeds(yld, seeds)
        runs["yield_compute"] = _seeds(yld.with_(competitors="compute"), seeds)
    if exp == 4:
        runs["local_busy"] = _seeds(
            BarrierConfig(**common, tcs=tcs_default, sched="local", wait="busy"), length.seeds)
    return {"grain": grain, "var": var, "load": load, "n": n, "alpha": alpha,
            "tcs_gang": TCS_GANG, "tcs_default": tcs_default, "runs": runs}
