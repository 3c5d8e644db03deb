"""Seed 000's processor-pool model (Zhou & Brecht 1991): :class:`PoolsConfig`
(the keys of ``parsched._core.simulate_pools``, built from the core's schema,
``parsched._core.schema("pools")``; defaults are the paper's Table 2) and
its ``arrivals``, an explicit job stream (:mod:`.arrivals`)."""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import field
from typing import Any, ClassVar

from ..errors import ConfigError
from .arrivals import Arrivals, check_arrivals, load_arrivals
from .base import (
    ConfigBase,
    _class_doc,
    _toml_value,
)
from .schema import model_class

__all__ = ["Arrivals", "PoolsConfig", "check_arrivals", "from_toml", "parse_value"]

class _PoolsMethods(ConfigBase):
    """What :class:`PoolsConfig` adds to its schema's keys: the warm-up
    scaled with ``jobs``, and the ``arrivals`` job stream."""

    __slots__ = ()
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

    def with_(self, **changes: Any) -> Any:
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



PoolsConfig = model_class(
    "PoolsConfig", "pools", _PoolsMethods, module=__name__,
    extra=[("arrivals", Arrivals | None, field(default=None, metadata={"doc": (
        "explicit job stream (arrival, d[, para_work]) replacing the generated workload")}))],
    doc="""Parameters of one processor-pool simulation (defaults: the paper's Table 2).

    Every field is documented in ``PoolsConfig.field_doc(name)``; symbols in
    brackets are those of Zhou & Brecht, SIGMETRICS 1991 (seed 000). Keys,
    types, choices, ranges, docs and defaults come from the Rust core's
    schema (``parsched._core.schema("pools")``).
    """)
PoolsConfig.__doc__ = _class_doc(PoolsConfig)
