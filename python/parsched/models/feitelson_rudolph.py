"""Analytic model of Feitelson & Rudolph (1992), "Gang scheduling performance
benefits for fine-grain synchronization" (seed 001, sections 2, 3.3 and 4).

A gang of ``n`` threads iterates: each thread computes (average ``t_p``), then
all meet at a barrier; ``t_w`` is the average time a thread would wait at the
barrier on dedicated processors (eqs. 1-4), so ``t_p + t_w`` is the average
iteration time on a dedicated machine. ``l`` (the paper's ℓ) threads share each
processor, the scheduler quantum is ``tq`` (τq) and a context switch costs
``tcs`` (τcs); blocking costs ``alpha`` (α) context switches.

The functions give the **expected time per iteration** in each scheme. The
paper distinguishes two regimes and each formula is valid in one of them:

* **coarse grain**: ``t_p + t_w >> tq`` (many quanta per iteration);
* **fine grain**: ``t_p << tq`` (many iterations per quantum).

All times are in milliseconds. Every function accepts scalars or numpy arrays
(broadcast together) and returns a numpy float / array.

Parameter sources (Makbilan, seed 001): τq = 50 ms (§3.3), α = 1.5 and
τcs = 0.2 ms in the phase diagram of Fig. 9 (§4), Table 1 library overheads,
and the GRAIN/VAR -> (t_p, t_w) mapping of eq. (14).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Literal, NamedTuple

import numpy as np

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = [
    "ALPHA_MAKBILAN",
    "DEFAULT_SPAWN_MS",
    "EXPERIMENT_DEFAULTS",
    "GANG_LIBRARY_SWITCH_MS",
    "GANG_SPAWN_MS",
    "MAKBILAN",
    "MS_PER_GRAIN",
    "SYNC_MS_10",
    "TCS_MS",
    "TQ_MS",
    "TW_PER_VAR_PRINTED",
    "Line",
    "PhaseBoundaries",
    "SystemParams",
    "barrier_model",
    "classify",
    "default_library_switch_ms",
    "exp3_alpha",
    "expected_max_uniform",
    "experiment2_headlines",
    "experiment_predictions",
    "gang_library_switch_ms",
    "makbilan_mapping",
    "model_values",
    "phase_boundaries",
    "phase_diagram",
    "t_block_compute",
    "t_block_same",
    "t_gang_busy",
    "t_uncoord_busy",
    "tw_ms_per_var_unit",
]

Grain = Literal["fine", "coarse"]

# --------------------------------------------------------------------------
# System parameters (Makbilan)
# --------------------------------------------------------------------------

TQ_MS = 50.0
"""Scheduler time quantum τq on Makbilan, ms (§3.3: "The system time quantum is 50 ms")."""
TCS_MS = 0.2
"""Context-switch cost τcs, ms, used for Fig. 9 (§4); equals the gang library's Table 1 cost."""
ALPHA_MAKBILAN = 1.5
"""Blocking cost factor α used for Fig. 9 (§4). Measured values vary: 1.1-2.1 in
experiment 2 (footnote 2), ≈4 (load 1) down to ≈1.2 (load 4) in experiment 3."""

# Table 1: run-time library overheads (ms).
GANG_LIBRARY_SWITCH_MS = 0.2
"""Table 1: scheduling (context switch) overhead of the gang-scheduling library."""
DEFAULT_SPAWN_MS = 1.6
"""Table 1: spawn overhead of the default (uncoordinated) library."""
GANG_SPAWN_MS = 2.5
"""Table 1: spawn overhead of the gang-scheduling library."""

# Eq. (14) constants.
MS_PER_GRAIN = 0.00141
"""ms per unit of GRAIN (one instruction of the synthetic loop), §3.3."""
SYNC_MS_10 = 0.137
"""Barrier interaction cost per iteration on 10 processors, ms (§3.3); part of t_p."""
TW_PER_VAR_PRINTED = 0.00058
"""The t_w coefficient printed in eq. (14) (n = 10, rounded to 2 significant digits)."""


