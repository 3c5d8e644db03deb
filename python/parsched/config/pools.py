"""Seed 000's processor-pool model (Zhou & Brecht 1991): :class:`PoolsConfig`
(the keys of ``parsched._core.simulate_pools``, with the core's defaults, which
are the paper's Table 2) and :class:`Arrivals`, an explicit job stream."""

from __future__ import annotations

import math
import os
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from ..errors import ConfigError
from .base import (
    ConfigBase,
    _as_float,
    _as_int,
    _class_doc,
    _core_error,
    _doc,
    _toml_value,
    core_defaults,
)

__all__ = ["Arrivals", "PoolsConfig", "from_toml", "parse_value"]

_D = core_defaults("pools")


@dataclass(frozen=True, slots=True)
class Arrivals:
    """An explicit job stream replacing the Poisson / bounded-geometric workload.

    ``arrival`` times are nondecreasing, ``d`` is each job's desired parallelism
    (1..P) and ``para_work`` optionally gives each job's total PARA-phase demand,
    > 0 (otherwise, or where an entry is None or NaN, ``para_unit * d``).
    """

    arrival: tuple[float, ...]
    d: tuple[int, ...]
    para_work: tuple[float | None, ...] | None = None

    def __post_init__(self) -> None:
        arrival = tuple(_as_float("arrivals.arrival", v) for v in self.arrival)
        d = tuple(_as_int("arrivals.d", v) for v in self.d)
        object.__setattr__(self, "arrival", arrival)
        object.__setattr__(self, "d", d)
        if self.para_work is not None:
            pw = tuple(None if v is None or (isinstance(v, float) and math.isnan(v))
                       else _as_float("arrivals.para_work", v) for v in self.para_work)
            object.__setattr__(self, "para_work", pw)
        check_arrivals(self.to_dict())

    def __len__(self) -> int:
        return len(self.arrival)

    def to_dict(self) -> dict[str, list]:
        out: dict[str, list] = {"arrival": list(self.arrival), "d": list(self.d)}
        if self.para_work is not None:
            # None (the default demand) crosses to the core as NaN
            out["para_work"] = [math.nan if v is None else v for v in self.para_work]
        return out

    @classmethod
    def from_mapping(cls, m: Mapping[str, Any]) -> Arrivals:
        unknown = sorted(set(m) - {"arrival", "d", "para_work"})
        if unknown:
            raise ConfigError(
                f"arrivals.{unknown[0]}", "unknown column", "arrival, d, para_work"
            )
        for k in ("arrival", "d"):
            if k not in m:
                raise ConfigError(f"arrivals.{k}", "missing column", "arrival, d[, para_work]")
        pw = m.get("para_work")
        return cls(tuple(m["arrival"]), tuple(m["d"]), None if pw is None else tuple(pw))


