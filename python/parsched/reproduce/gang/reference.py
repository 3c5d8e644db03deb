"""The independent reference model (:mod:`parsched.models.reference_rr`) run beside the simulator
at the grid points where the equations part from it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

import numpy as np

from parsched.config import BarrierConfig
from parsched.reproduce.gang.regimes import EQUATIONS, eq8_in_regime, regime
from parsched.reproduce.gang.stats import harmonic

if TYPE_CHECKING:  # pragma: no cover
    import concurrent.futures as cf

    from parsched.reproduce.gang.plan import Plan


#: Seeds of the independent reference model per point (full, quick).
REFERENCE_SEEDS = (3, 1)


#: Seeds at eq. (8)'s out-of-regime points, where each run keeps the pattern it
#: falls into (full, quick); each as long as the simulated runs there.
REFERENCE_SEEDS_EQ8 = (48, 8)


#: The equations whose departures the reference model attributes; it runs the
#: configuration of each one's simulated scheme. Eq. (8) only outside its
#: regime (inside it, it agrees with the simulation; the reference model would
#: need thousands of long runs there).
REFERENCE_EQUATIONS = ("eq6u", "eq8", "eq10", "eq12", "eq13")


def reference_wanted(key: str, n: int, l: int, tp: float, tw: float) -> bool:
    """Whether the reference model runs at this grid point of ``key``."""
    if key not in REFERENCE_EQUATIONS:
        return False
    if key == "eq8":
        return l >= 2 and regime(tp, tw) == "fine" and not eq8_in_regime(tp, tw, n, l)
    where = next(w for k, _l, _s, w, _y in EQUATIONS if k == key)
    return (l >= 2 or key == "eq6u") and regime(tp, tw) == where


def reference_samples(cfg: BarrierConfig, *, k: int, warmup: int, seeds: int) -> list[float]:
    """Per-seed times per iteration of the measured gang in the independent
    reference model (:mod:`parsched.models.reference_rr`: the seed's mechanism,
    written apart from the simulator) for a simulated configuration (local
    round robin, block or busy, P = n), seeds 1..``seeds``."""
    from parsched.models.reference_rr import reference_run

    if cfg.sched != "local" or cfg.wait not in ("block", "busy") or cfg.P not in (None, cfg.n):
        raise ValueError("the reference model covers local round robin, block or busy, P = n")
    return [reference_run(cfg.n, cfg.l, cfg.grain, cfg.var, k=k, warmup=warmup, tq=cfg.tq,
                          tcs=cfg.tcs, alpha=cfg.alpha, barrier_cost=cfg.barrier_cost,
                          competitors=cfg.competitors, wakeup=cfg.wakeup, wait=cfg.wait,
                          dist=cfg.dist, seed=s + 1).time_per_iteration
            for s in range(seeds)]


def reference_for(cfg: BarrierConfig, quick: bool = False) -> float:
    """The reference model's mean time per iteration for a simulated
    configuration, over ``REFERENCE_SEEDS`` seeds."""
    return float(np.mean(reference_samples(cfg, k=500 if quick else 2000, warmup=100,
                                           seeds=REFERENCE_SEEDS[1 if quick else 0])))


def grid_reference(key: str, cfg: BarrierConfig, quick: bool = False) -> list[float]:
    """``reference_samples`` at a grid point of ``key`` (``cfg``: the simulated
    scheme's configuration). Eq. (8): ``REFERENCE_SEEDS_EQ8`` seeds of the
    simulated runs' k, measured from the start as they are (a run keeps its
    pattern, so the two are compared as distributions)."""
    if key == "eq8":
        return reference_samples(cfg, k=cfg.k, warmup=0,
                                 seeds=REFERENCE_SEEDS_EQ8[1 if quick else 0])
    coarse = key in ("eq10", "eq6u")
    return reference_samples(cfg, k=(150 if quick else 400) if coarse else (500 if quick else 2000),
                             warmup=20 if coarse else 100,
                             seeds=REFERENCE_SEEDS[1 if quick else 0])


def reference_value(key: str, samples: Sequence[float]) -> float:
    """One figure from ``grid_reference``: the mean, or for eq. (8) the
    harmonic mean (the mean iteration rate over patterns, as simulated)."""
    return harmonic(samples) if key == "eq8" else float(np.mean(samples))


def reference_points(plan: Plan) -> list[tuple[str, BarrierConfig]]:
    """(equation, simulated configuration) at every grid point where the
    reference model runs (``reference_wanted``)."""
    scheme = {key: sch for key, _l, sch, _w, _y in EQUATIONS}
    return [(key, pt[scheme[key]][0]) for pt in plan.grid for key in REFERENCE_EQUATIONS
            if reference_wanted(key, pt["n"], pt["l"], pt["tp"], pt["tw"])]


def _reference_job(args: tuple[str, BarrierConfig, bool]) -> list[float]:
    return grid_reference(*args)


def reference_table(plan: Plan, quick: bool = False, executor: cf.Executor | None = None
                    ) -> dict[tuple[str, BarrierConfig], list[float]]:
    """``grid_reference`` at every ``reference_points(plan)``, on ``executor``
    (default: one process per CPU)."""
    from parsched.sim.api import executor_for, process_executor

    pts = reference_points(plan)
    if not pts:
        return {}
    with executor_for(executor, len(pts), default=process_executor) as ex:
        vals = list(ex.map(_reference_job, [(*p, quick) for p in pts]))
    return dict(zip(pts, vals, strict=True))
