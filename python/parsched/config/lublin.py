"""The Lublin-Feitelson workload generator's keys (:class:`LublinConfig`):
``parsched generate lublin`` and :func:`parsched.generate_lublin`.

``load`` None keeps the model's own arrival process; otherwise interarrival
times are scaled so that the offered load Σ procs·run time / (P · span) is
``load``. The generator itself: ``crates/parsched-sim/src/workloads/lublin.rs``
(docs/formats/swf.md).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..sim.generate import _ALLOWED, LUBLIN_KEYS, check_lublin_key
from .base import ConfigBase, _class_doc, _doc

__all__ = ["LublinConfig"]

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
