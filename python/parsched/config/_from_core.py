"""Config classes made from the core's keys and defaults (:func:`core_config`).

For the models whose keys the Rust core lists but whose Python class has no
field of its own to declare (``fcs``, ``fcs_figure``, ``regions``): the
fields, their order and their defaults are ``_core.config_values(model)``;
each field's type follows its default (a ``None`` default takes the type
given in ``optional``); list-valued keys (FCS ``jobs``, the figures'
``schedulers``) are kept as tuples and read back in the core's spelling. What
is valid is the core's ``validate`` alone: no choice list or range here.
"""

from __future__ import annotations

import dataclasses
import json
from typing import Any, ClassVar

from .. import _core
from .base import ConfigBase, _class_doc, _core_error

__all__ = ["CoreConfig", "core_config"]


def _freeze(v: Any) -> Any:
    if isinstance(v, (list, tuple)):
        return tuple(_freeze(x) for x in v)
    return v


def _thaw(v: Any) -> Any:
    if isinstance(v, tuple):
        return [_thaw(x) for x in v]
    return v


class CoreConfig(ConfigBase):
    """A :class:`ConfigBase` whose list-valued keys the core parses (text such
    as ``1,1,2,2;2,2,1,1`` or a list) and spells back as a list."""

    __slots__ = ()
    #: The keys whose values are lists.
    LISTS: ClassVar[tuple[str, ...]] = ()

    def __post_init__(self) -> None:
        self._coerce_fields()
        if self.LISTS:
            try:
                values = _core.config_values(self.MODEL, self._core_dict())
            except _core.ConfigError as e:
                raise _core_error(e) from None
            for name in self.LISTS:
                object.__setattr__(self, name, _freeze(values[name]))
        self._validate()

    def _special_coerce(self, name: str, value: Any) -> Any:
        return value if isinstance(value, str) else _freeze(value)

    def _special_to_dict(self, name: str, value: Any) -> Any:
        return _thaw(value)

    @classmethod
    def _special_parse(cls, key: str, raw: str) -> Any:
        return raw.strip().strip("'\"")

    @classmethod
    def _special_from_toml(cls, name: str, value: Any, path: str) -> Any:
        return value

    def _special_toml_lines(self, table: bool) -> list[str]:
        return [f"{k} = {json.dumps(_thaw(getattr(self, k)))}" for k in self.LISTS]


def core_config(name: str, model: str, doc: str, *, where: str,
                optional: dict[str, type] | None = None) -> type[CoreConfig]:
    """A frozen config dataclass ``name`` for the core's ``model``: one field
    per key of ``_core.config_values(model)`` with the core's default;
    ``where`` is the document that describes the keys."""
    optional = optional or {}
    fields: list[tuple[str, Any, Any]] = []
    lists: list[str] = []
    for key, default in _core.config_values(model).items():
        if isinstance(default, list):
            tp: Any = tuple
            lists.append(key)
            default = _freeze(default)
        elif default is None:
            tp = optional.get(key, float) | None
        else:
            tp = type(default)
        meta = {"doc": f"see {where}"}
        fields.append((key, tp, dataclasses.field(default=default, metadata=meta)))
    cls = dataclasses.make_dataclass(
        name, fields, bases=(CoreConfig,), frozen=True, slots=True,
        namespace={"MODEL": model, "TOML_TABLE": model, "LISTS": tuple(lists),
                   "__doc__": doc, "__module__": f"parsched.config.{model.split('_')[0]}"})
    cls.__doc__ = _class_doc(cls)
    return cls
