"""The runtime's policies and their keys, as the compiled core lists them.

The Rust runtime lists its policies once (``POLICIES`` in
crates/parsched-runtime/src/controller/policy.rs); each policy's file declares
its name, doc and its table of the run spec (``[fcs]``, ``[cosched]``) on the
schema machinery of the models. ``parsched._core.runtime_policies()`` exports
that list, and ``parsched._core.runtime_schema()`` the spec's common keys;
``parsched run``'s choices and ``--help`` and the key checks here come from
them, so no name, key or choice is written twice.
"""

from __future__ import annotations

import textwrap
from functools import cache
from typing import Any

__all__ = ["canonical", "choices", "common_key", "default_policy", "policies", "policies_help",
           "policy_names", "table_key"]


@cache
def _policies() -> tuple[dict[str, Any], ...]:
    try:
        from parsched import _core
    except ImportError:  # pragma: no cover - depends on the build
        return ()
    fn = getattr(_core, "runtime_policies", None)
    return tuple(fn()) if fn is not None else ()


@cache
def _common() -> tuple[dict[str, Any], ...]:
    try:
        from parsched import _core
    except ImportError:  # pragma: no cover - depends on the build
        return ()
    fn = getattr(_core, "runtime_schema", None)
    return tuple(fn()) if fn is not None else ()


def common_key(key: str) -> dict[str, Any] | None:
    """The description of the run spec's common key ``key`` (``backend``,
    ``slot``, ...; ``parsched._core.runtime_schema()``), None without one."""
    return next((dict(k) for k in _common() if k["key"] == key), None)


def policies() -> list[dict[str, Any]]:
    """Every runtime policy: ``name``, ``aliases``, ``doc``, ``default``,
    ``table`` (its table in the run spec, or None), ``keys`` (that table's keys,
    as ``parsched._core.schema(model)`` describes a model's) and ``flat`` (the
    flat spellings still accepted at the top level, ``[flat, key]``). Empty in
    a build without the Linux runtime."""
    return [dict(p) for p in _policies()]


def policy_names() -> list[str]:
    """Every name ``--policy`` takes: each policy's, then its aliases."""
    return [n for p in _policies() for n in (p["name"], *p["aliases"])]


def default_policy() -> str | None:
    """The policy of a spec that names none."""
    return next((p["name"] for p in _policies() if p["default"]), None)


def canonical(name: str | None) -> str | None:
    """The policy ``name`` stands for (its own name for an alias; the default
    policy for None; None if no policy has that name)."""
    if name is None:
        return default_policy()
    return next((p["name"] for p in _policies() if name in (p["name"], *p["aliases"])), None)


def table_key(table: str, key: str) -> dict[str, Any] | None:
    """The description of ``key`` of the policies' table ``[table]``."""
    for p in _policies():
        if p["table"] == table:
            return next((dict(k) for k in p["keys"] if k["key"] == key), None)
    return None


def choices(table: str | None, key: str) -> list[str] | None:
    """The names ``key`` of ``[table]`` (of the common keys for None) takes
    (None if it is not a choice)."""
    k = common_key(key) if table is None else table_key(table, key)
    return list(k["choices"]) if k and k["type"] == "choice" else None


def policies_help(width: int = 88) -> str:
    """The policy list of ``parsched run --help``: each policy with its doc
    and its table's keys (what each allows, its default, its flat spelling)."""
    from parsched.config.schema import _shown_default, range_text

    ps = _policies()
    if not ps:
        return "policies: (this build has no Linux runtime)"
    lines = ["policies (--policy NAME) and their keys (in the policy's [TABLE] of --jobs "
             "FILE.toml, or at its top level under the flat name shown):"]
    for p in ps:
        also = f" (also {', '.join(p['aliases'])})" if p["aliases"] else ""
        dflt = " [default]" if p["default"] else ""
        lines += textwrap.wrap(f"{p['name']}{also}{dflt}: {p['doc']}", width,
                               initial_indent="  ", subsequent_indent="      ")
        flat: dict[str, list[str]] = {}
        for f, k in p["flat"]:
            flat.setdefault(k, []).append(f)
        for k in p["keys"]:
            spelled = f" (flat: {', '.join(flat[k['key']])})" if k["key"] in flat else ""
            text = (f"[{p['table']}] {k['key']}: {range_text(k)}; default "
                    f"{_shown_default(k)}{spelled}. {k['doc']}")
            lines += textwrap.wrap(text, width, initial_indent="    ",
                                   subsequent_indent="        ")
    return "\n".join(lines)
