"""Seed 002's parallel desktop (Frachtenberg, "Process Scheduling for the
Parallel Desktop"): :class:`FcsConfig`, the keys of
``parsched._core.simulate_fcs`` (Rust ``DesktopConfig``), built from the
core's schema (``parsched._core.schema("fcs")``): Table 1's jobs under one of
the five schedulers, flexible coscheduling's classifier, and the cluster the
model lowers onto. Times carry their unit in the key."""

from __future__ import annotations

from typing import ClassVar

from .base import ConfigBase, _class_doc
from .schema import model_class

__all__ = ["FcsConfig"]

_DOC = """One run of seed 002's Table 1 model (defaults: the paper's values).

Keys, types, choices, ranges, docs and defaults come from the Rust core's
schema (``parsched._core.schema("fcs")``); every field is documented in
``FcsConfig.field_doc(name)``. ``jobs`` is the per-process compute
multipliers as text, jobs separated by ``;`` (``1,1,2,2;2,2,1,1;1,1,1,1``).
:func:`parsched.simulate_fcs` runs ``cfg.to_dict()``.
"""


class _FcsMethods(ConfigBase):
    """What :class:`FcsConfig` adds to its schema's keys: nothing but its
    model's name and TOML table."""

    __slots__ = ()
    TOML_TABLE: ClassVar[str] = "fcs"
    MODEL: ClassVar[str] = "fcs"

    def __post_init__(self) -> None:
        self._coerce_fields()
        self._validate()


FcsConfig = model_class("FcsConfig", "fcs", _FcsMethods, module=__name__, doc=_DOC)
FcsConfig.__doc__ = _class_doc(FcsConfig)
