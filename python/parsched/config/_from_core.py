""":class:`CoreConfig`: the base of config classes whose list-valued keys the
core parses and spells back (FCS ``jobs``, the desktop figures'
``schedulers``): they are kept as tuples, read back in the core's spelling.
The classes themselves are built from the core's schemas
(:func:`parsched.config.schema.model_class`).
"""

from __future__ import annotations

import json
from typing import Any, ClassVar

from .. import _core
from .base import ConfigBase, _core_error

__all__ = ["CoreConfig"]


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
