"""Typed configurations of parsched's models.

* :class:`PoolsConfig` — the processor-pool model (seed 000, Zhou & Brecht 1991);
  it mirrors the keys of ``parsched._core.simulate_pools`` with the defaults of
  the paper's Table 2.
* :class:`BarrierConfig` — the fine-grain synchronization machine (seed 001,
  Feitelson & Rudolph 1992); it mirrors the keys of
  ``parsched._core.simulate_barrier`` with the Rust defaults (times in ms).
* :class:`BatchConfig` — batch space-sharing and gang scheduling of rigid jobs
  on an SWF workload trace (issue 4); it mirrors ``parsched._core.batch_keys()``
  with the Rust defaults, plus the ``trace`` path.

All are frozen dataclasses built on :class:`ConfigBase`, which supplies the
shared machinery: typed coercion of every field, ``with_``, ``to_dict``,
``from_dict``, ``KEY=VALUE`` overrides (``apply_overrides``, ``parse_value``),
TOML in and out, and per-field docs. The Rust core is the authority on what is
valid; the checks here are a light first line so that mistakes are reported
before any work starts, with the same one-line ``FIELD: problem; allowed: ...``
messages.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import sys
import types
import typing
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar, Literal

from .errors import ConfigError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

__all__ = [
    "Arrivals",
    "BarrierConfig",
    "BatchConfig",
    "ConfigBase",
    "PoolsConfig",
    "apply_overrides",
    "from_toml",
    "harmonic_number",
    "parse_value",
    "tw_per_var",
]


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



# ------------------------------------------------------------------ base


class _OptionalInt:
    """Field kind of ``int | None`` (e.g. BarrierConfig.P: None means "= n")."""


class _OptionalStr:
    """Field kind of ``str | None`` (e.g. BatchConfig.trace: a file path or unset)."""


_KINDS_CACHE: dict[type, dict[str, Any]] = {}


def _kind(tp: Any) -> Any:
    if tp is int or tp is float or tp is bool:
        return tp
    origin = typing.get_origin(tp)
    if origin is Literal:
        return tuple(typing.get_args(tp))
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if args == [int]:
            return _OptionalInt
        if args == [str]:
            return _OptionalStr
    return object


class ConfigBase:
    """Shared machinery of the frozen config dataclasses.

    Subclasses are ``@dataclass(frozen=True, slots=True)`` classes whose fields
    carry a ``doc`` in their metadata; field kinds come from the annotations
    (``int``, ``float``, ``bool``, ``Literal[...]`` choices, ``int | None``; any
    other type is *special*: a subclass handles it through the ``_special_*``
    hooks, e.g. PoolsConfig's ``arrivals``). ``TOML_TABLE`` names the table that
    :meth:`from_toml` reads (flat top-level keys are accepted too).
    """

    __slots__ = ()
    TOML_TABLE: ClassVar[str] = ""

    # ----------------------------------------------------------- kinds
    @classmethod
    def _kinds(cls) -> dict[str, Any]:
        kinds = _KINDS_CACHE.get(cls)
        if kinds is None:
            hints = typing.get_type_hints(cls)
            kinds = {f.name: _kind(hints[f.name]) for f in dataclasses.fields(cls)}
            _KINDS_CACHE[cls] = kinds
        return kinds

    @classmethod
    def _scalar_keys(cls) -> tuple[str, ...]:
        return tuple(k for k, kind in cls._kinds().items() if kind is not object)

    @classmethod
    def _unknown_key(cls, key: str, where: str | None = None) -> ConfigError:
        msg = "unknown key" + (f" in {where}" if where else "")
        return ConfigError(str(key), msg, ", ".join(cls._kinds()))

    def _coerce_fields(self) -> None:
        """Converts every field to its kind (ints, floats, choices) or raises."""
        for name, kind in type(self)._kinds().items():
            v = getattr(self, name)
            if kind is object:
                v2 = self._special_coerce(name, v)
                if v2 is not v:
                    object.__setattr__(self, name, v2)
            elif kind is bool:
                if not isinstance(v, bool):
                    raise ConfigError(name, f"{v!r} is not a boolean", "true, false")
            elif kind is int:
                object.__setattr__(self, name, _as_int(name, v))
            elif kind is _OptionalInt:
                if v is not None:
                    object.__setattr__(self, name, _as_int(name, v))
            elif kind is _OptionalStr:
                if v is not None:
                    if isinstance(v, os.PathLike):
                        v = os.fspath(v)
                    if not isinstance(v, str):
                        raise ConfigError(name, f"{v!r} is not a string", "a string (path)")
                    object.__setattr__(self, name, v)
            elif kind is float:
                object.__setattr__(self, name, _as_float(name, v))
            elif not isinstance(v, str) or v not in kind:
                raise ConfigError(name, f"{v!r} is not a choice", ", ".join(kind))

    # ----------------------------------------------------------- hooks
    def _special_coerce(self, name: str, value: Any) -> Any:  # pragma: no cover - no specials
        return value

    def _special_to_dict(self, name: str, value: Any) -> Any:  # pragma: no cover
        return value

    @classmethod
    def _special_override_error(cls, key: str) -> ConfigError:
        return ConfigError(key, "cannot be set with KEY=VALUE", "a scalar key")

    @classmethod
    def _special_parse(cls, key: str, raw: str) -> Any:
        """The value of a special field from ``KEY=VALUE`` text (most cannot)."""
        raise cls._special_override_error(key)

    @classmethod
    def _special_from_toml(cls, name: str, value: Any, path: str) -> Any:  # pragma: no cover
        return value

    def _special_toml_lines(self, table: bool) -> list[str]:
        return []

    # ------------------------------------------------------- utilities
    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(cls))

    @classmethod
    def field_doc(cls, name: str) -> str:
        for f in dataclasses.fields(cls):
            if f.name == name:
                return f.metadata.get("doc", "")
        raise cls._unknown_key(name)

    @classmethod
    def choices(cls, name: str) -> tuple[str, ...] | None:
        kind = cls._kinds().get(name)
        return kind if isinstance(kind, tuple) else None

    @classmethod
    def defaults(cls) -> dict[str, Any]:
        """The scalar fields of the default config."""
        return cls().scalars()

    def with_(self, **changes: Any):
        """A copy with some fields replaced (unknown keys raise :class:`ConfigError`)."""
        kinds = type(self)._kinds()
        for k in changes:
            if k not in kinds:
                raise type(self)._unknown_key(k)
        return dataclasses.replace(self, **changes)

    def to_dict(self, *, special: bool = True) -> dict[str, Any]:
        """Plain dict of every field (special fields through their hook, or left
        out with ``special=False``), in the form the Rust core accepts."""
        out: dict[str, Any] = {}
        for name, kind in type(self)._kinds().items():
            v = getattr(self, name)
            if kind is object:
                if special:
                    out[name] = None if v is None else self._special_to_dict(name, v)
                continue
            out[name] = v
        return out

    def scalars(self) -> dict[str, Any]:
        """The scalar fields (everything but special fields such as ``arrivals``)."""
        return self.to_dict(special=False)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]):
        kinds = cls._kinds()
        for k in data:
            if k not in kinds:
                raise cls._unknown_key(k)
        return cls(**dict(data))

    @classmethod
    def parse_value(cls, key: str, raw: str) -> Any:
        """Parses the text of a ``KEY=VALUE`` override by the type of ``key``."""
        kind = cls._kinds().get(key)
        if kind is None:
            raise cls._unknown_key(key)
        return _parse_kind(key, kind, raw)

    def apply_overrides(self, items: Iterable[str]):
        """Applies ``KEY=VALUE`` strings, parsing each value by the field's type."""
        cls = type(self)
        kinds = cls._kinds()
        changes: dict[str, Any] = {}
        for item in items:
            key, sep, raw = str(item).partition("=")
            key, raw = key.strip(), raw.strip()
            if not sep or not key:
                raise ConfigError(
                    "--set", f"{item!r} is not KEY=VALUE",
                    "KEY=VALUE with KEY one of " + ", ".join(cls._scalar_keys()),
                )
            if key not in kinds:
                raise cls._unknown_key(key)
            if kinds[key] is object:
                changes[key] = cls._special_parse(key, raw)
                continue
            changes[key] = cls.parse_value(key, raw)
        return self.with_(**changes) if changes else self

    @classmethod
    def from_toml(cls, path: str | os.PathLike[str]):
        """Reads a TOML file holding a ``[TOML_TABLE]`` table, or the keys at top level."""
        path = os.fspath(path)
        name = cls.TOML_TABLE
        try:
            with open(path, "rb") as fh:
                doc = tomllib.load(fh)
        except OSError as e:
            raise ConfigError("config", f"cannot read {path!r}: {e.strerror or e}") from None
        except tomllib.TOMLDecodeError as e:
            raise ConfigError("config", f"{path}: invalid TOML: {e}") from None
        table = doc.get(name, doc)
        if not isinstance(table, dict):
            raise ConfigError("config", f"{path}: {name!r} is not a table", f"a [{name}] table")
        kinds = cls._kinds()
        if name in doc:
            extra = [k for k, v in doc.items() if k != name and not isinstance(v, dict)]
            if extra:
                raise ConfigError(
                    extra[0], f"{path}: key outside the [{name}] table",
                    f"keys inside [{name}]: " + ", ".join(kinds),
                )
        values: dict[str, Any] = {}
        for k, v in table.items():
            if k not in kinds:
                raise cls._unknown_key(k, where=path)
            if kinds[k] is object:
                v = cls._special_from_toml(k, v, path)
            values[k] = v
        return cls(**values)

    def to_toml(self, *, table: bool = True) -> str:
        """TOML text that :meth:`from_toml` reads back to an equal config
        (``None`` values are left out: they are the defaults)."""
        lines = [f"[{self.TOML_TABLE}]"] if table else []
        for k, v in self.scalars().items():
            if v is not None:
                lines.append(f"{k} = {_toml_value(v)}")
        lines += self._special_toml_lines(table)
        return "\n".join(lines) + "\n"

    def summary_label(self) -> str:
        """``key=value`` for every scalar that differs from the default."""
        defaults = type(self).defaults()
        diffs = [f"{k}={v}" for k, v in self.scalars().items() if v != defaults[k]]
        return ", ".join(diffs) or "defaults"

@dataclass(frozen=True, slots=True)
class PoolsConfig(ConfigBase):
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

    TOML_TABLE: ClassVar[str] = "pools"

    # ------------------------------------------------------------------ checks
    def __post_init__(self) -> None:
        self._coerce_fields()
        self._check_ranges()

    def _special_coerce(self, name: str, v: Any) -> Any:  # arrivals
        if v is not None and not isinstance(v, Arrivals):
            if isinstance(v, Mapping):
                return Arrivals.from_mapping(v)
            raise ConfigError("arrivals", f"{type(v).__name__} given",
                              "None or a mapping of equal-length lists")
        return v

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
            from .arrivals import load_arrivals

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


# -------------------------------------------------------------- barrier

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

    n: int = _doc("[n] gang size: threads of the measured gang, one per processor (default 10)",
                  10)
    l: int = _doc(
        "[ℓ] threads per processor: the measured gang plus ℓ−1 competitors (LOAD in §3.3; "
        "default 3)", 3)
    P: int | None = _doc(
        "[P] processors; None means P = n (n <= P required)", None)
    k: int = _doc("[k] iterations of the measured gang (default 50000)", 50000)
    grain: float = _doc(
        "[GRAIN] minimal compute per iteration, ms (eq. 14: 0.00141·GRAIN; default 1)", 1.0)
    var: float = _doc(
        "[VAR] spread of the compute per iteration, ms: each thread draws U(grain, grain+var) "
        "(eq. 14: 0.00141·VAR; default 1)", 1.0)
    dist: Literal["uniform", "exponential", "empirical"] = _doc(
        "per-iteration compute beyond grain + barrier_cost: uniform U(0, var) (§3.3's GRAIN/"
        "VAR; t_w <= (n−1)/(n+1)·t_p) or exponential Exp(mean var) (t_w = var·(H_n − 1) can "
        "exceed t_p, so Figure 9's blocking region can be simulated); or empirical: "
        "barrier_cost + one of `samples`, each equally likely (grain and var unused) "
        "(default uniform)",
        "uniform")
    samples: tuple[float, ...] = _doc(
        "dist = empirical: compute times, ms, drawn with equal probability — any "
        "distribution as a sample (measured times, or numpy draws from any law); a "
        "sequence or array in Python, a list in TOML, `--set samples=0.1,0.3,2` or "
        "`--set samples=@FILE` (numbers separated by commas, spaces or newlines) on "
        "the command line (default empty)", ())
    barrier_cost: float = _doc(
        "barrier cost added to every compute, ms (§2.1 folds it into t_p; §3.3: 0.137 ms on "
        "10 processors; default 0.137)", 0.137)
    tq: float = _doc("[τq] scheduling time quantum, ms (§3.3: 50)", 50.0)
    tcs: float = _doc(
        "[τcs] context-switch cost, ms; must be < τq (Table 1: gang library 0.2, default "
        "library 0.07 + 0.14/ℓ; default 0.2)", 0.2)
    alpha: float = _doc("[α] blocking costs α·τcs of processor time (§4: 1.5)", 1.5)
    wait: Literal["busy", "block", "twophase", "yield"] = _doc(
        "waiting at the barrier: busy (spin), block (give up the processor, α·τcs), "
        "twophase (spin up to spin_limit, then block) or yield (Makbilan's blocking, §3.3: "
        "yield to the tail of the run queue, τcs per yield, again each time it runs while "
        "the barrier is closed; alpha_measured = yields per wait) (default busy)", "busy")
    spin_limit: float = _doc(
        "two-phase: ms of processor time spent spinning before blocking (default 0.1)", 0.1)
    wakeup: Literal["tail", "priority"] = _doc(
        "where a released blocked thread is queued: tail (rigid round robin, eq. 13) or "
        "priority (head of its processor's queue, no preemption: §2.2's smart scheduler)",
        "tail")
    sched: Literal["gang", "local"] = _doc(
        "gang (Ousterhout matrix, §3.2) or local (uncoordinated per-processor round robin)",
        "gang")
    competitors: Literal["same", "compute"] = _doc(
        "the other ℓ−1 threads per processor: same (identical iterative gangs) or compute "
        "(independent compute-bound threads, grouped in gangs of P) (§2.1)", "same")
    skew: bool = _doc(
        "start with skewing threads, U(0, τq) each, so processors start asynchronously (§3.3)",
        True)
    shuffle: bool = _doc(
        "local scheduling: random initial run-queue order per processor (eq. 8 assumes quanta "
        "at random places in the round)", True)
    batches: int = _doc("batches for the batch-means 90% confidence interval (default 20)", 20)
    seed: int = _doc("random seed (default 1)", 1)

    TOML_TABLE: ClassVar[str] = "barrier"

    def __post_init__(self) -> None:
        self._coerce_fields()
        self._check_ranges()

    def _check_ranges(self) -> None:
        def need(ok: bool, name: str, allowed: str, problem: str | None = None) -> None:
            if not ok:
                raise ConfigError(name, problem or f"{getattr(self, name)} is out of range",
                                  allowed)

        need(self.n >= 1, "n", "n >= 1")
        need(self.P is None or self.P >= 1, "P", "P >= 1 (or unset: P = n)")
        procs = self.procs
        need(self.n <= procs, "n", "n <= P",
             f"a gang of {self.n} threads is larger than the machine (P = {procs})")
        need(self.l >= 1, "l", "l >= 1")
        need(self.k >= 1, "k", "k >= 1")
        for name in ("n", "l", "P", "batches"):
            v = getattr(self, name)
            need(v is None or v < 2**32, name, "an integer below 2^32")
        need(self.k < 2**64, "k", "an integer below 2^64")
        for name in ("grain", "var", "barrier_cost", "tcs", "alpha", "spin_limit"):
            need(getattr(self, name) >= 0, name, "a finite number >= 0",
                 f"{getattr(self, name)} is negative")
        if self.dist == "empirical":
            need(len(self.samples) > 0, "samples", "at least one compute time (ms)",
                 "no samples for dist = empirical")
            need(self.t_p() >= 1e-6, "samples", "mean + barrier_cost >= 1e-6",
                 "mean sample + barrier_cost is below one tick (1e-6 ms)")
        else:
            need(not self.samples, "samples", "samples only with dist = empirical",
                 "given but dist is not empirical")
            need(self.grain + self.barrier_cost >= 1e-6, "grain",
                 "grain + barrier_cost >= 1e-6",
                 "grain + barrier_cost is below one tick (1e-6 ms)")
        need(self.tq > 0, "tq", "a finite number > 0")
        need(self.tcs < self.tq, "tcs", "tcs < tq",
             f"a context switch of {self.tcs} is not shorter than the quantum {self.tq}")
        need(self.wait != "yield" or self.tcs >= 1e-6, "tcs", "tcs >= 1e-6 with wait = yield",
             f"{self.tcs} with wait = yield: each yield costs τcs")
        need(self.batches >= 1, "batches", "batches >= 1")
        need(0 <= self.seed < 2**64, "seed", "0 <= seed < 2^64")

    # ------------------------------------------------ samples (special)
    def _special_coerce(self, name: str, v: Any) -> Any:  # samples
        if isinstance(v, str | bytes) or not hasattr(v, "__iter__"):
            raise ConfigError("samples", f"{type(v).__name__} given",
                              "a sequence of numbers (ms)")
        out = tuple(_as_float("samples", x) for x in v)
        for x in out:
            if not (x >= 0 and math.isfinite(x)):
                raise ConfigError("samples", f"{x} is negative or not finite",
                                  "finite numbers >= 0")
        return out

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
                raise ConfigError("samples", f"{t!r} is not a number",
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
        sample mean (empirical)."""
        if self.dist == "empirical":
            return self.barrier_cost + (sum(self.samples) / len(self.samples)
                                        if self.samples else 0.0)
        spread = self.var if self.dist == "exponential" else 0.5 * self.var
        return self.barrier_cost + self.grain + spread

    def t_w(self) -> float:
        """t_w: mean wait at the barrier on dedicated processors (eq. 4),
        E[max of n computes] − mean: var·(n−1)/(2(n+1)) for the uniform,
        var·(H_n − 1) for the exponential (H_n = 1 + 1/2 + ... + 1/n); for the
        empirical sample v_(1) <= ... <= v_(m), sum v_(i)·((i/m)^n − ((i−1)/m)^n)
        minus the mean."""
        if self.dist == "empirical":
            v = sorted(self.samples)
            m = len(v)
            if m == 0:
                return 0.0
            emax = sum(x * (((i + 1) / m) ** self.n - (i / m) ** self.n)
                       for i, x in enumerate(v))
            return emax - sum(v) / m
        return self.var * tw_per_var(self.n, self.dist)

    @classmethod
    def for_tp_tw(cls, tp: float, tw: float, *, dist: str | None = None,
                  **kw: Any) -> BarrierConfig:
        """A config whose t_p, t_w (eqs. 1-4) are ``tp``, ``tw``, with the other
        fields from ``kw`` (``barrier_cost`` defaults to 0.137).

        var = tw / c and grain = tp − barrier_cost − m·var, where c = t_w per
        unit of var (:func:`tw_per_var`: (n−1)/(2(n+1)) uniform, H_n − 1
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
            dist = "uniform" if tw <= tw_per_var(n, "uniform") * 2.0 * (tp - bc) + 1e-12 \
                else "exponential"
        if dist not in ("uniform", "exponential"):
            raise ConfigError("dist", f"{dist!r} is not a choice", "uniform, exponential")
        per_var = tw_per_var(n, dist)
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


# ---------------------------------------------------------------- batch

_BATCH_ALIASES = {"too_wide": {"reject": "error"}, "procs": {"auto": None, "header": None}}


@dataclass(frozen=True, slots=True)
class BatchConfig(ConfigBase):
    """One batch-scheduling run of a workload trace (issue 4; times in seconds).

    Mirrors the keys of ``parsched._core.simulate_batch`` (Rust
    ``parsched_sim::batch::BatchConfig``, ``batch_keys()``) with the Rust
    defaults, plus ``trace``, the SWF file to run (``.swf`` or ``.swf.gz``),
    so that a config alone describes a run (and :func:`parsched.sweep` can take
    it). The loading rules (``procs_rule`` … ``unsorted``) are applied in the
    order cancelled → submit unknown → run time unknown → run time 0 →
    processor count → requested time; a dropped record is counted once, under
    its first reason (see docs/formats/swf.md). ``too_wide`` also accepts
    ``reject`` (= ``error``) and ``procs`` accepts ``auto`` (= None).
    """

    trace: str | None = _doc(
        "SWF trace to run, .swf or .swf.gz (gzip detected by content); relative paths in a "
        "TOML file are relative to that file", None)
    policy: Literal["fcfs", "easy", "conservative", "gang"] = _doc(
        "scheduler: fcfs, easy (EASY backfilling: a reservation for the first queued job), "
        "conservative (a reservation for every queued job) or gang (time slicing on an "
        "Ousterhout matrix with mpl slots, with backfilling) (default easy)", "easy")
    procs: int | None = _doc(
        "processors of the machine; None (or auto): the trace header's MaxProcs, else MaxNodes",
        None)
    kill_on_overrun: bool = _doc(
        "end a job at its requested time if it runs longer (final_state "
        "COMPLETED_WALLTIME_REACHED) (default false)", False)
    bsld_tau: float = _doc(
        "[τ] bounded slowdown threshold, seconds: max(1, response / max(run, τ)) (default 10)",
        10.0)
    procs_rule: Literal["allocated", "requested"] = _doc(
        "job width: allocated (SWF field 5, else field 8) or requested (field 8, else 5); a "
        "fallback is counted as repaired (default allocated)", "allocated")
    missing_requested_time: Literal["runtime", "factor", "drop"] = _doc(
        "requested time (field 9) unknown: runtime (use the run time: exact estimates), factor "
        "(ceil(run time × requested_time_factor)) or drop the job (default runtime)", "runtime")
    requested_time_factor: float = _doc(
        "factor of missing_requested_time=factor, > 0 (default 1)", 1.0)
    missing_runtime: Literal["drop", "requested"] = _doc(
        "run time (field 4) unknown: drop the job, or use the requested time (dropped if that "
        "is unknown too) (default drop)", "drop")
    zero_runtime: Literal["keep", "drop"] = _doc(
        "jobs with run time 0: keep (they start and end at once) or drop (default keep)", "keep")
    cancelled: Literal["keep", "drop"] = _doc(
        "jobs with status 5 (cancelled): drop, or keep if their run time is known "
        "(default drop)", "drop")
    unsorted: Literal["sort", "reject"] = _doc(
        "submit times out of order: sort (stable, trace order among equal times; counted) or "
        "reject (error naming the first line out of order) (default sort)", "sort")
    too_wide: Literal["drop", "clamp", "error"] = _doc(
        "jobs wider than the machine: drop (counted), clamp to the machine width (counted as "
        "repaired) or error (refuse the trace; also spelled reject) (default drop)", "drop")
    mpl: int = _doc("gang: multiprogramming level, slots of the matrix, >= 1 (default 4)", 4)
    quantum: int = _doc("gang: slot quantum, whole seconds >= 1 (default 60)", 60)
    gang_backfill: bool = _doc(
        "gang: later jobs may take free slot space when an earlier one does not fit "
        "(default true; mpl=1 without it is FCFS)", True)
    slot_allocation: Literal["first_fit", "best_fit"] = _doc(
        "gang: the matrix's slot allocation rule (default first_fit)", "first_fit")
    load_factor: float = _doc(
        "multiplies the offered load by dividing interarrival times by it, > 0 (default 1: "
        "the trace as is)", 1.0)
    track_resources: bool = _doc(
        "record which processors each job gets (lowest free first) for "
        "allocated_resources and the Gantt chart (default true)", True)

    TOML_TABLE: ClassVar[str] = "batch"

    def __post_init__(self) -> None:
        for name, aliases in _BATCH_ALIASES.items():
            v = getattr(self, name)
            if isinstance(v, str) and v in aliases:
                object.__setattr__(self, name, aliases[v])
        self._coerce_fields()
        self._check_ranges()

    def _check_ranges(self) -> None:
        def need(ok: bool, name: str, allowed: str, problem: str | None = None) -> None:
            if not ok:
                raise ConfigError(name, problem or f"{getattr(self, name)} is out of range",
                                  allowed)

        need(self.procs is None or 1 <= self.procs < 2**32, "procs",
             "an integer >= 1 (below 2^32), or auto")
        need(self.bsld_tau > 0, "bsld_tau", "a finite number > 0 (seconds)")
        need(self.requested_time_factor > 0, "requested_time_factor", "a finite number > 0")
        need(1 <= self.mpl < 2**32, "mpl", "an integer >= 1")
        need(1 <= self.quantum < 2**63, "quantum", "an integer >= 1 (seconds)")
        need(self.load_factor > 0, "load_factor", "a finite number > 0")

    @classmethod
    def parse_value(cls, key: str, raw: str) -> Any:
        text = raw.strip().strip("'\"")
        if key in _BATCH_ALIASES and text in _BATCH_ALIASES[key]:
            return _BATCH_ALIASES[key][text]
        return ConfigBase.parse_value.__func__(cls, key, raw)  # slots: no super()

    @classmethod
    def from_toml(cls, path: str | os.PathLike[str]) -> BatchConfig:
        cfg = ConfigBase.from_toml.__func__(cls, path)  # slots: no zero-argument super()
        if cfg.trace is not None and not os.path.isabs(cfg.trace):
            base = os.path.dirname(os.path.abspath(os.fspath(path)))
            cfg = cfg.with_(trace=os.path.join(base, cfg.trace))
        return cfg

    def core_dict(self) -> dict[str, Any]:
        """The keys ``parsched._core.simulate_batch`` takes (everything but ``trace``;
        ``procs`` left out when None)."""
        out = self.to_dict()
        out.pop("trace")
        if out["procs"] is None:
            out.pop("procs")
        return out


def harmonic_number(n: int) -> float:
    """H_n = 1 + 1/2 + ... + 1/n."""
    return math.fsum(1.0 / i for i in range(1, n + 1))


def tw_per_var(n: int, dist: str = "uniform") -> float:
    """t_w per unit of ``var`` for a gang of ``n``: E[max of n] − mean of the
    compute spread, (n−1)/(2(n+1)) for U(0, var) and H_n − 1 for Exp(mean var)."""
    if dist == "exponential":
        return harmonic_number(n) - 1.0
    return (n - 1) / (2.0 * (n + 1))


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


def _parse_kind(key: str, kind: Any, raw: str) -> Any:
    if kind is bool:
        v = raw.strip().lower()
        if v in ("true", "1", "yes", "on"):
            return True
        if v in ("false", "0", "no", "off"):
            return False
        raise ConfigError(key, f"{raw!r} is not a boolean", "true, false")
    if kind is _OptionalInt:
        if raw.strip().lower() in ("", "none", "null"):
            return None
        kind = int
    if kind is _OptionalStr:
        return raw.strip().strip("'\"") or None
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


def parse_value(key: str, raw: str) -> Any:
    """Parses the text of a ``KEY=VALUE`` override of a :class:`PoolsConfig` key."""
    return PoolsConfig.parse_value(key, raw)


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(v)
    return json.dumps(str(v))


def apply_overrides(config: ConfigBase, items: Sequence[str]):
    """Module-level spelling of :meth:`ConfigBase.apply_overrides`."""
    return config.apply_overrides(items)


def from_toml(path: str | os.PathLike[str]) -> PoolsConfig:
    """Module-level spelling of :meth:`PoolsConfig.from_toml`."""
    return PoolsConfig.from_toml(path)


def _class_doc(cls: type) -> str:
    lines = [cls.__doc__ or "", "", "Attributes:"]
    for f in dataclasses.fields(cls):
        lines.append(f"    {f.name} (default {f.default!r}): {f.metadata.get('doc', '')}")
    return "\n".join(lines)


PoolsConfig.__doc__ = _class_doc(PoolsConfig)
BarrierConfig.__doc__ = _class_doc(BarrierConfig)
BatchConfig.__doc__ = _class_doc(BatchConfig)
