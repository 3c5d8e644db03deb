"""parsched: a parallel-job scheduling simulator (Rust core, Python front end).

The processor-pool model of Zhou & Brecht (SIGMETRICS 1991, seed 000)::

    import parsched
    cfg = parsched.PoolsConfig(D=20, pool_size=30)
    res = parsched.simulate(cfg)
    res.summary["mean_response_time"], res.jobs.head()

    df = parsched.sweep(cfg.with_(pool_size=p) for p in (5, 10, 15, 20, 30, 60))

Fine-grain synchronization and gang scheduling (Feitelson & Rudolph 1992, seed 001)::

    b = parsched.BarrierConfig(n=10, l=3, grain=0.1, var=0.1, sched="gang")
    r = parsched.simulate_barrier(b)
    r.summary["time_per_iteration"], r.summary["eq6"]
    df = parsched.sweep(b.with_(sched=s, wait=w) for s in ("gang", "local")
                        for w in ("busy", "block"))

Batch scheduling of rigid jobs on SWF workload traces::

    r = parsched.simulate_batch("KTH-SP2.swf.gz", parsched.BatchConfig(policy="easy"))
    r.summary["avg_bounded_slowdown"], r.report, r.jobs.head()   # Batsim columns
    r.plot_gantt("gantt.png"); r.plot_utilization("util.png")

Coscheduling on a network of workstations (Nagar et al. 1999, seed 003)::

    r = parsched.simulate(parsched.CoschedConfig(scheme="DCS", workload=7, scale=0.1, reps=3))
    r.completion_time, r.job_completion_times, r.cv, r.over_ideal, r.runs, r.timeline
    r.plot_timeline().savefig("shares.png")
    df = parsched.cosched_sweep(parsched.CoschedConfig(scale=0.1), ["Local", "SB", "PB"],
                                [1, 5, 9])

Real programs on this Linux machine, gang scheduled by freezing cgroups::

    out = parsched.run_jobs({"policy": "gang", "slot": "50ms",
                             "jobs": [{"argv": ["./a.out"], "width": 2}, ["./b.out", "x"]]})
    out["jobs"][0]["wall_s"], out["controller"]["switches"]

Every model the same way: ``parsched.simulate(config)`` takes any model's
config (``PoolsConfig``, ``BarrierConfig``, ``BatchConfig``, ``CoschedConfig``,
``FcsConfig``, ``FcsFigureConfig``, ``RegionsConfig``) and returns its result,
which has ``summary`` (scalars, docs/glossary.md), ``frames()`` (DataFrames by
name), ``to_dict()`` and ``to_json()``; ``parsched.sweep`` takes any of them
but the figures' (``simulate_barrier``, ``simulate_cosched``, ... remain as
aliases)::

    r = parsched.simulate(parsched.FcsConfig(scheme="gang", scale=0.1))
    r.summary["makespan"], r.frames()["jobs"], r.to_json()
    df = parsched.sweep(parsched.RegionsConfig(wss_mb=m) for m in (2, 6, 12))

Heavy modules (pandas, matplotlib) are imported on first use; the configs read
their defaults and checks from the compiled core when imported.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from .config import (
    Arrivals,
    BarrierConfig,
    BatchConfig,
    CoschedConfig,
    FcsConfig,
    FcsFigureConfig,
    LublinConfig,
    PoolsConfig,
    RegionsConfig,
    apply_overrides,
    from_toml,
)
from .errors import (
    ConfigError,
    PolicyError,
    RuntimeFailure,
    RuntimeUnavailable,
    SimulationError,
    TimeLimitError,
    TraceError,
)

if TYPE_CHECKING:  # pragma: no cover
    from parsched.config.arrivals import load_arrivals
    from parsched.sim.api import BarrierResult, Result, simulate, simulate_barrier, sweep
    from parsched.sim.batch import BatchResult, simulate_batch
    from parsched.sim.batch_policy import Decision
    from parsched.sim.cosched import (
        CoschedResult,
        cosched_applications,
        cosched_sweep,
        simulate_cosched,
    )
    from parsched.sim.fcs import (
        FcsFigureResult,
        FcsResult,
        fcs_figure,
        fcs_table,
        simulate_fcs,
        simulate_fcs_figure,
    )
    from parsched.sim.generate import generate_lublin
    from parsched.sim.policies import LeastLoadedSpread, ZhouBrechtPolicy
    from parsched.sim.regions import RegionsResult, simulate_regions
    from parsched.sim.result import SimResult

    from .runtime import run_jobs

__all__ = [
    "Arrivals",
    "BarrierConfig",
    "BarrierResult",
    "BatchConfig",
    "BatchResult",
    "ConfigError",
    "CoschedConfig",
    "CoschedResult",
    "Decision",
    "FcsConfig",
    "FcsFigureConfig",
    "FcsFigureResult",
    "FcsResult",
    "LeastLoadedSpread",
    "LublinConfig",
    "PolicyError",
    "PoolsConfig",
    "RegionsConfig",
    "RegionsResult",
    "Result",
    "RuntimeFailure",
    "RuntimeUnavailable",
    "SimResult",
    "SimulationError",
    "TimeLimitError",
    "TraceError",
    "ZhouBrechtPolicy",
    "__version__",
    "apply_overrides",
    "cosched_applications",
    "cosched_sweep",
    "fcs_figure",
    "fcs_table",
    "from_toml",
    "generate_lublin",
    "load_arrivals",
    "run_jobs",
    "simulate",
    "simulate_barrier",
    "simulate_batch",
    "simulate_cosched",
    "simulate_fcs",
    "simulate_fcs_figure",
    "simulate_regions",
    "sweep",
]

_LAZY = {
    "Result": "sim.api",
    "BarrierResult": "sim.api",
    "simulate_barrier": "sim.api",
    "simulate": "sim.api",
    "sweep": "sim.api",
    "BatchResult": "sim.batch",
    "simulate_batch": "sim.batch",
    "Decision": "sim.batch_policy",
    "CoschedResult": "sim.cosched",
    "simulate_cosched": "sim.cosched",
    "cosched_sweep": "sim.cosched",
    "cosched_applications": "sim.cosched",
    "FcsResult": "sim.fcs",
    "FcsFigureResult": "sim.fcs",
    "simulate_fcs_figure": "sim.fcs",
    "SimResult": "sim.result",
    "simulate_fcs": "sim.fcs",
    "fcs_table": "sim.fcs",
    "fcs_figure": "sim.fcs",
    "RegionsResult": "sim.regions",
    "simulate_regions": "sim.regions",
    "load_arrivals": "config.arrivals",
    "generate_lublin": "sim.generate",
    "run_jobs": "runtime",
    "ZhouBrechtPolicy": "sim.policies",
    "LeastLoadedSpread": "sim.policies",
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(f".{_LAZY[name]}", __name__), name)
    if name == "__version__":
        from importlib.metadata import PackageNotFoundError, version

        try:
            return version("parsched")
        except PackageNotFoundError:  # pragma: no cover
            return "0+unknown"
    raise AttributeError(f"module 'parsched' has no attribute {name!r}")


def __dir__() -> list[str]:
    # the public names only (not Any, TYPE_CHECKING, annotations, import_module)
    return sorted(__all__)
