"""The generic front end: any model of the core's table that has a generic
run (:func:`parsched._core.simulate`), with no Python of its own.

A model added to the core's table (its folder and one line in
``crates/parsched-sim/src/models/mod.rs``) is run by :func:`simulate_generic`
and swept by :func:`summary_of` until it has a front end of its own (a
result class with its plots): ``parsched.simulate(config)``,
``parsched.sweep``, sweep specs and ``parsched simulate MODEL`` reach it
through :mod:`parsched.sim.models`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from parsched.config.table import row
from parsched.sim.api import call_core, core
from parsched.sim.result import SimResult

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["GenericResult", "simulate_generic", "summary_of"]


@dataclass(frozen=True, repr=False)
class GenericResult(SimResult):
    """A result of the generic run: ``summary`` holds the model's summary
    keys (its row's ``summary_keys``) found in the run's output; ``data`` the
    rest of the output; :meth:`frames` every part of it that is a list of
    records, as a DataFrame (one level down too: ``standard.caches``)."""

    config: Any
    summary: dict[str, Any]
    data: dict[str, Any] = field(repr=False, compare=False, default_factory=dict)

    def frames(self) -> dict[str, pd.DataFrame]:
        """Every list of records in the output, at its top level or one level
        down (``standard.caches``), as a DataFrame."""
        import pandas as pd

        def records(v: Any) -> bool:
            return isinstance(v, list) and bool(v) and all(isinstance(r, dict) for r in v)

        out = {k: pd.DataFrame(v) for k, v in self.data.items() if records(v)}
        for k, v in self.data.items():
            if isinstance(v, dict):
                out.update({f"{k}.{k2}": pd.DataFrame(v2) for k2, v2 in v.items()
                            if records(v2)})
        return out

    def _extra_dict(self) -> dict[str, Any]:
        return {}


def _run(model: str, cfg: dict[str, Any], workers: int) -> tuple[dict, dict]:
    out = dict(call_core(core().simulate, model, cfg, workers=workers))
    out.pop("config", None)
    keys = row(model)["summary_keys"]
    return {k: out[k] for k in keys if k in out}, {k: v for k, v in out.items() if k not in keys}


def simulate_generic(config: Any, *, workers: int = 1) -> GenericResult:
    """Runs ``config``'s model through its generic run."""
    summary, data = _run(config.MODEL, config.to_dict(), workers)
    return GenericResult(config, summary, data)


def summary_of(model: str, cfg: dict[str, Any]) -> dict[str, Any]:
    """The summary of one run of ``model`` on the config dict ``cfg`` (a
    sweep's runner: module-level, so that it pickles)."""
    return _run(model, cfg, 1)[0]
