"""Typed configuration of the processor-pool model (seed 000, Zhou & Brecht 1991).

:class:`PoolsConfig` mirrors the keys accepted by ``parsched._core.simulate_pools``
with the defaults of the paper's Table 2. The Rust core is the authority on what
is valid; the checks here are a light first line so that mistakes are reported
before any work starts, with the same one-line ``FIELD: problem; allowed: ...``
messages.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import sys
import typing
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from .errors import ConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

__all__ = ["Arrivals", "PoolsConfig", "apply_overrides", "from_toml"]


@dataclass(frozen=True, slots=True)
class Arrivals:
    """An explicit job stream replacing the Poisson / bounded-geometric workload.

    ``arrival`` times are nondecreasing, ``d`` is each job's desired parallelism
    (1..P) and ``para_work`` optionally gives each job's total PARA-phase demand
    (otherwise ``para_unit * d``).
    """

    arrival: tuple[float, ...]
    d: tuple[int, ...]
    para_work: tuple[float, ...] | None = None

    def __post_init__(self) -> None:
        arrival = tuple(_as_float("arrivals.arrival", v) for v in self.arrival)
        d = tuple(_as_int("arrivals.d", v) for v in self.d)
        object.__setattr__(self, "arrival", arrival)
        object.__setattr__(self, "d", d)
        if self.para_work is not None:
            pw = tuple(_as_float("arrivals.para_work", v) for v in self.para_work)
            object.__setattr__(self, "para_work", pw)
        n = len(arrival)
        if n == 0:
            raise ConfigError("arrivals", "no jobs", "at least one row")
        if len(d) != n or (self.para_work is not None and len(self.para_work) != n):
            raise ConfigError("arrivals", "columns have different lengths", "equal-length lists")
        for i, a in enumerate(arrival):
            if a < 0:
                raise ConfigError("arrivals.arrival", f"row {i}: {a} is negative", ">= 0")
            if i and a < arrival[i - 1]:
                raise ConfigError(
                    "arrivals.arrival", f"row {i}: {a} is before the previous arrival",
                    "nondecreasing times",
                )
        for i, v in enumerate(d):
            if v < 1:
                raise ConfigError("arrivals.d", f"row {i}: {v} is below 1", "integers >= 1")
        if self.para_work is not None:
            for i, v in enumerate(self.para_work):
                if v <= 0:
                    raise ConfigError("arrivals.para_work", f"row {i}: {v} is not positive", "> 0")

    def __len__(self) -> int:
        return len(self.arrival)

    def to_dict(self) -> dict[str, list]:
        out: dict[str, list] = {"arrival": list(self.arrival), "d": list(self.d)}
        if self.para_work is not None:
            out["para_work"] = list(self.para_work)
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


def _doc(text: str, default: Any) -> Any:
    return field(default=default, metadata={"doc": text})


@dataclass(frozen=True, slots=True)
class PoolsConfig:
    """Parameters of one processor-pool simulation (defaults: the paper's Table 2).

    Every field is documented in ``PoolsConfig.field_doc(name)``; symbols in
    brackets are those of Zhou & Brecht, SIGMETRICS 1991 (seed 000).
    """

    P: int = _doc("[P] number of processors in the system (Table 2: 60)", 60)
    L: float = _doc(
        "[L] system load level: processor utilization without overheads, 0 < L < 1 "
        "(Table 2: 60%); sets the Poisson arrival rate P·L / (init + para_unit·D + final)",
        0.6,
    )
    D: float = _doc(
        "[D] average desired parallelism; d is bounded-geometric with mean D and "
        "upper bound P (sec. 2; Table 2: 20)",
        20.0,
    )
    T: float = _doc("[T] round-robin time slice in time units (sec. 3.1; Table 2: 10)", 10.0)
    F: float = _doc(
        "[F] level control for the degree of pool spanning: f(d) = clamp(round(F·d/p), 1, P/p) "
        "candidate pools (sec. 3.2; Table 2: 0.8)",
        0.8,
    )
    G: float = _doc(
        "[G] level control for actual parallelism: a = min(d, max(p_idle, G·d, 1)), "
        "0 <= G <= 1 (sec. 3.2; Table 2: 0.5)",
        0.5,
    )
    p0: int = _doc(
        "[p_0] pool size threshold at or below which in-pool and run-queue overheads "
        "vanish (sec. 3.3; Table 2: 10)",
        10,
    )
    t: float = _doc(
        "[t] fraction of the cache loading cost c charged when the next thread is from "
        "the same job (sec. 3.3; Table 2: 0.25)",
        0.25,
    )
    W: float = _doc(
        "[W] in-pool overhead factor: threads in pools of p > p_0 processors need "
        "(1 + W·(p - p_0)) times their CPU demand (sec. 3.3; Table 2: 0.5%)",
        0.005,
    )
    S: float = _doc(
        "[S] pool-spanning overhead factor: a job spanning k pools of p processors is "
        "inflated by S·(k-1)·p (sec. 3.3; Table 2: 1.0%)",
        0.01,
    )
    r: float = _doc(
        "[r] run-queue contention overhead: r·(p - p_0) time units per context switch "
        "when p > p_0 (sec. 3.3; Table 2: 0.003)",
        0.003,
    )
    c: float = _doc(
        "[c] cache loading overhead: c time units per context switch to another job's "
        "thread, t·c within a job (sec. 3.3; Table 2: 0.005)",
        0.005,
    )
    pool_size: int = _doc("[p] processors per pool; must divide P (sec. 3.1; default 30)", 30)
    spanning: Literal["limited", "none", "unlimited"] = _doc(
        "pool spanning algorithm: limited (uses F), none, unlimited (sec. 3.2)", "limited"
    )
    parallelism: Literal["restricted", "unrestricted"] = _doc(
        "restricted (a uses G and p_idle) or unrestricted (a = d) parallelism (sec. 3.2)",
        "restricted",
    )
    jobs: int = _doc("jobs simulated per replication, warmup included", 10000)
    warmup: int = _doc("jobs discarded at the start of each replication", 1000)
    reps: int = _doc("independent replications (90% CI across replication means)", 5)
    seed: int = _doc("base random seed; replication i uses a stream derived from it", 1)
    workload: Literal["correlated", "uncorrelated"] = _doc(
        "correlated: PARA demand grows with d (sec. 2); uncorrelated: demand independent "
        "of d (sec. 4.6)",
        "correlated",
    )
    init: float = _doc("CPU demand of the INIT phase (sec. 2: 10)", 10.0)
    final: float = _doc("CPU demand of the FINAL phase (sec. 2: 10)", 10.0)
    para_unit: float = _doc(
        "mean PARA demand per desired thread; thread demand ~ U(para_unit·d/a ± spread) "
        "(sec. 2: 100)",
        100.0,
    )
    spread: float = _doc("half-width of the uniform thread demand (sec. 2: 10)", 10.0)
    combine: Literal["add", "multiply"] = _doc(
        "how the in-pool factor w and spanning factor s inflate demand: (1+w+s) or "
        "(1+w)(1+s) (the paper does not say)",
        "add",
    )
    switch_cost: Literal["every_dispatch", "preemption_only"] = _doc(
        "when run-queue and cache overheads are charged: on every dispatch of a thread to "
        "a processor, or only on preemptions at time-slice end",
        "every_dispatch",
    )
    f_rounding: Literal["nearest", "floor", "ceil"] = _doc(
        "rounding of F·d/p (the paper writes round)", "nearest"
    )
    g_rounding: Literal["nearest", "floor", "ceil"] = _doc(
        "rounding of G·d (the paper does not say)", "nearest"
    )
    tie_break: Literal["lowest_index", "most_idle"] = _doc(
        "order of equally loaded pools (the paper does not say)", "lowest_index"
    )
    inflate_master: bool = _doc(
        "also inflate the master thread's INIT and FINAL phases by the pool overheads "
        "(the paper inflates the parallel threads only)",
        False,
    )
    ci: Literal["auto", "replications", "batch_means"] = _doc(
        "confidence interval method: across replications, batch means within them, or auto "
        "(replications when reps >= 2, batch means when reps == 1)",
        "auto",
    )
    arrivals: Arrivals | None = _doc(  # noqa: RUF009 - a plain dataclasses.field
        "explicit job stream (arrival, d[, para_work]) replacing the generated workload", None
    )

    # ------------------------------------------------------------------ checks
    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            kind = _FIELD_KINDS[f.name]
            v = getattr(self, f.name)
            if f.name == "arrivals":
                if v is not None and not isinstance(v, Arrivals):
                    if isinstance(v, Mapping):
                        v = Arrivals.from_mapping(v)
                    else:
                        raise ConfigError("arrivals", f"{type(v).__name__} given",
                                          "None or a mapping of equal-length lists")
                    object.__setattr__(self, "arrivals", v)
                continue
            if kind is bool:
                if not isinstance(v, bool):
                    raise ConfigError(f.name, f"{v!r} is not a boolean", "true, false")
            elif kind is int:
                object.__setattr__(self, f.name, _as_int(f.name, v))
            elif kind is float:
                object.__setattr__(self, f.name, _as_float(f.name, v))
            else:
                if not isinstance(v, str) or v not in kind:
                    raise ConfigError(f.name, f"{v!r} is not a choice", ", ".join(kind))
        self._check_ranges()

    def _check_ranges(self) -> None:
        def need(ok: bool, name: str, allowed: str) -> None:
            if not ok:
                raise ConfigError(name, f"{getattr(self, name)} is out of range", allowed)

        need(self.P >= 1, "P", "integer >= 1")
        need(0.0 < self.L < 1.0, "L", "0 < L < 1")
        if self.arrivals is None:
            # the bounded-geometric d (sec. 2) cannot have a mean of (P+1)/2 or more
            limit = (self.P + 1) / 2
            need(1.0 <= self.D < limit or self.D == self.P == 1, "D",
                 f"1 <= D < (P+1)/2 = {limit:g}")
        need(self.T > 0, "T", "T > 0")
        need(self.F >= 0, "F", "F >= 0")
        need(0.0 <= self.G <= 1.0, "G", "0 <= G <= 1")
        need(self.p0 >= 0, "p0", "integer >= 0")
        for name in ("t", "W", "S", "r", "c", "init", "final", "para_unit", "spread"):
            need(getattr(self, name) >= 0, name, f"{name} >= 0")
        if self.arrivals is None:
            need(self.init + self.para_unit * self.D + self.final > 0, "para_unit",
                 "init + para_unit·D + final > 0")
        need(self.pool_size >= 1, "pool_size", f"a divisor of P (= {self.P})")
        if self.P % self.pool_size:
            raise ConfigError(
                "pool_size", f"{self.pool_size} does not divide P = {self.P}",
                "divisors of P: " + ", ".join(str(k) for k in _divisors(self.P)),
            )
        for name in ("P", "p0", "pool_size", "reps"):
            need(getattr(self, name) < 2**32, name, "an integer below 2^32")
        need(self.jobs < 2**64, "jobs", "an integer below 2^64")
        need(self.jobs >= 1, "jobs", "integer >= 1")
        need(0 <= self.warmup < self.jobs, "warmup", f"0 <= warmup < jobs (= {self.jobs})")
        need(self.reps >= 1, "reps", "integer >= 1")
        need(0 <= self.seed < 2**64, "seed", "0 <= seed < 2^64")
        if self.arrivals is not None:
            top = max(self.arrivals.d)
            if top > self.P:
                row = self.arrivals.d.index(top)
                raise ConfigError(
                    "arrivals.d", f"row {row}: {top} exceeds P = {self.P}", f"1..{self.P}"
                )
            if self.arrivals is not None and len(self.arrivals) <= self.warmup:
                raise ConfigError(
                    "warmup", f"{self.warmup} discards all {len(self.arrivals)} listed arrivals",
                    "warmup < number of arrivals",
                )

    # ------------------------------------------------------------- utilities
    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(cls))

    @classmethod
    def field_doc(cls, name: str) -> str:
        for f in dataclasses.fields(cls):
            if f.name == name:
                return f.metadata.get("doc", "")
        raise _unknown_key(name)

    @classmethod
    def choices(cls, name: str) -> tuple[str, ...] | None:
        kind = _FIELD_KINDS.get(name)
        return kind if isinstance(kind, tuple) else None

    def with_(self, **changes: Any) -> PoolsConfig:
        """A copy with some fields replaced (unknown keys raise :class:`ConfigError`)."""
        for k in changes:
            if k not in _FIELD_KINDS:
                raise _unknown_key(k)
        return dataclasses.replace(self, **changes)

    def to_dict(self, *, arrivals: bool = True) -> dict[str, Any]:
        """Plain dict in the form ``parsched._core.simulate_pools`` accepts."""
        out: dict[str, Any] = {}
        for name in _FIELD_KINDS:
            v = getattr(self, name)
            if name == "arrivals":
                if arrivals:
                    out[name] = None if v is None else v.to_dict()
                continue
            out[name] = v
        return out

    def scalars(self) -> dict[str, Any]:
        """The scalar fields (everything but ``arrivals``)."""
        return self.to_dict(arrivals=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PoolsConfig:
        for k in data:
            if k not in _FIELD_KINDS:
                raise _unknown_key(k)
        return cls(**dict(data))

    def apply_overrides(self, items: Iterable[str]) -> PoolsConfig:
        """Applies ``KEY=VALUE`` strings, parsing each value by the field's type."""
        changes: dict[str, Any] = {}
        for item in items:
            key, sep, raw = str(item).partition("=")
            key, raw = key.strip(), raw.strip()
            if not sep or not key:
                raise ConfigError(
                    "--set", f"{item!r} is not KEY=VALUE",
                    "KEY=VALUE with KEY one of " + ", ".join(_SCALAR_KEYS),
                )
            if key == "arrivals":
                raise ConfigError("arrivals", "cannot be set with KEY=VALUE",
                                  "--arrivals FILE.csv or an arrivals table in the TOML file")
            if key not in _FIELD_KINDS:
                raise _unknown_key(key)
            changes[key] = parse_value(key, raw)
        return self.with_(**changes) if changes else self

    @classmethod
    def from_toml(cls, path: str | os.PathLike[str]) -> PoolsConfig:
        """Reads a TOML file holding a ``[pools]`` table, or the keys at top level.

        ``arrivals`` may be a table of equal-length arrays or a path to a CSV file
        (relative to the TOML file).
        """
        path = os.fspath(path)
        try:
            with open(path, "rb") as fh:
                doc = tomllib.load(fh)
        except OSError as e:
            raise ConfigError("config", f"cannot read {path!r}: {e.strerror or e}") from None
        except tomllib.TOMLDecodeError as e:
            raise ConfigError("config", f"{path}: invalid TOML: {e}") from None
        table = doc.get("pools", doc)
        if not isinstance(table, dict):
            raise ConfigError("config", f"{path}: 'pools' is not a table", "a [pools] table")
        if "pools" in doc:
            extra = [k for k, v in doc.items() if k != "pools" and not isinstance(v, dict)]
            if extra:
                raise ConfigError(
                    extra[0], f"{path}: key outside the [pools] table",
                    "keys inside [pools]: " + ", ".join(_FIELD_KINDS),
                )
        values: dict[str, Any] = {}
        for k, v in table.items():
            if k not in _FIELD_KINDS:
                raise _unknown_key(k, where=path)
            if k == "arrivals":
                if isinstance(v, str):
                    from .arrivals import load_arrivals

                    base = os.path.dirname(os.path.abspath(path))
                    v = load_arrivals(os.path.join(base, v))
                elif not isinstance(v, dict):
                    raise ConfigError("arrivals", f"{path}: {type(v).__name__} given",
                                      "a table of arrays or a CSV path")
            values[k] = v
        return cls(**values)

    def to_toml(self, *, table: bool = True) -> str:
        """TOML text that :meth:`from_toml` reads back to an equal config."""
        lines = ["[pools]"] if table else []
        for k, v in self.scalars().items():
            lines.append(f"{k} = {_toml_value(v)}")
        if self.arrivals is not None:
            lines.append("")
            lines.append("[pools.arrivals]" if table else "[arrivals]")
            for k, col in self.arrivals.to_dict().items():
                lines.append(f"{k} = [{', '.join(_toml_value(x) for x in col)}]")
        return "\n".join(lines) + "\n"

    def summary_label(self) -> str:
        diffs = [f"{k}={v}" for k, v in self.scalars().items() if v != _DEFAULTS[k]]
        return ", ".join(diffs) or "defaults"


# ---------------------------------------------------------------- helpers


def _divisors(n: int) -> list[int]:
    return [k for k in range(1, n + 1) if n % k == 0]


def _as_int(name: str, v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        if isinstance(v, float) and v.is_integer():
            return int(v)
        try:  # numpy integers
            import numpy as np

            if isinstance(v, np.integer):
                return int(v)
        except ImportError:  # pragma: no cover
            pass
        raise ConfigError(name, f"{v!r} is not an integer", "an integer")
    return int(v)


def _as_float(name: str, v: Any) -> float:
    if isinstance(v, bool):
        raise ConfigError(name, f"{v!r} is not a number", "a finite number")
    try:
        x = float(v)
    except (TypeError, ValueError):
        raise ConfigError(name, f"{v!r} is not a number", "a finite number") from None
    if not math.isfinite(x):
        raise ConfigError(name, f"{v!r} is not finite", "a finite number")
    return x


def _kind(tp: Any) -> Any:
    if tp is int or tp is float or tp is bool:
        return tp
    if typing.get_origin(tp) is Literal:
        return tuple(typing.get_args(tp))
    return object


_HINTS = typing.get_type_hints(PoolsConfig)
_FIELD_KINDS: dict[str, Any] = {
    f.name: _kind(_HINTS[f.name]) for f in dataclasses.fields(PoolsConfig)
}
_SCALAR_KEYS = tuple(k for k in _FIELD_KINDS if k != "arrivals")
_DEFAULTS = PoolsConfig().scalars()


def _unknown_key(key: str, where: str | None = None) -> ConfigError:
    msg = "unknown key" + (f" in {where}" if where else "")
    return ConfigError(str(key), msg, ", ".join(_FIELD_KINDS))


def parse_value(key: str, raw: str) -> Any:
    """Parses the text of a ``KEY=VALUE`` override by the type of ``key``."""
    kind = _FIELD_KINDS.get(key)
    if kind is None:
        raise _unknown_key(key)
    if kind is bool:
        v = raw.strip().lower()
        if v in ("true", "1", "yes", "on"):
            return True
        if v in ("false", "0", "no", "off"):
            return False
        raise ConfigError(key, f"{raw!r} is not a boolean", "true, false")
    if kind is int:
        try:
            return int(raw)
        except ValueError:
            try:
                x = float(raw)
            except ValueError:
                x = math.nan
            if math.isfinite(x) and x.is_integer():
                return int(x)
            raise ConfigError(key, f"{raw!r} is not an integer", "an integer") from None
    if kind is float:
        text = raw[:-1] if raw.endswith("%") else raw
        try:
            x = float(text)
        except ValueError:
            raise ConfigError(key, f"{raw!r} is not a number", "a finite number") from None
        if not math.isfinite(x):
            raise ConfigError(key, f"{raw!r} is not finite", "a finite number")
        return x / 100.0 if raw.endswith("%") else x
    if isinstance(kind, tuple):
        v = raw.strip().strip("'\"")
        if v not in kind:
            raise ConfigError(key, f"{raw!r} is not a choice", ", ".join(kind))
        return v
    raise ConfigError(key, "cannot be set with KEY=VALUE", "a scalar key")


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(v)
    return json.dumps(str(v))


def apply_overrides(config: PoolsConfig, items: Sequence[str]) -> PoolsConfig:
    """Module-level spelling of :meth:`PoolsConfig.apply_overrides`."""
    return config.apply_overrides(items)


def from_toml(path: str | os.PathLike[str]) -> PoolsConfig:
    """Module-level spelling of :meth:`PoolsConfig.from_toml`."""
    return PoolsConfig.from_toml(path)


def _class_doc() -> str:
    lines = [PoolsConfig.__doc__ or "", "", "Attributes:"]
    for f in dataclasses.fields(PoolsConfig):
        lines.append(f"    {f.name} (default {f.default!r}): {f.metadata.get('doc', '')}")
    return "\n".join(lines)


PoolsConfig.__doc__ = _class_doc()