def default_library_switch_ms(l):
    """Table 1: scheduling overhead of the default ParC library, ``0.07 + 0.14/ℓ`` ms.

    The second term is paid once per scheduling round and is amortised over the
    ℓ threads of the round (Table 1 footnote).
    """
    return 0.07 + 0.14 / np.asarray(l, dtype=float)


def gang_library_switch_ms(l=1):
    """Table 1: scheduling overhead of the gang library, a constant 0.2 ms (any ℓ)."""
    return np.full(np.shape(l), GANG_LIBRARY_SWITCH_MS)[()]


@dataclass(frozen=True)
class SystemParams:
    """System and application constants of the model (defaults: Makbilan, Fig. 9).

    ``load`` is ℓ, the number of threads per processor (= the experiments' LOAD,
    the number of gangs, one thread of each per processor).
    """

    tq_ms: float = TQ_MS
    tcs_ms: float = TCS_MS
    alpha: float = ALPHA_MAKBILAN
    n: int = 10
    load: int = 3

    def __post_init__(self) -> None:
        if not self.tq_ms > 0:
            raise ValueError(f"tq_ms must be > 0, got {self.tq_ms}")
        if not self.tcs_ms >= 0:
            raise ValueError(f"tcs_ms must be >= 0, got {self.tcs_ms}")
        if not self.alpha > 0:
            raise ValueError(f"alpha must be > 0, got {self.alpha}")
        if self.n < 1:
            raise ValueError(f"n must be >= 1, got {self.n}")
        if self.load < 1:
            raise ValueError(f"load must be >= 1, got {self.load}")

    def kwargs(self) -> dict[str, float]:
        """``dict(n=, l=, tq=, tcs=)`` for the ``t_*`` functions (add ``alpha`` for blocking)."""
        return {"n": self.n, "l": self.load, "tq": self.tq_ms, "tcs": self.tcs_ms}


MAKBILAN = SystemParams()
"""Makbilan as used for Fig. 9: τq = 50 ms, τcs = 0.2 ms, α = 1.5, n = 10."""


def _check_grain(grain: str) -> None:
    if grain not in ("fine", "coarse"):
        raise ValueError(f"grain must be 'fine' or 'coarse', got {grain!r}")


# --------------------------------------------------------------------------
# Time per iteration, section 2.2
# --------------------------------------------------------------------------


def t_gang_busy(tp, tw, n=10, l=1, tq=TQ_MS, tcs=TCS_MS):
    """Busy waiting with gang scheduling, eq. (6)::

        t = (1 + τcs/τq) (t_p + t_w) ℓ

    Valid for **both** grains ("The granularity does not have any effect"): the
    gang runs as on dedicated processors for 1/ℓ of the time, plus one context
    switch per quantum. ``n`` does not appear; it is accepted for a uniform
    signature.
    """
    del n
    return (1.0 + tcs / tq) * (tp + tw) * l


def t_uncoord_busy(tp, tw, n=10, l=1, tq=TQ_MS, tcs=TCS_MS, grain="auto"):
    """Busy waiting with uncoordinated (per-processor) scheduling.

    * ``grain="fine"`` (t_p << τq): eq. (8), ``(1 + τcs/τq)^n (t_p + t_w) ℓ^n``,
      with the paper's correction (§2.2, after eq. 8): at least one iteration
      completes per scheduling round, so the time per iteration is
      ``min(eq. 8, (τq + τcs) ℓ)``. Eq. (8) is eq. (6) times
      ``ℓ^(n-1) (1 + τcs/τq)^(n-1)``: the expected overlap of n random quanta in
      a round of length ℓ(τq + τcs).
    * ``grain="coarse"`` (t_p + t_w >> τq): "nearly identical" to gang
      scheduling; eq. (6) is "a good approximation", so eq. (6) is returned.
    * ``grain="auto"`` (default): ``max(eq. 6, min(eq. 8, (τq+τcs)ℓ))``. This is
      exactly the fine-grain formula whenever ``t_p + t_w <= τq`` (then the cap
      is >= eq. 6) and eq. (6) when ``t_p + t_w >= τq`` (then the cap would
      claim more than one iteration per round, which the derivation excludes).
    """
    eq6 = t_gang_busy(tp, tw, n, l, tq, tcs)
    if grain == "coarse":
        return eq6
    eq8 = (1.0 + tcs / tq) ** n * (tp + tw) * np.power(l, n, dtype=float)
    fine = np.minimum(eq8, (tq + tcs) * np.asarray(l, dtype=float))
    if grain == "fine":
        return fine
    if grain != "auto":
        raise ValueError(f"grain must be 'fine', 'coarse' or 'auto', got {grain!r}")
    return np.maximum(eq6, fine)


