#!/usr/bin/env python3
"""Lists the non-test source files over 800 lines and the functions over 120 lines.

Rust: every ``crates/*/src/**/*.rs`` except test modules (files named ``tests.rs``
or under a ``tests/`` folder, and ``#[cfg(test)]`` items, which are skipped);
functions are found by their ``fn`` keyword and measured from that line to their
closing brace (strings, characters and comments do not count as braces).
Python: every ``python/parsched/**/*.py``; functions and methods by ``ast``.

Prints one offender a line (``FILE`` or ``FILE::function``, then the line count);
``--check ALLOWLIST`` exits 1 when an offender is not in the allow-list or an
allow-list entry is no longer an offender (so the list can only shrink).
"""

from __future__ import annotations

import argparse
import ast
import re
import sys
from pathlib import Path

FILE_MAX = 800
FN_MAX = 120
ROOT = Path(__file__).resolve().parents[1]


def _ident_before(src: str, i: int) -> bool:
    return i > 0 and (src[i - 1].isalnum() or src[i - 1] == "_")


def _strip_rust(src: str) -> str:
    """``src`` with comments, strings and char literals blanked (newlines kept)."""
    out = []
    i, n = 0, len(src)
    while i < n:
        c = src[i]
        if src.startswith("//", i):
            j = src.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif src.startswith("/*", i):
            depth, j = 1, i + 2
            while j < n and depth:
                if src.startswith("/*", j):
                    depth, j = depth + 1, j + 2
                elif src.startswith("*/", j):
                    depth, j = depth - 1, j + 2
                else:
                    j += 1
            out.append(re.sub(r"[^\n]", " ", src[i:j]))
            i = j
        elif (m := re.match(r'b?r(#*)"', src[i:i + 80])) and not _ident_before(src, i):
            end = '"' + m.group(1)
            j = src.find(end, i + m.end())
            j = n if j < 0 else j + len(end)
            out.append(re.sub(r"[^\n]", " ", src[i:j]))
            i = j
        elif c == '"':
            j = i + 1
            while j < n and src[j] != '"':
                j += 2 if src[j] == "\\" else 1
            out.append(re.sub(r"[^\n]", " ", src[i:j + 1]))
            i = j + 1
        elif c == "'" and (m := re.match(r"'(\\.[^']*|[^\\'])'", src[i:i + 12])):
            out.append(" " * m.end())
            i += m.end()
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _block_end(code: str, open_at: int) -> int:
    depth = 0
    for j in range(open_at, len(code)):
        if code[j] == "{":
            depth += 1
        elif code[j] == "}":
            depth -= 1
            if depth == 0:
                return j
    return len(code) - 1


def rust_offenders(path: Path, rel: str) -> list[tuple[str, int]]:
    src = path.read_text()
    out = []
    code = _strip_rust(src)
    # blank #[cfg(test)] items (test modules and test-only functions)
    for m in reversed(list(re.finditer(r"#\[cfg\(test\)\]", code))):
        brace = code.find("{", m.end())
        semi = code.find(";", m.end())
        if brace < 0 or (0 <= semi < brace):
            continue
        end = _block_end(code, brace)
        code = code[:m.start()] + re.sub(r"[^\n]", " ", code[m.start():end + 1]) + code[end + 1:]
    n_lines = code.rstrip().count("\n") + 1
    blank_tail = len(code.rstrip("\n \t").splitlines())
    if blank_tail > FILE_MAX:
        out.append((rel, n_lines))
    for m in re.finditer(r"\bfn\s+([A-Za-z_]\w*)", code):
        j = m.end()
        # the body's brace (a declaration without body ends at ';' first)
        depth_paren = 0
        while j < len(code):
            ch = code[j]
            if ch in "([<":
                depth_paren += 1
            elif ch in ")]>":
                depth_paren -= 1
            elif ch == ";" and depth_paren <= 0:
                j = -1
                break
            elif ch == "{" and depth_paren <= 0:
                break
            j += 1
        if j < 0 or j >= len(code):
            continue
        end = _block_end(code, j)
        lines = code[m.start():end].count("\n") + 1
        if lines > FN_MAX:
            out.append((f"{rel}::{m.group(1)}", lines))
    return out


def python_offenders(path: Path, rel: str) -> list[tuple[str, int]]:
    src = path.read_text()
    out = []
    n = len(src.rstrip().splitlines())
    if n > FILE_MAX:
        out.append((rel, n))
    for node in ast.walk(ast.parse(src)):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            lines = node.end_lineno - node.lineno + 1
            if lines > FN_MAX:
                out.append((f"{rel}::{node.name}", lines))
    return out


def offenders(root: Path = ROOT) -> dict[str, int]:
    found: dict[str, int] = {}
    for p in sorted(root.glob("crates/*/src/**/*.rs")):
        rel = p.relative_to(root).as_posix()
        if p.name == "tests.rs" or "/tests/" in rel:
            continue
        for k, v in rust_offenders(p, rel):
            found[k] = max(v, found.get(k, 0))
    for p in sorted(root.glob("python/parsched/**/*.py")):
        rel = p.relative_to(root).as_posix()
        for k, v in python_offenders(p, rel):
            found[k] = max(v, found.get(k, 0))
    return found


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--check", metavar="ALLOWLIST", help="compare with an allow-list file")
    a = ap.parse_args()
    found = offenders()
    if not a.check:
        for k, v in sorted(found.items()):
            print(f"{k}\t{v}")
        return 0
    allowed = {line.split()[0] for line in Path(a.check).read_text().splitlines()
               if line.strip() and not line.startswith("#")}
    new = sorted(set(found) - allowed)
    stale = sorted(allowed - set(found))
    for k in new:
        print(f"over the limit and not allowed: {k} ({found[k]} lines)")
    for k in stale:
        print(f"within the limit now, remove from {a.check}: {k}")
    return 1 if new or stale else 0


if __name__ == "__main__":
    sys.exit(main())
