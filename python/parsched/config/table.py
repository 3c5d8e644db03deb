"""The Rust core's table of models (``parsched._core.models_table()``).

Every model's name, Python class, summary keys, sweep keys, headline, seed
key, time unit and documentation page are written once, in its row of the
core's table (``crates/parsched-sim/src/models/mod.rs``); this module reads the
table once and hands its rows to the Python registry
(:mod:`parsched.sim.models`), the result classes, the command line and the
documentation tools.
"""

from __future__ import annotations

from functools import cache
from typing import Any, ClassVar

from .. import _core

__all__ = ["generic_class", "row", "rows", "summary_keys"]


@cache
def _table() -> tuple[dict[str, Any], ...]:
    return tuple(_core.models_table())


def rows(kind: str | None = None) -> tuple[dict[str, Any], ...]:
    """Every row, in documentation order (``kind``: only ``simulated`` or
    ``generator`` models)."""
    return tuple(r for r in _table() if kind is None or r["kind"] == kind)


def row(name: str) -> dict[str, Any]:
    """The row of model ``name``; a ``ValueError`` naming the models for any
    other name."""
    for r in _table():
        if r["name"] == name:
            return r
    raise ValueError(f"no model {name!r}; models: {', '.join(r['name'] for r in _table())}")


def summary_keys(name: str) -> tuple[str, ...]:
    """Model ``name``'s summary keys, in order."""
    return tuple(row(name)["summary_keys"])


@cache
def generic_class(name: str) -> type:
    """The configuration class of model ``name`` built from its schema alone
    (for a model whose class has no module of its own in
    :mod:`parsched.config`): its keys, defaults, docs and checks are the
    core's, its TOML table and ``MODEL`` its name."""
    from .base import ConfigBase, _class_doc
    from .schema import model_class

    r = row(name)

    class _Methods(ConfigBase):
        __slots__ = ()
        TOML_TABLE: ClassVar[str] = name
        MODEL: ClassVar[str] = name

        def __post_init__(self) -> None:
            self._coerce_fields()
            self._validate()

    doc = f"{r['page']['title']}: {r['page']['paper']}.\n\n{r['page']['what']}\n"
    cls = model_class(r["class"], name, _Methods, module="parsched.config", doc=doc)
    cls.__doc__ = _class_doc(cls)
    return cls
