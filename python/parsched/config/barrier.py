"""Seed 001's iterative-barrier machine (Feitelson & Rudolph 1992):
:class:`BarrierConfig` (the keys of ``parsched._core.simulate_barrier``, Rust
``SyncConfig``, with the core's defaults; times in ms) and the model values
t_p, t_w of eqs. (1)-(4) (:meth:`BarrierConfig.t_p`, :meth:`BarrierConfig.t_w`,
:func:`tw_per_unit_var`), the ones every Python caller uses."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from ..errors import ConfigError, shown
from .base import ConfigBase, _as_float, _class_doc, _doc, core_defaults

__all__ = ["BarrierConfig", "harmonic_number", "tw_per_unit_var"]

_D = core_defaults("barrier")


@dataclass(frozen=True, slots=True)
class BarrierConfig(ConfigBase):
    """Parameters of one run of seed 001's iterative-barrier machine (times in ms).

    Mirrors ``parsched._core.simulate_barrier`` (Rust ``SyncConfig``) with its
    defaults; every field is documented in ``BarrierConfig.field_doc(name)``.
    Symbols in brackets are those of Feitelson & Rudolph 1992 (seed 001). The
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

    n: int = _doc("[n] gang size: threads of the measured gang, one per processor",
                  _D["n"])
    l: int = _doc(
        "[ℓ] threads per processor: the measured gang plus ℓ−1 competitors (LOAD in §3.3)",
        _D["l"])
    P: int | None = _doc(
        "[P] processors; None means P = n (n <= P required)", _D["P"])
    k: int = _doc("[k] iterations of the measured gang", _D["k"])
    grain: float = _doc(
        "[GRAIN] minimal compute per iteration, ms (eq. 14: 0.00141·GRAIN)", _D["grain"])
    var: float = _doc(
        "[VAR] spread of the compute per iteration, ms: each thread draws U(grain, grain+var) "
        "(eq. 14: 0.00141·VAR)", _D["var"])
    dist: Literal["uniform", "exponential", "empirical"] = _doc(
        "per-iteration compute beyond grain + barrier_cost: uniform U(0, var) (§3.3's GRAIN/"
        "VAR; t_w <= (n−1)/(n+1)·t_p) or exponential Exp(mean var) (t_w = var·(H_n − 1) can "
        "exceed t_p, so Figure 9's blocking region can be simulated); or empirical: "
        "barrier_cost + one of `samples`, each equally likely (grain and var unused) "
        "",
        _D["dist"])
    samples: tuple[float, ...] = _doc(
        "dist = empirical: compute times, ms, drawn with equal probability — any "
        "distribution as a sample (measured times, or numpy draws from any law); a "
        "sequence or array in Python, a list in TOML, `--set samples=0.1,0.3,2` or "
        "`--set samples=@FILE` (numbers separated by commas, spaces or newlines) on "
        "the command line", _D["samples"])
    barrier_cost: float = _doc(
        "barrier cost added to every compute, ms (§2.1 folds it into t_p; §3.3: 0.137 ms on "
        "10 processors)", _D["barrier_cost"])
    tq: float = _doc("[τq] scheduling time quantum, ms (§3.3: 50)", _D["tq"])
    tcs: float = _doc(
        "[τcs] context-switch cost, ms; must be < τq (Table 1: gang library 0.2, default "
        "library 0.07 + 0.14/ℓ)", _D["tcs"])
    alpha: float = _doc("[α] blocking costs α·τcs of processor time (§4: 1.5)", _D["alpha"])
    wait: Literal["busy", "block", "twophase", "yield"] = _doc(
        "waiting at the barrier: busy (spin), block (give up the processor, α·τcs), "
        "twophase (spin up to spin_limit, then block) or yield (Makbilan's blocking, §3.3: "
        "yield to the tail of the run queue, τcs per yield, again each time it runs while "
        "the barrier is closed; alpha_measured = yields per wait)", _D["wait"])
    spin_limit: float = _doc(
        "two-phase: ms of processor time spent spinning before blocking", _D["spin_limit"])
    wakeup: Literal["tail", "priority"] = _doc(
        "where a released blocked thread is queued: tail (rigid round robin, eq. 13) or "
        "priority (head of its processor's queue, no preemption: §2.2's smart scheduler)",
        _D["wakeup"])
    sched: Literal["gang", "local"] = _doc(
        "gang (Ousterhout matrix, §3.2) or local (uncoordinated per-processor round robin)",
        _D["sched"])
    competitors: Literal["same", "compute"] = _doc(
        "the other ℓ−1 threads per processor: same (identical iterative gangs) or compute "
        "(independent compute-bound threads, grouped in gangs of P) (§2.1)", _D["competitors"])
    skew: bool = _doc(
        "start with skewing threads, U(0, τq) each, so processors start asynchronously (§3.3)",
        _D["skew"])
    shuffle: bool = _doc(
        "local scheduling: random initial run-queue order per processor (eq. 8 assumes quanta "
        "at random places in the round)", _D["shuffle"])
    batches: int = _doc("batches for the batch-means 90% confidence interval", _D["batches"])
    seed: int = _doc("random seed", _D["seed"])
    max_events: int = _doc(
        "a run whose estimated event count is above this is refused before it starts "
        "(the estimate, an upper bound from k, n, l, P, the compute times and the "
        "quantum, is `parsched._core.estimate_run('barrier', cfg)`); 0: no limit. "
        "Times are bounded too: each time key <= 1e9 ms, the whole run <= 1e12 ms",
        _D["max_events"])

    TOML_TABLE: ClassVar[str] = "barrier"
    MODEL: ClassVar[str] = "barrier"

    def __post_init__(self) -> None:
        self._coerce_fields()
        self._validate()

    # ------------------------------------------------ samples (special)
    def _special_coerce(self, name: str, v: Any) -> Any:  # samples
        if isinstance(v, str | bytes) or not hasattr(v, "__iter__"):
            raise ConfigError("samples", f"{type(v).__name__} given",
                              "a sequence of numbers (ms)")
        return tuple(_as_float("samples", x) for x in v)

    def _special_to_dict(self, name: str, v: Any) -> Any:
        return list(v)

    @classmethod
    def _special_parse(cls, key: str, raw: str) -> Any:
        text = raw
        if raw.startswith("@"):
            try:
                with open(raw[1:]) as fh:
                    text = fh.read()
            except OSError as e:
                raise ConfigError("samples", f"cannot read {raw[1:]!r}: {e.strerror or e}",
                                  "@FILE of numbers") from None
        text = text.strip()
        if text.startswith("[") and text.endswith("]"):  # a list literal, as printed
            text = text[1:-1]
        out = []
        for t in text.replace(",", " ").split():
            try:
                out.append(float(t))
            except ValueError:
                raise ConfigError("samples", f"{shown(t)} is not a number",
                                  "numbers separated by commas, spaces or newlines") from None
        return tuple(out)

    @classmethod
    def _special_from_toml(cls, name: str, value: Any, path: str) -> Any:
        if not isinstance(value, list):
            raise ConfigError("samples", f"{path}: not a list", "a list of numbers (ms)")
        return tuple(value)

    def _special_toml_lines(self, table: bool) -> list[str]:
        if not self.samples:
            return []
        return ["samples = [" + ", ".join(repr(float(x)) for x in self.samples) + "]"]

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
                  **kw: Any) -> BarrierConfig:
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


BarrierConfig.__doc__ = _class_doc(BarrierConfig)
