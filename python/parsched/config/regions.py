"""Seed 004's region scheduling on the simulated machine (Lee & Schwan, ASPLOS
2012): :class:`RegionsConfig`, the keys of ``parsched._core.simulate_regions``
(Rust ``RegionsConfig``), built from the core's schema
(``parsched._core.schema("regions")``)."""

from __future__ import annotations

from typing import ClassVar

from .base import ConfigBase, _class_doc
from .schema import model_class

__all__ = ["RegionsConfig"]

_DOC = """One run of seed 004's region machine: the same work under the standard
scheduler and under region scheduling.

Keys, types, choices, ranges, docs and defaults come from the Rust core's
schema (``parsched._core.schema("regions")``); every field is documented in
``RegionsConfig.field_doc(name)``. :func:`parsched.simulate_regions` runs
``cfg.to_dict()``.
"""


class _RegionsMethods(ConfigBase):
    """What :class:`RegionsConfig` adds to its schema's keys: nothing but its
    model's name and TOML table."""

    __slots__ = ()
    TOML_TABLE: ClassVar[str] = "regions"
    MODEL: ClassVar[str] = "regions"

    def __post_init__(self) -> None:
        self._coerce_fields()
        self._validate()


RegionsConfig = model_class("RegionsConfig", "regions", _RegionsMethods, module=__name__,
                            doc=_DOC)
RegionsConfig.__doc__ = _class_doc(RegionsConfig)
