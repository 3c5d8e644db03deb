#!/usr/bin/env python3
"""No circle of `use` imports between sibling Rust modules
(docs/architecture.md).

A module's file names the modules it uses (``use crate::a::b::Item``,
``use super::c::Item``, ``use self::d``, grouped braces included, and the
same paths written inline in its code, ``super::gang::ENTRY``). An edge
from a module to a module that contains it (its parent's ``mod.rs``, the
crate's ``lib.rs``) is how a child reaches what its parent re-exports and is
not counted; every other edge is, and a set of modules that import each
other in a circle (``apps → calibrate → config → apps``) is reported once,
as ``apps <-> calibrate <-> config``. ``#[cfg(test)]`` modules are not read.
``python tools/check_rust_modules.py`` prints the circles (exit status 1 if
any); ``--check ALLOWLIST`` fails on one not in the allowlist, which may
only shrink.
"""

from __future__ import annotations

import pathlib
import re
import sys

import allowlist

ROOT = pathlib.Path(__file__).resolve().parent.parent
USE = re.compile(r"^\s*(?:pub(?:\([^)]*\))?\s+)?use\s+([^;]+);", re.M)
PATH = re.compile(r"(?<![\w:])(?:crate|super|self)(?:::[A-Za-z_]\w*)+")


def module_of(src: pathlib.Path, path: pathlib.Path) -> tuple[str, ...]:
    parts = list(path.relative_to(src).with_suffix("").parts)
    if parts[-1] in ("mod", "lib"):
        parts.pop()
    return tuple(parts)


def expand(tree: str) -> list[str]:
    """``a::{b, c::{d, e}}`` as ``a::b``, ``a::c::d``, ``a::c::e``."""
    tree = re.sub(r"\s+", "", tree)
    i = tree.find("{")
    if i < 0:
        return [tree]
    head, body = tree[:i], tree[i + 1:tree.rfind("}")]
    parts, depth, cur = [], 0, ""
    for ch in body:
        if ch == "," and depth == 0:
            parts.append(cur)
            cur = ""
            continue
        depth += (ch == "{") - (ch == "}")
        cur += ch
    if cur:
        parts.append(cur)
    return [p for part in parts for p in expand(head + part)]


def edges(src: pathlib.Path) -> dict[tuple[str, ...], set[tuple[str, ...]]]:
    files = {module_of(src, p): p for p in src.rglob("*.rs")}
    out: dict[tuple[str, ...], set[tuple[str, ...]]] = {m: set() for m in files}
    for mod, path in files.items():
        text = path.read_text().split("#[cfg(test)]", 1)[0]
        text = re.sub(r"//[^\n]*", "", text)  # comments (doc links included)
        paths = [u for tree in USE.findall(text) for u in expand(tree)]
        paths += PATH.findall(USE.sub("", text))  # paths written inline
        for use in paths:
            if True:
                segs = use.split("::")
                if segs[0] == "crate":
                    base, rest = (), segs[1:]
                elif segs[0] in ("super", "self"):
                    # `self`: this module; each `super`: one up
                    base = mod if segs[0] == "self" else mod[:-1]
                    rest = segs[1:]
                    while rest and rest[0] == "super":
                        base, rest = base[:-1], rest[1:]
                else:
                    continue
                # the longest prefix that is a module of this crate
                target = base
                for seg in rest:
                    if (*target, seg) in files:
                        target = (*target, seg)
                    else:
                        break
                if target != mod and target != mod[:len(target)]:
                    out[mod].add(target)
    return out


def circles(graph: dict[tuple[str, ...], set[tuple[str, ...]]]) -> list[str]:
    """Every set of modules that import each other in a circle (a strongly
    connected component of more than one module), its modules sorted and
    joined by `` <-> ``."""
    index: dict = {}
    low: dict = {}
    stack: list = []
    on: set = set()
    out: list[str] = []
    counter = [0]

    def visit(v) -> None:  # Tarjan's algorithm
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(" <-> ".join(sorted("::".join(m) or "crate" for m in comp)))

    for v in sorted(graph):
        if v not in index:
            visit(v)
    return sorted(out)


def found() -> list[str]:
    """Every circle of every crate, as ``CRATE: a <-> b <-> ...``."""
    out = []
    for src in sorted((ROOT / "crates").glob("*/src")):
        out += [f"{src.parent.name}: {c}" for c in circles(edges(src))]
    return out


def main(argv: list[str] | None = None) -> int:
    import argparse

    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", metavar="ALLOWLIST",
                    help="fail on a circle not in this file (one a line)")
    args = ap.parse_args(argv)
    circles_now = found()
    if not args.check:
        print("\n".join(circles_now))
        return 1 if circles_now else 0
    return allowlist.against(circles_now, args.check, "a circle")


if __name__ == "__main__":
    sys.exit(main())
