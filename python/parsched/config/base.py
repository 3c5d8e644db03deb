"""Shared machinery of parsched's typed configurations (:class:`ConfigBase`).

The Rust core is the one authority on each model's keys, defaults and valid
ranges: :func:`core_defaults` reads a model's defaults from it (the dataclass
defaults of the config classes are taken from there at import time), and
:meth:`ConfigBase._validate` hands a config to the core's ``validate``, so
that an invalid value raises :class:`ConfigError` with the core's one-line
``FIELD: problem; allowed: ...`` message before any work starts. Python only
converts types (ints, floats, choices) and reads TOML and ``KEY=VALUE`` text.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import re
import sys
import types
import typing
from collections.abc import Iterable, Mapping
from dataclasses import field
from typing import Any, ClassVar, Literal

from .. import _core
from ..errors import ConfigError, shown

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - exercised on Python 3.10 only
    import tomli as tomllib

__all__ = ["ConfigBase", "core_defaults"]


def core_defaults(model: str) -> dict[str, Any]:
    """The Rust core's default value of every key of ``model`` (a model of the
    core's table, :mod:`parsched.config.table`); lists as tuples."""
    return {k: tuple(v) if isinstance(v, list) else v
            for k, v in _core.config_values(model).items()}


def _core_error(e: Exception) -> ConfigError:
    field_ = getattr(e, "field", None)
    if field_ is None:
        return ConfigError.from_message(str(e))
    return ConfigError(field_, e.message, e.allowed or None)


def _doc(text: str, default: Any) -> Any:
    return field(default=default, metadata={"doc": text})



# ------------------------------------------------------------------ base


class _OptionalInt:
    """Field kind of ``int | None`` (e.g. BarrierConfig.P: None means "= n")."""


class _OptionalStr:
    """Field kind of ``str | None`` (e.g. BatchConfig.trace: a file path or unset)."""


class _OptionalFloat:
    """Field kind of ``float | None`` (e.g. CoschedConfig.spin_time_us: None means
    "each application's own")."""


class _Seq:
    """Field kind of a list-valued key of the schema (``list``: numbers,
    ``names``, ``table``: rows of numbers): held as a tuple (of tuples), given
    as a sequence or as text (``1,2,3``, ``LU,MG``, ``1,1;2,2``, ``@FILE``),
    parsed and spelled back by the core."""

    def __init__(self, type_: str) -> None:
        self.type = type_

    def __repr__(self) -> str:
        return f"<list kind {self.type}>"


_SEQ = {t: _Seq(t) for t in ("list", "names", "table")}


def _freeze(v: Any) -> Any:
    if isinstance(v, (list, tuple)):
        return tuple(_freeze(x) for x in v)
    return v


def _thaw(v: Any) -> Any:
    if isinstance(v, tuple):
        return [_thaw(x) for x in v]
    return v


_KINDS_CACHE: dict[type, dict[str, Any]] = {}


def _kind(tp: Any) -> Any:
    if tp is int or tp is float or tp is bool or tp is str:
        return tp
    origin = typing.get_origin(tp)
    if origin is Literal:
        return tuple(typing.get_args(tp))
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(tp) if a is not type(None)]
        if args == [int]:
            return _OptionalInt
        if args == [str]:
            return _OptionalStr
        if args == [float]:
            return _OptionalFloat
    return object


