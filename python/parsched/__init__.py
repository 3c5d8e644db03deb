"""parsched: a parallel-job scheduling simulator (Rust core, Python front end).

The processor-pool model of Zhou & Brecht (SIGMETRICS 1991, seed 000)::

    import parsched
    cfg = parsched.PoolsConfig(D=20, pool_size=30)
    res = parsched.simulate(cfg)
    res.summary["mean_response_time"], res.jobs.head()

    df = parsched.sweep(cfg.with_(pool_size=p) for p in (5, 10, 15, 20, 30, 60))

Heavy modules (pandas, the compiled core) are imported on first use.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from .config import Arrivals, PoolsConfig, apply_overrides, from_toml
from .errors import ConfigError, PolicyError, SimulationError

if TYPE_CHECKING:  # pragma: no cover
    from .api import Result, simulate, sweep
    from .arrivals import load_arrivals
    from .policies import LeastLoadedSpread, ZhouBrechtPolicy

__all__ = [
    "Arrivals",
    "ConfigError",
    "LeastLoadedSpread",
    "PolicyError",
    "PoolsConfig",
    "Result",
    "SimulationError",
    "ZhouBrechtPolicy",
    "__version__",
    "apply_overrides",
    "from_toml",
    "load_arrivals",
    "simulate",
    "sweep",
]

_LAZY = {
    "Result": "api",
    "simulate": "api",
    "sweep": "api",
    "load_arrivals": "arrivals",
    "ZhouBrechtPolicy": "policies",
    "LeastLoadedSpread": "policies",
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
    return sorted(set(globals()) | set(__all__))
