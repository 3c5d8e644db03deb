"""Config classes built from the Rust core's declarative schemas.

Each model's keys are declared once, in Rust (``parsched_core::schema``; for
pools ``crates/parsched-sim/src/pools_keys.rs``), and exported through
``parsched._core.schema(model)``: key, type, range or choices, unit, the
paper's symbol or section, a one-line doc and the default. :func:`model_class`
turns that description into a frozen dataclass on :class:`ConfigBase` — field
types (``Literal`` choices included), defaults and docs all come from the
core, so a Python class has no choice list or range of its own. What a
class adds (special fields such as ``arrivals``, conveniences such as
``PoolsConfig.with_``) lives in the mixin it is built on.
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any, Literal

from .. import _core

__all__ = [
    "aliases",
    "key_doc",
    "keys_help",
    "markdown_table",
    "model_class",
    "range_text",
    "schema",
    "schema_fields",
    "stub_fields",
]


@functools.cache
def _schema(model: str) -> tuple[dict[str, Any], ...]:
    return tuple(_core.schema(model))


def schema(model: str) -> list[dict[str, Any]]:
    """The core's schema of ``model``: one dict per key, in documentation order."""
    return [dict(k) for k in _schema(model)]


def _type_of(info: dict[str, Any]) -> Any:
    kind = info["type"]
    tp: Any
    if kind == "choice":
        tp = Literal[tuple(info["choices"])]
    else:
        tp = {"bool": bool, "int": int, "float": float, "text": str,
              "list": tuple[float, ...], "names": tuple[str, ...],
              "table": tuple[tuple[float, ...], ...]}[kind]
    return tp | None if info["optional"] else tp


def _end(e: Any) -> str:
    return "" if e is None else f"{e['value']:g}"


def range_text(info: dict[str, Any]) -> str:
    """What the key allows, as the docs show it (``0 < L < 1``, ``a|b``)."""
    key, kind = info["key"], info["type"]
    if kind == "choice":
        return " | ".join(info["choices"]) + (" (any case)" if info["fold"] else "")
    if kind == "names":
        return "names, each " + " | ".join(info["choices"])
    if kind == "bool":
        return "true | false"
    if kind == "int":
        lo, hi = info["min"], info["max"]
        if hi >= 2**63:
            return f"integer >= {lo}" if lo else "integer >= 0"
        if hi == 2**32 - 1:
            return f"integer, {lo} <= {key} < 2^32"
        return f"integer, {lo} <= {key} <= {hi}"
    if kind == "table":
        kind, info = "list", {**info, "type": "list"}
        return "rows of " + range_text(info)
    if kind in ("float", "list"):
        lo, hi = info["min"], info["max"]
        name = key if kind == "float" else "each"
        op = {True: "<=", False: "<"}
        if lo and hi:
            text = f"{_end(lo)} {op[lo['closed']]} {name} {op[hi['closed']]} {_end(hi)}"
        elif lo:
            text = f"{name} {'>=' if lo['closed'] else '>'} {_end(lo)}"
        elif hi:
            text = f"{name} {op[hi['closed']]} {_end(hi)}"
        else:
            text = "any finite number"
        return text if kind == "float" else f"numbers, {text}"
    return "text"


def key_doc(info: dict[str, Any]) -> str:
    """The key's one-line doc with its paper symbol and unit."""
    doc = info["doc"]
    if info["symbol"]:
        doc = f"[{info['symbol']}] {doc}"
    notes = [n for n in (info["section"], info["unit"] and f"unit: {info['unit']}") if n]
    if notes:
        doc += f" ({'; '.join(notes)})"
    return doc


def _default(info: dict[str, Any]) -> Any:
    d = info["default"]
    return tuple(d) if isinstance(d, list) else d


def schema_fields(model: str, types: dict[str, Any] | None = None
                  ) -> list[tuple[str, Any, Any]]:
    """``(name, type, dataclasses.field)`` of every key of ``model`` (``types``:
    a Python type of the class's own for some keys, e.g. a tuple form)."""
    types = types or {}
    return [
        (k["key"], types.get(k["key"], _type_of(k)),
         dataclasses.field(default=_default(k), metadata={"doc": key_doc(k), "schema": k}))
        for k in _schema(model)
    ]


def aliases(model: str) -> dict[str, dict[str, Any]]:
    """Other spellings of ``model``'s values: ``{key: {alias: value}}``, value
    None for unset (e.g. batch ``procs``: ``auto``)."""
    return {k["key"]: {a: (v or None) for a, v in k["aliases"]}
            for k in _schema(model) if k["aliases"]}