class ConfigBase:
    """Shared machinery of the frozen config dataclasses.

    Subclasses are ``@dataclass(frozen=True, slots=True)`` classes whose fields
    carry a ``doc`` in their metadata; field kinds come from the annotations
    (``int``, ``float``, ``bool``, ``Literal[...]`` choices, ``int | None``; any
    other type is *special*: a subclass handles it through the ``_special_*``
    hooks, e.g. PoolsConfig's ``arrivals``). ``TOML_TABLE`` names the table that
    :meth:`from_toml` reads (flat top-level keys are accepted too).
    """

    __slots__ = ()
    TOML_TABLE: ClassVar[str] = ""
    #: The core's name of the model (``parsched._core.validate_config``).
    MODEL: ClassVar[str] = ""
    #: Other spellings of values, ``{key: {alias: value}}`` (None: unset); a
    #: class built from a schema takes them from it.
    _ALIASES: ClassVar[dict[str, dict[str, Any]]] = {}
    #: Choice keys matched ignoring case, with ``_`` and ``-`` the same.
    _FOLD: ClassVar[frozenset[str]] = frozenset()

    def _core_dict(self) -> dict[str, Any]:
        """The keys the core takes (every field by default)."""
        return self.to_dict()

    def _validate(self) -> None:
        """Checks the config with the core's ``validate`` (the one definition of
        what is valid); raises :class:`ConfigError` naming the field."""
        try:
            _core.validate_config(self.MODEL, self._core_dict())
        except _core.ConfigError as e:
            raise _core_error(e) from None

    # ----------------------------------------------------------- kinds
    @classmethod
    def _kinds(cls) -> dict[str, Any]:
        kinds = _KINDS_CACHE.get(cls)
        if kinds is None:
            hints = typing.get_type_hints(cls)
            kinds = {f.name: _SEQ.get(f.metadata.get("schema", {}).get("type"))
                     or _kind(hints[f.name]) for f in dataclasses.fields(cls)}
            _KINDS_CACHE[cls] = kinds
        return kinds

    @classmethod
    def _scalar_keys(cls) -> tuple[str, ...]:
        return tuple(k for k, kind in cls._kinds().items() if _scalar(kind))

    @classmethod
    def _unknown_key(cls, key: str, where: str | None = None) -> ConfigError:
        msg = "unknown key" + (f" in {where}" if where else "")
        exact = [o.TOML_TABLE for o in _models() if o is not cls and str(key) in o._kinds()]
        near = None if exact else _closest(str(key), list(cls._kinds()))
        other = (exact[0], str(key)) if exact else (
            None if near else _model_with_key(str(key), cls))
        if near:
            msg += f" (did you mean {near}?)"
        elif other:
            msg += f" ({other[1]} is a key of `parsched simulate {other[0]}`)"
        return ConfigError(_cut(str(key)), msg, ", ".join(cls._kinds()))

    def _coerce_fields(self) -> None:
        """Converts every field to its kind (ints, floats, choices) or raises."""
        cls = type(self)
        for name, aliases in cls._ALIASES.items():
            v = getattr(self, name)
            if isinstance(v, str) and _spelled(cls, name, v) in aliases:
                object.__setattr__(self, name, aliases[_spelled(cls, name, v)])
        for name in cls._FOLD:
            v = getattr(self, name)
            if isinstance(v, str):
                object.__setattr__(self, name, _spelled(cls, name, v))
        seqs = False
        for name, kind in type(self)._kinds().items():
            v = getattr(self, name)
            if isinstance(kind, _Seq):
                seqs = True
                if v is not None and not isinstance(v, str):
                    if isinstance(v, bytes) or not hasattr(v, "__iter__"):
                        raise ConfigError(name, f"{type(v).__name__} given",
                                          _SEQ_ALLOWED[kind.type])
                    object.__setattr__(self, name, _freeze(list(v)))
            elif kind is object:
                v2 = self._special_coerce(name, v)
                if v2 is not v:
                    object.__setattr__(self, name, v2)
            elif kind is bool:
                if not isinstance(v, bool):
                    raise ConfigError(name, f"{shown(v)} is not a boolean", "true, false")
            elif kind is int:
                object.__setattr__(self, name, _as_int(name, v))
            elif kind is _OptionalInt:
                if v is not None:
                    object.__setattr__(self, name, _as_int(name, v))
            elif kind is _OptionalStr:
                if v is not None:
                    if isinstance(v, os.PathLike):
                        v = os.fspath(v)
                    if not isinstance(v, str):
                        raise ConfigError(name, f"{shown(v)} is not a string", "a string (path)")
                    object.__setattr__(self, name, v)
            elif kind is float:
                object.__setattr__(self, name, _as_float(name, v))
            elif kind is _OptionalFloat:
                if v is not None:
                    object.__setattr__(self, name, _as_float(name, v))
            elif kind is str or name in cls._FOLD:  # a folded choice: the core judges it
                if not isinstance(v, str):
                    raise ConfigError(name, f"{shown(v)} is not a string", "a name")
            elif not isinstance(v, str) or v not in kind:
                raise ConfigError(name, f"{shown(v)} is not a choice", ", ".join(kind))
        if seqs:
            self._spell_seqs()

    def _spell_seqs(self) -> None:
        """The list-valued keys as the core reads them (its parse of text, its
        spelling of names; its errors naming the key)."""
        try:
            values = _core.config_values(self.MODEL, self._core_dict())
        except _core.ConfigError as e:
            raise _core_error(e) from None
        for name, kind in type(self)._kinds().items():
            if isinstance(kind, _Seq):
                object.__setattr__(self, name, _freeze(values[name]))

    # ----------------------------------------------------------- hooks
    def _special_coerce(self, name: str, value: Any) -> Any:  # pragma: no cover - no specials
        return value

    def _special_to_dict(self, name: str, value: Any) -> Any:  # pragma: no cover
        return value

    @classmethod
    def _special_override_error(cls, key: str) -> ConfigError:
        return ConfigError(key, "cannot be set with KEY=VALUE", "a scalar key")

    @classmethod
    def _special_parse(cls, key: str, raw: str) -> Any:
        """The value of a special field from ``KEY=VALUE`` text (most cannot)."""
        raise cls._special_override_error(key)

    @classmethod
    def _special_from_toml(cls, name: str, value: Any, path: str) -> Any:  # pragma: no cover
        return value

    def _special_toml_lines(self, table: bool) -> list[str]:
        return []

    # ------------------------------------------------------- utilities
    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(cls))

    @classmethod
    def field_doc(cls, name: str) -> str:
        """The field's documentation, ending with its default (the core's)."""
        for f in dataclasses.fields(cls):
            if f.name == name:
                return f"{f.metadata.get('doc', '')} (default {_shown(f.default)})"
        raise cls._unknown_key(name)

    @classmethod
    def choices(cls, name: str) -> tuple[str, ...] | None:
        kind = cls._kinds().get(name)
        return kind if isinstance(kind, tuple) else None

    @classmethod
    def defaults(cls) -> dict[str, Any]:
        """The scalar fields of the default config."""
        return cls().scalars()

    def with_(self, **changes: Any):
        """A copy with some fields replaced (unknown keys raise :class:`ConfigError`)."""
        kinds = type(self)._kinds()
        for k in changes:
            if k not in kinds:
                raise type(self)._unknown_key(k)
        return dataclasses.replace(self, **changes)

    def to_dict(self, *, special: bool = True) -> dict[str, Any]:
        """Plain dict of every field (special fields through their hook, or left
        out with ``special=False``), in the form the Rust core accepts."""
        out: dict[str, Any] = {}
        for name, kind in type(self)._kinds().items():
            v = getattr(self, name)
            if isinstance(kind, _Seq):
                out[name] = _thaw(v)
                continue
            if kind is object:
                if special:
                    out[name] = None if v is None else self._special_to_dict(name, v)
                continue
            out[name] = v
        return out

    def scalars(self) -> dict[str, Any]:
        """The scalar fields (everything but lists and special fields such as
        ``arrivals``)."""
        kinds = type(self)._kinds()
        return {k: v for k, v in self.to_dict(special=False).items() if _scalar(kinds[k])}

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]):
        kinds = cls._kinds()
        for k in data:
            if k not in kinds:
                raise cls._unknown_key(k)
        return cls(**dict(data))

    @classmethod
    def parse_value(cls, key: str, raw: str) -> Any:
        """Parses the text of a ``KEY=VALUE`` override by the type of ``key``."""
        kind = cls._kinds().get(key)
        if kind is None:
            raise cls._unknown_key(key)
        text = _spelled(cls, key, raw.strip().strip("'\""))
        aliases = cls._ALIASES.get(key, {})
        if text in aliases:
            return aliases[text]
        if key in cls._FOLD:
            return text  # any case: the core's parser judges the name
        if isinstance(kind, _Seq):
            return _seq_text(key, raw)  # the core parses it
        try:
            return _parse_kind(key, kind, raw)
        except ConfigError as e:
            # "tq=50ms": say that times are plain numbers in the key's unit
            m = _NUMBER_WITH_UNIT.fullmatch(raw.strip())
            if m and kind in (int, float, _OptionalInt, _OptionalFloat):
                unit = _unit_of(cls.field_doc(key)) or _unit_of(key)
                where = f" in {unit}" if unit else " in the key's unit (see --help)"
                raise ConfigError(
                    key, f"{shown(raw)} has a unit; values are plain numbers{where}",
                    f"e.g. {key}={m.group(1)}") from None
            raise e from None

    def apply_overrides(self, items: Iterable[str]):
        """Applies ``KEY=VALUE`` strings, parsing each value by the field's type."""
        cls = type(self)
        kinds = cls._kinds()
        changes: dict[str, Any] = {}
        for item in items:
            key, sep, raw = str(item).partition("=")
            key, raw = key.strip(), raw.strip()
            if not sep or not key:
                raise ConfigError(
                    "--set", f"{shown(item)} is not KEY=VALUE",
                    "KEY=VALUE with KEY one of " + ", ".join(cls._scalar_keys()),
                )
            if key not in kinds:
                raise cls._unknown_key(key)
            if kinds[key] is object:
                changes[key] = cls._special_parse(key, raw)
                continue
            changes[key] = cls.parse_value(key, raw)
        return self.with_(**changes) if changes else self

    @classmethod
    def from_toml(cls, path: str | os.PathLike[str]):
        """Reads a TOML file holding a ``[TOML_TABLE]`` table, or the keys at top level."""
        path = os.fspath(path)
        name = cls.TOML_TABLE
        doc = read_toml(path, "config")
        if name not in doc:
            for other in _models():
                if name != other.TOML_TABLE and other.TOML_TABLE in doc:
                    raise ConfigError(
                        "config", f"{path} has a [{other.TOML_TABLE}] table, not [{name}]",
                        f"`parsched simulate {other.TOML_TABLE} --config {path}`, or a "
                        f"[{name}] table")
        table = doc.get(name, doc)
        if not isinstance(table, dict):
            raise ConfigError("config", f"{path}: {name!r} is not a table", f"a [{name}] table")
        kinds = cls._kinds()
        if name in doc:
            extra = [k for k, v in doc.items() if k != name and not isinstance(v, dict)]
            if extra:
                raise ConfigError(
                    extra[0], f"{path}: key outside the [{name}] table",
                    f"keys inside [{name}]: " + ", ".join(kinds),
                )
        values: dict[str, Any] = {}
        for k, v in table.items():
            if k not in kinds:
                raise cls._unknown_key(k, where=path)
            if isinstance(kinds[k], _Seq) and not isinstance(v, (list, str)):
                raise ConfigError(k, f"{path}: {type(v).__name__} given",
                                  _SEQ_ALLOWED[kinds[k].type])
            if kinds[k] is object:
                v = cls._special_from_toml(k, v, path)
            values[k] = v
        return cls(**values)

    def to_toml(self, *, table: bool = True) -> str:
        """TOML text that :meth:`from_toml` reads back to an equal config
        (``None`` values are left out: they are the defaults)."""
        lines = [f"[{self.TOML_TABLE}]"] if table else []
        for k, v in self.scalars().items():
            if v is not None:
                lines.append(f"{k} = {_toml_value(v)}")
        for k, kind in type(self)._kinds().items():
            v = getattr(self, k)
            if isinstance(kind, _Seq) and v:
                lines.append(f"{k} = {_toml_array(v)}")
        lines += self._special_toml_lines(table)
        return "\n".join(lines) + "\n"

    def summary_label(self) -> str:
        """``key=value`` for every scalar that differs from the default."""
        defaults = type(self).defaults()
        diffs = [f"{k}={v}" for k, v in self.scalars().items() if v != defaults[k]]
        return ", ".join(diffs) or "defaults"