def t_block_same(tp, tw, n=10, l=1, tq=TQ_MS, tcs=TCS_MS, alpha=ALPHA_MAKBILAN, grain="fine"):
    """Blocking, uncoordinated scheduling, all competing threads alike
    (iterative, blocking with the same t_p, t_w).

    * ``grain="coarse"`` (t_p + t_w >> τq): eq. (10),
      ``(1 + τcs/τq) t_p ℓ`` — only a fraction t_p/(t_p+t_w) of the threads are
      active; blocking overhead is negligible (switches are quantum expiries).
    * ``grain="fine"`` (t_p << τq): eq. (12),
      ``(1 + (n-1) α τcs / (n t_p)) t_p ℓ = (t_p + (n-1)/n · α τcs) ℓ`` — every
      thread but the last to reach the barrier blocks, at α context switches.

    ``tw`` does not appear in either equation (it is absorbed by the competitors).
    """
    _check_grain(grain)
    del tw
    if grain == "coarse":
        return (1.0 + tcs / tq) * tp * l
    return (tp + (n - 1) / n * alpha * tcs) * l


def t_block_compute(tp, tw, n=10, l=1, tq=TQ_MS, tcs=TCS_MS, alpha=ALPHA_MAKBILAN, grain="fine"):
    """Blocking, uncoordinated scheduling, competitors are independent
    compute-bound threads that never block ("altruistic" blocking).

    * ``grain="fine"`` (t_p, τcs << τq): eq. (13) per iteration (T/k),
      ``t_p + (ℓ-1) τq + (ℓ+α-1) τcs`` — one iteration per round, and the round
      does not shrink because the ℓ-1 competitors use whole quanta. (The paper
      calls it approximate: e.g. at ℓ = 1 it charges α τcs per iteration, not
      eq. (12)'s (n-1)/n α τcs.)
    * ``grain="coarse"``: eq. (6) — "the blocked threads gain no advantage".
    """
    _check_grain(grain)
    if grain == "coarse":
        return t_gang_busy(tp, tw, n, l, tq, tcs)
    # tw does not enter eq. (13); `0 * tw` only broadcasts the result to its shape.
    return tp + (l - 1) * tq + (l + alpha - 1) * tcs + 0.0 * np.asarray(tw, dtype=float)


def barrier_model(cfg) -> dict[str, float]:
    """The seed-001 model values of one :class:`parsched.BarrierConfig`, with
    its own n, ℓ, τq, τcs and α: ``t_p`` and ``t_w`` (eqs. 1-4,
    :meth:`~parsched.BarrierConfig.t_p`, :meth:`~parsched.BarrierConfig.t_w`),
    ``eq6`` (:func:`t_gang_busy`), ``eq8`` (:func:`t_uncoord_busy` with
    ``grain="auto"``: eq. (8) capped at (τq+τcs)ℓ, and never below eq. (6)),
    ``eq12`` (:func:`t_block_same`, fine grain) and ``eq13``
    (:func:`t_block_compute`, fine grain). The one computation that
    ``parsched reproduce gang`` and ``parsched simulate barrier`` print."""
    return model_values(cfg.t_p(), cfg.t_w(), n=cfg.n, l=cfg.l, tq=cfg.tq,
                        tcs=cfg.tcs, alpha=cfg.alpha)


