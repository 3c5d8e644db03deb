"""The Lublin–Feitelson workload generator (JPDC 2003; ``parsched generate
lublin``): :class:`LublinConfig`, the keys of ``parsched._core.generate_lublin``
(Rust ``LublinConfig``), built from the core's schema
(``parsched._core.schema("lublin")``)."""

from __future__ import annotations

from typing import ClassVar

from .base import ConfigBase, _class_doc
from .schema import model_class

__all__ = ["LublinConfig"]

_DOC = """The Lublin–Feitelson generator's keys (defaults: the published model,
128 processors, 10,000 jobs, the model's own arrivals).

Keys, types, ranges, docs and defaults come from the Rust core's schema
(``parsched._core.schema("lublin")``); every field is documented in
``LublinConfig.field_doc(name)``. :func:`parsched.generate_lublin` takes them
as keyword arguments (``generate_lublin(**cfg.to_dict())``).
"""


class _LublinMethods(ConfigBase):
    """What :class:`LublinConfig` adds to its schema's keys: nothing but its
    model's name and TOML table."""

    __slots__ = ()
    TOML_TABLE: ClassVar[str] = "lublin"
    MODEL: ClassVar[str] = "lublin"

    def __post_init__(self) -> None:
        self._coerce_fields()
        self._validate()


LublinConfig = model_class("LublinConfig", "lublin", _LublinMethods, module=__name__,
                           doc=_DOC)
LublinConfig.__doc__ = _class_doc(LublinConfig)
