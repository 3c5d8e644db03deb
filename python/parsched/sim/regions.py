"""Seed 004 from Python: region scheduling (Lee & Schwan, "Region Scheduling:
Efficiently Using the Cache Architectures via Page-level Affinity", ASPLOS
2012) on the simulated machine.

* :func:`simulate_regions` — one workload (``memlat``: Figure 9's two-region
  benchmark; ``balance``: §5.2's two large and two small programs) on a
  Clovertown- or Westmere-like machine, the same work under the standard
  scheduler and under region scheduling; returns a :class:`RegionsResult`
  (``normalized_performance``, ``speedup``, ``microschedules_per_s``, the
  per-cache loads, both runs).
* :func:`regions_keys` — the keys it accepts.
* :data:`PAPER` — the paper's numbers the experiments are compared with.

The model, its keys and what it gives: docs/policies/regions.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from parsched.config.base import _core_error
from parsched.errors import PolicyError, SimulationError
from parsched.report.common import ResultRepr, jsonable

__all__ = ["PAPER", "RegionsResult", "regions_keys", "simulate_regions"]

#: The paper's statements (§3.1, §5.1, §5.2) the experiments are set beside.
PAPER: dict[str, Any] = {
    "microschedule_us": {"clovertown": 15.86, "westmere": 6.357},
    "fig9_peak_gain": {"clovertown": 1.45, "westmere": "over 300% (ratio > 3)"},
    "fig9_rates_per_s": {"clovertown": (295, 2240), "westmere": (180, 5100)},
    "condition1_no_gain_at_or_below_access_time": 2 ** 12,
    "condition1_marginal_from_access_time_clovertown": 2 ** 16,
    "condition2_harmful_at_or_below_mb": {"clovertown": 2 * 1.8, "westmere": 2 * 4.0},
    "condition3_fits_unified_mb": {"clovertown": 8.0, "westmere": 24.0},
    "balance_speedup_more_than": 1.5,
}


def _core():
    from parsched.sim.api import core

    return core()


def regions_keys() -> list[str]:
    """The keys :func:`simulate_regions` accepts, in documentation order."""
    return list(_core().regions_keys())


@dataclass(frozen=True, eq=False, repr=False)
class RegionsResult(ResultRepr):
    """The outcome of one :func:`simulate_regions` call.

    ``normalized_performance``: the standard scheduler's time over region
    scheduling's on the same work (> 1: region scheduling is faster);
    ``speedup``: the same for ``workload=balance`` (None for memlat);
    ``speedup_per_program``: per program; ``microschedules_per_s`` and
    ``microschedules`` of the region run; ``cache_loads`` (bytes mapped to
    each last-level cache under region scheduling) and
    ``cache_loads_standard`` (the standard placement's); the miss ratios;
    ``standard`` / ``region``: each run's details (finish times in ns,
    per-cache accesses, misses and loads, the fallback decisions, each
    region's final ``placement`` and ``estimates``, and with
    ``regioning="online"`` the ``rebalances`` and ``last_rebalance_ns``);
    ``cache_loads`` is the final placement's with ``regioning="online"``;
    ``timing``: hit/miss ns and the micro-schedule cost used; ``config``:
    every key's value.
    """

    machine: str
    workload: str
    normalized_performance: float
    speedup: float | None
    speedup_per_program: list[float]
    microschedules_per_s: float
    microschedules: int
    cache_loads: list[int]
    cache_loads_standard: list[int]
    miss_ratio_standard: float
    miss_ratio_region: float
    standard: dict[str, Any]
    region: dict[str, Any]
    timing: dict[str, Any]
    config: dict[str, Any] = field(default_factory=dict)

    _HEADLINE = ("normalized_performance", "speedup", "microschedules_per_s", "cache_loads")

    def _label(self) -> str:
        return f"machine={self.machine}, workload={self.workload}"

    def to_dict(self) -> dict[str, Any]:
        """Every field as JSON-ready values."""
        return jsonable({
            "machine": self.machine,
            "workload": self.workload,
            "normalized_performance": self.normalized_performance,
            "speedup": self.speedup,
            "speedup_per_program": self.speedup_per_program,
            "microschedules_per_s": self.microschedules_per_s,
            "microschedules": self.microschedules,
            "cache_loads": self.cache_loads,
            "cache_loads_standard": self.cache_loads_standard,
            "miss_ratio_standard": self.miss_ratio_standard,
            "miss_ratio_region": self.miss_ratio_region,
            "standard": self.standard,
            "region": self.region,
            "timing": self.timing,
            "config": self.config,
        })


def simulate_regions(config: Mapping[str, Any] | None = None, /, **keys: Any) -> RegionsResult:
    """Runs seed 004's region machine with ``config`` (a mapping of keys) and
    ``keys`` (keyword overrides, e.g. ``machine="westmere", wss_mb=20,
    access_time=2**14``); default: memlat, 6 MB, access time 2^16 on the
    Clovertown-like machine. Raises :class:`ConfigError` (with ``field``) for
    a bad key or value, :class:`PolicyError` if a policy decision cannot be
    applied, :class:`SimulationError` for a bad program. Releases the GIL."""
    merged = {**(dict(config) if config else {}), **keys}
    c = _core()
    try:
        out = c.simulate_regions(merged)
    except c.ConfigError as e:
        raise _core_error(e) from None
    except c.PolicyError as e:
        raise PolicyError(str(e)) from None
    except c.SimulationError as e:
        raise SimulationError(str(e)) from None
    sp = out["speedup"]
    return RegionsResult(
        machine=str(out["machine"]),
        workload=str(out["workload"]),
        normalized_performance=float(out["normalized_performance"]),
        speedup=None if sp is None else float(sp),
        speedup_per_program=[float(x) for x in out["speedup_per_program"]],
        microschedules_per_s=float(out["microschedules_per_s"]),
        microschedules=int(out["microschedules"]),
        cache_loads=[int(x) for x in out["cache_loads"]],
        cache_loads_standard=[int(x) for x in out["cache_loads_standard"]],
        miss_ratio_standard=float(out["miss_ratio_standard"]),
        miss_ratio_region=float(out["miss_ratio_region"]),
        standard=dict(out["standard"]),
        region=dict(out["region"]),
        timing=dict(out["timing"]),
        config=dict(out["config"]),
    )