def model_values(tp: float, tw: float, *, n: int, l: int, tq: float, tcs: float,
                 alpha: float) -> dict[str, float]:
    """:func:`barrier_model` from t_p and t_w (the core's, eqs. 1-4) and the
    machine parameters: the values every caller — ``simulate_barrier``'s
    summary, ``parsched simulate barrier``, ``parsched reproduce gang`` — gets."""
    return {
        "t_p": tp,
        "t_w": tw,
        "eq6": float(t_gang_busy(tp, tw, n, l, tq, tcs)),
        "eq8": float(t_uncoord_busy(tp, tw, n, l, tq, tcs, grain="auto")),
        "eq12": float(t_block_same(tp, tw, n, l, tq, tcs, alpha)),
        "eq13": float(t_block_compute(tp, tw, n, l, tq, tcs, alpha)),
    }


# --------------------------------------------------------------------------
# Phase diagram, section 4 (eqs. 15-17, Fig. 9)
# --------------------------------------------------------------------------


class Line(NamedTuple):
    """The straight line ``t_w = slope · t_p + intercept`` in the (t_p, t_w) plane."""

    slope: float
    intercept: float

    def __call__(self, tp):
        return self.slope * tp + self.intercept


class PhaseBoundaries(NamedTuple):
    """``gang_busy``: below it t_BW/t_BLK <= σ; ``blocking``: above it t_BLK/t_BW <= σ."""

    gang_busy: Line
    blocking: Line


def phase_boundaries(
    sigma=0.5,
    n=10,
    alpha=ALPHA_MAKBILAN,
    tq=TQ_MS,
    tcs=TCS_MS,
    competitors="same",
    l=None,
) -> PhaseBoundaries:
    """Boundaries of the phase diagram (§4), fine grain: t_BW is eq. (6).

    ``competitors="same"`` (t_BLK = eq. 12, the assumption favouring blocking,
    used for Fig. 9; ℓ cancels):

    * eq. (15), busy waiting + gang scheduling at least 1/σ times faster
      (t_BW/t_BLK <= σ) on or below::

          t_w = σ (n-1)/n α τq τcs / (τq+τcs) + (σ τq/(τq+τcs) - 1) t_p

    * eq. (16), blocking at least 1/σ times faster (t_BLK/t_BW <= σ) on or above::

          t_w = (n-1)/n α τq τcs / (σ (τq+τcs)) + (τq/(σ (τq+τcs)) - 1) t_p

    ``competitors="compute"`` (t_BLK = eq. 13; needs ``l``): the gang-busy line
    is eq. (17)::

        t_w = σ τq (ℓ-1)/ℓ + σ α τq τcs / ((τq+τcs) ℓ) + (σ τq/((τq+τcs) ℓ) - 1) t_p

    and the blocking line is its counterpart ("the other condition changes in a
    similar manner"; derived here, not printed in the paper)::

        t_w = τq ((ℓ-1) τq + (ℓ+α-1) τcs) / (σ (τq+τcs) ℓ) + (τq/(σ (τq+τcs) ℓ) - 1) t_p

    On each line the ratio equals σ exactly. Requires 0 < σ <= 1 (σ = 1: the two
    lines coincide).
    """
    if not 0 < sigma <= 1:
        raise ValueError(f"sigma must be in (0, 1], got {sigma}")
    r = tq / (tq + tcs)
    if competitors == "same":
        c = (n - 1) / n * alpha * tcs
        return PhaseBoundaries(
            gang_busy=Line(slope=sigma * r - 1.0, intercept=sigma * c * r),
            blocking=Line(slope=r / sigma - 1.0, intercept=c * r / sigma),
        )
    if competitors == "compute":
        if l is None:
            raise ValueError("competitors='compute' needs the load l")
        c = (l - 1) * tq + (l + alpha - 1) * tcs  # eq. (13) minus t_p
        return PhaseBoundaries(
            gang_busy=Line(slope=sigma * r / l - 1.0, intercept=sigma * r * c / l),
            blocking=Line(slope=r / (sigma * l) - 1.0, intercept=r * c / (sigma * l)),
        )
    raise ValueError(f"competitors must be 'same' or 'compute', got {competitors!r}")