def model_class(name: str, model: str, base: type, *, module: str,
                extra: list[tuple[str, Any, Any]] | None = None,
                first: list[tuple[str, Any, Any]] | None = None,
                types: dict[str, Any] | None = None, doc: str = "") -> type:
    """A frozen, slotted dataclass named ``name`` on ``base`` (a
    :class:`ConfigBase` subclass with ``__slots__ = ()``) whose fields are
    ``first``, the keys of ``model``'s schema, then ``extra`` (fields of
    Python's own, such as ``trace`` or ``arrivals``)."""
    cls = dataclasses.make_dataclass(
        name, [*(first or []), *schema_fields(model, types), *(extra or [])], bases=(base,),
        frozen=True, slots=True)
    cls.__module__ = module
    cls.__qualname__ = name
    cls.__doc__ = doc
    cls._ALIASES = aliases(model)
    cls._FOLD = frozenset(k["key"] for k in _schema(model) if k["fold"])
    return cls


def _shown_default(info: dict[str, Any]) -> str:
    d = info["default"]
    if d is None:
        return "unset"
    if isinstance(d, bool):
        return "true" if d else "false"
    if isinstance(d, list) and d and isinstance(d[0], list):  # a table: its text
        return ";".join(",".join(f"{x:g}" for x in r) for r in d)
    if isinstance(d, list):
        return "[" + ", ".join(x if isinstance(x, str) else f"{x:g}" for x in d) + "]"
    return f"{d:g}" if isinstance(d, float) else str(d)


def keys_help(model: str) -> str:
    """The key list of ``parsched simulate MODEL --help``: every key with
    what it allows and its default, from the core's schema."""
    rows = [(k["key"], range_text(k), _shown_default(k)) for k in _schema(model)]
    w = max(len(r[0]) for r in rows)
    lines = [f"keys (--set KEY=VALUE, or in the [{model}] table of --config):"]
    lines += [f"  {key:<{w}}  {allowed}; default {default}" for key, allowed, default in rows]
    return "\n".join(lines)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def markdown_table(model: str) -> str:
    """The key table of ``model`` (docs/formats/config-toml.md and the site's
    model pages): two columns, the key with its default, then what it means,
    what it allows, its unit and where the paper gives it (six columns did
    not fit a page)."""
    lines = ["| key = default | meaning |", "|---|---|"]
    for k in _schema(model):
        facts = [f"*allowed:* {range_text(k)}"]
        if k["unit"]:
            facts.append(f"*unit:* {k['unit']}")
        paper = ", ".join(x for x in (k["symbol"], k["section"]) if x)
        if paper:
            facts.append(f"*paper:* {paper}")
        lines.append("| " + " | ".join(_cell(x) for x in (
            f"`{k['key']}` = `{_shown_default(k)}`",
            f"{k['doc']}<br>{'; '.join(facts)}")) + " |")
    return "\n".join(lines)


_PY_TYPES = {"bool": "bool", "int": "int", "float": "float", "text": "str",
             "list": "tuple[float, ...]", "names": "tuple[str, ...]",
             "table": "tuple[tuple[float, ...], ...]"}


def stub_fields(model: str, *, inputs: bool = False, types: dict[str, str] | None = None) -> str:
    """The field annotations of ``model``'s config class, for its ``.pyi`` stub
    (``inputs``: of the dict the core takes, lists as any sequence; ``types``:
    the class's own annotation of some keys)."""
    lines = []
    for k in _schema(model):
        if types and k["key"] in types:
            lines.append(f"    {k['key']}: {types[k['key']]}")
            continue
        spelled = [a for a, _ in k["aliases"]] if inputs else []
        if k["type"] == "choice" and inputs and k["fold"]:
            tp = "str"  # any case
        elif k["type"] == "choice":
            tp = "Literal[" + ", ".join(f'"{c}"' for c in [*k["choices"], *spelled]) + "]"
        else:
            tp = _PY_TYPES[k["type"]]
            if inputs and k["type"] in ("list", "names", "table"):
                tp = {"list": "Sequence[float] | str", "names": "Sequence[str] | str",
                      "table": "Sequence[Sequence[float]] | str"}[k["type"]]
            if spelled:
                tp += " | Literal[" + ", ".join(f'"{c}"' for c in spelled) + "]"
        if k["optional"]:
            tp += " | None"
        lines.append(_wrapped(f"    {k['key']}: {tp}"))
    return "\n".join(lines)


def _wrapped(line: str, width: int = 99) -> str:
    """A stub line of at most ``width`` characters: a long ``Literal[...]``
    with its names on lines of their own."""
    if len(line) <= width or "Literal[" not in line:
        return line
    head, _, rest = line.partition("Literal[")
    names, _, tail = rest.partition("]")
    out, cur = [head + "Literal["], "       "
    for name in names.split(", "):
        if len(cur) + len(name) + 2 > width:
            out.append(cur.rstrip())
            cur = "       "
        cur += f" {name},"
    out.append(cur.rstrip())
    out.append("    ]" + tail)
    return "\n".join(out)
