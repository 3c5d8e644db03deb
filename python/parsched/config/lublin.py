"""The Lublin-Feitelson workload generator's keys (:class:`LublinConfig`):
``parsched generate lublin`` and :func:`parsched.generate_lublin`.

``load`` None keeps the model's own arrival process; otherwise interarrival
times are scaled so that the offered load Σ procs·run time / (P · span) is
``load``. The generator itself: ``crates/parsched-sim/src/workloads/lublin.rs``
(docs/formats/swf.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, ClassVar

from ..errors import ConfigError
from .base import ConfigBase, _class_doc, _closest, _cut, _doc

__all__ = ["LUBLIN_KEYS", "LublinConfig", "check_lublin_key"]

#: The generator's keys with their defaults.
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


@dataclass(frozen=True, slots=True)
class LublinConfig(ConfigBase):
    """A workload of the Lublin-Feitelson model (JPDC 2003), retargeted to
    ``procs`` processors."""

    procs: int = _doc(_ALLOWED["procs"], LUBLIN_KEYS["procs"])
    jobs: int = _doc("jobs to generate, " + _ALLOWED["jobs"], LUBLIN_KEYS["jobs"])
    load: float | None = _doc("offered load the arrivals are scaled to; " + _ALLOWED["load"],
                              LUBLIN_KEYS["load"])
    seed: int = _doc("the model's random streams; " + _ALLOWED["seed"], LUBLIN_KEYS["seed"])
    include_types: bool = _doc(_ALLOWED["include_types"], LUBLIN_KEYS["include_types"])

    TOML_TABLE: ClassVar[str] = "lublin"
    MODEL: ClassVar[str] = "lublin"

    def __post_init__(self) -> None:
        self._coerce_fields()
        self._validate()

    def _validate(self) -> None:
        for key in LUBLIN_KEYS:
            object.__setattr__(self, key, check_lublin_key(key, getattr(self, key)))


LublinConfig.__doc__ = _class_doc(LublinConfig)