def classify(
    tp,
    tw,
    sigma=0.5,
    n=10,
    alpha=ALPHA_MAKBILAN,
    tq=TQ_MS,
    tcs=TCS_MS,
    competitors="same",
    l=None,
):
    """Region of (t_p, t_w) in the phase diagram for factor σ (Fig. 9: σ = 1/2).

    Returns ``"gang-busy"`` (on/below the eq. 15 / 17 line: busy waiting with
    gang scheduling at least 1/σ times faster), ``"blocking"`` (on/above the
    eq. 16 line) or ``"neither"``; a str for scalar input, an object array
    otherwise. For σ = 1 a point exactly on the common line is "gang-busy".
    """
    b = phase_boundaries(sigma, n, alpha, tq, tcs, competitors, l)
    tp = np.asarray(tp, dtype=float)
    tw = np.asarray(tw, dtype=float)
    out = np.where(
        tw <= b.gang_busy(tp),
        "gang-busy",
        np.where(tw >= b.blocking(tp), "blocking", "neither"),
    ).astype(object)
    return out[()] if out.ndim == 0 else out


def phase_diagram(
    sigma=0.5,
    n=10,
    alpha=ALPHA_MAKBILAN,
    tq=TQ_MS,
    tcs=TCS_MS,
    tp_max=1.0,
    tw_max=1.0,
    num=41,
    competitors="same",
    l=None,
) -> pd.DataFrame:
    """Fig. 9 as a grid: ``num × num`` points of [0, tp_max] × [0, tw_max] (ms).

    Columns ``tp, tw, t_bw`` (eq. 6 per unit load), ``t_blk`` (eq. 12, or 13
    with ``competitors="compute"``), ``ratio = t_bw / t_blk`` and ``region``
    (:func:`classify`). Defaults are Fig. 9's: Makbilan, σ = 1/2, α = 1.5.
    """
    import pandas as pd

    tps, tws = np.meshgrid(np.linspace(0, tp_max, num), np.linspace(0, tw_max, num))
    tp, tw = tps.ravel(), tws.ravel()
    ll = 1 if l is None else l
    t_bw = t_gang_busy(tp, tw, n, ll, tq, tcs)
    if competitors == "compute":
        t_blk = t_block_compute(tp, tw, n, ll, tq, tcs, alpha)
    else:
        t_blk = t_block_same(tp, tw, n, ll, tq, tcs, alpha)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = t_bw / t_blk
    return pd.DataFrame(
        {
            "tp": tp,
            "tw": tw,
            "t_bw": t_bw,
            "t_blk": t_blk,
            "ratio": ratio,
            "region": classify(tp, tw, sigma, n, alpha, tq, tcs, competitors, l),
        }
    )


# --------------------------------------------------------------------------
# Experiments, section 3.3
# --------------------------------------------------------------------------


def expected_max_uniform(grain, var, n=10):
    """E[max of n iid Uniform(GRAIN, GRAIN+VAR)] = GRAIN + n/(n+1)·VAR (§3.3)."""
    return grain + n / (n + 1) * var


def tw_ms_per_var_unit(n=10):
    """ms of t_w per unit of the synthetic program's VAR (eq. 14's coefficient):
    ``0.00141 (n/(n+1) - 1/2)``. Not the pure ratio t_w / var of the barrier
    machine, :func:`parsched.config.tw_per_unit_var` (ms per ms); this is that
    ratio for the uniform times MS_PER_GRAIN (ms per unit of VAR), written as
    the paper derives it.

    t_w is the mean gap between the slowest thread and the average one:
    (E[max] - E[mean]) · 0.00141 = (n/(n+1) - 1/2) VAR · 0.00141. For n = 10
    this is 0.000576818..., printed as 0.00058 in eq. (14).
    """
    return MS_PER_GRAIN * (n / (n + 1) - 0.5)