def _fold(text: str) -> str:
    return text.strip().upper().replace("_", "-")


def _spelled(cls: type, key: str, text: str) -> str:
    """``text`` as the schema spells it: for a choice key matched ignoring case
    (``_FOLD``), the choice or alias it folds to; otherwise ``text`` itself."""
    if key not in cls._FOLD:
        return text.strip()
    kind = cls._kinds().get(key)
    names = [*(kind if isinstance(kind, tuple) else ()), *cls._ALIASES.get(key, {})]
    return next((n for n in names if _fold(n) == _fold(text)), text)


def _as_int(name: str, v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, int):
        if isinstance(v, float) and v.is_integer():
            return int(v)
        try:  # numpy integers
            import numpy as np

            if isinstance(v, np.integer):
                return int(v)
        except ImportError:  # pragma: no cover
            pass
        raise ConfigError(name, f"{shown(v)} is not an integer", "an integer")
    return int(v)


def _as_float(name: str, v: Any) -> float:
    if isinstance(v, bool):
        raise ConfigError(name, f"{shown(v)} is not a number", "a finite number")
    try:
        x = float(v)
    except (TypeError, ValueError):
        raise ConfigError(name, f"{shown(v)} is not a number", "a finite number") from None
    if not math.isfinite(x):
        raise ConfigError(name, f"{shown(v)} is not finite", "a finite number")
    return x


