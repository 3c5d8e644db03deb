#!/usr/bin/env python3
"""The Python package's layers point only down, and its modules import in no
circle (docs/architecture.md, "Python layers").

Every module of ``python/parsched`` belongs to a layer: its subpackage, or the
top-level module itself (``errors``, ``_io``, ``display``). A layer may import
its own and the ones listed before it in :data:`LAYERS`, never one after it:
not at module level, not inside a function. Imports under ``if
TYPE_CHECKING:`` (annotations only) are exempt; so is the package's own
``__init__`` (the lazy facade of the public names). A circle is a cycle of
imports between modules, at module level or inside functions (``from parsched
import _core`` is the extension, not the facade).

``python tools/check_layers.py`` prints every upward import and circle;
``--check ALLOWLIST`` fails (exit status 1) on any not in the allowlist (one
``MODULE -> TARGET`` a line), which may only shrink.
"""

from __future__ import annotations

import argparse
import ast
import pathlib
import sys

import allowlist

ROOT = pathlib.Path(__file__).resolve().parent.parent
PKG = ROOT / "python" / "parsched"

#: The layers, lowest first.
LAYERS = ("errors", "_io", "display", "_core", "config", "datasets", "models", "sim", "gym",
          "runtime", "reproduce", "report", "cli", "__main__")


def module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(PKG.parent).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def layer(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "parsched" else None


def known() -> set[str]:
    return {module_name(p) for p in PKG.rglob("*.py")} | {"parsched._core"}


def imports(path: pathlib.Path, modules: set[str] | None = None) -> list[tuple[str, bool]]:
    """``(target module, at module level)`` of every parsched import of the
    file outside ``if TYPE_CHECKING:`` (``from P import m``: the module
    ``P.m`` where there is one)."""
    modules = known() if modules is None else modules
    mod = module_name(path)
    pkg = mod if path.name == "__init__.py" else mod.rsplit(".", 1)[0]
    out: list[tuple[str, bool]] = []

    def visit(node: ast.AST, top: bool) -> None:
        for ch in ast.iter_child_nodes(node):
            if isinstance(ch, ast.If) and "TYPE_CHECKING" in ast.unparse(ch.test):
                continue
            if isinstance(ch, ast.ImportFrom):
                if ch.level:
                    base = pkg.split(".")[: len(pkg.split(".")) - (ch.level - 1)]
                    target = ".".join([*base, *([ch.module] if ch.module else [])])
                else:
                    target = ch.module or ""
                if target.startswith("parsched"):
                    # `from parsched import _core, config`: the modules named
                    subs = [f"{target}.{a.name}" for a in ch.names]
                    if any(m in modules for m in subs):
                        out.extend((m, top) for m in subs if m in modules)
                    else:
                        out.append((target, top))
            elif isinstance(ch, ast.Import):
                out.extend((a.name, top) for a in ch.names if a.name.startswith("parsched"))
            fn = isinstance(ch, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            visit(ch, top and not fn)

    visit(ast.parse(path.read_text()), True)
    return out


def upward() -> list[str]:
    """Every ``MODULE -> TARGET`` import from a layer to a later one."""
    out, modules = [], known()
    for path in sorted(PKG.rglob("*.py")):
        mod = module_name(path)
        a = layer(mod)
        if a is None:
            continue  # the package's own __init__: the facade
        for target, _ in imports(path, modules):
            b = layer(target)
            if b in LAYERS and a in LAYERS and LAYERS.index(b) > LAYERS.index(a):
                out.append(f"{mod} -> {target}")
    return sorted(set(out))


def circles() -> list[str]:
    """Every cycle of imports between modules (a package counts as its
    ``__init__``), as
    ``A -> B -> ... -> A`` (each cycle once, from its least module)."""
    graph: dict[str, set[str]] = {}
    modules = known()
    for path in PKG.rglob("*.py"):
        mod = module_name(path)
        graph[mod] = {t for t, _ in imports(path, modules)
                      if t in modules and t != mod and t != "parsched"}
    out, seen = [], set()

    def dfs(start: str, node: str, trail: list[str]) -> None:
        for nxt in sorted(graph.get(node, ())):
            if nxt == start:
                cyc = tuple(trail)
                if min(cyc) == start and cyc not in seen:
                    seen.add(cyc)
                    out.append(" -> ".join([*trail, start]))
            elif nxt not in trail and nxt > start:
                dfs(start, nxt, [*trail, nxt])

    for m in sorted(graph):
        dfs(m, m, [m])
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", metavar="ALLOWLIST",
                    help="fail on an upward import or circle not in this file")
    args = ap.parse_args(argv)
    found = upward() + circles()
    if not args.check:
        print("\n".join(found))
        return 0
    return allowlist.against(found, args.check, "points up or circles")


if __name__ == "__main__":
    sys.exit(main())