def makbilan_mapping(grain, var, n=10, *, tw_coeff=None, sync_ms=SYNC_MS_10):
    """Eq. (14): synthetic-program parameters -> model parameters (ms)::

        t_p = 0.137 + 0.00141 (GRAIN + VAR/2)
        t_w = 0.00058 VAR

    Returns ``(t_p, t_w)``. ``tw_coeff=None`` uses the printed 0.00058 when
    n = 10 and the general :func:`tw_ms_per_var_unit` (from E[max] = GRAIN +
    n/(n+1)·VAR) otherwise; pass ``tw_coeff=tw_ms_per_var_unit(10)`` for the unrounded
    n = 10 value. ``sync_ms`` (0.137) is the barrier cost measured on 10
    processors; the paper gives no value for other n.
    """
    if tw_coeff is None:
        tw_coeff = TW_PER_VAR_PRINTED if n == 10 else tw_ms_per_var_unit(n)
    grain = np.asarray(grain, dtype=float)
    var = np.asarray(var, dtype=float)
    tp = sync_ms + MS_PER_GRAIN * (grain + 0.5 * var)
    tw = tw_coeff * var
    return tp[()], tw[()]


def exp3_alpha(load):
    """α for experiment 3 as a function of LOAD: the paper reports α ≈ 4 at
    load 1 "down to about 1.2" at load 4; we interpolate linearly in between
    (4, 3.07, 2.13, 1.2) and clamp outside [1, 4]. An assumption, not data."""
    return np.interp(np.asarray(load, dtype=float), [1.0, 4.0], [4.0, 1.2])[()]


EXPERIMENT_DEFAULTS: dict[int, dict] = {
    1: {
        "load": 1,
        "var": "0",
        "n": 10,
        "alpha": ALPHA_MAKBILAN,
        "grains": (0, 25, 50, 100, 200, 400, 700, 1000, 1500, 2000),
    },
    2: {
        "load": 3,
        "var": "GRAIN",
        "n": 10,
        "alpha": ALPHA_MAKBILAN,
        "grains": (0, 10, 25, 50, 100, 150, 200, 265, 300, 400, 600, 800, 1000, 1500),
    },
    3: {"grain": 1000, "var": 1000, "n": 10, "alpha": "exp3_alpha(load)", "loads": (1, 2, 3, 4)},
    4: {"grain": 100, "var": 100, "n": 2, "alpha": ALPHA_MAKBILAN, "loads": (1, 2, 3, 4, 5, 6)},
}
"""Defaults of :func:`experiment_predictions`. α is not given per data point in
the paper (it was measured as the mean number of yields of a waiting thread):
experiments 1, 2, 4 default to Fig. 9's α = 1.5 (exp. 2 measured 1.1-2.1);
experiment 3 uses :func:`exp3_alpha`."""


def _alpha_for(alpha, loads, default):
    if alpha is None:
        alpha = default
    if callable(alpha):
        return np.asarray(alpha(np.asarray(loads)), dtype=float)
    return np.broadcast_to(np.asarray(alpha, dtype=float), np.shape(loads)).astype(float)