_NUMBER_WITH_UNIT = re.compile(r"([-+]?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?)\s*([a-zA-Zµ%]+)")


def _unit_of(text: str) -> str | None:
    m = re.search(r"(?:\b|_)(ms|us|µs|ns|s)\b", text)
    return m.group(1) if m else None


def _cut(text: str, n: int = 60) -> str:
    """At most ``n`` characters of a user's value, for error messages."""
    return text if len(text) <= n else text[: n - 1] + "…"


def _closest(key: str, keys: list[str]) -> str | None:
    import difflib

    for k in keys:  # D for d, Scheme for scheme
        if k.lower() == key.lower():
            return k
    near = difflib.get_close_matches(key, keys, n=1, cutoff=0.7)
    return near[0] if near else None


def _models() -> list[type[ConfigBase]]:
    """Every model's config class (the subclasses with a TOML table)."""
    out, todo = [], list(ConfigBase.__subclasses__())
    while todo:
        c = todo.pop()
        todo.extend(c.__subclasses__())
        if c.TOML_TABLE and dataclasses.is_dataclass(c):
            out.append(c)
    return sorted(out, key=lambda c: c.TOML_TABLE)


def _model_with_key(key: str, cls: type) -> tuple[str, str] | None:
    """(model, key) of another model that has ``key`` or one close to it."""
    others = [o for o in _models() if o is not cls]
    for other in others:
        if key in other._kinds():
            return other.TOML_TABLE, key
    for other in others:
        near = _closest(key, list(other._kinds()))
        if near:
            return other.TOML_TABLE, near
    return None


