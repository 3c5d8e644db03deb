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

from parsched.errors import ConfigError

if TYPE_CHECKING:  # pragma: no cover
    import pandas as pd

    from parsched.config import LublinConfig

__all__ = ["LUBLIN_KEYS", "check_lublin_key", "generate_lublin", "parse_lublin_overrides"]


def _core():
    from parsched.sim.api import core

    return core()


#: The generator's keys with their defaults (``load`` None: the model's own
#: arrival process; otherwise interarrival times are scaled so that the
#: offered load Σ procs·run time / (P · span) is ``load``).
LUBLIN_KEYS: dict[str, Any] = {
    "procs": 128, "jobs": 10_000, "load": None, "seed": 1, "include_types": True,
}

_ALLOWED = {
    "procs": "an integer >= 1 (processors of the machine; the model is retargeted to it)",
    "jobs": "an integer in 1..=50000000",
    "load": "a number in (0, 100], or none (the model's own arrivals)",
    "seed": "an integer >= 0",
    "include_types": "true|false (batch and interactive types, or the typeless model)",
}


def check_lublin_key(key: str, value: Any) -> Any:
    """``value`` as the key's type; a :class:`ConfigError` naming the key otherwise."""
    from parsched.config.base import _closest, _cut

    if key not in LUBLIN_KEYS:
        near = _closest(key, list(LUBLIN_KEYS))
        msg = "unknown key" + (f" (did you mean {near}?)" if near else "")
        raise ConfigError(_cut(key), msg, ", ".join(LUBLIN_KEYS))
    bad = ConfigError(key, f"{_cut(repr(value))} is not accepted", _ALLOWED[key])
    if key == "load":
        if value is None:
            return None
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise bad
        if not 0 < value <= 100:
            raise bad
        return float(value)
    if key == "include_types":
        if not isinstance(value, bool):
            raise bad
        return value
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        if isinstance(value, float) and value.is_integer() and value >= 0:
            return int(value)
        raise bad
    return value


_check = check_lublin_key


def parse_lublin_overrides(items: list[str]) -> dict[str, Any]:
    """``KEY=VALUE`` strings (``--set``) as generator keyword arguments."""
    from parsched.config.base import _cut

    out: dict[str, Any] = {}
    for item in items:
        key, sep, raw = item.partition("=")
        key, text = key.strip(), raw.strip().strip("'\"")
        if not sep or not key:
            raise ConfigError(_cut(item), "not KEY=VALUE", ", ".join(LUBLIN_KEYS))
        value: Any
        low = text.lower()
        if low in ("none", "model", "null"):
            value = None
        elif low in ("true", "false"):
            value = low == "true"
        else:
            try:
                value = int(text.replace("_", ""))
            except ValueError:
                try:
                    value = float(text)
                except ValueError:
                    value = text
        out[key] = _check(key, value)
    return out


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
    given = config.to_dict() if config is not None else dict(
        procs=procs, jobs=jobs, load=load, seed=seed, include_types=include_types)
    args = {k: _check(k, v) for k, v in given.items()}
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
