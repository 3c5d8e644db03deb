"""Seed 003's network of workstations (Nagar, Banerjee, Sivasubramaniam and Das,
SPAA 1999): :class:`CoschedConfig`, the keys of ``parsched._core.simulate_cosched``
(Rust ``ClusterConfig``), built from the core's schema
(``_core.schema("cosched")``). Times carry their unit in the key (``_ms``,
``_us``, ``_ns``, ``_s``).
See docs/policies/cosched.md for the model and docs/formats/config-toml.md for
the ``[cosched]`` table."""

from __future__ import annotations

import contextvars
import os
from collections.abc import Iterable
from typing import Any, ClassVar

from .. import _core
from ..errors import ConfigError, shown
from .base import ConfigBase, _class_doc, _core_error
from .schema import model_class, schema

__all__ = ["APPLICATIONS", "SCHEMES", "CoschedConfig"]

_KEYS = {k["key"]: k for k in schema("cosched")}

#: The ten schemes of the paper's Table 1 (in Table 3's order), then the two
#: references (the core's schema). Names are case-insensitive; ``_`` and ``-``
#: are the same.
SCHEMES = tuple(_KEYS["scheme"]["choices"])

#: The applications a custom ``jobs`` mix can name (the core's schema).
APPLICATIONS = tuple(_KEYS["jobs"]["choices"])

_DOC = """One run of seed 003's cluster: message-passing jobs on workstations whose
local schedulers (Solaris time-sharing) run independently, guided towards
coscheduling by one of Table 1's schemes, or gang / fcfs as references.

Mirrors ``parsched._core.simulate_cosched`` (Rust ``ClusterConfig``): keys,
types, choices, ranges, docs and defaults come from the core's schema
(``parsched._core.schema("cosched")``); every field is documented in
``CoschedConfig.field_doc(name)``. ``scheme`` and ``jobs`` are stored under
the core's spelling (``pb-sb`` becomes ``PB-SB``, ``life12`` ``LIFE12``).
``jobs`` (a tuple of application names) overrides ``workload`` when not empty.
``dispatch_table`` is a file path (the table's text: ``dispadmin -c TS -g``
output, see docs/formats/dispatch-table.md) read when the config is checked
and when it runs; None (also spelled ``solaris`` or ``none``) is the stock
Solaris table.
"""

#: ``dispatch_table`` values that mean the stock Solaris TS table.
_STOCK_TABLE = ("solaris",)

#: While :meth:`CoschedConfig.from_toml` reads a file: its directory (relative
#: ``dispatch_table`` paths are relative to it).
_TOML_DIR: contextvars.ContextVar[str | None] = contextvars.ContextVar(
    "parsched_cosched_toml_dir", default=None)


class _CoschedMethods(ConfigBase):
    """What :class:`CoschedConfig` adds to its schema's keys: ``scheme`` and
    ``jobs`` in the core's spelling, ``jobs`` as a tuple, and
    ``dispatch_table`` as a file (relative to the TOML file naming it)."""

    __slots__ = ()
    TOML_TABLE: ClassVar[str] = "cosched"
    MODEL: ClassVar[str] = "cosched"

    def __post_init__(self) -> None:
        if isinstance(self.boost_to, int) and not isinstance(self.boost_to, bool):
            object.__setattr__(self, "boost_to", str(self.boost_to))  # a level, e.g. 57
        table = self.dispatch_table
        if not isinstance(table, str):
            pass  # (None, or a wrong type: the coercion below says so)
        elif table.strip().lower() in ("", "none", "null", *_STOCK_TABLE):
            object.__setattr__(self, "dispatch_table", None)
        elif _TOML_DIR.get() is not None and not os.path.isabs(table):
            object.__setattr__(self, "dispatch_table", os.path.join(_TOML_DIR.get(), table))
        bsp = self.bsp_jobs
        if isinstance(bsp, str) and bsp.strip().lower() in ("", "none", "null"):
            object.__setattr__(self, "bsp_jobs", None)
        self._coerce_fields()
        # the core's spelling of scheme, jobs and bsp_jobs (and its parse errors)
        try:
            values = _core.config_values(self.MODEL, self._core_dict())
        except _core.ConfigError as e:
            raise _core_error(e) from None
        object.__setattr__(self, "scheme", values["scheme"])
        object.__setattr__(self, "bsp_jobs", values.get("bsp_jobs"))
        self._validate()

    # ------------------------------------------------------------ the core
    @classmethod
    def from_toml(cls, path: str | os.PathLike[str]) -> Any:
        """Reads a ``[cosched]`` table (or flat keys); a relative ``dispatch_table``
        path is relative to the TOML file."""
        token = _TOML_DIR.set(os.path.dirname(os.path.abspath(os.fspath(path))))
        try:
            return ConfigBase.from_toml.__func__(cls, path)  # slots: no zero-argument super()
        finally:
            _TOML_DIR.reset(token)

    def core_dict(self) -> dict[str, Any]:
        """The keys ``parsched._core.simulate_cosched`` takes: every field, with
        ``dispatch_table`` as the table's text (the file read now; a missing or
        unreadable file raises :class:`ConfigError` naming ``dispatch_table``)."""
        out = self.to_dict()
        out["dispatch_table"] = self.dispatch_table_text()
        return out

    def _core_dict(self) -> dict[str, Any]:
        return self.core_dict()

    def dispatch_table_text(self) -> str | None:
        """The text of :attr:`dispatch_table` (None: the stock Solaris table)."""
        path = self.dispatch_table
        if path is None or path.strip().lower() in _STOCK_TABLE:
            return None
        try:
            with open(path, encoding="utf-8") as fh:
                return fh.read()
        except (OSError, UnicodeDecodeError) as e:
            why = getattr(e, "strerror", None) or str(e)
            raise ConfigError("dispatch_table", f"cannot read {path!r}: {why}",
                              "a readable file with the table's text "
                              "(docs/formats/dispatch-table.md), or solaris") from None

    def core_values(self) -> dict[str, Any]:
        """Every key as the core reads it back (``config_values``): the stock
        table as None, a table file as its ``dispadmin`` text."""
        try:
            return dict(_core.config_values(self.MODEL, self.core_dict()))
        except _core.ConfigError as e:
            raise _core_error(e) from None

    def label(self) -> str:
        """Short description: scheme, the mix, and the other differences from
        the defaults (``key=value``)."""
        mix = ",".join(self.jobs) if self.jobs else f"W{self.workload}"
        skip = {"scheme", "workload"}
        defaults = type(self).defaults()
        diffs = [f"{k}={v}" for k, v in self.scalars().items()
                 if k not in skip and v != defaults[k]]
        return f"{self.scheme} on {mix}" + (f" ({', '.join(diffs)})" if diffs else "")


def _job_names(v: Any) -> tuple[str, ...]:
    if v is None:
        return ()
    if isinstance(v, str):
        items: Iterable[Any] = v.split(",")
    elif isinstance(v, bytes) or not hasattr(v, "__iter__"):
        raise ConfigError("jobs", f"{type(v).__name__} given",
                          f"a sequence of application names ({', '.join(APPLICATIONS)})")
    else:
        items = v
    out = []
    for x in items:
        if not isinstance(x, str):
            raise ConfigError("jobs", f"{shown(x)} is not a name", ", ".join(APPLICATIONS))
        x = x.strip().strip("'\"")
        if x:
            out.append(x)
    return tuple(out)


CoschedConfig = model_class("CoschedConfig", "cosched", _CoschedMethods, module=__name__,
                            doc=_DOC)
CoschedConfig.__doc__ = _class_doc(CoschedConfig)