def _parse_kind(key: str, kind: Any, raw: str) -> Any:
    if kind is bool:
        v = raw.strip().lower()
        if v in ("true", "1", "yes", "on"):
            return True
        if v in ("false", "0", "no", "off"):
            return False
        raise ConfigError(key, f"{shown(raw)} is not a boolean", "true, false")
    if kind is _OptionalInt:
        if raw.strip().lower() in ("", "none", "null"):
            return None
        kind = int
    if kind is _OptionalStr:
        return raw.strip().strip("'\"") or None
    if kind is str:
        return raw.strip().strip("'\"")
    if kind is _OptionalFloat:
        if raw.strip().lower() in ("", "none", "null"):
            return None
        kind = float
    if kind is int:
        try:
            return int(raw)
        except ValueError:
            try:
                x = float(raw)
            except ValueError:
                x = math.nan
            if math.isfinite(x) and x.is_integer():
                return int(x)
            raise ConfigError(key, f"{shown(raw)} is not an integer", "an integer") from None
    if kind is float:
        text = raw[:-1] if raw.endswith("%") else raw
        try:
            x = float(text)
        except ValueError:
            raise ConfigError(key, f"{shown(raw)} is not a number", "a finite number") from None
        if not math.isfinite(x):
            raise ConfigError(key, f"{shown(raw)} is not finite", "a finite number")
        return x / 100.0 if raw.endswith("%") else x
    if isinstance(kind, tuple):
        v = raw.strip().strip("'\"")
        if v not in kind:
            raise ConfigError(key, f"{shown(raw)} is not a choice", ", ".join(kind))
        return v
    raise ConfigError(key, "cannot be set with KEY=VALUE", "a scalar key")