def experiment_predictions(
    exp: int,
    *,
    grains=None,
    loads=None,
    alpha=None,
    tq=TQ_MS,
    sync_ms=SYNC_MS_10,
) -> pd.DataFrame:
    """Model curves of experiments 1-4 (§3.3), one row per data point.

    As in the paper, busy waiting with gang scheduling uses the gang library's
    τcs = 0.2 ms and blocking / uncoordinated busy waiting use the default
    library's τcs = 0.07 + 0.14/ℓ ms (Table 1); ℓ = LOAD; t_p, t_w from eq. (14)
    (general t_w coefficient for n ≠ 10). The paper's predictions use eqs. (6)
    and (12) (fine grain); we add (13) and (8) where the experiment needs them.

    * ``exp=1``: LOAD = 1, VAR = 0, over ``grains``: ``t_gang_busy`` (6) vs
      ``t_block`` (12).
    * ``exp=2``: LOAD = 3, VAR = GRAIN, over ``grains``: same columns.
    * ``exp=3``: GRAIN = VAR = 1000 over ``loads`` 1-4: ``t_block_same`` (12)
      vs ``t_block_compute`` (13), plus ``t_gang_busy`` (6); α per load from
      :func:`exp3_alpha` unless given.
    * ``exp=4``: n = 2, GRAIN = VAR = 100 over ``loads``: ``t_gang_busy`` (6)
      and ``t_block`` (12), linear in ℓ, vs ``t_uncoord_busy`` (8, capped),
      quadratic in ℓ.

    ``alpha``: a float, an array matching the points, or a callable of the load.
    Columns always include ``grain, var, load, n, tp, tw, tp_plus_tw, alpha,
    tcs_gang, tcs_default``.
    """
    import pandas as pd

    if exp not in EXPERIMENT_DEFAULTS:
        raise ValueError(f"exp must be 1, 2, 3 or 4, got {exp!r}")
    d = EXPERIMENT_DEFAULTS[exp]
    n = d["n"]
    if exp in (1, 2):
        g = np.asarray(d["grains"] if grains is None else grains, dtype=float)
        var = np.zeros_like(g) if exp == 1 else g.copy()
        load = np.full_like(g, d["load"])
    else:
        load = np.asarray(d["loads"] if loads is None else loads, dtype=float)
        g = np.full_like(load, d["grain"])
        var = np.full_like(load, d["var"])
    a = _alpha_for(alpha, load, exp3_alpha if exp == 3 else d["alpha"])
    tp, tw = makbilan_mapping(g, var, n, sync_ms=sync_ms)
    tp = np.broadcast_to(tp, g.shape)
    tw = np.broadcast_to(tw, g.shape)
    tcs_g = np.full_like(g, GANG_LIBRARY_SWITCH_MS)
    tcs_d = default_library_switch_ms(load)
    df = pd.DataFrame(
        {
            "grain": g,
            "var": var,
            "load": load.astype(int),
            "n": n,
            "tp": tp,
            "tw": tw,
            "tp_plus_tw": tp + tw,
            "alpha": a,
            "tcs_gang": tcs_g,
            "tcs_default": tcs_d,
        }
    )
    bw = t_gang_busy(tp, tw, n, load, tq, tcs_g)
    blk = t_block_same(tp, tw, n, load, tq, tcs_d, a)
    df["t_gang_busy"] = bw
    if exp == 3:
        df["t_block_same"] = blk
        df["t_block_compute"] = t_block_compute(tp, tw, n, load, tq, tcs_d, a)
    else:
        df["t_block"] = blk
        df["ratio_block_over_gang"] = blk / bw
    if exp == 4:
        df["t_uncoord_busy"] = t_uncoord_busy(tp, tw, n, load, tq, tcs_d)
    return df


def experiment2_headlines(alpha=ALPHA_MAKBILAN, tq=TQ_MS, at_ms=0.16) -> dict[str, float]:
    """Experiment 2 headline numbers from eqs. (6), (12), (14) and Table 1.

    With LOAD = 3 and VAR = GRAIN, both t_BW and t_BLK are affine in GRAIN, so
    the crossover t_BW = t_BLK is solved exactly. Returns ``crossover_grain``,
    ``crossover_ms`` (t_p + t_w there; paper: "about 0.8 ms"), and
    ``ratio_at`` = t_BLK / t_BW at t_p + t_w = ``at_ms`` (paper: ≈ 2 at
    ≈ 0.16 ms, the finest grain measured), with ``at_grain``.
    """

    def diff(grain):
        r = experiment_predictions(2, grains=[grain], alpha=alpha, tq=tq).iloc[0]
        return r["t_block"] - r["t_gang_busy"], r

    f0, _ = diff(0.0)
    f1, _ = diff(1000.0)
    g_star = -f0 * 1000.0 / (f1 - f0)  # affine in GRAIN
    _, row = diff(g_star)
    # t_p + t_w = 0.137 + (1.5 · 0.00141 + 0.00058) GRAIN when VAR = GRAIN
    slope = 1.5 * MS_PER_GRAIN + TW_PER_VAR_PRINTED
    g_at = (at_ms - SYNC_MS_10) / slope
    at = experiment_predictions(2, grains=[g_at], alpha=alpha, tq=tq).iloc[0]
    return {
        "crossover_grain": float(g_star),
        "crossover_ms": float(row["tp_plus_tw"]),
        "ratio_at": float(at["ratio_block_over_gang"]),
        "at_grain": float(g_at),
        "at_ms": float(at["tp_plus_tw"]),
    }
