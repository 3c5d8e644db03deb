"""Statistics over simulated runs: pooled intervals, harmonic means, idle shares, crossovers and
fitted exponents."""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from typing import Any

import numpy as np

from parsched.config import BarrierConfig


def pooled_ci90(times: Sequence[float]) -> tuple[float, float]:
    """90% interval of the pooled (harmonic-mean) time per iteration across seeds:
    the mean rate r̄ = mean(1/t_i) ± 1.645·sd/√N, inverted (normal approximation;
    each seed is one independent sample of the scheduling pattern)."""
    r = 1.0 / np.asarray(times, dtype=float)
    if len(r) < 2:
        return math.nan, math.nan
    m, se = float(r.mean()), float(r.std(ddof=1) / math.sqrt(len(r)))
    lo_rate, hi_rate = m - 1.645 * se, m + 1.645 * se
    return 1.0 / hi_rate, (1.0 / lo_rate if lo_rate > 0 else math.inf)


def _float_or_nan(x: Any) -> float:
    return math.nan if x is None else float(x)


def _mean_alpha(runs, cfgs: Sequence[BarrierConfig]) -> float:
    """Mean of the yield runs' measured α (yields per wait)."""
    return float(np.mean([runs[c]["alpha_measured"] for c in cfgs]))


def idle_fraction(row: Any) -> float:
    """Fraction of processor time in which a processor has nothing to run: 1 −
    (useful + overhead + busy waiting)/(P·end), with P·end = useful/useful_utilization.
    (Skewing threads' compute, at most τq per processor, counts as idle.)"""
    u = float(row["useful_utilization"])
    useful = float(row["useful_time"])
    if not u > 0 or not useful > 0:
        return math.nan
    total = useful / u
    return 1.0 - (useful + float(row["overhead_time"]) + float(row["busy_wait_time"])) / total


def harmonic(values: Iterable[float]) -> float:
    v = [float(x) for x in values]
    return len(v) / sum(1.0 / x for x in v) if v else math.nan


def _mean_time(runs, cfgs: Sequence[BarrierConfig], pooled: str = "harmonic") -> float:
    vals = [runs[c]["time_per_iteration"] for c in cfgs]
    return harmonic(vals) if pooled == "harmonic" else float(np.mean(vals))


def crossover(x: Sequence[float], ratio: Sequence[float], level: float = 1.0) -> float:
    """First x where ``ratio`` falls through ``level`` (linear interpolation in x)."""
    xs, rs = list(x), list(ratio)
    for i in range(1, len(xs)):
        a, b = rs[i - 1] - level, rs[i] - level
        if a >= 0 > b or a > 0 >= b:
            return xs[i - 1] + (xs[i] - xs[i - 1]) * a / (a - b)
    return math.nan


def interp(x0: float, x: Sequence[float], y: Sequence[float]) -> float:
    return float(np.interp(x0, list(x), list(y)))


def fit_exponent(loads: Sequence[float], times: Sequence[float]) -> float:
    """b in t = a·ℓ^b, least squares on log t against log ℓ."""
    return float(np.polyfit(np.log(np.asarray(loads, float)), np.log(np.asarray(times, float)),
                            1)[0])