def _scalar(kind: Any) -> bool:
    return kind is not object and not isinstance(kind, _Seq)


_SEQ_ALLOWED = {
    "list": "a sequence of numbers, or their text (1,2,3)",
    "names": "a sequence of names, or their text (a,b)",
    "table": "rows of numbers (a sequence of sequences), or their text (1,1;2,2)",
}


def _seq_text(key: str, raw: str) -> str:
    """The text of a list-valued key from the command line, for the core to
    parse: ``@FILE`` is the file's text; a list literal as printed
    (``[a, b]``) its items."""
    text = raw.strip().strip("'\"")
    if text.startswith("@"):
        try:
            with open(text[1:]) as fh:
                text = fh.read().strip()
        except OSError as e:
            raise ConfigError(key, f"cannot read {text[1:]!r}: {e.strerror or e}",
                              "@FILE holding the list's text") from None
    if text.startswith("[") and text.endswith("]") and "[" not in text[1:]:
        text = text[1:-1]
    return text.replace("'", "").replace('"', "")


def _toml_array(v: Any) -> str:
    if isinstance(v, tuple):
        return "[" + ", ".join(_toml_array(x) for x in v) + "]"
    return _toml_value(float(v) if isinstance(v, int) and not isinstance(v, bool) else v)


def _toml_value(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return repr(v)
    return json.dumps(str(v))



def _shown(v: Any) -> str:
    """A default as the docs show it: None as unset, () as empty."""
    if v is None:
        return "unset"
    if v == ():
        return "empty"
    return _toml_value(v) if isinstance(v, (bool, int, float)) else str(v)


def _class_doc(cls: type) -> str:
    lines = [cls.__doc__ or "", "", "Attributes:"]
    for f in dataclasses.fields(cls):
        lines.append(f"    {f.name} (default {f.default!r}): {f.metadata.get('doc', '')}")
    return "\n".join(lines)


def read_toml(path: str | os.PathLike[str], field: str,
              allowed: str = "a TOML file") -> dict[str, Any]:
    """The document of a TOML file, for every file the package reads its
    input from (configs, sweep specs, job files). A missing or unreadable
    file or invalid TOML raises :class:`ConfigError` under ``field``; invalid
    TOML names the file too (``field: FILE: invalid TOML: ...``, or
    ``FILE: invalid TOML: ...`` when ``field`` is the file's path)."""
    path = os.fspath(path)
    try:
        with open(path, "rb") as fh:
            return tomllib.load(fh)
    except FileNotFoundError:
        raise ConfigError(field, f"cannot read {path!r}: it does not exist", allowed) from None
    except OSError as e:
        raise ConfigError(field, f"cannot read {path!r}: {e.strerror or e}") from None
    except tomllib.TOMLDecodeError as e:
        where = path if field == path else f"{field}: {path}"
        raise ConfigError(where, f"invalid TOML: {e}") from None


def coerce_numbers(key: str, v: Any, unit: str) -> tuple[float, ...]:
    """A list-of-numbers key's value as a tuple of floats, or a one-line error."""
    if isinstance(v, str | bytes) or not hasattr(v, "__iter__"):
        raise ConfigError(key, f"{type(v).__name__} given", f"a sequence of numbers ({unit})")
    return tuple(_as_float(key, x) for x in v)


def parse_numbers(key: str, raw: str) -> tuple[float, ...]:
    """A list-of-numbers key from the command line: ``a,b,c``, ``[a, b]`` or
    ``@FILE`` (numbers separated by commas, spaces or newlines)."""
    text = raw
    if raw.startswith("@"):
        try:
            with open(raw[1:]) as fh:
                text = fh.read()
        except OSError as e:
            raise ConfigError(key, f"cannot read {raw[1:]!r}: {e.strerror or e}",
                              "@FILE of numbers") from None
    text = text.strip()
    if text.startswith("[") and text.endswith("]"):  # a list literal, as printed
        text = text[1:-1]
    out = []
    for t in text.replace(",", " ").split():
        try:
            out.append(float(t))
        except ValueError:
            raise ConfigError(key, f"{shown(t)} is not a number",
                              "numbers separated by commas, spaces or newlines") from None
    return tuple(out)
