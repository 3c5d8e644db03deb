"""Synthetic workloads: the Lublin–Feitelson model of rigid parallel jobs.

U. Lublin and D. G. Feitelson, "The workload on parallel supercomputers:
modeling the characteristics of rigid jobs", JPDC 63(11), 2003 (the 1999
model of the Parallel Workloads Archive's ``m_lublin99.c``; parsched's
implementation: ``crates/parsched-sim/src/lublin.rs``, documented in
``docs/formats/swf.md``).

:func:`generate_lublin` returns the jobs as a DataFrame of SWF fields or
writes them as an SWF file (``.swf`` or ``.swf.gz``). The same jobs run
without a file through ``BatchConfig(workload="lublin", workload_jobs=...,
workload_load=..., workload_seed=..., workload_types=..., procs=...)``.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

from parsched.config.lublin import LublinConfig
from parsched.errors import ConfigError

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

__all__ = ["LUBLIN_KEYS", "generate_lublin", "parse_lublin_overrides"]


def _core():
    from parsched.sim.api import core

    return core()


#: The generator's keys with their defaults (the core's schema: ``load`` None
#: is the model's own arrival process; otherwise interarrival times are scaled
#: so that the offered load Σ procs·run time / (P · span) is ``load``).
LUBLIN_KEYS: dict[str, Any] = LublinConfig.defaults()


def parse_lublin_overrides(items: list[str]) -> dict[str, Any]:
    """``KEY=VALUE`` strings (``--set``) as generator keyword arguments,
    parsed and checked by :class:`LublinConfig` (the core's schema)."""
    cfg = LublinConfig().apply_overrides(items)
    given = [str(item).partition("=")[0].strip() for item in items]
    return {k: getattr(cfg, k) for k in given}


def generate_lublin(
    path: str | os.PathLike[str] | None = None,
    *,
    procs: int = 128,
    jobs: int = 10_000,
    load: float | None = None,
    seed: int = 1,
    include_types: bool = True,
    config: LublinConfig | None = None,
) -> pd.DataFrame | str:
    """Generates ``jobs`` jobs of the Lublin–Feitelson model for ``procs``
    processors.

    ``load`` scales the interarrival times so that the offered load
    (Σ procs·run time over P·(last − first submit)) is ``load``; None keeps
    the model's own arrival process. ``include_types``: the published model's
    batch and interactive types, or its typeless variant. ``seed`` selects the
    model's own random streams, so the same arguments give the same jobs.

    With ``path`` (``.swf``, or ``.swf.gz`` for gzip) writes an SWF trace
    (atomically: a temporary file renamed on success) and returns the path;
    otherwise returns a DataFrame with the SWF fields (``job_number``,
    ``submit_time``, ``run_time``, ``allocated_procs``, ``requested_procs``,
    ``requested_time``, ``status``, ...; -1 for unknown, as in SWF) whose
    ``attrs["load_factor"]`` is the factor the interarrival times were divided by.
    ``config``, a :class:`~parsched.config.LublinConfig`, gives every key at
    once (the keyword arguments are then not used).
    """
    if config is None:
        config = LublinConfig(procs=procs, jobs=jobs, load=load, seed=seed,
                              include_types=include_types)
    args = config.to_dict()
    c = _core()
    if path is not None:
        from parsched._io import atomic_file, check_output_file

        path = os.fspath(path)
        if not (path.endswith(".swf") or path.endswith(".swf.gz")):
            raise ConfigError("path", f"{path!r} is not an SWF file name", ".swf or .swf.gz")
        check_output_file(path, "path")
        try:
            with atomic_file(path) as tmp:
                c.generate_lublin(args, tmp)
        except c.ConfigError as e:
            raise ConfigError.from_message(str(e)) from None
        return path
    try:
        out = c.generate_lublin(args)
    except c.ConfigError as e:
        raise ConfigError.from_message(str(e)) from None
    import numpy as np
    import pandas as pd

    cols = {k: np.frombuffer(v, dtype=np.int64) for k, v in out["columns"].items()}
    df = pd.DataFrame(cols, copy=False)
    df.attrs["load_factor"] = float(out["factor"])
    return df