@dataclass(frozen=True, slots=True)
class PoolsConfig(ConfigBase):
    """Parameters of one processor-pool simulation (defaults: the paper's Table 2).

    Every field is documented in ``PoolsConfig.field_doc(name)``; symbols in
    brackets are those of Zhou & Brecht, SIGMETRICS 1991 (seed 000).
    """

    P: int = _doc("[P] number of processors in the system (Table 2: 60)", _D["P"])
    L: float = _doc(
        "[L] system load level: processor utilization without overheads, 0 < L < 1 "
        "(Table 2: 60%); sets the Poisson arrival rate P·L / (init + para_unit·D + final)",
        _D["L"],
    )
    D: float = _doc(
        "[D] average desired parallelism; d is bounded-geometric with mean D and "
        "upper bound P (sec. 2; Table 2: 20)",
        _D["D"],
    )
    T: float = _doc("[T] round-robin time slice in time units (sec. 3.1; Table 2: 10)", _D["T"])
    F: float = _doc(
        "[F] level control for the degree of pool spanning: f(d) = clamp(round(F·d/p), 1, P/p) "
        "candidate pools (sec. 3.2; Table 2: 0.8)",
        _D["F"],
    )
    G: float = _doc(
        "[G] level control for actual parallelism: a = min(d, max(p_idle, G·d, 1)), "
        "0 <= G <= 1 (sec. 3.2; Table 2: 0.5)",
        _D["G"],
    )
    p0: int = _doc(
        "[p_0] pool size threshold at or below which in-pool and run-queue overheads "
        "vanish (sec. 3.3; Table 2: 10)",
        _D["p0"],
    )
    t: float = _doc(
        "[t] fraction of the cache loading cost c charged when the next thread is from "
        "the same job (sec. 3.3; Table 2: 0.25)",
        _D["t"],
    )
    W: float = _doc(
        "[W] in-pool overhead factor: threads in pools of p > p_0 processors need "
        "(1 + W·(p - p_0)) times their CPU demand (sec. 3.3; Table 2: 0.5%)",
        _D["W"],
    )
    S: float = _doc(
        "[S] pool-spanning overhead factor: a job spanning k pools of p processors is "
        "inflated by S·(k-1)·p (sec. 3.3; Table 2: 1.0%)",
        _D["S"],
    )
    r: float = _doc(
        "[r] run-queue contention overhead: r·(p - p_0) time units per context switch "
        "when p > p_0 (sec. 3.3; Table 2: 0.003)",
        _D["r"],
    )
    c: float = _doc(
        "[c] cache loading overhead: c time units per context switch to another job's "
        "thread, t·c within a job (sec. 3.3; Table 2: 0.005)",
        _D["c"],
    )
    pool_size: int = _doc("[p] processors per pool; must divide P (sec. 3.1)", _D["pool_size"])
    spanning: Literal["limited", "none", "unlimited"] = _doc(
        "pool spanning algorithm: limited (uses F), none, unlimited (sec. 3.2)", _D["spanning"]
    )
    parallelism: Literal["restricted", "unrestricted"] = _doc(
        "restricted (a uses G and p_idle) or unrestricted (a = d) parallelism (sec. 3.2)",
        _D["parallelism"],
    )
    jobs: int = _doc("jobs simulated per replication, warmup included", _D["jobs"])
    warmup: int = _doc("jobs discarded at the start of each replication", _D["warmup"])
    reps: int = _doc("independent replications (90% CI across replication means)", _D["reps"])
    seed: int = _doc("base random seed; replication i uses a stream derived from it", _D["seed"])
    workload: Literal["correlated", "uncorrelated"] = _doc(
        "correlated: PARA demand grows with d (sec. 2); uncorrelated: demand independent "
        "of d (sec. 4.6)",
        _D["workload"],
    )
    init: float = _doc("CPU demand of the INIT phase (sec. 2: 10)", _D["init"])
    final: float = _doc("CPU demand of the FINAL phase (sec. 2: 10)", _D["final"])
    para_unit: float = _doc(
        "mean PARA demand per desired thread; thread demand ~ U(para_unit·d/a ± spread) "
        "(sec. 2: 100)",
        _D["para_unit"],
    )
    spread: float = _doc("half-width of the uniform thread demand (sec. 2: 10)", _D["spread"])
    combine: Literal["add", "multiply"] = _doc(
        "how the in-pool factor w and spanning factor s inflate demand: (1+w+s) or "
        "(1+w)(1+s) (the paper does not say)",
        _D["combine"],
    )
    switch_cost: Literal["every_dispatch", "preemption_only"] = _doc(
        "when run-queue and cache overheads are charged: on every dispatch of a thread to "
        "a processor, or only on preemptions at time-slice end",
        _D["switch_cost"],
    )
    f_rounding: Literal["nearest", "floor", "ceil"] = _doc(
        "rounding of F·d/p (the paper writes round)", _D["f_rounding"]
    )
    g_rounding: Literal["nearest", "floor", "ceil"] = _doc(
        "rounding of G·d (the paper does not say)", _D["g_rounding"]
    )
    tie_break: Literal["lowest_index", "most_idle"] = _doc(
        "order of equally loaded pools (the paper does not say)", _D["tie_break"]
    )
    inflate_master: bool = _doc(
        "also inflate the master thread's INIT and FINAL phases by the pool overheads "
        "(the paper inflates the parallel threads only)",
        _D["inflate_master"],
    )
    ci: Literal["auto", "replications", "batch_means"] = _doc(
        "confidence interval method: across replications, batch means within them, or auto "
        "(replications when reps >= 2, batch means when reps == 1)",
        _D["ci"],
    )
    max_events: int = _doc(
        "a run whose estimated event count is above this is refused before it starts "
        "(an upper estimate over all replications: per job a few events per thread, and "
        "one per time slice T of work, doubled); 0: no limit",
        _D["max_events"],
    )
    arrivals: Arrivals | None = _doc(  # noqa: RUF009 - a plain dataclasses.field
        "explicit job stream (arrival, d[, para_work]) replacing the generated workload", None
    )

    TOML_TABLE: ClassVar[str] = "pools"
    MODEL: ClassVar[str] = "pools"

    # ------------------------------------------------------------------ checks
    def __post_init__(self) -> None:
        self._coerce_fields()
        try:
            self._validate()
        except ConfigError as e:
            default = type(self).__dataclass_fields__["warmup"].default
            if e.field == "warmup" and self.warmup == default:
                raise ConfigError(
                    "warmup", f"{e.message} (the default warm-up, {default} jobs, is a "
                    "tenth of the paper's 10,000: give warmup with jobs, e.g. "
                    f"warmup={max(self.jobs // 10, 0)})", e.allowed) from None
            raise

    def with_(self, **changes: Any) -> PoolsConfig:
        """As :meth:`ConfigBase.with_`; when ``jobs`` changes and the warm-up
        is the default one (1,000 of the paper's 10,000), the warm-up is
        scaled with it (a tenth of the jobs) unless it is given too."""
        if "jobs" in changes and "warmup" not in changes:
            default = type(self).__dataclass_fields__["warmup"].default
            jobs = changes["jobs"]
            if (self.warmup == default and isinstance(jobs, int)
                    and not isinstance(jobs, bool) and 0 < jobs <= default):
                changes = {**changes, "warmup": jobs // 10}
        return ConfigBase.with_(self, **changes)  # slots: no zero-argument super()

    def _special_coerce(self, name: str, v: Any) -> Any:  # arrivals
        if v is not None and not isinstance(v, Arrivals):
            if isinstance(v, Mapping):
                return Arrivals.from_mapping(v)
            raise ConfigError("arrivals", f"{type(v).__name__} given",
                              "None or a mapping of equal-length lists")
        return v

    # ------------------------------------------------------------- arrivals
    def to_dict(self, *, arrivals: bool = True, special: bool | None = None) -> dict[str, Any]:
        """Plain dict in the form ``parsched._core.simulate_pools`` accepts."""
        return ConfigBase.to_dict(self, special=arrivals if special is None else special)

    def _special_to_dict(self, name: str, value: Any) -> Any:
        return value.to_dict()

    @classmethod
    def _special_override_error(cls, key: str) -> ConfigError:
        return ConfigError("arrivals", "cannot be set with KEY=VALUE",
                           "--arrivals FILE.csv or an arrivals table in the TOML file")

    @classmethod
    def _special_from_toml(cls, name: str, v: Any, path: str) -> Any:
        """``arrivals`` may be a table of equal-length arrays or a path to a CSV file
        (relative to the TOML file)."""
        if isinstance(v, str):
            from parsched.sim.arrivals import load_arrivals

            base = os.path.dirname(os.path.abspath(path))
            return load_arrivals(os.path.join(base, v))
        if not isinstance(v, dict):
            raise ConfigError("arrivals", f"{path}: {type(v).__name__} given",
                              "a table of arrays or a CSV path")
        return v

    def _special_toml_lines(self, table: bool) -> list[str]:
        if self.arrivals is None:
            return []
        lines = ["", "[pools.arrivals]" if table else "[arrivals]"]
        for k, col in self.arrivals.to_dict().items():
            lines.append(f"{k} = [{', '.join(_toml_value(x) for x in col)}]")
        return lines


def parse_value(key: str, raw: str) -> Any:
    """Parses the text of a ``KEY=VALUE`` override of a :class:`PoolsConfig` key."""
    return PoolsConfig.parse_value(key, raw)



def from_toml(path: str | os.PathLike[str]) -> PoolsConfig:
    """Module-level spelling of :meth:`PoolsConfig.from_toml`."""
    return PoolsConfig.from_toml(path)



PoolsConfig.__doc__ = _class_doc(PoolsConfig)


def check_arrivals(columns: Mapping[str, Any], procs: int | None = None) -> None:
    """The core's checks of an arrivals list (``procs``, if given, bounds d): the
    one definition of a valid job stream. Raises :class:`ConfigError` with the
    field ``arrivals row N: COLUMN`` (N counts jobs from 1)."""
    from .. import _core

    try:
        _core.check_arrivals(dict(columns), procs)
    except _core.ConfigError as e:
        raise _core_error(e) from None
