"""Seed 001's iterative-barrier machine (Feitelson & Rudolph 1992):
:class:`BarrierConfig` (the keys of ``parsched._core.simulate_barrier``, Rust
``SyncConfig``, with the core's defaults; times in ms) and the model values
t_p, t_w of eqs. (1)-(4) (:meth:`BarrierConfig.t_p`, :meth:`BarrierConfig.t_w`,
:func:`tw_per_unit_var`), the ones every Python caller uses."""

from __future__ import annotations

import math
from typing import Any, ClassVar

from ..errors import ConfigError, shown
from .base import ConfigBase, _class_doc
from .schema import model_class

__all__ = ["BarrierConfig", "harmonic_number", "tw_per_unit_var"]

_DOC = """Parameters of one run of seed 001's iterative-barrier machine (times in ms).

Mirrors ``parsched._core.simulate_barrier`` (Rust ``SyncConfig``); keys,
types, choices, ranges, docs and defaults come from the core's schema
(``parsched._core.schema("barrier")``); every field is documented in
``BarrierConfig.field_doc(name)``. Symbols in brackets are those of
Feitelson & Rudolph 1992 (seed 001). The
measured gang's threads compute, per iteration, barrier_cost + grain plus
U(0, var) (``dist = "uniform"``, §3.3's GRAIN/VAR program) or plus Exp(mean
var) (``dist = "exponential"``), so (eqs. 1-4; :meth:`t_p`, :meth:`t_w`)

* uniform: t_p = barrier_cost + grain + var/2, t_w = var·(n−1)/(2(n+1));
* exponential: t_p = barrier_cost + grain + var, t_w = var·(H_n − 1),
  H_n the n-th harmonic number.

The uniform bounds t_w <= (n−1)/(n+1)·(t_p − barrier_cost); the exponential
reaches t_w <= (H_n − 1)·(t_p − barrier_cost) (1.93·t_p at n = 10), which
covers Figure 9's blocking region (:meth:`for_tp_tw`).
"""


class _BarrierMethods(ConfigBase):
    """What :class:`BarrierConfig` adds to its schema's keys: the model
    values (``samples``, a list, is a tuple; ``@FILE`` on the command line)."""

    __slots__ = ()
    TOML_TABLE: ClassVar[str] = "barrier"
    MODEL: ClassVar[str] = "barrier"

    def __post_init__(self) -> None:
        self._coerce_fields()
        self._validate()

    # -------------------------------------------------------- model values
    @property
    def procs(self) -> int:
        """The number of processors (P, or n when P is unset)."""
        return self.n if self.P is None else self.P

    def t_p(self) -> float:
        """t_p: mean compute per iteration, barrier cost included (eq. 1):
        barrier_cost + grain + var/2 (uniform), + var (exponential), or + the
        sample mean (empirical). Computed by the core (``SyncConfig::t_p``)."""
        return self._moments()[0]

    def t_w(self) -> float:
        """t_w: mean wait at the barrier on dedicated processors (eq. 4),
        E[max of n computes] − mean: var·(n−1)/(2(n+1)) for the uniform,
        var·(H_n − 1) for the exponential (H_n = 1 + 1/2 + ... + 1/n); for the
        empirical sample v_(1) <= ... <= v_(m), sum v_(i)·((i/m)^n − ((i−1)/m)^n)
        minus the mean. Computed by the core (``SyncConfig::t_w``)."""
        return self._moments()[1]

    def _moments(self) -> tuple[float, float]:
        from .. import _core

        return _core.barrier_moments(self.to_dict())

    @classmethod
    def for_tp_tw(cls, tp: float, tw: float, *, dist: str | None = None,
                  **kw: Any) -> Any:
        """A config whose t_p, t_w (eqs. 1-4) are ``tp``, ``tw``, with the other
        fields from ``kw`` (``barrier_cost`` defaults to 0.137).

        var = tw / c and grain = tp − barrier_cost − m·var, where c = t_w per
        unit of var (:func:`tw_per_unit_var`: (n−1)/(2(n+1)) uniform, H_n − 1
        exponential) and m = 1/2 (uniform) or 1 (exponential).

        ``dist=None`` (default) picks the uniform of §3.3 when it can reach the
        point, t_w <= (n−1)/(n+1)·(t_p − barrier_cost), and the exponential
        otherwise (it reaches t_w <= (H_n − 1)·(t_p − barrier_cost), e.g. 1.93·t_p
        at n = 10); ``dist="uniform"`` or ``"exponential"`` forces one. Raises
        ConfigError when the chosen distribution cannot reach the point (grain
        would be negative), or for t_w > 0 with n = 1 (no wait without partners).
        """
        base = cls(**kw) if kw else cls()
        n, bc = base.n, base.barrier_cost
        if dist is None:
            dist = "uniform" if tw <= tw_per_unit_var(n, "uniform") * 2.0 * (tp - bc) + 1e-12 \
                else "exponential"
        if dist not in ("uniform", "exponential"):
            raise ConfigError("dist", f"{shown(dist)} is not a choice", "uniform, exponential")
        per_var = tw_per_unit_var(n, dist)
        mean_per_var = 1.0 if dist == "exponential" else 0.5
        var = 0.0 if tw == 0 else (tw / per_var if per_var > 0 else math.inf)
        grain = tp - bc - mean_per_var * var
        if not math.isfinite(var) or grain < -1e-12:
            reach = per_var / mean_per_var * (tp - bc)
            raise ConfigError(
                "var", f"t_w = {tw:g} is not reachable with t_p = {tp:g} ({dist} compute)",
                f"t_w <= {per_var / mean_per_var:.4g}·(t_p - barrier_cost) = {reach:g}"
                + ("; the exponential reaches further (dist=None picks it)"
                   if dist == "uniform" and n > 1 else ""),
            )
        return base.with_(grain=max(grain, 0.0), var=var, dist=dist)


def harmonic_number(n: int) -> float:
    """H_n = 1 + 1/2 + ... + 1/n, correctly rounded (the core's)."""
    from .. import _core

    return _core.harmonic_number(n)


def tw_per_unit_var(n: int, dist: str = "uniform") -> float:
    """t_w / var, a pure number: the mean wait at the barrier of a gang of ``n``
    (E[max of n] − mean of the compute spread) per unit of ``var`` (ms per ms),
    (n−1)/(2(n+1)) for U(0, var) and H_n − 1 for Exp(mean var) — the core's
    (``sync::tw_per_unit_var``), the factor :meth:`BarrierConfig.t_w` uses. Not
    to be confused with :func:`parsched.models.feitelson_rudolph.tw_ms_per_var_unit`
    (ms of t_w per unit of the synthetic program's VAR, eq. 14)."""
    from .. import _core

    return _core.tw_per_unit_var(n, dist)


BarrierConfig = model_class("BarrierConfig", "barrier", _BarrierMethods, module=__name__,
                            doc=_DOC)
BarrierConfig.__doc__ = _class_doc(BarrierConfig)
